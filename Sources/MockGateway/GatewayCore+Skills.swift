import GatewayProtocol

/// The Gateway actor's glue for the skills methods: the rules are pure (``SkillsReport`` over
/// ``SkillsFixtures``); this hands them the current fixtures and keeps what an install changes.
extension GatewayCore {
    /// `skills.install`: runs (marks) one installer; a failed install answers `ok: false` with the
    /// installer's result as the payload and `UNAVAILABLE <message>` as the error, as upstream's
    /// `respond(result.ok, result, …)` does.
    func skillsInstall(_ call: MethodCall) {
        switch SkillsReport.install(call.params, skills: appSurfaces.skills) {
        case .invalid(let error):
            fail(call, error.shape)
        case .result(let payload, ok: true, let skills):
            appSurfaces.skills = skills
            reply(call, payload)
        case .result(let payload, ok: false, _):
            let message = payload["message"]?.stringValue ?? ""
            respond(ResponseFrame(id: call.request.id, ok: false, payload: payload,
                                  error: ErrorShape(code: ErrorCode.unavailable.rawValue, message: message)),
                    method: call.method, to: call.connectionId)
        }
    }

    /// Replaces the skills `skills.status` reports.
    func setSkills(_ skills: SkillsFixtures) {
        appSurfaces.skills = skills
    }
}
