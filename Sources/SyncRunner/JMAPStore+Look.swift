import IMAPClient
import IMAPCodec
import JMAPClient
import Maildir
import MoCore
import SyncEngine
import SyncState

/// The run's look at a JMAP account (`JMAPStore`): taken once, before any view is listed, and every view
/// cut from it.
extension JMAPStore {
    /// The run's look at the account.
    struct Look {
        var epoch: UInt32
        /// The mark of the Email state the look is as of.
        var mark: UInt64
        var uidNext: UInt32
        /// Every Email was listed: `placed` holds all of them.
        var listedWhole = false
        /// The mark changes were listed since (the oldest view's), when not listed whole.
        var changedSince: UInt64?
        /// Each listed Email's view and flags (the changed ones, or all), and its blob and size.
        var placed: [UInt32: (folder: Placement.Folder?, flags: [Flag])] = [:]
        var emails: [UInt32: (blob: String, size: Int)] = [:]
        /// Ids destroyed since the mark.
        var destroyed: Set<UInt32> = []
        /// The views of messages this run uploaded, moved or deleted (nil: none).
        var own: [UInt32: Placement.Folder?] = [:]
        /// Each view's count, once asked.
        var counts: [Placement.Folder: UInt32]?

        func folder(of id: UInt32) -> Placement.Folder?? {
            if let o = own[id] { return o }
            return placed[id].map { $0.folder }
        }
    }

    /// Takes the run's look before any view is opened, given the views' committed marks (nil: a view with
    /// none), so every view is cut from one snapshot:
    ///
    /// | the account and the marks | the look | requests |
    /// |---|---|---|
    /// | Email state as the last `s` line, mailboxes as the mark, every view at that mark | nothing more (`unchanged`) | 1 |
    /// | a view without a mark or of another epoch; the mailboxes changed; `cannotCalculateChanges`; `wanted` | every Email listed (`listedWhole`) | 1 + the listing |
    /// | every view at the last mark, the last run's counts of it, the changes fit one answer | the changes and their Emails in the first request, the counts brought forward from the last run's (`countsBroughtForward`) | 1 |
    /// | every view at the last mark, the changes fit one answer | the changes and their Emails in the first request, the counts in a second (with a last `Email/changes`) | 2 |
    /// | otherwise | `Email/changes` since the oldest view's mark, each view's count with a last `Email/changes` that finds nothing more, `Email/get` of the changed | 1 + 2 or more |
    ///
    /// The first request asks the Email state and the mailboxes, and, when every view is at the last mark,
    /// the changes since it and the changed Emails (by back-reference). The counts cost Cyrus more than the
    /// rest of the request (an `Email/query` total reads every Email of the view): they are asked only when
    /// something changed and the last run left none to bring forward.
    func begin(views committed: [ListingMark?], whole wanted: Bool = false) throws {
        let marks = committed.map(effective)
        let last = JMAPIDs.lastState(in: directory)
        let atLast = last.flatMap { l in marks.allSatisfy { $0?.uidValidity == l.epoch && $0?.modSeq.value == l.mark } ? l : nil }
        let first = try firstRequest(changesSince: wanted ? nil : atLast?.state)
        mailboxes = first.mailboxes
        let sameMailboxes = lastMark?.mailboxState == mailboxes.digest
        if !wanted, let l = atLast, l.state == first.emailState, sameMailboxes, let counts = lastMark?.counts, counts.epoch == l.epoch,
            counts.mark == l.mark
        {
            unchanged = true
            var look = Look(epoch: l.epoch, mark: l.mark, uidNext: counts.uidNext)
            look.counts = Dictionary(uniqueKeysWithValues: Self.views.map { ($0, counts.views[$0.rawValue] ?? 0) })
            self.look = look
            return
        }
        var ids = try JMAPIDs.open(in: directory)
        let oldest = marks.compactMap { $0?.modSeq.value }.min()
        let since = oldest.flatMap { ids.state(of: $0) }
        guard !wanted, sameMailboxes, !first.cannotCalculate, !marks.contains(where: { $0 == nil || $0!.uidValidity != ids.epoch }),
            let oldest, let since
        else {
            if first.cannotCalculate { notes.append("the server cannot say what changed since the last sync; every message was listed") }
            return try listWhole(&ids)
        }
        var found: Found
        if var chained = first.changes, atLast?.state == since, let counts = countsBroughtForward(chained, ids: ids, from: oldest) {
            // The last run's counts and what changed since: no request for them.
            chained.counts = counts
            found = chained
        } else if var chained = first.changes, atLast?.state == since {
            // The counts, with a last Email/changes from the state the first answer reached: what came
            // since is added (and the counts are of the state the changes end at).
            let more = try changes(since: chained.state)
            chained.emails += more.emails
            chained.destroyed += more.destroyed
            chained.counts = more.counts
            chained.state = more.state
            found = chained
        } else {
            do {
                found = try changes(since: since)
            } catch let error as JMAPMethodError where error.type == "cannotCalculateChanges" {
                notes.append("the server cannot say what changed since the last sync; every message was listed")
                return try listWhole(&ids)
            }
        }
        let mark = try ids.record(newIDs: found.emails.map(\.id), state: found.state) ?? 0
        var look = Look(epoch: ids.epoch, mark: mark, uidNext: ids.lastNumber + 1)
        look.changedSince = oldest
        look.counts = found.counts
        look.destroyed = Set(found.destroyed.compactMap { ids.number(of: $0) })
        place(found.emails, ids: ids, into: &look)
        self.ids = ids
        self.look = look
    }

    /// Each view's count at the state `found` ends at, from the last run's counts at mark `from`: less the
    /// changed and destroyed messages the view's state holds, plus the changed ones placed in it now. Nil
    /// (the counts are asked of the server) without counts of that mark and epoch, or when they do not
    /// cover what the states hold. The core's check that the saved pairs add up to the count then asks
    /// whether each view's state holds as many messages as the server had at the mark: a lost record
    /// still shows (`PreparedFolder.pairsAccountForTheServer`).
    func countsBroughtForward(_ found: Found, ids: JMAPIDs, from: UInt64) -> [Placement.Folder: UInt32]? {
        guard let saved = lastMark?.counts, saved.epoch == ids.epoch, saved.mark == from else { return nil }
        var touched = Set(found.destroyed.compactMap(ids.number(of:)))
        var placedNow: [Placement.Folder: Int] = [:]
        var seen = Set<String>()
        // An id may be both created and updated in one answer (RFC 8620 §5.2): counted once.
        for e in found.emails where seen.insert(e.id).inserted {
            if let n = ids.number(of: e.id) { touched.insert(n) }
            if let view = mailboxes.view(e, vocabulary: vocabulary, policy: policy).folder { placedNow[view, default: 0] += 1 }
        }
        var counts: [Placement.Folder: UInt32] = [:]
        for view in Self.views {
            // A view with no folder (Trash or Junk not synced) is never opened: its count is kept as it was.
            guard let state = viewStates[view] else {
                counts[view] = saved.views[view.rawValue] ?? 0
                continue
            }
            // A state that does not read leaves the counts to the server (and the view's own error to the core).
            guard let held = touched.isEmpty ? 0 : (try? state.load(keepingUIDs: touched))?.records.count else { return nil }
            let count = Int(saved.views[view.rawValue] ?? 0) - held + placedNow[view, default: 0]
            guard count >= 0, count <= Int(UInt32.max) else { return nil }
            counts[view] = UInt32(count)
        }
        return counts
    }

    /// A view's committed mark as the account stands: the mark the last run's own keyword changes led on
    /// from is the mark they ended at (`JMAPMark.ownFrom`): the view's files already have those changes.
    func effective(_ mark: ListingMark?) -> ListingMark? {
        guard let mark, let from = lastMark?.ownFrom, let to = lastMark?.counts?.mark, mark.modSeq.value == from,
            let k = ModSequence(to)
        else { return mark }
        return ListingMark(uidValidity: mark.uidValidity, modSeq: k)
    }

    /// What changed since a state: the changed Emails, the destroyed ids, each view's count, and the state
    /// they are of.
    struct Found {
        var emails: [JMAPEmail] = []
        var destroyed: [String] = []
        var counts: [Placement.Folder: UInt32] = [:]
        var state: String
    }

    /// The first request's answers.
    struct FirstAnswer {
        var emailState: String
        var mailboxes: JMAPMailboxMap
        /// What changed since the state asked, when it fit one answer.
        var changes: Found?
        var cannotCalculate = false
    }

    /// The Email state and the mailboxes; with `since`, also the changes since it and the changed Emails.
    func firstRequest(changesSince since: String?) throws -> FirstAnswer {
        let account = JSONValue.string(client.session.accountID)
        var calls = [
            JMAPCall("Email/get", .object([("accountId", account), ("ids", .array([]))]), id: "e"),
            JMAPCall("Mailbox/get", .object([("accountId", account), ("ids", .null)]), id: "m")
        ]
        if let since { calls += changeCalls(since: since) }
        let answer = try client.call(calls)
        guard let state = try answer.arguments(for: "e")["state"]?.stringValue else {
            throw GenericError(.protocolViolation, "\(endpoint): Email/get gave no state")
        }
        var first = FirstAnswer(
            emailState: state, mailboxes: JMAPMailboxMap(try JMAPMailbox.list(from: try answer.arguments(for: "m")).mailboxes))
        guard since != nil else { return first }
        do {
            let (c, found) = try readChanges(answer)
            if !c.hasMoreChanges { first.changes = found }
        } catch let error as JMAPMethodError where error.type == "cannotCalculateChanges" {
            first.cannotCalculate = true
        } catch is JMAPMethodError {
            // A back-reference the server could not follow: the changes are asked again, alone.
        }
        return first
    }

    /// `Email/changes` since `state` (at most as many as one `Email/get` takes).
    func changesCall(since state: String) -> JMAPCall {
        let most = min(4096, client.session.limits.maxObjectsInGet)
        return JMAPCall(
            "Email/changes",
            .object([("accountId", .string(client.session.accountID)), ("sinceState", .string(state)), ("maxChanges", .int(most))]), id: "c"
        )
    }

    /// `changesCall`, and `Email/get` of what it created and updated, by back-reference.
    func changeCalls(since state: String) -> [JMAPCall] {
        let account = JSONValue.string(client.session.accountID)
        return [
            changesCall(since: state),
            JMAPCall(
                "Email/get",
                .object([
                    ("accountId", account), ("#ids", JMAPCall.resultOf("c", "Email/changes", path: "/created")),
                    ("properties", .strings(JMAPEmail.properties))
                ]),
                id: "gc"),
            JMAPCall(
                "Email/get",
                .object([
                    ("accountId", account), ("#ids", JMAPCall.resultOf("c", "Email/changes", path: "/updated")),
                    ("properties", .strings(JMAPEmail.properties))
                ]),
                id: "gu")
        ]
    }

    /// The answers of `changeCalls`: the changes, and what they found (nil when the changes are more than
    /// one answer holds).
    func readChanges(_ answer: JMAPAnswer) throws -> (JMAPChanges, Found?) {
        let c = try JMAPChanges.parse(try answer.arguments(for: "c"), method: "Email/changes")
        var found = Found(destroyed: c.destroyed, state: c.newState)
        for id in ["gc", "gu"] {
            guard case .array(let list)? = try answer.arguments(for: id)["list"] else {
                throw GenericError(.protocolViolation, "\(endpoint): Email/get gave no list")
            }
            for item in list { found.emails.append(try JMAPClient.email(item)) }
        }
        return (c, found)
    }

    /// Each view's count (`Email/query` totals).
    func countCalls() -> [JMAPCall] {
        let account = JSONValue.string(client.session.accountID)
        return Self.views.compactMap { view in
            filter(of: view).map { filter in
                JMAPCall(
                    "Email/query", .object([("accountId", account), ("filter", filter), ("limit", .int(0)), ("calculateTotal", true)]),
                    id: view.rawValue)
            }
        }
    }

    func readCounts(_ answer: JMAPAnswer) throws -> [Placement.Folder: UInt32] {
        var counts: [Placement.Folder: UInt32] = [:]
        for view in Self.views {
            // A view without its mailbox (no mailbox has the role) holds nothing.
            guard filter(of: view) != nil else {
                counts[view] = 0
                continue
            }
            guard let total = try answer.arguments(for: view.rawValue)["total"]?.intValue, total >= 0 else {
                throw GenericError(.protocolViolation, "\(endpoint): Email/query gave no total")
            }
            counts[view] = UInt32(clamping: total)
        }
        return counts
    }

    /// The changes since `state` page by page, then the counts in one request with a last `Email/changes`
    /// that finds nothing more (so they are of the same state), and the changed Emails.
    func changes(since state: String) throws -> Found {
        var from = state
        var changed: [String] = [], destroyed: [String] = []
        var counts: [Placement.Folder: UInt32] = [:]
        for _ in 0..<64 {
            let answer = try client.call([changesCall(since: from)] + countCalls())
            let c = try JMAPChanges.parse(try answer.arguments(for: "c"), method: "Email/changes")
            changed += c.created + c.updated
            destroyed += c.destroyed
            from = c.newState
            counts = try readCounts(answer)
            if !c.hasMoreChanges && c.created.isEmpty && c.updated.isEmpty && c.destroyed.isEmpty { break }
        }
        let (_, emails) = try client.emails(Array(Set(changed)))
        return Found(emails: emails, destroyed: destroyed, counts: counts, state: from)
    }

    /// Every Email listed and placed.
    func listWhole(_ ids: inout JMAPIDs) throws {
        let (state, all) = try client.allEmailIDs()
        let emails = try client.emails(all, inFlight: JMAPStore.requestsInFlight)
        let mark = try ids.record(newIDs: emails.map(\.id), state: state) ?? 0
        var look = Look(epoch: ids.epoch, mark: mark, uidNext: ids.lastNumber + 1)
        look.listedWhole = true
        place(emails, ids: ids, into: &look)
        var counts: [Placement.Folder: UInt32] = [:]
        for (_, p) in look.placed { if let f = p.folder { counts[f, default: 0] += 1 } }
        look.counts = counts
        self.ids = ids
        self.look = look
    }

    func place(_ emails: [JMAPEmail], ids: JMAPIDs, into look: inout Look) {
        for e in emails {
            guard let n = ids.number(of: e.id) else { continue }
            look.placed[n] = mailboxes.view(e, vocabulary: vocabulary, policy: policy)
            look.emails[n] = (e.blobID, e.size)
        }
    }

    /// The `Email/query` filter of a view: in its mailbox and in none of the rows before it in the
    /// placement's table (Archive: in none of the other placing mailboxes); nil for a view whose role no
    /// mailbox has (it holds nothing).
    func filter(of view: Placement.Folder) -> JSONValue? {
        let order = Placement.placingFolders.filter { $0 != .archive }
        let before = view == .archive ? order : Array(order.prefix { $0 != view })
        let excluded = before.compactMap { mailboxes.mailboxID(of: $0) }
        let none: JSONValue = .object([("operator", "NOT"), ("conditions", .array(excluded.map { .object([("inMailbox", .string($0))]) }))])
        if view == .archive { return excluded.isEmpty ? .object([]) : none }
        guard let home = mailboxes.mailboxID(of: view) else { return nil }
        let inHome: JSONValue = .object([("inMailbox", .string(home))])
        return excluded.isEmpty ? inHome : .object([("operator", "AND"), ("conditions", .array([inHome, none]))])
    }
}
