/// The three-way merge of one message's keywords beyond the 26 letters (`Maildir.ExtraKeywords`), a pure
/// function of the base (what the last run left on both sides), the local file `mo-keywords`, and the
/// server's keywords without a letter. The letters merge in `SyncPlanner`; these merge here by the same
/// rule, keyword by keyword (a keyword is a boolean, so two sides that changed it changed it alike):
///
/// | local vs base | server vs base | reason            | server         | local        | new base |
/// |---------------|----------------|-------------------|----------------|--------------|----------|
/// | same          | same           | `.unchanged`      | —              | —            | base     |
/// | changed       | same           | `.localChanged`   | STORE ± (push) | —            | local    |
/// | same          | changed        | `.serverChanged`  | —              | set (pull)   | server   |
/// | changed       | changed        | `.bothChanged`    | —              | —            | local    |
///
/// A side not seen this run (`nil`: the folder's file unchanged, the message not in an incremental
/// listing) equals the base. A direction the policy does not sync leaves that side's change where it is
/// and the base as it was, so it is carried once the policy allows. `storable` says whether the server
/// keeps a keyword in this folder (PERMANENTFLAGS); an unstorable keyword rides along locally, is never
/// sent, and leaves the base, so that once the server accepts it the local keyword reads as an addition,
/// never as a removal on the server (the letters' rule in `SyncPlanner`).
public enum ExtraKeywordMerge {
    public enum Reason: String, Sendable { case unchanged, localChanged, serverChanged, bothChanged }

    public struct Outcome: Sendable, Equatable {
        public var serverAdd: Set<String> = []
        public var serverRemove: Set<String> = []
        /// The local keywords after the merge.
        public var local: Set<String>
        /// What to record as the base.
        public var base: Set<String>
        /// The reason of each keyword that was not `.unchanged`.
        public var reasons: [String: Reason] = [:]
    }

    public static func merge(
        base: Set<String>, local: Set<String>?, server: Set<String>?,
        push: Bool = true, pull: Bool = true, storable: (String) -> Bool = { _ in true }
    ) -> Outcome {
        // IMAP keywords compare without regard to case (RFC 3501 §2.3.2; Dovecot and Gmail fold it): the
        // merge is by folded name, and a keyword is spelled as the server has it, else the file, else the base.
        var spelling: [String: String] = [:]
        for k in base { spelling[k.lowercased()] = k }
        for k in local ?? [] { spelling[k.lowercased()] = k }
        for k in server ?? [] { spelling[k.lowercased()] = k }
        func folded(_ s: Set<String>) -> Set<String> { Set(s.map { $0.lowercased() }) }
        let folding = merge(
            folded: folded(base.filter(storable)), local: local.map(folded), server: server.map(folded), push: push, pull: pull,
            storable: { storable(spelling[$0] ?? $0) })
        func spelled(_ s: Set<String>) -> Set<String> { Set(s.map { spelling[$0] ?? $0 }) }
        return Outcome(
            serverAdd: spelled(folding.serverAdd), serverRemove: spelled(folding.serverRemove), local: spelled(folding.local),
            base: spelled(folding.base), reasons: Dictionary(folding.reasons.map { (spelling[$0.key] ?? $0.key, $0.value) }) { a, _ in a })
    }

    private static func merge(
        folded base: Set<String>, local: Set<String>?, server: Set<String>?,
        push: Bool, pull: Bool, storable: (String) -> Bool
    ) -> Outcome {
        let l = local ?? base, r = server ?? base
        var out = Outcome(local: l, base: base)
        for k in base.union(l).union(r) {
            let inB = base.contains(k), inL = l.contains(k), inR = r.contains(k)
            switch (inL != inB, inR != inB) {
            case (false, false):
                continue
            case (true, false):
                out.reasons[k] = .localChanged
                guard push, storable(k) else { continue }
                if inL { out.serverAdd.insert(k) } else { out.serverRemove.insert(k) }
                set(k, inL, in: &out.base)
            case (false, true):
                out.reasons[k] = .serverChanged
                guard pull else { continue }
                set(k, inR, in: &out.local)
                set(k, inR, in: &out.base)
            case (true, true):
                out.reasons[k] = .bothChanged
                set(k, inL, in: &out.base)
            }
        }
        return out
    }

    private static func set(_ k: String, _ on: Bool, in s: inout Set<String>) {
        if on { s.insert(k) } else { s.remove(k) }
    }
}
