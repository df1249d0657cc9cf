import Testing
import MoCore
import MoTestSupport

/// The man pages are one set: the same header form, naming the version the programs report.
@Suite struct ManPageTests {
    @Test(arguments: ["mo-sync", "mo-index", "mo-sendmail"])
    func headerNamesTheRelease(page: String) throws {
        let path = TestPaths.projectRoot + "/docs/\(page).1"
        guard case .success(let bytes) = readWholeFile(path) else { Issue.record("cannot read \(path)"); return }
        let first = String(decoding: bytes.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        #expect(first == ".TH \(page.uppercased()) 1 \"2026\" \"mo \(MoVersion.string)\" \"Magnum Opus\"", "\(first)")
    }
}
