import Testing
import Maildir
@testable import SyncEngine

/// One message, table-driven: its saved pair (or none), its local flags (or absent), its server flags
/// (or absent), and the actions the planner must choose. Flags are written as Maildir letters.
struct PairCase: CustomTestStringConvertible, Sendable {
    var name: String
    var base: String?  // nil: no saved pair
    var local: String?  // nil: no local file
    var remote: String?  // nil: not on the server
    var policy: SyncPolicy = SyncPolicy()
    var unstorable = ""  // keyword letters the server refuses (PERMANENTFLAGS without \*)
    var expected: [SyncAction]
    var testDescription: String { name }
}

func f(_ letters: String) -> MaildirFlags { MaildirFlags(letters: letters)! }

let uid: UInt32 = 7
let unique = "1700000000.M1P1Q1R1.host"

func rec(_ flags: String) -> SyncRecord { SyncRecord(uid: uid, unique: unique, flags: f(flags)) }

func policy(_ change: (inout SyncPolicy) -> Void) -> SyncPolicy {
    var p = SyncPolicy(); change(&p); return p
}

let pairCases: [PairCase] = [
    // Presence, with a saved pair.
    PairCase(name: "unchanged both sides", base: "S", local: "S", remote: "S", expected: []),
    PairCase(
        name: "deleted on server -> delete local", base: "S", local: "S", remote: nil,
        expected: [.deleteLocal(unique: unique), .updateRecord(uid: uid, unique: unique, record: nil)]),
    PairCase(
        name: "deleted locally -> delete on server", base: "S", local: nil, remote: "S",
        expected: [.deleteRemote(uid: uid), .updateRecord(uid: uid, unique: unique, record: nil)]),
    PairCase(
        name: "gone on both sides -> forget", base: "S", local: nil, remote: nil,
        expected: [.updateRecord(uid: uid, unique: unique, record: nil)]),
    PairCase(
        name: "server deletion not pulled -> local tombstone", base: "S", local: "S", remote: nil,
        policy: policy { $0.delete = .push },
        expected: [.updateRecord(uid: uid, unique: unique, record: SyncRecord(uid: 0, unique: unique, flags: f("S")))]),
    PairCase(
        name: "local deletion not pushed -> server tombstone", base: "S", local: nil, remote: "S",
        policy: policy { $0.delete = .pull },
        expected: [.updateRecord(uid: uid, unique: unique, record: SyncRecord(uid: uid, unique: "", flags: f("S")))]),
    PairCase(
        name: "server deletion with modified local flags still deletes", base: "", local: "F", remote: nil,
        expected: [.deleteLocal(unique: unique), .updateRecord(uid: uid, unique: unique, record: nil)]),

    // Flags, both present.
    PairCase(
        name: "seen locally -> push", base: "", local: "S", remote: "",
        expected: [
            .setRemoteFlags(uid: uid, add: f("S"), remove: []),
            .updateRecord(uid: uid, unique: unique, record: rec("S"))
        ]),
    PairCase(
        name: "seen on server -> pull", base: "", local: "", remote: "S",
        expected: [
            .setLocalFlags(unique: unique, flags: f("S")),
            .updateRecord(uid: uid, unique: unique, record: rec("S"))
        ]),
    PairCase(
        name: "unflagged locally -> push removal", base: "FS", local: "S", remote: "FS",
        expected: [
            .setRemoteFlags(uid: uid, add: [], remove: f("F")),
            .updateRecord(uid: uid, unique: unique, record: rec("S"))
        ]),
    PairCase(
        name: "unflagged on server -> pull removal", base: "FS", local: "FS", remote: "S",
        expected: [
            .setLocalFlags(unique: unique, flags: f("S")),
            .updateRecord(uid: uid, unique: unique, record: rec("S"))
        ]),
    PairCase(
        name: "same change on both sides -> record only", base: "", local: "S", remote: "S",
        expected: [.updateRecord(uid: uid, unique: unique, record: rec("S"))]),
    PairCase(
        name: "different letters changed on each side -> both merged", base: "S", local: "FS", remote: "RS",
        expected: [
            .setLocalFlags(unique: unique, flags: f("FRS")),
            .setRemoteFlags(uid: uid, add: f("F"), remove: []),
            .updateRecord(uid: uid, unique: unique, record: rec("FRS"))
        ]),
    PairCase(
        name: "one side adds, other removes different letters", base: "FS", local: "FRS", remote: "F",
        expected: [
            .setLocalFlags(unique: unique, flags: f("FR")),
            .setRemoteFlags(uid: uid, add: f("R"), remove: []),
            .updateRecord(uid: uid, unique: unique, record: rec("FR"))
        ]),
    PairCase(
        name: "keyword letter travels like a flag", base: "S", local: "Sa", remote: "S",
        expected: [
            .setRemoteFlags(uid: uid, add: f("a"), remove: []),
            .updateRecord(uid: uid, unique: unique, record: rec("Sa"))
        ]),
    PairCase(
        name: "local-only uppercase letter is kept and never sent", base: "S", local: "SX", remote: "FS",
        expected: [
            .setLocalFlags(unique: unique, flags: f("FSX")),
            .updateRecord(uid: uid, unique: unique, record: rec("FS"))
        ]),
    PairCase(
        name: "passed and draft letters", base: "", local: "DP", remote: "",
        expected: [
            .setRemoteFlags(uid: uid, add: f("DP"), remove: []),
            .updateRecord(uid: uid, unique: unique, record: rec("DP"))
        ]),
    PairCase(
        name: "flags push only: server change not pulled, not undone", base: "", local: "", remote: "S",
        policy: policy { $0.flags = .push }, expected: []),
    PairCase(
        name: "flags push only: local change pushed", base: "", local: "F", remote: "S",
        policy: policy { $0.flags = .push },
        expected: [
            .setRemoteFlags(uid: uid, add: f("F"), remove: []),
            .updateRecord(uid: uid, unique: unique, record: rec("F"))
        ]),
    PairCase(
        name: "flags pull only: local change kept, not sent", base: "", local: "F", remote: "S",
        policy: policy { $0.flags = .pull },
        expected: [
            .setLocalFlags(unique: unique, flags: f("FS")),
            .updateRecord(uid: uid, unique: unique, record: rec("S"))
        ]),
    PairCase(
        name: "flags none: nothing", base: "", local: "F", remote: "S",
        policy: policy { $0.flags = .none }, expected: []),

    // Expunge.
    PairCase(
        name: "trashed locally, expunge both -> removed on both", base: "S", local: "ST", remote: "S",
        expected: [
            .deleteLocal(unique: unique), .deleteRemote(uid: uid),
            .updateRecord(uid: uid, unique: unique, record: nil)
        ]),
    PairCase(
        name: "deleted on server, expunge both -> removed on both", base: "S", local: "S", remote: "ST",
        expected: [
            .deleteLocal(unique: unique), .deleteRemote(uid: uid),
            .updateRecord(uid: uid, unique: unique, record: nil)
        ]),
    PairCase(
        name: "trashed locally, expunge local only -> server marked, local removed",
        base: "S", local: "ST", remote: "S", policy: policy { $0.expungeRemote = false },
        expected: [
            .deleteLocal(unique: unique), .setRemoteFlags(uid: uid, add: f("T"), remove: []),
            .updateRecord(uid: uid, unique: unique, record: SyncRecord(uid: uid, unique: "", flags: f("ST")))
        ]),
    PairCase(
        name: "trashed locally, expunge remote only -> local marked stays",
        base: "S", local: "ST", remote: "S", policy: policy { $0.expungeLocal = false },
        expected: [
            .deleteRemote(uid: uid),
            .updateRecord(uid: uid, unique: unique, record: SyncRecord(uid: 0, unique: unique, flags: f("ST")))
        ]),
    PairCase(
        name: "trashed, expunge none -> flag travels", base: "S", local: "ST", remote: "S",
        policy: policy {
            $0.expungeLocal = false; $0.expungeRemote = false
        },
        expected: [
            .setRemoteFlags(uid: uid, add: f("T"), remove: []),
            .updateRecord(uid: uid, unique: unique, record: rec("ST"))
        ]),

    // Keywords the server refuses to store (issue 17): masked on both sides, kept in the file.
    PairCase(
        name: "refused keyword: local tag not pushed", base: "S", local: "Sa", remote: "S", unstorable: "a",
        expected: []),
    PairCase(
        name: "refused keyword: server lacking it is not a removal", base: "Sa", local: "Sa", remote: "S",
        unstorable: "a", expected: [.updateRecord(uid: uid, unique: unique, record: rec("S"))]),
    PairCase(
        name: "refused keyword rides along a pulled change", base: "S", local: "Sa", remote: "FS", unstorable: "a",
        expected: [
            .setLocalFlags(unique: unique, flags: f("FSa")),
            .updateRecord(uid: uid, unique: unique, record: rec("FS"))
        ]),
    PairCase(
        name: "refused keyword: other keywords still travel", base: "S", local: "Sab", remote: "S", unstorable: "a",
        expected: [
            .setRemoteFlags(uid: uid, add: f("b"), remove: []),
            .updateRecord(uid: uid, unique: unique, record: rec("Sb"))
        ]),
    PairCase(
        name: "refused keyword: new local message uploaded without it", base: nil, local: "Sa", remote: nil,
        unstorable: "a", expected: [.append(unique: unique, flags: f("S"))]),
    PairCase(
        name: "refused keyword: new server message fetched without it", base: nil, local: nil, remote: "Sa",
        unstorable: "a", expected: [.fetch(uid: uid, flags: f("S"))]),

    // New messages.
    PairCase(
        name: "new on server -> fetch", base: nil, local: nil, remote: "S",
        expected: [.fetch(uid: uid, flags: f("S"))]),
    PairCase(
        name: "new locally -> append", base: nil, local: "FS", remote: nil,
        expected: [.append(unique: unique, flags: f("FS"))]),
    PairCase(
        name: "new locally, local-only letter not sent", base: nil, local: "SX", remote: nil,
        expected: [.append(unique: unique, flags: f("S"))]),
    PairCase(
        name: "new on server not pulled", base: nil, local: nil, remote: "S",
        policy: policy { $0.new = .push }, expected: []),
    PairCase(
        name: "new locally not pushed", base: nil, local: "S", remote: nil,
        policy: policy { $0.new = .pull }, expected: []),
    PairCase(
        name: "new on server already deleted -> not fetched", base: nil, local: nil, remote: "ST",
        expected: []),
    PairCase(
        name: "new locally already trashed -> not appended", base: nil, local: "ST", remote: nil,
        expected: []),
    PairCase(
        name: "new on server deleted, no expunge -> fetched", base: nil, local: nil, remote: "ST",
        policy: policy { $0.expungeRemote = false }, expected: [.fetch(uid: uid, flags: f("ST"))])
]

/// Tombstones stop resurrection and disappear once the side that kept the message drops it.
let tombstoneCases: [(String, SyncRecord, String?, String?, [SyncAction])] = [
    ("local-only tombstone kept while file exists", SyncRecord(uid: 0, unique: unique, flags: f("S")), "S", nil, []),
    (
        "local-only tombstone dropped when file goes", SyncRecord(uid: 0, unique: unique, flags: f("S")), nil, nil,
        [.updateRecord(uid: 0, unique: unique, record: nil)]
    ),
    ("server-only tombstone kept while message exists", SyncRecord(uid: uid, unique: "", flags: f("S")), nil, "S", []),
    (
        "server-only tombstone dropped when message goes", SyncRecord(uid: uid, unique: "", flags: f("S")), nil, nil,
        [.updateRecord(uid: uid, unique: "", record: nil)]
    )
]

struct SyncPlannerTests {
    @Test(arguments: pairCases)
    func oneMessage(_ c: PairCase) {
        let records = c.base.map { [rec($0)] } ?? []
        let local = c.local.map { [LocalMessage(unique: unique, flags: f($0))] } ?? []
        let remote = c.remote.map { [RemoteMessage(uid: uid, flags: f($0))] } ?? []
        let plan = SyncPlanner.plan(
            records: records, local: local, remote: remote, policy: c.policy,
            unstorable: f(c.unstorable))
        #expect(plan.stoppedBy == nil)
        #expect(plan.actions == c.expected)
    }

    @Test func tombstones() {
        for (name, record, l, r, expected) in tombstoneCases {
            let local = l.map { [LocalMessage(unique: unique, flags: f($0))] } ?? []
            let remote = r.map { [RemoteMessage(uid: uid, flags: f($0))] } ?? []
            let plan = SyncPlanner.plan(records: [record], local: local, remote: remote, policy: SyncPolicy())
            #expect(plan.actions == expected, "\(name)")
        }
    }

    @Test func everyPresenceCombinationIsDecided() {
        // 2^3 presence cases (saved pair, local, server) x a few flag states: no crash, and no action that
        // touches a side the message is not on.
        for hasRecord in [false, true] {
            for hasLocal in [false, true] {
                for hasRemote in [false, true] {
                    for flags in ["", "S", "FT", "Sa"] {
                        let plan = SyncPlanner.plan(
                            records: hasRecord ? [rec("S")] : [],
                            local: hasLocal ? [LocalMessage(unique: unique, flags: f(flags))] : [],
                            remote: hasRemote ? [RemoteMessage(uid: uid, flags: f(flags))] : [],
                            policy: SyncPolicy())
                        for a in plan.actions {
                            switch a {
                            case .deleteLocal, .setLocalFlags, .expireLocal: #expect(hasLocal)
                            case .deleteRemote, .setRemoteFlags: #expect(hasRemote)
                            case .fetch: #expect(hasRemote && !hasRecord)
                            case .append: #expect(hasLocal && !hasRecord)
                            case .adopt, .updateRecord: break
                            }
                        }
                    }
                }
            }
        }
    }

    @Test func adoptionPairsByKeyWithoutTransfer() {
        let key = MessageKey(messageID: "a@b", wireSize: 1234)
        let other = MessageKey(messageID: "c@d", wireSize: 99)
        let plan = SyncPlanner.plan(
            records: [],
            local: [LocalMessage(unique: "u1", flags: f("S")), LocalMessage(unique: "u2", flags: f("T"))],
            remote: [RemoteMessage(uid: 10, flags: f("F")), RemoteMessage(uid: 11, flags: [])],
            policy: SyncPolicy(),
            localKeys: ["u1": key, "u2": other],
            remoteKeys: [10: key, 11: MessageKey(messageID: "c@d", wireSize: 100)])
        #expect(
            plan.actions == [
                // Both sides brought to the union: the file renamed, the server's S stored, and only then the
                // pair's base the union (until then, the server's flags: never more than it has).
                .adopt(uid: 10, unique: "u1", localFlags: f("FS"), remoteFlags: f("F")),
                .setRemoteFlags(uid: 10, add: f("S"), remove: []),
                .updateRecord(uid: 10, unique: "u1", record: SyncRecord(uid: 10, unique: "u1", flags: f("FS"))),
                .fetch(uid: 11, flags: [])
                // u2 is trashed locally and unmatched (size differs): expunged, not uploaded.
            ])
    }

    /// An account that pulls flags only stores nothing when it adopts: the base is the server's flags.
    @Test func adoptionStoresNothingWhereFlagsAreNotPushed() {
        let key = MessageKey(messageID: "a@b", wireSize: 1234)
        var policy = SyncPolicy()
        policy.flags = .pull
        let plan = SyncPlanner.plan(
            records: [], local: [LocalMessage(unique: "u1", flags: f("S"))], remote: [RemoteMessage(uid: 10, flags: f("F"))],
            policy: policy, localKeys: ["u1": key], remoteKeys: [10: key])
        #expect(plan.actions == [.adopt(uid: 10, unique: "u1", localFlags: f("FS"), remoteFlags: f("F"))])
    }

    @Test func adoptionPairsDuplicatesOneToOne() {
        let key = MessageKey(messageID: "dup@x", wireSize: 10)
        let plan = SyncPlanner.plan(
            records: [],
            local: [
                LocalMessage(unique: "a", flags: []), LocalMessage(unique: "b", flags: []),
                LocalMessage(unique: "c", flags: [])
            ],
            remote: [RemoteMessage(uid: 1, flags: []), RemoteMessage(uid: 2, flags: [])],
            policy: SyncPolicy(), localKeys: ["a": key, "b": key, "c": key], remoteKeys: [1: key, 2: key])
        #expect(
            plan.actions == [
                .adopt(uid: 1, unique: "a", localFlags: [], remoteFlags: []),
                .adopt(uid: 2, unique: "b", localFlags: [], remoteFlags: []),
                .append(unique: "c", flags: [])
            ])
    }

    @Test func massDeletionGuardStopsTheFolder() {
        let records = (1...100).map { SyncRecord(uid: UInt32($0), unique: "u\($0)", flags: []) }
        let local = records.map { LocalMessage(unique: $0.unique, flags: []) }
        let remote = records.prefix(70).map { RemoteMessage(uid: $0.uid, flags: []) }  // 30 vanished
        let plan = SyncPlanner.plan(records: records, local: local, remote: Array(remote), policy: SyncPolicy())
        #expect(plan.actions.isEmpty)
        #expect(plan.stoppedBy == DeletionGuard(side: .local, count: 30, total: 100))
        #expect(
            plan.stoppedBy?.description
                == "would delete 30 of 100 local messages; nothing done in this folder (run with --force if that is intended)")

        var forced = SyncPolicy(); forced.force = true
        let go = SyncPlanner.plan(records: records, local: local, remote: Array(remote), policy: forced)
        #expect(go.stoppedBy == nil)
        #expect(go.summary.deleted == 30)
    }

    /// A focused plan (settled pairs left out) judges the guard against the whole folder: 8 deletions
    /// among 10 pairs in focus trip it alone, not with 90 settled pairs beside them; 30 of 100 still do.
    @Test func focusedPlanJudgesTheGuardAgainstTheWholeFolder() {
        let records = (1...10).map { SyncRecord(uid: UInt32($0), unique: "u\($0)", flags: []) }
        let local = records.map { LocalMessage(unique: $0.unique, flags: []) }
        let remote = records.prefix(2).map { RemoteMessage(uid: $0.uid, flags: []) }  // 8 vanished
        #expect(
            SyncPlanner.plan(records: records, local: local, remote: Array(remote), policy: SyncPolicy()).stoppedBy
                == DeletionGuard(side: .local, count: 8, total: 10))
        let focused = SyncPlanner.plan(records: records, local: local, remote: Array(remote), policy: SyncPolicy(), settled: 90)
        #expect(focused.stoppedBy == nil && focused.summary.deleted == 8)
        let thirty = (1...30).map { SyncRecord(uid: UInt32($0), unique: "u\($0)", flags: []) }
        let tripped = SyncPlanner.plan(
            records: thirty, local: thirty.map { LocalMessage(unique: $0.unique, flags: []) },
            remote: [], policy: SyncPolicy(), settled: 70)
        #expect(tripped.stoppedBy == DeletionGuard(side: .local, count: 30, total: 100))
    }

    @Test func smallDeletionsNeverTripTheGuard() {
        let records = (1...4).map { SyncRecord(uid: UInt32($0), unique: "u\($0)", flags: []) }
        let plan = SyncPlanner.plan(
            records: records, local: [], remote: records.map { RemoteMessage(uid: $0.uid, flags: []) },
            policy: SyncPolicy())
        #expect(plan.stoppedBy == nil)
        #expect(plan.summary.deleted == 4)
    }

    @Test func largeFolderPlansInOrder() {
        // 100,000 unchanged pairs and 1% flag changes: actions only for the changed ones.
        let n = 100_000
        let records = (1...n).map { SyncRecord(uid: UInt32($0), unique: "u\($0)", flags: f("S")) }
        let local = records.map { LocalMessage(unique: $0.unique, flags: $0.uid % 100 == 0 ? f("FS") : f("S")) }
        let remote = records.map { RemoteMessage(uid: $0.uid, flags: f("S")) }
        let plan = SyncPlanner.plan(records: records, local: local, remote: remote, policy: SyncPolicy())
        #expect(plan.summary.flagsUp == n / 100)
        #expect(plan.actions.count == 2 * n / 100)
    }
}
