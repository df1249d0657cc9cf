@testable import SyncRunner

/// The watcher's pure decisions, rule by rule (the tables in WatchPlan.swift).
@Suite struct WatchPlanTests {
    /// Retry delays: 5 s doubling to 5 min, 5 s again after a success.
    @Test func backoffDoublesToFiveMinutesAndResets() {
        var b = Backoff()
        #expect((0..<8).map { _ in b.failed() } == [5, 10, 20, 40, 80, 160, 300, 300])
        b.succeeded()
        #expect(b.failed() == 5)
    }

    @Test func notifyListensOnOneConnectionAndNeverPolls() {
        let plan = WatchPlan.make(offersNotify: true, watch: ["INBOX", "Lists/dev"], pollInterval: 60)
        #expect(plan == WatchPlan(listening: .notify, pollSeconds: nil))
    }

    @Test func idleTakesInboxPlusWatchOnceEachAndPolls() {
        let plan = WatchPlan.make(offersNotify: false, watch: ["Lists/dev", "inbox", "Lists/dev"], pollInterval: 60)
        #expect(plan == WatchPlan(listening: .idle(["INBOX", "Lists/dev"]), pollSeconds: 60))
        #expect(WatchPlan.make(offersNotify: false, watch: [], pollInterval: 300).listening == .idle(["INBOX"]))
    }

    @Test func idleStopsAtMaxIdlers() {
        let plan = WatchPlan.make(offersNotify: false, watch: (1...20).map { "F\($0)" }, pollInterval: 300)
        guard case .idle(let folders) = plan.listening else { Issue.record("\(plan)"); return }
        #expect(folders.count == WatchPlan.maxIdlers && folders[0] == "INBOX" && folders[1] == "F1")
    }

    @Test(arguments: [
        (IdleEvent.untagged(.exists(3)), WatchPlan.Wake.messages),
        (.untagged(.expunge(1)), .messages),
        (.untagged(.vanished(earlier: false, uids: UIDSet(4))), .messages),
        (.fetch(MessageInfo(sequenceNumber: 1)), .flags),
        (.untagged(.status(StatusResponse(mailbox: MailboxName("Other")))), .folderStatus),
        (.untagged(.list(ListResponse(attributes: [], delimiter: 0x2F, mailbox: MailboxName("New")))), .folderList),
        (.untagged(.ok(ResponseText(code: .notificationOverflow, text: ""))), .overflow)
    ])
    func newsThatWakes(_ event: IdleEvent, _ wake: WatchPlan.Wake) {
        #expect(WatchPlan.wake(for: event) == wake)
    }

    @Test(arguments: [
        IdleEvent.untagged(.recent(1)),
        .untagged(.flags([.seen])),
        .untagged(.ok(ResponseText(code: .highestModSeq(ModSequence(7)!), text: "Highest"))),
        .untagged(.ok(ResponseText(text: "Still here")))
    ])
    func newsThatDoesNot(_ event: IdleEvent) {
        #expect(WatchPlan.wake(for: event) == nil)
    }

    @Test func debounceWaitsForQuietOrTheLongestBurst() {
        #expect(Debounce.decide(first: nil, last: 0, now: 5) == .idle)
        // One event: fire once it has been quiet for 0.2 s.
        #expect(Debounce.decide(first: 10, last: 10, now: 10.125) == .waitUntil(10 + Debounce.quiet))
        #expect(Debounce.decide(first: 10, last: 10, now: 10.25) == .fire)
        // A steady stream: fire 1 s after the first event although it never goes quiet.
        #expect(Debounce.decide(first: 10, last: 10.875, now: 10.9375) == .waitUntil(10 + Debounce.longest))
        #expect(Debounce.decide(first: 10, last: 10.9375, now: 11.0) == .fire)
    }

    @Test func doorbellRingsCollapseAndSurviveUntilTaken() {
        let bell = Doorbell()
        bell.ring(.local)
        bell.ring(.local)
        bell.ring(.flags)
        #expect(bell.wait(until: nil) == [.local, .flags])
        #expect(bell.take().isEmpty)
        bell.ring(.messages)  // during a sync
        #expect(bell.take() == [.messages])
        // Nothing rung: the deadline ends the wait.
        #expect(bell.wait(until: 0).isEmpty)
    }

    /// A JMAP account listens with push, and polls only while push is not listening.
    @Test func aJMAPAccountIsPushedAndPolledWhilePushIsDown() {
        let plan = WatchPlan.jmap(pollInterval: 60)
        #expect(plan.listening == .push && plan.pollSeconds == 60)
        #expect(plan.pollSeconds(pushListening: true) == nil)
        #expect(plan.pollSeconds(pushListening: false) == 60)
        // IMAP plans ignore it.
        #expect(WatchPlan.make(offersNotify: false, watch: [], pollInterval: 30).pollSeconds(pushListening: true) == 30)
    }
}
