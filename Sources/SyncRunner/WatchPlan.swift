import IMAPClient
import IMAPCodec

/// The pure decisions of `mo-sync --watch`: how to listen to the server, which server news and which local
/// quiet lead to a sync. No I/O; `Watcher`, `ServerListener` and `LocalChanges` act on the answers.
///
/// How to listen (`WatchPlan.make`), first matching rule:
///
/// | server offers NOTIFY | plan                                                                    | reason             |
/// |----------------------|-------------------------------------------------------------------------|--------------------|
/// | yes                  | one connection, NOTIFY SET (personal (MessageNew MessageExpunge FlagChange MailboxName)); no polling | `.notify` |
/// | no                   | IDLE on INBOX + `watch` (one connection each, at most `maxIdlers`), the rest synced every `poll-interval` | `.idleAndPoll` |
/// | a JMAP account       | one EventSource connection (`JMAPPushListener`); every folder synced every `poll-interval` while it is not listening (a server without push: always) | `.push` |
///
/// Which news wakes the watcher (`WatchPlan.wake(for:)`):
///
/// | event                                   | wake              | why                                                  |
/// |-----------------------------------------|-------------------|------------------------------------------------------|
/// | EXISTS, EXPUNGE, VANISHED               | `.messages`       | mail arrived or left a listened folder               |
/// | FETCH                                   | `.flags`          | another client changed flags (RFC 3501 §7.4.2)       |
/// | STATUS                                  | `.folderStatus`   | NOTIFY: counts or HIGHESTMODSEQ of a folder changed  |
/// | LIST                                    | `.folderList`     | NOTIFY MailboxName: a folder was created, deleted, renamed |
/// | OK [NOTIFICATIONOVERFLOW]               | `.overflow`       | the server dropped news: only a full sync is safe    |
/// | JMAP `StateChange` for the account      | `.pushed`         | its Email or Mailbox state moved (RFC 8620 §7.3)     |
/// | anything else (RECENT, FLAGS, OK [HIGHESTMODSEQ]...) | none | RECENT comes with EXISTS; the rest says nothing new |
public struct WatchPlan: Sendable, Equatable {
    public enum Listening: Sendable, Equatable {
        /// One NOTIFY connection covers every folder.
        case notify
        /// One IDLE connection per folder (names as configured, INBOX first).
        case idle([String])
        /// A JMAP account's push; every folder synced every `poll-interval` while it is not listening.
        case push
    }
    public let listening: Listening
    /// Seconds between full syncs that nothing asked for; nil: never (NOTIFY sees every folder).
    public let pollSeconds: Double?

    /// IMAP IDLE watches one mailbox per connection; servers limit connections per user (Dovecot: 10 per IP).
    public static let maxIdlers = 8

    public static func make(offersNotify: Bool, watch: [String], pollInterval: Int) -> WatchPlan {
        if offersNotify { return WatchPlan(listening: .notify, pollSeconds: nil) }
        var folders = ["INBOX"]
        for f in watch where !folders.contains(where: { isSameFolder($0, f) }) { folders.append(f) }
        return WatchPlan(listening: .idle(Array(folders.prefix(maxIdlers))), pollSeconds: Double(pollInterval))
    }

    /// A JMAP account's plan: push, and polling while push is not listening (`.push`).
    public static func jmap(pollInterval: Int) -> WatchPlan { WatchPlan(listening: .push, pollSeconds: Double(pollInterval)) }

    /// The seconds to the next poll: none while a push stream is open (it tells every change).
    public func pollSeconds(pushListening: Bool) -> Double? { listening == .push && pushListening ? nil : pollSeconds }

    /// INBOX is case-insensitive (RFC 3501 §5.1); other names are compared exactly.
    static func isSameFolder(_ a: String, _ b: String) -> Bool {
        a == b || (a.uppercased() == "INBOX" && b.uppercased() == "INBOX")
    }

    /// What NOTIFY asks for: every personal folder's messages, flags and the folder list itself. Nothing
    /// is selected on that connection, so all of it arrives as STATUS and LIST (RFC 5465 §5).
    public static let notifyGroups = [NotifyEventGroup(.personal, [.messageNew, .messageExpunge, .flagChange, .mailboxName])]

    /// Why the watcher syncs.
    public enum Wake: Sendable, Equatable, Hashable {
        case messages, flags, folderStatus, folderList, overflow
        /// A JMAP push: the account's state moved.
        case pushed
        /// A listener (re)connected: what changed while it was not listening is unknown.
        case listening
        /// Files changed in the Maildir (debounced).
        case local
        /// `poll-interval` passed.
        case poll
        /// A timed action is due: a message sent later, a snoozed message's time.
        case timer
    }

    public static func wake(for event: IdleEvent) -> Wake? {
        switch event {
        case .untagged(.exists), .untagged(.expunge), .untagged(.vanished): .messages
        case .fetch: .flags
        case .untagged(.status): .folderStatus
        case .untagged(.list): .folderList
        case .untagged(.ok(let text)) where text.code == .notificationOverflow: .overflow
        default: nil
        }
    }
}

/// When a burst of local file events becomes one sync: after `quiet` seconds without events, or `longest`
/// seconds after the first, whichever comes first (a client renaming 10,000 files one by one is synced
/// while it works, not only after it stops).
///
/// | state                                  | decision                                | reason       |
/// |----------------------------------------|-----------------------------------------|--------------|
/// | no event since the last sync           | `.idle`                                 | nothing to do |
/// | `now - last >= quiet`                  | `.fire`                                 | `quiet`      |
/// | `now - first >= longest`               | `.fire`                                 | `longest`    |
/// | otherwise                              | `.waitUntil(min(last + quiet, first + longest))` | burst goes on |
public enum Debounce {
    public static let quiet = 0.2, longest = 1.0

    public enum Decision: Sendable, Equatable {
        case idle
        case fire
        case waitUntil(Double)
    }

    public static func decide(first: Double?, last: Double, now: Double) -> Decision {
        guard let first else { return .idle }
        if now - last >= quiet || now - first >= longest { return .fire }
        return .waitUntil(min(last + quiet, first + longest))
    }
}

/// How long the watcher and its listeners wait before trying again after a failure: 5 s, doubling to
/// 5 min, and 5 s again after a success. Long enough not to hammer a server that is restarting, short
/// enough that a network coming back is noticed within minutes.
struct Backoff {
    static let first: Double = 5, longest: Double = 300
    private var next = Backoff.first

    /// The delay before the next try; each failure in a row doubles the one after it.
    mutating func failed() -> Double {
        defer { next = min(next * 2, Self.longest) }
        return next
    }

    mutating func succeeded() { next = Self.first }
}
