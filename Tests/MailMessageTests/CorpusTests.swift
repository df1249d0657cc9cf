import Foundation
import Testing
import MoTestSupport
@testable import MailMessage

/// Paths to the shared corpora and oracles (`../shared` beside the project).
enum SharedData {
    static let root = URL(fileURLWithPath: TestPaths.sharedDirectory)
    static var corpora: URL { root.appendingPathComponent("corpora") }
    static var oracles: URL { root.appendingPathComponent("oracles") }
    static var available: Bool { FileManager.default.fileExists(atPath: corpora.path) }

    /// Every regular file under `corpora/<name>` (not the CORPORA.md notes), sorted.
    static func files(_ name: String) -> [String] {
        let dir = corpora.appendingPathComponent(name).path
        guard let e = FileManager.default.enumerator(atPath: dir) else { return [] }
        var out = [String]()
        while let rel = e.nextObject() as? String {
            let p = dir + "/" + rel
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: p, isDirectory: &isDir), !isDir.boolValue { out.append(p) }
        }
        return out.sorted()
    }

    static func escape(_ id: String) -> String { MessageID.listingEscaped(id) }

    static func lines(_ url: URL) -> [String] {
        ((try? String(contentsOf: url, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }
}

/// Connected components over Message-ID links, as notmuch threads (ghosts for absent parents).
struct Threader {
    var parent = [String: String]()
    mutating func find(_ x: String) -> String {
        var r = x
        while let p = parent[r], p != r { r = p }
        var c = x
        while let p = parent[c], p != r { parent[c] = r; c = p }
        return r
    }
    mutating func union(_ a: String, _ b: String) {
        if parent[a] == nil { parent[a] = a }
        if parent[b] == nil { parent[b] = b }
        let ra = find(a), rb = find(b)
        if ra != rb { parent[ra] = rb }
    }
}

@Suite("Corpora against notmuch 0.37", .serialized)
struct CorpusTests {
    @Test("every corpus file parses", arguments: ["notmuch-test", "mu-testdata", "spamassassin-2002"])
    func parsesEverything(corpus: String) throws {
        try #require(SharedData.available, "shared corpora not found at \(SharedData.corpora.path)")
        let files = SharedData.files(corpus)
        #expect(files.count > 30)
        var withBody = 0
        for f in files {
            guard let m = ParsedMessage.parse(contentsOfFile: f) else { Issue.record("unreadable \(f)"); continue }
            if !m.bodyText.isEmpty { withBody += 1 }
            #expect(m.bodyText.utf8.count <= ParsedMessage.bodyTextLimit)
        }
        #expect(withBody * 10 >= files.count * 8, "most messages have indexable text")
    }

    @Test("Message-IDs and threads agree with notmuch", arguments: ["notmuch-test", "spamassassin-2002"])
    func agreesWithOracle(corpus: String) throws {
        try #require(SharedData.available)
        let oracle = SharedData.oracles.appendingPathComponent(corpus)
        let expected = Set(SharedData.lines(oracle.appendingPathComponent("messages.txt")))
        let expectedThreads = Set(SharedData.lines(oracle.appendingPathComponent("threads.txt")))
        try #require(!expected.isEmpty)

        var ids = Set<String>()
        var threader = Threader()
        let clock = ContinuousClock()
        var elapsed = Duration.zero
        for f in SharedData.files(corpus) {
            guard let data = FileManager.default.contents(atPath: f) else { continue }
            let bytes = [UInt8](data)
            let start = clock.now
            let m = ParsedMessage.parse(bytes)
            elapsed += clock.now - start
            guard m.looksLikeMail else { continue }
            let id = MessageID.notmuchKey(m.id)
            ids.insert(id)
            threader.union(id, id)
            for l in m.threadLinks { threader.union(id, MessageID.notmuchKey(l)) }
        }
        let got = Set(ids.map(SharedData.escape))
        let pct = Self.agreement("Message-IDs", corpus: corpus, ours: got, notmuch: expected, shown: 20, note: "parse time \(elapsed)")
        #expect(pct >= 99.0)
        #expect(got.count <= expected.count + expected.count / 100)

        var groups = [String: [String]]()
        for id in ids { groups[threader.find(id), default: []].append(SharedData.escape(id)) }
        let threads = Set(groups.values.map { $0.sorted().joined(separator: " ") })
        let tpct = Self.agreement(
            "threads", corpus: corpus, ours: threads, notmuch: expectedThreads, shown: 10, note: "ours \(threads.count)")
        #expect(tpct >= 98.0)
    }

    /// The share of notmuch's values that ours has too, in percent; printed, with up to `shown` differences
    /// each way (cut to 300 characters).
    static func agreement(_ what: String, corpus: String, ours: Set<String>, notmuch: Set<String>, shown: Int, note: String) -> Double {
        let same = ours.intersection(notmuch).count
        let pct = Double(same) * 100 / Double(notmuch.count)
        print("[\(corpus)] \(what): \(same)/\(notmuch.count) agree (\(String(format: "%.2f", pct))%), \(note)")
        for x in ours.subtracting(notmuch).sorted().prefix(shown) { print("  \(what) only ours:    \(x.prefix(300))") }
        for x in notmuch.subtracting(ours).sorted().prefix(shown) { print("  \(what) only notmuch: \(x.prefix(300))") }
        return pct
    }
}
