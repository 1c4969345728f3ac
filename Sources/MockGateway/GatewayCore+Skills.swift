import GatewayProtocol

/// The Gateway actor's glue for the skills methods: the rules are pure (``SkillsReport`` over
/// ``SkillsFixtures``); this hands them the current fixtures and keeps what an install changes.
extension GatewayCore {
    /// Replaces the skills `skills.status` reports.
    func setSkills(_ skills: SkillsFixtures) {
        appSurfaces.skills = skills
    }
}
