import IMAPCodec
import JMAPClient
import Maildir
import SyncEngine
import Testing

@testable import SyncRunner

/// A JMAP account's mailboxes and keywords in the placement's words, and back (docs/jmap.md's table).
@Suite struct JMAPMailboxMapTests {
    static let boxes = [
        JMAPMailbox(id: "I", name: "Inbox", role: "inbox"), JMAPMailbox(id: "S", name: "Sent", role: "sent"),
        JMAPMailbox(id: "T", name: "Trash", role: "trash"), JMAPMailbox(id: "L", name: "Lists"),
        JMAPMailbox(id: "D", name: "dev", parentID: "L"), JMAPMailbox(id: "X", name: "Inbox", parentID: "L"),
        JMAPMailbox(id: "C", name: "loop", parentID: "C")
    ]
    static let map = JMAPMailboxMap(boxes)
    static let vocabulary = TagVocabulary()
    static let policy = Placement.Policy(syncTrash: true, syncJunk: true)

    static func email(_ boxes: Set<String>, _ keywords: Set<String> = []) -> JMAPEmail {
        JMAPEmail(id: "M1", blobID: "G1", mailboxIDs: boxes, keywords: keywords, size: 10, receivedAt: "")
    }

    @Test func pathsFollowParentsAndRolesWin() {
        #expect(Self.map.byID["I"] == .inbox && Self.map.byID["S"] == .sent && Self.map.byID["T"] == .trash)
        #expect(Self.map.byID["D"] == .user("Lists/dev") && Self.map.byID["X"] == .user("Lists/Inbox"))
        #expect(Self.map.byID["C"] == .user(String(repeating: "loop/", count: 63) + "loop"))  // a cycle stops
        #expect(Self.map.mailboxID(of: .inbox) == "I" && Self.map.mailboxID(of: .archive) == nil)
    }

    /// | mailboxes, keywords | folder | flags |
    @Test(
        arguments: [
            (["I"], ["$seen", "$hasattachment"], Placement.Folder.inbox, [Flag.seen]),
            (["I", "D"], ["$flagged", "work"], .inbox, [.flagged, .keyword("work"), .keyword("Lists/dev")]),
            (["D"], [], .archive, [.keyword("Lists/dev")]),
            (["T", "I"], ["$answered", "$draft"], .trash, [.answered, .draft, .keyword("inbox")]),
            (["S", "I"], [], .inbox, [.keyword("sent")]),
            ([], [], .archive, [])
        ] as [([String], [String], Placement.Folder, [Flag])])
    func placement(boxes: [String], keywords: [String], folder: Placement.Folder, flags: [Flag]) {
        let v = Self.map.view(Self.email(Set(boxes), Set(keywords)), vocabulary: Self.vocabulary, policy: Self.policy)
        #expect(v.folder == folder)
        #expect(v.flags == flags)
    }

    @Test func theWayBackSplitsKeywordsFromMailboxTags() {
        let (keywords, boxes) = Self.map.split(
            [.seen, .deleted, .keyword("Lists/dev"), .keyword("work"), .keyword("$Forwarded"), .keyword("$hasattachment")],
            vocabulary: Self.vocabulary)
        #expect(keywords == ["$seen", "work", "$forwarded"])
        #expect(boxes == ["D"])
    }

    @Test func theDigestChangesWithWhatPlacesAndNothingElse() {
        var renamed = Self.boxes
        renamed[3].name = "Mailing lists"
        #expect(JMAPMailboxMap(renamed).digest != Self.map.digest)
        #expect(JMAPMailboxMap(Self.boxes.reversed()).digest == Self.map.digest)
    }

    @Test func utcTimes() {
        #expect(
            JMAPStore.utcTime(InternalDate(year: 2026, month: 1, day: 1, hour: 0, minute: 30, second: 5, zoneMinutes: 60)!)
                == "2025-12-31T23:30:05Z")
        #expect(
            JMAPStore.utcTime(InternalDate(year: 2024, month: 2, day: 28, hour: 20, minute: 0, second: 0, zoneMinutes: -300)!)
                == "2024-02-29T01:00:00Z")
        #expect(
            JMAPStore.utcDate(InternalDate(year: 2026, month: 11, day: 8, hour: 9, minute: 0, second: 0, zoneMinutes: 0)!)
                == "2026-11-08T00:00:00Z")
        #expect(JMAPStore.pointer("a/b~c") == "a~1b~0c")
    }

    /// The run's own keyword changes chain from the look's state only when each began where the last ended.
    @Test func ownKeywordChains() {
        func result(_ old: String?, _ new: String) -> JMAPSetResult {
            JMAPSetResult(oldState: old, newState: new, notUpdated: [:], notDestroyed: [:])
        }
        var chain = OwnKeywords()
        #expect(chain.end(from: "5") == nil)
        chain.note(result("5", "6"), refused: false)
        chain.note(result("6", "7"), refused: false)
        #expect(chain.end(from: "5") == "7" && chain.end(from: "4") == nil)
        var gap = chain
        gap.note(result("8", "9"), refused: false)  // another client's change between
        #expect(gap.end(from: "5") == nil)
        var refused = chain
        refused.note(result("7", "8"), refused: true)
        #expect(refused.end(from: "5") == nil)
        var unknown = OwnKeywords()
        unknown.note(result(nil, "6"), refused: false)
        #expect(unknown.end(from: "5") == nil)
    }
}
