import MoCLI
import MoConfig
import MoCore
import MoIndex
import XapianKit

/// Tag changes on the messages of a query, for `mo-index tag` and the `[[tag-rule]]`s of `update`: every
/// file through `MessageTagger` (renames, local store), then the rename-only reindex.
enum Tagging {
    struct Totals {
        var messages = 0
        var files = 0
        var vanished = 0
        /// Files whose `mo-keywords` line changed (tags beyond the 26 letters).
        var extra = 0
        var localChanged = false

        mutating func add(_ o: MessageTagger.Outcome) {
            if o.changedFiles > 0 || o.changedExtra > 0 { messages += 1 }
            files += o.changedFiles
            extra += o.changedExtra
            vanished += o.vanishedFiles
        }
    }

    /// `+TAG`/`-TAG` words into tag names to add and remove (a later word wins over an earlier one).
    /// Nil if a word is neither.
    static func changes(_ words: [String]) -> (add: [String], remove: [String])? {
        var add: [String] = [], remove: [String] = []
        for w in words {
            let name = String(w.dropFirst())
            guard !name.isEmpty else { return nil }
            switch w.first {
            case "+": add.append(name); remove.removeAll { $0 == name }
            case "-": remove.append(name); add.removeAll { $0 == name }
            default: return nil
            }
        }
        return (add, remove)
    }

    /// Applies the changes to every message `query` matches in `index`; saves the local store.
    static func apply(
        add: [String], remove: [String], query: XapianQuery, index: MailIndex,
        tagger: MessageTagger
    ) throws -> Totals {
        var totals = Totals()
        let before = tagger.local
        do {
            try index.forEachMessage(query, order: .oldest) { m in
                totals.add(
                    try tagger.apply(
                        add: add, remove: remove, messageID: m.record.id,
                        files: m.record.files.map(index.absolutePath)))
            }
        } catch {
            try? tagger.save()  // tags kept locally before the failure stay kept (renames are durable already)
            throw error
        }
        try tagger.save()
        totals.localChanged = tagger.local != before
        return totals
    }

    /// Brings the index up to date, then applies the `[[tag-rule]]`s to the messages waiting for them
    /// (`UpdateSummary.rulesPending`: new in an update of an existing index). Every command that updates
    /// the index goes through here, so new mail meets the rules whichever command indexed it.
    static func update(
        _ location: IndexLocation.Resolved,
        configure: (IndexUpdater) -> Void = { _ in }
    ) throws -> (UpdateSummary, Totals) {
        let updater = location.updater()
        configure(updater)
        let summary = try updater.run()
        let totals = try applyRules(location.config?.tagRules ?? [], ids: summary.rulesPending, location: location)
        return (summary, totals)
    }

    /// The rules on the messages `ids`, in file order; each rule sees the tags the previous ones set (the
    /// index is brought up to date after a rule that changed something: renames only, no mail is parsed).
    /// A last update drops `ids` from the pending list; a crash or an error before it leaves them pending,
    /// and the rules run again (they are idempotent).
    static func applyRules(_ rules: [TagRule], ids: [String], location: IndexLocation.Resolved) throws -> Totals {
        var totals = Totals()
        guard !ids.isEmpty else { return totals }
        let tagger = try location.tagger()
        let newMessages = try XapianQuery(.or, ids.map { XapianQuery(term: IndexSchema.Prefix.id + $0) })
        for rule in rules {
            let index = try MailIndex(path: location.indexPath)
            let query: XapianQuery
            do {
                query = try index.query(rule.query)
            } catch {
                let file = location.config?.path ?? "config"
                throw GenericError(.config, "\(file):\(rule.line): tag-rule.query: \(error)")
            }
            let step = try apply(
                add: rule.add, remove: rule.remove, query: try XapianQuery(.and, [query, newMessages]),
                index: index, tagger: tagger)
            totals.messages += step.messages
            totals.files += step.files
            totals.extra += step.extra
            if (step.files > 0 || step.extra > 0 || step.localChanged) && rule != rules.last { _ = try location.updater().run() }
        }
        let last = location.updater()
        last.rulesApplied = Set(ids)
        _ = try last.run()
        return totals
    }
}
