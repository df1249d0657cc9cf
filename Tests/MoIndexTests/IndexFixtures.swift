import Foundation
@testable import MoIndex
import MoTestSupport

/// A Maildir tree in a temporary directory, filled from Tests/Fixtures/mail, and an index of it.
final class IndexedTree {
    let dir = TempDirectory()
    var maildir: String { dir.path + "/mail" }
    var indexPath: String { dir.path + "/index" }
    var roots: [IndexRoot] { [IndexRoot(name: "", path: maildir, layout: .verbatim)] }

    static let fixtures = TestPaths.projectRoot + "/Tests/Fixtures/mail"

    init(folders: [String: [String]] = ["INBOX": fixtureNames]) throws {
        for (folder, names) in folders {
            for sub in ["cur", "new", "tmp"] {
                try FileManager.default.createDirectory(atPath: "\(maildir)/\(folder)/\(sub)", withIntermediateDirectories: true)
            }
            for (i, name) in names.enumerated() {
                try FileManager.default.copyItem(
                    atPath: "\(Self.fixtures)/\(name)",
                    toPath: "\(maildir)/\(folder)/cur/\(1000 + i).\(name).host:2,S")
            }
        }
    }

    static var fixtureNames: [String] {
        (try! FileManager.default.contentsOfDirectory(atPath: fixtures)).filter { $0.hasSuffix(".eml") }.sorted()
    }

    @discardableResult
    func update() throws -> UpdateSummary {
        let updater = IndexUpdater(indexPath: indexPath, roots: roots)
        updater.commitInterval = 7  // exercise intermediate commits
        return try updater.run()
    }

    func index() throws -> MailIndex { try MailIndex(path: indexPath) }

    func ids(_ query: String) throws -> Set<String> {
        let index = try index()
        return Set(try index.messages(try index.query(query)).map(\.record.id))
    }

    func files(in folder: String, _ sub: String = "cur") -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "\(maildir)/\(folder)/\(sub)")) ?? []).sorted()
    }

    /// Directory mtimes have nanosecond resolution, but some file systems round: make sure a change
    /// is visible.
    func touchLater(_ path: String) {
        usleep(20_000)
        _ = utimes(path, nil)
    }
}
