import IMAPCodec

/// What the server said about the mod-sequences of this connection's own changes (RFC 7162), so that a
/// client can keep its saved HIGHESTMODSEQ past them and not read them back as news next time
/// (`SyncEngine.ModSeqAdvance` decides how far).
public struct OwnChanges: Sendable, Equatable {
    /// The MODSEQ of each FETCH answering one of the silent STOREs, for a UID it asked for and without
    /// FLAGS (a FETCH with FLAGS reports the message as it is, which may include another's change).
    public var modSeqs: [UInt64] = []
    /// HIGHESTMODSEQ from the tagged OK of each UID EXPUNGE or UID MOVE.
    public var completions: [UInt64] = []
    /// A response during the commands showed a change they did not make: a FETCH with FLAGS or for a UID
    /// not asked, EXISTS, EXPUNGE, or VANISHED for a UID not asked.
    public var foreignSeen = false
    public init() {}
}

extension IMAPConnection {
    /// Silent UID STOREs, pipelined in rounds in which no UID appears twice; reports the MODSEQ values
    /// they were given. Rounds, because a server may answer pipelined commands with one FETCH per message
    /// carrying only its last value (Dovecot does): a value given to a message that a later command in the
    /// same round changed again would never be seen, and would look like another session's change.
    @discardableResult
    public func storeSilently(_ stores: [(uids: UIDSet, action: StoreAction)]) throws -> OwnChanges {
        var changes = OwnChanges()
        for round in Self.rounds(stores.map { Set($0.uids.elements) }) {
            var asked = Set<UInt32>()
            for i in round { asked.formUnion(stores[i].uids.elements) }
            var collector = MessageInfoCollector()
            try pipeline(
                round.map { .uidStore(stores[$0].uids, StoreAction(stores[$0].action.mode, stores[$0].action.flags, silent: true)) },
                untagged: { changes.noteUnsolicited($0, asked: []) },
                fetch: { event in
                    if let own = changes.noteStoreFetch(event, &collector, asked: asked) { changes.modSeqs.append(own.modSeq) }
                })
        }
        return changes
    }

    /// Groups commands (by index, order kept) so that each goes in the round after the last one that
    /// touched any of its UIDs.
    static func rounds(_ sets: [Set<UInt32>]) -> [[Int]] {
        var lastRound: [UInt32: Int] = [:]
        var rounds: [[Int]] = []
        for (i, uids) in sets.enumerated() {
            let r = uids.reduce(0) { max($0, (lastRound[$1] ?? -1) + 1) }
            for u in uids { lastRound[u] = r }
            if r == rounds.count { rounds.append([]) }
            rounds[r].append(i)
        }
        return rounds
    }

    /// Marks messages \Deleted and expunges exactly them (UID EXPUNGE); without UIDPLUS they stay marked,
    /// since a plain EXPUNGE would also remove messages others marked.
    @discardableResult
    public func delete(_ uids: UIDSet) throws -> OwnChanges {
        var changes = try storeSilently([(uids, StoreAction(.add, [.deleted], silent: true))])
        guard capabilities.contains(.uidplus) else { return changes }
        let asked = Set(uids.elements)
        let done = try run(
            .uidExpunge(uids), untagged: { changes.noteUnsolicited($0, asked: asked) },
            fetch: { if case .fetchStart = $0 { changes.foreignSeen = true } })
        if case .highestModSeq(let m)? = done.text.code { changes.completions.append(m.value) }
        return changes
    }

    /// Claims messages for a change only one session may make. Two devices moving one message at one
    /// moment (a snoozed message waking on both) can both succeed: Dovecot's MOVE copies before it
    /// expunges, and leaves two copies. A claim is a silent UID STORE under UNCHANGEDSINCE `modSeq`
    /// (RFC 7162 §3.1.3), applied by the server only to messages unchanged since, atomically: of two
    /// sessions claiming one message from one listing, one wins and the other's UID comes back in
    /// `MODIFIED`. One STORE per distinct action, pipelined; each UID in one claim only. Returns the UIDs
    /// lost (changed since `modSeq`: claimed by another, or changed otherwise) and the own changes.
    public func claim(_ claims: [(uid: UInt32, action: StoreAction)], unchangedSince modSeq: ModSequence) throws -> (
        lost: Set<UInt32>, changes: OwnChanges
    ) {
        var byAction: [StoreAction: [UInt32]] = [:]
        for c in claims { byAction[StoreAction(c.action.mode, c.action.flags, silent: true), default: []].append(c.uid) }
        let groups = byAction.sorted { $0.value.min()! < $1.value.min()! }
        let asked = Set(claims.map(\.uid))
        var changes = OwnChanges()
        var collector = MessageInfoCollector()
        var given: [(uid: UInt32, modSeq: UInt64)] = []
        let done = try pipeline(
            groups.map { .uidStore(UIDSet(uids: $0.value), $0.key, unchangedSince: modSeq) },
            untagged: { changes.noteUnsolicited($0, asked: []) },
            fetch: { event in
                if let own = changes.noteStoreFetch(event, &collector, asked: asked) { given.append(own) }
            })
        var lost = Set<UInt32>()
        for d in done { if case .modified(let set)? = d.text.code { lost.formUnion(set.elements.filter(asked.contains)) } }
        // A lost message's MODSEQ is another's change, never ours.
        changes.modSeqs += given.filter { !lost.contains($0.uid) }.map(\.modSeq)
        return (lost, changes)
    }

    /// Moves messages: UID MOVE (RFC 6851) when offered, else UID COPY + STORE \Deleted + UID EXPUNGE
    /// (the expunge only with UIDPLUS, so no other \Deleted message is touched). Returns source → destination
    /// UIDs when the server reports COPYUID, and what the source mailbox said of its mod-sequences.
    @discardableResult
    public func move(_ uids: UIDSet, to mailbox: MailboxName) throws -> (
        pairs: [(source: UInt32, destination: UInt32)], changes: OwnChanges
    ) {
        var copyUID: ResponseCode?
        var changes = OwnChanges()
        if capabilities.contains(.move) {
            let asked = Set(uids.elements)
            let done = try run(
                .uidMove(uids, mailbox),
                untagged: { u in
                    if case .ok(let text) = u, case .copyUID? = text.code { copyUID = text.code }
                    changes.noteUnsolicited(u, asked: asked)
                }, fetch: { if case .fetchStart = $0 { changes.foreignSeen = true } })
            if copyUID == nil { copyUID = done.text.code }
            if case .highestModSeq(let m)? = done.text.code { changes.completions.append(m.value) }
        } else {
            copyUID = try run(.uidCopy(uids, mailbox)).text.code
            changes = try delete(uids)
        }
        // A COPYUID pairs at most what was asked; one naming more is not used (and so never listed).
        guard case .copyUID(_, let source, let destination)? = copyUID, source.count == destination.count,
            source.count <= uids.count
        else { return ([], changes) }
        return (Array(zip(source.elements, destination.elements)).map { (source: $0.0, destination: $0.1) }, changes)
    }
}

extension OwnChanges {
    /// A FETCH answering one of our silent STOREs: a FETCH with FLAGS (the message as it is, perhaps with
    /// another's change) or for a UID not asked is another's doing; else its MODSEQ, returned, is ours.
    mutating func noteStoreFetch(_ event: ResponseEvent, _ collector: inout MessageInfoCollector, asked: Set<UInt32>) -> (
        uid: UInt32, modSeq: UInt64
    )? {
        guard let m = collector.feed(event) else { return nil }
        if m.flags != nil || !asked.contains(m.uid) {
            foreignSeen = true
            return nil
        }
        return m.modSeq.map { (m.uid, $0.value) }
    }

    /// Untagged responses that change the mailbox are another's doing, except VANISHED for asked UIDs.
    mutating func noteUnsolicited(_ u: UntaggedResponse, asked: Set<UInt32>) {
        switch u {
        case .exists, .expunge: foreignSeen = true
        case .vanished(_, let gone): if gone.hasElement(notIn: asked) { foreignSeen = true }
        default: break
        }
    }
}
