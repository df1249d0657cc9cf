import Foundation
import Testing
import Threading

/// Our partition against notmuch 0.37's on real corpora (/work/shared/oracles/README.md).
///
/// Each run also writes `$TMPDIR/mo-threading-oracle/<corpus>/threads.txt`, for
/// `python3 /work/shared/oracles/compare.py <oracle dir> <that dir> --show 20`.
@Suite struct OracleAgreementTests {
    struct Agreement: CustomStringConvertible {
        var corpus: String
        var exact: Int
        var oracleThreads: Int
        var missing: [Set<String>]  // oracle threads we do not reproduce exactly
        var percent: Double { 100 * Double(exact) / Double(max(oracleThreads, 1)) }
        var description: String {
            "\(corpus): \(exact)/\(oracleThreads) threads identical (\(String(format: "%.2f", percent))%)"
        }
    }

    static func agreement(_ corpus: String) throws -> Agreement {
        var index = ThreadIndex()
        for input in try CorpusReader.inputs(corpus: corpus) { index.add(input) }
        let ours = index.partition().map { Set($0.map(CorpusReader.escape)) }
        try write(ours, corpus: corpus)
        let oracle = try CorpusReader.oracleThreads(corpus: corpus)
        let mine = Set(ours)
        let missing = oracle.filter { !mine.contains($0) }
        return Agreement(corpus: corpus, exact: oracle.count - missing.count, oracleThreads: oracle.count, missing: missing)
    }

    static func write(_ threads: [Set<String>], corpus: String) throws {
        let base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        let dir = "\(base)/mo-threading-oracle/\(corpus)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let text = threads.map { $0.sorted().joined(separator: " ") }.sorted().joined(separator: "\n") + "\n"
        try text.write(toFile: "\(dir)/threads.txt", atomically: true, encoding: .utf8)
    }

    /// notmuch's own test corpora (lkml, threading, duplicate, broken, ...): 69 threads.
    @Test(.enabled(if: CorpusReader.corpusExists("notmuch-test")))
    func notmuchTestCorpus() throws {
        let result = try Self.agreement("notmuch-test")
        print(result)
        for thread in result.missing.prefix(10) { print("  differs:", thread.sorted().joined(separator: " ")) }
        #expect(result.percent >= 99, "\(result)")
    }

    /// SpamAssassin 2002: 3,250 messages, 2,261 threads, spam with broken ids.
    @Test(.enabled(if: CorpusReader.corpusExists("spamassassin-2002")))
    func spamAssassinCorpus() throws {
        let result = try Self.agreement("spamassassin-2002")
        print(result)
        for thread in result.missing.prefix(10) { print("  differs:", thread.sorted().joined(separator: " ")) }
        #expect(result.percent >= 99, "\(result)")
    }
}
