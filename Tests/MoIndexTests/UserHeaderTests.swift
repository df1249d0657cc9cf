import Foundation
import Testing
@testable import MoIndex
import MoTestSupport

/// `index.header.NAME=Header` (notmuch 0.37): NAME's rules as notmuch words them; the header's words
/// indexed under XU+NAME and searched as `NAME:` (its case kept beside the case-blind built-in fields) and
/// `(NAME …)`; another list rebuilds the index, keeping every message once.
@Suite struct UserHeaderTests {
    @Test(
        arguments: [
            ("List", nil), ("X_1", nil), ("Ünï", nil), ("", "Empty prefix name: index.header."),
            ("list", "Prefix names starting with lower case letters are reserved: list"),
            ("l:st", "Non-word character in prefix name: l:st"), ("Li st", "Non-word character in prefix name: Li st")
        ] as [(String, String?)])
    func names(name: String, problem: String?) {
        #expect(UserHeader.problem(withName: name) == problem)
    }

    @Test(arguments: [("List-Id", true), ("X-Spam_1", true), ("", false), ("a:b", false), ("a\nb", false), ("a b", false), ("é", false)])
    func headerNames(header: String, ok: Bool) {
        #expect(UserHeader.isHeaderName(header) == ok)
    }

    /// Names with digits and `_`, and names one of which begins another: each its own field.
    @Test func namesApart() throws {
        let tree = try IndexedTree()
        let updater = IndexUpdater(indexPath: tree.indexPath, roots: tree.roots)
        updater.userHeaders = [
            UserHeader(name: "List", header: "List-Id"), UserHeader(name: "Listing", header: "Subject"),
            UserHeader(name: "X_1", header: "List-Id")
        ]
        _ = try updater.run()
        let freebsd = try tree.ids("List:freebsd")
        let x1 = try tree.ids("X_1:freebsd")
        #expect(freebsd.count == 1 && x1 == freebsd)
        let index = try tree.index()
        let lists = Set(try index.messages(try index.query("(List *)", sexp: true)).map(\.record.id))
        let withSubject = Set(try index.messages(try index.query("(Listing *)", sexp: true)).map(\.record.id))
        #expect(!lists.isEmpty && lists.count < withSubject.count)
        // A word with a digit before a colon that names no field stays a word.
        #expect(throws: Never.self) { try tree.ids("utf8:x") }
    }

    @Test func metadataRoundTrip() {
        let headers = [UserHeader(name: "List", header: "List-Id"), UserHeader(name: "Spam", header: "X-Spam")]
        #expect(UserHeader.decode(UserHeader.encode(headers)) == headers)
        #expect(UserHeader.decode("") == [])
    }

    @Test func indexedSearchedAndRebuiltOnChange() throws {
        let tree = try IndexedTree()
        let first = try tree.update()
        let all = try tree.ids("*")
        // Not indexed yet: `List:` is the built-in `list:` (case-blind), exact, so a word finds nothing.
        #expect(try tree.ids("List:freebsd").isEmpty)

        let updater = IndexUpdater(indexPath: tree.indexPath, roots: tree.roots)
        updater.userHeaders = [UserHeader(name: "List", header: "List-Id")]
        let rebuilt = try updater.run()
        #expect(rebuilt.rebuilt && rebuilt.added == first.added)
        #expect(try tree.ids("*") == all)
        let freebsd = try tree.ids("List:freebsd")
        #expect(freebsd.count == 1)
        // `List:` is the header, `list:` the built-in exact List-Id field.
        #expect(try tree.ids("list:freebsd-bugs.freebsd.org") == freebsd)
        #expect(try tree.ids("List:freebsd-bugs.FreeBSD.ORG") == freebsd)
        #expect(try tree.ids("List:\"freebsd bugs\"") == freebsd)
        let index = try tree.index()
        let sexp = Set(try index.messages(try index.query("(List freebsd)", sexp: true)).map(\.record.id))
        #expect(sexp == freebsd)
        #expect(try tree.ids("sexp:\"(List freebsd)\"") == freebsd)
        #expect(try tree.ids("sexp:\"(List *)\"").count >= 3)

        // The same list again: no rebuild.
        let again = IndexUpdater(indexPath: tree.indexPath, roots: tree.roots)
        again.userHeaders = updater.userHeaders
        #expect(try !again.run().rebuilt)
    }
}

/// notmuch's lastmod: every update that writes stamps the documents it writes with the next revision;
/// `lastmod:A..B` and `(lastmod A B)` find them.
@Suite struct LastmodTests {
    @Test func revisionsFollowTheChanges() throws {
        let tree = try IndexedTree(folders: ["INBOX": Array(IndexedTree.fixtureNames.prefix(3))])
        try tree.update()
        let first = try tree.index().revision
        let uuid = try tree.index().uuid
        #expect(first == 1 && !uuid.isEmpty)
        let all = try tree.ids("*")
        #expect(try tree.ids("lastmod:1..1") == all)
        #expect(try tree.ids("lastmod:..") == all)
        // A flag change renames one file: its message alone gets revision 2.
        let name = try #require(tree.files(in: "INBOX").first)
        try FileManager.default.moveItem(atPath: "\(tree.maildir)/INBOX/cur/\(name)", toPath: "\(tree.maildir)/INBOX/cur/\(name)F")
        tree.touchLater(tree.maildir + "/INBOX/cur")
        try tree.update()
        #expect(try tree.index().revision == 2)
        let changed = try tree.ids("lastmod:2..")
        #expect(changed.count == 1)
        #expect(try tree.ids("lastmod:*..1") == all.subtracting(changed))
        let index = try tree.index()
        #expect(Set(try index.messages(try index.query("(lastmod 2 *)", sexp: true)).map(\.record.id)) == changed)
        #expect(Set(try index.messages(try index.query("(lastmod)", sexp: true)).map(\.record.id)) == all)
        // A no-op update writes nothing and keeps the revision.
        try tree.update()
        #expect(try tree.index().revision == 2)
        #expect(throws: QueryError.self) { try tree.ids("lastmod:x..2") }
    }
}
