import IMAPCodec
import Maildir
import MoCore
import SyncEngine

/// Claims before local moves go up. Two devices moving one message at one moment both send UID MOVE, and
/// Dovecot's MOVE copies before it expunges: both can succeed and leave two copies. Snooze makes that
/// moment common: every device wakes the message at its time, and the wake takes its mark off. So a move
/// that takes flags off claims the message first, taking them off in the source under UNCHANGEDSINCE the
/// source's listing (`ServerStore.claim`); only the winner moves. Two devices' interleavings:
///
/// | the other device, before this one's claim        | this one                              | reason              |
/// |--------------------------------------------------|---------------------------------------|---------------------|
/// | nothing yet                                      | claims, wins, moves                   | `claimed`           |
/// | claimed after this one's listing                 | loses (MODIFIED), waits a run          | `claimLost`         |
/// | claimed before this one's listing                | sees the flags already off, waits a run | `takenOffElsewhere` |
/// | moved the message already                        | claim finds no message, MOVE no COPYUID | (`uploadsDeferred`) |
///
/// A move that takes nothing off has nothing to claim with and moves unclaimed (`nothingToClaim`): two
/// people moving one unchanged message in the same second can still make two copies. A move that waits
/// keeps its source pair (`held`: not a deletion) and its file unsent (`uploadsDeferred`); the next run
/// finds the message moved by the other device, or moves it then. `takenOffElsewhere` takes the server's
/// flags as the pair's base, so that a flag merely removed elsewhere cannot hold the move for ever.
extension MoveDetector {
    enum ClaimOutcome: Equatable { case claimed, claimLost, takenOffElsewhere, nothingToClaim }

    /// The decision for one move before any claim is sent: nil when it should claim `off` (destination
    /// letters), else the outcome. Pure: the pair's base, the server's flags, and the file's, all in the
    /// destination's letters.
    static func beforeClaim(base: MaildirFlags, server: MaildirFlags, file: MaildirFlags) -> (off: MaildirFlags, outcome: ClaimOutcome?) {
        let off = base.subtracting(file).subtracting(.trashed)
        if off.isEmpty { return ([], .nothingToClaim) }
        if !off.intersection(base.subtracting(server)).isEmpty { return (off, .takenOffElsewhere) }
        return (off, nil)
    }

    /// Claims `moves` (one source, one destination) and returns those that may move, each with the letters
    /// its claim took off on the server; the others wait a run.
    func claimed(
        _ moves: [(record: SyncRecord, unique: String)], from source: PreparedFolder, to destination: PreparedFolder
    ) throws -> [(record: SyncRecord, unique: String, off: MaildirFlags)] {
        let sourceTable = source.translation.keywords
        var going: [(record: SyncRecord, unique: String, off: MaildirFlags)] = []
        var claims: [(id: UInt32, action: StoreAction)] = []
        var waiting: [(record: SyncRecord, unique: String)] = []
        for (r, unique) in moves {
            let onServer = source.remote[r.uid] ?? r.flags
            let base = destination.translation.translate(r.flags, from: sourceTable).flags
            let server = destination.translation.translate(onServer, from: sourceTable).flags
            let file = destination.localFile(unique)?.flags ?? base
            let (off, outcome) = Self.beforeClaim(base: base, server: server, file: file)
            switch outcome {
            case .nothingToClaim?: going.append((r, unique, []))
            case .takenOffElsewhere?:
                source.record(SyncRecord(uid: r.uid, unique: r.unique, flags: onServer))
                waiting.append((r, unique))
            default:
                going.append((r, unique, off))
                claims.append((r.uid, StoreAction(.remove, destination.translation.imapFlags(off), silent: true)))
            }
        }
        if let result = try server.claim(claims, since: source.selected) {
            CrashPoint.step("move: claimed on the server")
            source.noteOwn(result.changes)
            for m in going where result.lost.contains(m.record.uid) { waiting.append((m.record, m.unique)) }
            going.removeAll { result.lost.contains($0.record.uid) }
        } else {
            // No claim made: nothing was taken off on the server.
            going = going.map { ($0.record, $0.unique, []) }
        }
        for (r, unique) in waiting {
            source.held.insert(r.unique)
            destination.uploadsDeferred.insert(unique)
        }
        if !waiting.isEmpty {
            source.times.passedOver = true
            source.summary.notes.append("\(waiting.count) move(s) wait a run: another device is moving the message(s)")
        }
        return going
    }
}
