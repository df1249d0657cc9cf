/// How far a folder's saved mod-sequence may advance past the one its SELECT reported, so that the
/// run's own STOREs, expunges and moves do not come back as server changes on the next run.
///
/// Every change on the server gets a mod-sequence above all earlier ones, and each command a value of its
/// own (RFC 7162 §3.1.1: "each STORE command … will get a different mod-sequence value"). The server tells
/// this connection the values of its own changes: the MODSEQ of each FETCH answering a silent STORE, and
/// HIGHESTMODSEQ in the tagged OK of UID EXPUNGE and UID MOVE. A change by anyone else takes a value of its
/// own, which this run never saw as its own. So the saved value may advance from `base` to `m` exactly
/// when every value in (base, m] is one of this run's own:
///
/// | own values observed         | foreign sign seen during the command | may advance to                      |
/// |-----------------------------|--------------------------------------|-------------------------------------|
/// | none                        | —                                    | `base` (nothing to skip)            |
/// | base+1 … m, no gap          | no                                   | `m`                                 |
/// | base+1 … g-1, none at g     | —                                    | `g-1` (g may be another's change)   |
/// | only the OK's HIGHESTMODSEQ | yes (unsolicited FETCH, VANISHED…)   | not counted: it may be another's    |
///
/// The last row is the caller's rule (`noteCompletion`): a HIGHESTMODSEQ in a tagged OK is the mailbox's
/// value after the command, which is the command's own only when nothing else happened meanwhile.
/// A server that leaves gaps between values (the RFC allows it) only loses the optimisation: the next
/// run then reads its own changes back, as before.
public struct ModSeqAdvance: Sendable, Equatable {
    public let base: UInt64
    private var own: Set<UInt64> = []

    public init(base: UInt64) { self.base = base }

    /// A value the server reported for a change this run made.
    public mutating func noteOwn(_ value: UInt64) {
        if value > base { own.insert(value) }
    }

    /// The HIGHESTMODSEQ of a tagged OK (UID EXPUNGE, UID MOVE): counted as the command's own only when
    /// no response during the command showed another change.
    public mutating func noteCompletion(_ value: UInt64?, foreignSeen: Bool) {
        if let value, !foreignSeen { noteOwn(value) }
    }

    /// The highest value up to which everything is known to be this run's own.
    public var advanced: UInt64 {
        var m = base
        while own.contains(m + 1) { m += 1 }
        return m
    }
}
