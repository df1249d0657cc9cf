#if canImport(Glibc)
    import Glibc
#endif
import ClientSettings
import IMAPClient
import IMAPCodec
import JMAPClient
import MoConfig
import MoCore
import OAuth2
import SyncState
import Synchronization

/// `mo-sync --watch` for one account: sync, then sleep until something asks for the next sync, forever.
///
/// What asks (each rings one `Doorbell`; rings during a sync make one more sync, see its invariant):
/// - the server, through `ServerListener`s that stay connected: one NOTIFY connection for every folder when
///   the server offers NOTIFY (RFC 5465), else one IDLE connection each on INBOX and the `watch` folders
///   (`WatchPlan` decides, once, from the capabilities after the first sync; which news counts is there too);
/// - the Maildir, through `LocalChanges` (inotify on every folder's cur/ and new/, debounced);
/// - the clock: without NOTIFY, the folders nobody listens to are synced every `poll-interval`; and at the
///   time of the next timed action (`nextTimedAction`: a message sent later, a snoozed message's return).
///
/// A sync that fails for a temporary reason (network, server restart, a busy lock) is retried after 5 s,
/// doubling to 5 min; other failures (configuration, authentication, TLS) wait 5 min. SIGTERM or SIGINT
/// ends the loop cleanly: at once while waiting (nothing is in flight), after the current sync otherwise.
public final class Watcher {
    public let account: Account
    public let config: Config
    public let options: SyncOptions
    /// Called with each run's summaries, or with the error that ended a run or a listener's connection.
    public let report: (Result<[FolderSummary], Error>) -> Void
    /// The wall-clock time (Unix seconds) of the first timed action later than the given time (the last
    /// sync's start), or nil. Asked about once a second while waiting, so a message queued or snoozed
    /// meanwhile is seen; keep it cheap.
    public let nextTimedAction: (_ after: Int) -> Int?

    public init(
        account: Account, config: Config, options: SyncOptions,
        nextTimedAction: @escaping (_ after: Int) -> Int? = { _ in nil },
        report: @escaping (Result<[FolderSummary], Error>) -> Void
    ) {
        self.account = account
        self.config = config
        self.options = options
        self.nextTimedAction = nextTimedAction
        self.report = report
    }

    /// Runs until stopped by a signal; returns normally then, with every IMAP listener stopped and joined (a JMAP
    /// push listener is stopped, not joined: `JMAPPushListener`).
    public func run() {
        let doorbell = Doorbell()
        var local: LocalChanges?
        do { local = try LocalChanges(account: account, doorbell: doorbell) } catch { report(.failure(error)) }
        local?.start()
        var plan: WatchPlan?
        var listeners: [ServerListener] = []
        var push: JMAPPushListener?
        defer {
            local?.stop()
            push?.stop()
            for l in listeners { l.stop() }
        }
        var backoff = Backoff()
        var woken: Set<WatchPlan.Wake> = []
        while !WatchSignals.stopRequested {
            do {
                WatchSignals.phase.store(WatchSignals.syncing, ordering: .sequentiallyConsistent)
                woken.formUnion(doorbell.take())
                if !woken.isEmpty { options.verbose("\(account.name): syncing (\(Self.describe(woken)))") }
                var held = options
                held.connectionsHeld = listeners.count  // the listeners' connections count against `connections`
                let started = WallClock.now()
                let summaries = try AccountSync(account: account, config: config, options: held).run()
                report(.success(summaries))
                let synced = monotonicSeconds()
                for problem in local?.arm() ?? [] { options.verbose("\(account.name): \(problem)") }
                if plan == nil {
                    if let jmap = account.jmap {
                        plan = WatchPlan.jmap(pollInterval: account.sync.pollInterval)
                        push = startPush(jmap, doorbell)
                    } else {
                        (plan, listeners) = try startListening(doorbell)
                    }
                }
                backoff.succeeded()
                if WatchSignals.stopRequested { return }
                // Asked again each second: a push stream lost while waiting brings the poll back at once.
                woken = waitForChange(
                    doorbell, until: { plan?.pollSeconds(pushListening: push?.isListening == true).map { synced + $0 } },
                    timedAfter: started)
            } catch let error as MoError where error.kind == .temporary || error.kind == .busy {
                report(.failure(error))
                sleepInterruptibly(backoff.failed())
            } catch {
                report(.failure(error))
                // Configuration, authentication or TLS problems do not mend themselves quickly.
                sleepInterruptibly(Backoff.longest)
            }
        }
    }

    /// Opens one connection to learn the capabilities, makes the plan, and starts its listeners (the first
    /// one takes over that connection).
    private func startListening(_ doorbell: Doorbell) throws -> (WatchPlan, [ServerListener]) {
        let settings = AccountSettings.imap(
            try config.imapServer(of: account, for: "mo-sync --watch").imap, account: account.name,
            tokens: AccountSettings.tokenBroker(for: account, stateDirectory: config.stateDirectory))
        let probe = try IMAPConnection.open(settings, trace: options.trace)
        let plan = WatchPlan.make(
            offersNotify: probe.supportsNotify, watch: account.sync.watch,
            pollInterval: account.sync.pollInterval)
        let targets: [ServerListener.Target] =
            switch plan.listening {
            case .notify: [.notify]
            case .idle(let folders): folders.map { .folder($0) }
            case .push: []
            }
        options.verbose("\(account.name): listening with " + (plan.listening == .notify ? "NOTIFY" : "IDLE on \(targets.count) folder(s)"))
        let listeners = targets.map { target in
            ServerListener(target, settings: settings, trace: options.trace, doorbell: doorbell) { [report] error in
                report(.failure(ListenerError(target: target, error: error)))
            }
        }
        for (i, l) in listeners.enumerated() { l.start(with: i == 0 ? probe : nil) }
        return (plan, listeners)
    }

    /// A JMAP account's push listener, started; its client over the session the sync kept. The server pings
    /// every half `timeout` (at most 30 s) so the read timeout never ends a quiet stream.
    private func startPush(_ jmap: JMAPConfig, _ doorbell: Doorbell) -> JMAPPushListener {
        let name = account.name, directory = config.stateDirectory + "/" + account.name, every = account.sync.pollInterval
        let tokens = AccountSettings.tokenBroker(for: account, stateDirectory: config.stateDirectory)
        let listener = JMAPPushListener(
            ping: max(1, min(30, jmap.timeout / 2)), doorbell: doorbell,
            makeClient: {
                try AccountSettings.jmapClient(jmap, account: name, tokens: tokens, keptIn: directory).client
            },
            unsupported: { [options] why in
                options.verbose("\(name): no push (\(escapedForMessage(why))); polling every \(every) s (JMAP)")
            },
            failed: { [report] error in report(.failure(PushError(error: error))) })
        options.verbose("\(name): listening with JMAP push")
        listener.start()
        return listener
    }

    /// Sleeps until a ring or the poll deadline; returns the reasons (empty: the poll is due, or a stop).
    /// Or until a timed action later than `timedAfter` (wall clock) is due, looked for each second.
    private func waitForChange(_ doorbell: Doorbell, until deadlineNow: () -> Double?, timedAfter: Int) -> Set<WatchPlan.Wake> {
        WatchSignals.phase.store(WatchSignals.idling, ordering: .sequentiallyConsistent)
        defer { WatchSignals.phase.store(WatchSignals.syncing, ordering: .sequentiallyConsistent) }
        while !WatchSignals.stopRequested {
            let deadline = deadlineNow()
            let woken = doorbell.wait(until: deadline)
            if !woken.isEmpty { return woken }
            if let due = nextTimedAction(timedAfter), due <= WallClock.now() { return [.timer] }
            if let deadline, monotonicSeconds() >= deadline { return [.poll] }
        }
        return []
    }

    /// The reasons for a verbose line, in a stable order: "flags, local".
    static func describe(_ woken: Set<WatchPlan.Wake>) -> String {
        woken.map { "\($0)" }.sorted().joined(separator: ", ")
    }

    func sleepInterruptibly(_ seconds: Double) {
        WatchSignals.phase.store(WatchSignals.idling, ordering: .sequentiallyConsistent)
        defer { WatchSignals.phase.store(WatchSignals.syncing, ordering: .sequentiallyConsistent) }
        pause(seconds, unless: { WatchSignals.stopRequested })
    }
}

/// A listener's connection failed; it is being opened again.
struct ListenerError: MoError {
    let target: ServerListener.Target
    let error: Error
    var kind: ErrorKind { (error as? MoError)?.kind ?? .temporary }
    var description: String {
        let what =
            switch target {
            case .notify: "NOTIFY"
            case .folder(let f): "IDLE on \(f)"
            }
        return "\(what): \(error); listening again after a pause"
    }
}

/// A JMAP push connection failed; it is being opened again (polling meanwhile).
struct PushError: MoError {
    let error: Error
    var kind: ErrorKind { (error as? MoError)?.kind ?? .temporary }
    var description: String { "JMAP push: \(error); listening again after a pause (polling meanwhile)" }
}

/// SIGTERM/SIGINT handling for --watch. While idling nothing is in flight, so the handler ends the process
/// at once; during a sync it only asks the loop to stop after the sync (a half-done sync would be safe
/// too — the journal sees to that — but finishing is kinder).
public enum WatchSignals {
    static let syncing = 0, idling = 1
    static let phase = Atomic<Int>(0)
    static let stop = Atomic<Bool>(false)
    static var stopRequested: Bool { stop.load(ordering: .sequentiallyConsistent) }

    public static func install() {
        let handler: @convention(c) (Int32) -> Void = { _ in
            WatchSignals.stop.store(true, ordering: .sequentiallyConsistent)
            if WatchSignals.phase.load(ordering: .sequentiallyConsistent) == WatchSignals.idling { _exit(0) }
        }
        signal(SIGTERM, handler)
        signal(SIGINT, handler)
    }
}
