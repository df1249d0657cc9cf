import Testing
import Maildir
@testable import SyncEngine

/// The window rows of `SyncPlanner` (its doc comment's second table), one message each: the saved record
/// (or none), the local file's flags (or absent), the server's flags (or absent), whether the window puts
/// the message outside, and the actions.
struct WindowCase: CustomTestStringConvertible, Sendable {
    var name: String
    var saved: SyncRecord?
    var local: String?
    var remote: String?
    var outside = true
    var expireLocal = false
    var keepUnread = true
    var expected: [SyncAction]
    var testDescription: String { name }
}

private let w = SyncRecord.outsideMark
private func outsideRecord(_ flags: String) -> SyncRecord { .outside(uid: uid, flags: f(flags)) }

let windowCases: [WindowCase] = [
    WindowCase(
        name: "new server message outside -> outside record, no fetch", saved: nil, local: nil, remote: "S",
        expected: [.updateRecord(uid: uid, unique: "", record: outsideRecord("S"))]),
    WindowCase(
        name: "new server message inside -> fetch", saved: nil, local: nil, remote: "S", outside: false,
        expected: [.fetch(uid: uid, flags: f("S"))]),
    WindowCase(
        name: "new flagged message outside is kept -> fetch", saved: nil, local: nil, remote: "FS",
        expected: [.fetch(uid: uid, flags: f("FS"))]),
    WindowCase(
        name: "new unread message outside is kept -> fetch", saved: nil, local: nil, remote: "", expected: [.fetch(uid: uid, flags: [])]),
    WindowCase(
        name: "new unread message outside, unread not kept -> outside record", saved: nil, local: nil, remote: "", keepUnread: false,
        expected: [.updateRecord(uid: uid, unique: "", record: outsideRecord(""))]),
    WindowCase(name: "outside record, unchanged -> nothing", saved: outsideRecord("S"), local: nil, remote: "S", expected: []),
    WindowCase(
        name: "outside record, server flags changed -> record follows", saved: outsideRecord("S"), local: nil, remote: "Sa",
        expected: [.updateRecord(uid: uid, unique: "", record: outsideRecord("Sa"))]),
    WindowCase(
        name: "outside record, window widened -> fetch", saved: outsideRecord("S"), local: nil, remote: "S", outside: false,
        expected: [.fetch(uid: uid, flags: f("S"))]),
    WindowCase(
        name: "outside record, flagged on the server -> fetch", saved: outsideRecord("S"), local: nil, remote: "FS",
        expected: [.fetch(uid: uid, flags: f("FS"))]),
    WindowCase(
        name: "outside record, gone from the server -> forget", saved: outsideRecord("S"), local: nil, remote: nil,
        expected: [.updateRecord(uid: uid, unique: "", record: nil)]),
    WindowCase(
        name: "pair outside, no expire-local -> nothing (never a deletion)", saved: rec("S"), local: "S", remote: "S",
        expected: []),
    WindowCase(
        name: "pair outside, expire-local -> let the local copy go", saved: rec("S"), local: "S", remote: "S", expireLocal: true,
        expected: [
            .expireLocal(uid: uid, unique: unique, flags: f("S")),
            .updateRecord(uid: uid, unique: unique, record: outsideRecord("S"))
        ]),
    WindowCase(
        name: "pair outside, expire-local, flags to sync first -> merge, no expiry", saved: rec("S"), local: "Sa", remote: "S",
        expireLocal: true,
        expected: [.setRemoteFlags(uid: uid, add: f("a"), remove: []), .updateRecord(uid: uid, unique: unique, record: rec("Sa"))]),
    WindowCase(
        name: "pair outside but unread, expire-local -> kept", saved: rec(""), local: "", remote: "", expireLocal: true, expected: []),
    WindowCase(
        name: "pair inside, expire-local -> nothing", saved: rec("S"), local: "S", remote: "S", outside: false, expireLocal: true,
        expected: []),
    WindowCase(
        name: "expiry stopped before the file went, still outside -> let it go",
        saved: SyncRecord(uid: uid, unique: unique, flags: f("S").union(w)),
        local: "S", remote: "S", expireLocal: true,
        expected: [
            .expireLocal(uid: uid, unique: unique, flags: f("S")),
            .updateRecord(uid: uid, unique: unique, record: outsideRecord("S"))
        ]),
    WindowCase(
        name: "expiry stopped before the file went, window widened -> a pair again",
        saved: SyncRecord(uid: uid, unique: unique, flags: f("S").union(w)),
        local: "S", remote: "S", outside: false, expireLocal: true,
        expected: [.updateRecord(uid: uid, unique: unique, record: rec("S"))]),
    WindowCase(
        name: "expiry stopped after the file went -> an outside record without the name",
        saved: SyncRecord(uid: uid, unique: unique, flags: f("S").union(w)), local: nil, remote: "S", expireLocal: true,
        expected: [.updateRecord(uid: uid, unique: unique, record: outsideRecord("S"))]),
    WindowCase(
        name: "expiry stopped, server deleted it -> the file goes as for any pair",
        saved: SyncRecord(uid: uid, unique: unique, flags: f("S").union(w)), local: "S", remote: nil, expireLocal: true,
        expected: [.deleteLocal(unique: unique), .updateRecord(uid: uid, unique: unique, record: nil)])
]

@Suite struct SyncWindowTests {
    @Test(arguments: windowCases)
    func oneMessage(_ c: WindowCase) {
        let window = SyncWindow(outside: c.outside ? [uid] : [], keepUnread: c.keepUnread, expireLocal: c.expireLocal)
        let plan = SyncPlanner.plan(
            records: c.saved.map { [$0] } ?? [],
            local: c.local.map { [LocalMessage(unique: unique, flags: f($0))] } ?? [],
            remote: c.remote.map { [RemoteMessage(uid: uid, flags: f($0))] } ?? [],
            policy: SyncPolicy(), window: window)
        #expect(plan.actions == c.expected)
    }

    /// Without a judged window an outside record stands, whatever the server's flags; nothing is fetched.
    @Test func anOutsideRecordStandsWhenNoWindowIsJudged() {
        let plan = SyncPlanner.plan(
            records: [outsideRecord("S")], local: [], remote: [RemoteMessage(uid: uid, flags: f("F"))], policy: SyncPolicy())
        #expect(plan.actions.isEmpty)
    }

    /// Expiry is no deletion: letting 90 of 100 local copies go does not trip the mass-deletion guard.
    @Test func expiryDoesNotTripTheGuard() {
        let records = (1...100).map { SyncRecord(uid: UInt32($0), unique: "u\($0)", flags: f("S")) }
        let local = records.map { LocalMessage(unique: $0.unique, flags: f("S")) }
        let remote = records.map { RemoteMessage(uid: $0.uid, flags: f("S")) }
        let window = SyncWindow(outside: Set(1...90), expireLocal: true)
        let plan = SyncPlanner.plan(records: records, local: local, remote: remote, policy: SyncPolicy(), window: window)
        #expect(plan.stoppedBy == nil)
        #expect(plan.actions.count { if case .expireLocal = $0 { true } else { false } } == 90)
        #expect(!plan.actions.contains { if case .deleteRemote = $0 { true } else { false } })
    }

    /// With `expunge` both ways, an outside message not held locally is not deleted on the server.
    @Test func outsideIsNeverALocalDeletion() {
        var p = SyncPolicy(); p.delete = .both
        let plan = SyncPlanner.plan(
            records: [outsideRecord("S")], local: [], remote: [RemoteMessage(uid: uid, flags: f("S"))], policy: p,
            window: SyncWindow(outside: [uid]))
        #expect(plan.actions.isEmpty)
    }
}
