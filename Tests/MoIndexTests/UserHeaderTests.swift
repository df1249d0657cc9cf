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
