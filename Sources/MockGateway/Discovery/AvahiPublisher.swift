import Foundation
import Locking
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Publishes ``GatewayDiscoveryRecords`` on the local network through the Avahi client library
/// (Linux), opened with `dlopen` when publishing starts, so that building and running everything
/// else needs neither libavahi-client nor its headers. Only the functions used are declared, after
/// `avahi-client/client.h`, `avahi-client/publish.h`, `avahi-common/thread-watch.h`,
/// `avahi-common/strlst.h` and `avahi-common/error.h` of Avahi 0.8 (Debian libavahi-client3):
///
/// ```c
/// AvahiThreadedPoll *avahi_threaded_poll_new(void);
/// const AvahiPoll *avahi_threaded_poll_get(AvahiThreadedPoll *p);
/// int avahi_threaded_poll_start(AvahiThreadedPoll *p);
/// int avahi_threaded_poll_stop(AvahiThreadedPoll *p);
/// void avahi_threaded_poll_free(AvahiThreadedPoll *p);
/// void avahi_threaded_poll_lock(AvahiThreadedPoll *p);
/// void avahi_threaded_poll_unlock(AvahiThreadedPoll *p);
/// AvahiClient *avahi_client_new(const AvahiPoll *poll_api, AvahiClientFlags flags,
///                               AvahiClientCallback callback, void *userdata, int *error);
/// void avahi_client_free(AvahiClient *client);
/// AvahiEntryGroup *avahi_entry_group_new(AvahiClient *c, AvahiEntryGroupCallback callback, void *userdata);
/// int avahi_entry_group_add_service_strlst(AvahiEntryGroup *group, AvahiIfIndex interface,
///         AvahiProtocol protocol, AvahiPublishFlags flags, const char *name, const char *type,
///         const char *domain, const char *host, uint16_t port, AvahiStringList *txt);
/// int avahi_entry_group_commit(AvahiEntryGroup *group);
/// AvahiStringList *avahi_string_list_new_from_array(const char **array, int length);
/// void avahi_string_list_free(AvahiStringList *l);
/// const char *avahi_strerror(int error);
/// ```
///
/// (`AvahiIfIndex` and `AvahiProtocol` are `int`, `AVAHI_IF_UNSPEC` = `AVAHI_PROTO_UNSPEC` = -1;
/// the flag types are C enums passed as `int`; both callbacks may be `NULL`.) Nothing in the test
/// suite publishes: the Avahi test runs only when `OPENCLAW_TEST_AVAHI=1` asks for it.
public final class AvahiPublisher: Sendable {
    /// Why publishing failed.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What went wrong, with what to install or start.
        public var description: String
    }

    private typealias PollNew = @convention(c) () -> OpaquePointer?
    private typealias PollGet = @convention(c) (OpaquePointer?) -> OpaquePointer?
    private typealias PollInt = @convention(c) (OpaquePointer?) -> Int32
    private typealias PollVoid = @convention(c) (OpaquePointer?) -> Void
    private typealias ClientNew = @convention(c) (OpaquePointer?, Int32, OpaquePointer?, UnsafeMutableRawPointer?,
                                                  UnsafeMutablePointer<Int32>?) -> OpaquePointer?
    private typealias GroupNew = @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> OpaquePointer?
    private typealias AddService = @convention(c) (OpaquePointer?, Int32, Int32, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
                                                   UnsafePointer<CChar>?, UnsafePointer<CChar>?, UInt16, OpaquePointer?) -> Int32
    private typealias ListNew = @convention(c) (UnsafeMutablePointer<UnsafePointer<CChar>?>?, Int32) -> OpaquePointer?
    private typealias StrError = @convention(c) (Int32) -> UnsafePointer<CChar>?

    /// The library names tried in turn.
    public static let candidates = ["libavahi-client.so.3", "libavahi-client.so"]

    /// The handles of the running publication, as plain numbers (`Sendable`): the threaded poll,
    /// the client and the entry group. Only `stop()` touches them after `init` returns.
    private let poll: UInt
    private let client: UInt
    private let symbols: [String: UInt]
    private let stopped = Locked(false)

    /// Opens the library, connects to the Avahi daemon and publishes `records` in `local.`.
    /// - Throws: ``Failure`` when the library is missing, the daemon is not running, or it
    ///   refuses the service.
    public init(_ records: GatewayDiscoveryRecords) throws {
        var handle: UnsafeMutableRawPointer?
        var reasons: [String] = []
        for candidate in Self.candidates {
            if let opened = dlopen(candidate, RTLD_NOW | RTLD_LOCAL) {
                handle = opened
                break
            }
            reasons.append(dlerror().map { String(cString: $0) } ?? candidate)
        }
        guard let handle else {
            throw Failure(description: "--advertise needs libavahi-client (apt-get install libavahi-client3) and a running avahi-daemon [\(reasons.joined(separator: "; "))]")
        }
        let names = ["avahi_threaded_poll_new", "avahi_threaded_poll_get", "avahi_threaded_poll_start", "avahi_threaded_poll_stop",
                     "avahi_threaded_poll_free", "avahi_threaded_poll_lock", "avahi_threaded_poll_unlock", "avahi_client_new",
                     "avahi_client_free", "avahi_entry_group_new", "avahi_entry_group_add_service_strlst", "avahi_entry_group_commit",
                     "avahi_string_list_new_from_array", "avahi_string_list_free", "avahi_strerror"]
        var found: [String: UInt] = [:]
        for name in names {
            guard let address = dlsym(handle, name) else { throw Failure(description: "libavahi-client has no \(name)") }
            found[name] = UInt(bitPattern: address)
        }
        symbols = found
        func function<F>(_ name: String, _ type: F.Type) -> F {
            // Every name was resolved by dlsym above, so the address is never null.
            unsafeBitCast(found[name] ?? 0, to: type)
        }
        let strerror = function("avahi_strerror", StrError.self)
        func message(_ code: Int32) -> String { strerror(code).map { String(cString: $0) } ?? "error \(code)" }

        guard let poll = function("avahi_threaded_poll_new", PollNew.self)() else { throw Failure(description: "avahi: cannot make a poll loop") }
        var error: Int32 = 0
        guard let client = function("avahi_client_new", ClientNew.self)(function("avahi_threaded_poll_get", PollGet.self)(poll), 0, nil, nil, &error) else {
            function("avahi_threaded_poll_free", PollVoid.self)(poll)
            throw Failure(description: "--advertise: the Avahi daemon refused or is not running (\(message(error))); start avahi-daemon")
        }
        self.poll = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(poll)))
        self.client = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(client)))
        let txt = records.txt.map(\.description)
        let strings = txt.map { strdup($0) }
        defer { strings.forEach { free($0) } }
        var pointers: [UnsafePointer<CChar>?] = strings.map { $0.map { UnsafePointer($0) } }
        let list = pointers.withUnsafeMutableBufferPointer { buffer in
            function("avahi_string_list_new_from_array", ListNew.self)(buffer.baseAddress, Int32(buffer.count))
        }
        defer { function("avahi_string_list_free", PollVoid.self)(list) }
        guard let group = function("avahi_entry_group_new", GroupNew.self)(client, nil, nil) else {
            stop()
            throw Failure(description: "--advertise: Avahi could not make an entry group")
        }
        let added = records.instanceName.withCString { name in
            GatewayDiscoveryRecords.serviceType.withCString { type in
                function("avahi_entry_group_add_service_strlst", AddService.self)(
                    group, -1, -1, 0, name, type, nil, nil, UInt16(clamping: records.port), list)
            }
        }
        let committed = added == 0 ? function("avahi_entry_group_commit", PollInt.self)(group) : added
        guard committed == 0 else {
            stop()
            throw Failure(description: "--advertise: Avahi refused the service (\(message(committed)))")
        }
        guard function("avahi_threaded_poll_start", PollInt.self)(poll) == 0 else {
            stop()
            throw Failure(description: "--advertise: cannot start Avahi's event loop")
        }
    }

    /// Withdraws the service and disconnects from the daemon.
    public func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first, let stopPoll = symbols["avahi_threaded_poll_stop"], let freeClient = symbols["avahi_client_free"],
              let freePoll = symbols["avahi_threaded_poll_free"],
              let poll = OpaquePointer(bitPattern: Int(bitPattern: poll)) else { return }
        _ = unsafeBitCast(stopPoll, to: PollInt.self)(poll)
        // Freeing the client frees its entry groups, which withdraws the service.
        if let client = OpaquePointer(bitPattern: Int(bitPattern: client)) {
            unsafeBitCast(freeClient, to: PollVoid.self)(client)
        }
        unsafeBitCast(freePoll, to: PollVoid.self)(poll)
    }
}
