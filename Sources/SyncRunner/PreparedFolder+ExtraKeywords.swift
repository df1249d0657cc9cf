import IMAPCodec
import Maildir
import MoCore
import SyncEngine
import SyncState

/// A folder's keywords beyond the 26 letters (`Maildir.ExtraKeywords`, issue 26 item 4): what the run
/// holds of the three sides, and the step that merges them (`ExtraKeywordMerge`) after the plan's
/// execution. The sides:
/// - local: the folder's `mo-keywords`, read with the keyword table and under its lock;
/// - server: the keywords of each listed message that found no letter (`serverLetters`);
/// - base: `<key>.extra` (`ExtraKeywordBase`).
///
/// A change of `mo-keywords` moves cur/'s time (`ExtraKeywords.save`), so the run takes the full path,
/// whose scan leaves the messages concerned unsettled (`localChangedUIDs`); a change on the server comes in
/// the listing like a flag change. Order of the writes: the server's STOREs, then `mo-keywords`, then the
/// base, so a run killed between two finds the sides equal and the base behind, which the merge records.
struct ExtraKeywordSides {
    var local = ExtraKeywords()
    /// `mo-keywords` as last read or written (the merge writes the file when `local` differs from it).
    var saved = ExtraKeywords()
    var base = ExtraKeywordBase()
    /// The keywords without a letter of each message the server listed that has any, or has a base line
    /// (then perhaps none): the server's side where it is known.
    var server: [UInt32: Set<String>] = [:]

    /// The UIDs whose `mo-keywords` line differs from the base: the base's own, and the new lines' by
    /// `uidOf` (a unique name the table does not pair has nothing to merge yet).
    func localChangedUIDs(uidOf: (String) -> UInt32?) -> Set<UInt32> {
        var out = Set<UInt32>()
        var baseUniques = Set<String>()
        for (uid, e) in base.byUID {
            baseUniques.insert(e.unique)
            if local.keywords(of: e.unique) != e.keywords { out.insert(uid) }
        }
        for unique in local.byUnique.keys where !baseUniques.contains(unique) {
            if let uid = uidOf(unique) { out.insert(uid) }
        }
        return out
    }
}

extension PreparedFolder {
    /// Reads `mo-keywords` and the base (with the keyword table: the lock is held).
    func loadExtraKeywords() throws {
        let local = try ExtraKeywords.load(folder: folder.path)
        extra = ExtraKeywordSides(local: local, saved: local, base: try ExtraKeywordBase.load(store.extraPath))
    }

    /// A file moved here from another folder (a local move, `MoveDetector`): its keywords beyond the
    /// letters, and those of its letters this folder's table had no room for, come along as this folder's
    /// local side, so the merge stores them on the moved message (a MOVE keeps them on the server: the
    /// STORE only confirms). Written at once (this folder's lock is held): durable before the source
    /// folder's finish may drop its own line.
    func carryExtraKeywords(_ keywords: Set<String>, to unique: String) throws {
        guard extra.local.add(keywords, to: unique) else { return }
        try ownChange { try extra.local.save(folder: folder.path) }
        extra.saved = extra.local
    }

    /// A listed message's flags as letters; its keywords without a letter are noted as its server side.
    func serverLetters(_ uid: UInt32, _ flags: [Flag]) -> MaildirFlags {
        var keywords = Set<String>()
        let letters = translation.letters(flags, extra: &keywords)
        if !keywords.isEmpty || extra.base.byUID[uid] != nil { extra.server[uid] = keywords }
        return letters
    }

    /// The server's side of each message the server listed that the merge may look at, as the listing
    /// left it (a message it reported vanished is not merged: its pair goes). A message not listed is not
    /// here: its server side is its base (in an incremental listing, `remote` also holds unchanged pairs'
    /// saved letters, which say nothing of these keywords).
    func extraServerSides() -> [UInt32: Set<String>] {
        extra.server.filter { remote[$0.key] != nil }
    }

    /// Whether the merge has anything to do: a listed message's server side, or a `mo-keywords` line,
    /// differs from the base.
    func extraKeywordsPending(_ serverSides: [UInt32: Set<String>]) -> Bool {
        if serverSides.contains(where: { extra.base.byUID[$0.key]?.keywords ?? [] != $0.value }) { return true }
        return !extra.localChangedUIDs { table.record(unique: $0)?.uid }.isEmpty
    }

    /// Whether the server keeps keyword `k` in this mailbox, by the PERMANENTFLAGS of its SELECT.
    var extraStorable: (String) -> Bool { FlagTranslation.storesKeyword(permanentFlags: selected.permanentFlags) }

    /// Merges after the plan's execution (so new pairs, uploaded or downloaded, take part): STOREs to the
    /// server, then `mo-keywords`, then the base, each only if it changed (a dry run shows them instead).
    /// Returns whether it changed anything.
    func mergeExtraKeywords(_ serverSides: [UInt32: Set<String>], on server: any ServerStore) throws -> Bool {
        var candidates = Set(serverSides.keys).union(extra.base.byUID.keys)
        for unique in extra.local.byUnique.keys { if let uid = table.record(unique: unique)?.uid, uid != 0 { candidates.insert(uid) } }
        guard !candidates.isEmpty || !run.forgotten.isEmpty else { return false }
        var local = extra.local, base = extra.base
        var adds: [String: [UInt32]] = [:], removes: [String: [UInt32]] = [:]
        let storable = extraStorable
        // A pair gone (a side deleted it this run, or it moved away; with every record loaded, also one a
        // killed run forgot before its lines went): its lines go, unless its file is paired again under
        // another UID (then that pair's merge owns the line).
        var gone = run.forgotten
        if loadedUIDs == nil && !focused {
            for (uid, e) in base.byUID where table.record(uid: uid) == nil && gone[uid] == nil { gone[uid] = e.unique }
        }
        for (uid, unique) in gone where table.record(uid: uid) == nil {
            let name = unique.isEmpty ? base.byUID[uid]?.unique ?? "" : unique
            // A file still here, unpaired (to be uploaded, or paired again by key), keeps its line.
            if !name.isEmpty && table.record(unique: name) == nil && localByUnique[name] == nil { local.set([], for: name) }
            base.remove(uid: uid)
        }
        for uid in candidates {
            // Not loaded (settled and unchanged) or forgotten above: nothing to merge.
            guard let record = table.record(uid: uid), !record.unique.isEmpty else { continue }
            let outcome = ExtraKeywordMerge.merge(
                base: base.byUID[uid].map { $0.unique == record.unique ? $0.keywords : [] } ?? [],
                local: local.keywords(of: record.unique), server: serverSides[uid],
                push: policy.flags.contains(.push), pull: policy.flags.contains(.pull), storable: storable)
            for k in outcome.serverAdd { adds[k, default: []].append(uid) }
            for k in outcome.serverRemove { removes[k, default: []].append(uid) }
            if !outcome.serverAdd.isEmpty || !outcome.serverRemove.isEmpty { summary.flagsUp += 1 }
            if outcome.local != local.keywords(of: record.unique) { summary.flagsDown += 1 }
            local.set(outcome.local, for: record.unique)
            base.set(outcome.base, uid: uid, unique: record.unique)
        }
        var changes: [(uids: UIDSet, action: StoreAction)] = []
        for (mode, byKeyword) in [(StoreAction.Mode.add, adds), (.remove, removes)] {
            for (k, uids) in byKeyword.sorted(by: { $0.key < $1.key }) {
                changes.append((UIDSet(uids: uids), StoreAction(mode, [.keyword(k)])))
            }
        }
        if dryRun {
            // What it would do, as the plan's actions are shown; nothing is written or sent.
            for c in changes { planned("\(summary.folder): store \(c.action.mode.rawValue)\(c.action.flags[0]) on UID \(c.uids)") }
            for unique in Set(local.byUnique.keys).union(extra.saved.byUnique.keys).sorted()
            where local.keywords(of: unique) != extra.saved.keywords(of: unique) {
                planned("\(summary.folder): mo-keywords of \(unique): \(local.keywords(of: unique).sorted().joined(separator: " "))")
            }
            return false
        }
        if !changes.isEmpty {
            try ensureSelected(on: server)
            noteOwn(try server.setFlags(changes))
            CrashPoint.step("extra keywords: stored")
        }
        if local != extra.saved {
            try ownChange { try local.save(folder: folder.path) }
            extra.local = local
            extra.saved = local
            CrashPoint.step("extra keywords: local written")
        }
        guard base != extra.base else { return !changes.isEmpty }
        try base.save(store.extraPath)
        extra.base = base
        return true
    }
}
