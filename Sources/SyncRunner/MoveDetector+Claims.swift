import IMAPClient
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
/// | the other device, before this one's claim        | this one                                | reason              |
/// |--------------------------------------------------|-----------------------------------------|---------------------|
/// | nothing yet                                      | claims, wins, moves                     | `claimed`           |
/// | claimed after this one's listing                 | loses (MODIFIED), waits a run            | `claimLost`         |
/// | claimed before this one's listing                | sees the flags already off, waits a run  | `takenOffElsewhere` |
/// | moved the message already                        | claim finds no message, MOVE no COPYUID  | (`uploadsDeferred`) |
///
/// Steps, named: the claimed pairs' bases lose what the claim takes off, journaled before the STORE
/// (`own claim journaled`), so a run that dies after winning (or whose MOVE fails) knows the change for
/// its own next time and moves at once rather than waiting on itself; a lost claim's base is put back.
/// A move that waits keeps its source pair (`held`: not a deletion) and its file unsent
/// (`uploadsDeferred`); `takenOffElsewhere` drops from the pair's base the flags taken off elsewhere (and
/// only those, so flags added elsewhere still come down), so a flag merely removed elsewhere holds the
/// move one run, not for ever. The next run finds the message moved by the other device, or moves it.
///
/// No claim, and no wait, where the store cannot claim (`canClaim`: no mod-sequences; Gmail mode, whose
/// moves are label changes), where flag changes do not go up (the account's `flags` policy), for a move
/// that takes nothing off (`nothingToClaim`: two people moving one unchanged message in the same second
/// can still leave two copies), and when the server refuses the claim (moved unclaimed, as before).
extension MoveDetector {
    enum ClaimOutcome: Equatable { case claimed, claimLost, takenOffElsewhere, nothingToClaim }

    /// The decision for one move before any claim is sent: nil when it should claim `off`, else the
    /// outcome. Pure: the pair's base, the server's flags, and the file's, all in the source's letters.
    static func beforeClaim(base: MaildirFlags, server: MaildirFlags, file: MaildirFlags) -> (off: MaildirFlags, outcome: ClaimOutcome?) {
        let off = base.subtracting(file).subtracting(.trashed)
        if off.isEmpty { return ([], .nothingToClaim) }
        if !off.intersection(base.subtracting(server)).isEmpty { return (off, .takenOffElsewhere) }
        return (off, nil)
    }

    /// Claims `moves` (one source, one destination) and returns those that may move, each with the letters
    /// (the source's) its claim took off on the server; the others wait a run.
    func claimed(
        _ moves: [(record: SyncRecord, unique: String)], from source: PreparedFolder, to destination: PreparedFolder
    ) throws -> [(record: SyncRecord, unique: String, off: MaildirFlags)] {
        guard server.canClaim(source.selected), folders.first?.policy.flags.contains(.push) == true else {
            return moves.map { ($0.record, $0.unique, []) }
        }
        var going: [(record: SyncRecord, unique: String, off: MaildirFlags)] = []
        var claims: [(id: UInt32, action: StoreAction)] = []
        var waiting: [(record: SyncRecord, unique: String)] = []
        // The file's letters read through the source's table (a scratch copy: letters the source lacks
        // are for keywords its base cannot hold anyway).
        var scratch = source.translation.keywords
        for (r, unique) in moves {
            let onServer = source.remote[r.uid] ?? r.flags
            let file =
                destination.localFile(unique).map {
                    MaildirKeywords.translate($0.flags, from: destination.translation.keywords, to: &scratch).flags
                } ?? r.flags
            let (off, outcome) = Self.beforeClaim(base: r.flags, server: onServer, file: file)
            switch outcome {
            case .nothingToClaim?: going.append((r, unique, []))
            case .takenOffElsewhere?:
                source.record(SyncRecord(uid: r.uid, unique: r.unique, flags: r.flags.subtracting(off.subtracting(onServer))))
                waiting.append((r, unique))
            default:
                going.append((r, unique, off))
                claims.append((r.uid, StoreAction(.remove, source.translation.imapFlags(off), silent: true)))
                source.record(SyncRecord(uid: r.uid, unique: r.unique, flags: r.flags.subtracting(off)))
            }
        }
        if !claims.isEmpty {
            try source.flushJournal()
            CrashPoint.step("move: own claim journaled")
            let result: (lost: Set<UInt32>, changes: OwnChanges)
            do {
                result = try server.claim(claims, since: source.selected)
            } catch let error as IMAPError where error.isRefusal {
                // Refused (a server that offers CONDSTORE but not this STORE): moved unclaimed, as before.
                for m in going where !m.off.isEmpty { source.record(m.record) }
                source.summary.notes.append("the server refused to claim \(claims.count) moved message(s): moved unclaimed")
                return going.map { ($0.record, $0.unique, []) }
            }
            CrashPoint.step("move: claimed on the server")
            source.noteOwn(result.changes)
            for m in going where result.lost.contains(m.record.uid) {
                source.record(m.record)  // not ours: the base as it was
                waiting.append((m.record, m.unique))
            }
            going.removeAll { result.lost.contains($0.record.uid) }
        }
        for (r, unique) in waiting {
            source.held.insert(r.unique)
            destination.uploadsDeferred.insert(unique)
        }
        if !waiting.isEmpty {
            source.times.passedOver = true
            source.summary.notes.append(
                "\(waiting.count) move(s) wait a run: the message(s) changed on the server meanwhile (another device moving them?)")
        }
        return going
    }
}
