import Foundation
import Testing
import MoCore
import MoTestSupport

/// notmuch's gzipped mail files and dumps: a message gzipped in place (by gzip(1)) is indexed, found
/// under its `.gz` name and shown uncompressed; `dump --gzip` writes what gzip(1) reads and `restore`
/// reads it back.
@Suite struct NotmuchGzipTests {
    @Test func gzippedMailAndDumps() throws {
        let dir = try TemporaryDirectory("mo-notmuch-gzip")
        defer { dir.remove() }
        let mail = dir.path + "/mail"
        try FileManager.default.createDirectory(atPath: mail, withIntermediateDirectories: true)
        let fixtures = TestPaths.projectRoot + "/Tests/Fixtures/mail"
        let names = try FileManager.default.contentsOfDirectory(atPath: fixtures).filter { $0.hasSuffix(".eml") }.sorted()
        try FileManager.default.copyItem(atPath: fixtures + "/" + names[0], toPath: mail + "/plain")
        try FileManager.default.copyItem(atPath: fixtures + "/" + names[0], toPath: mail + "/packed")
        #expect(try ChildProcess.run(["gzip", mail + "/packed"]).status == 0)
        try "[database]\npath=\(mail)\n[new]\ntags=inbox\n".write(toFile: dir.path + "/config", atomically: true, encoding: .utf8)
        let env = ["NOTMUCH_CONFIG": dir.path + "/config", "HOME": dir.path]
        func notmuch(_ args: [String], input: [UInt8] = []) throws -> ChildProcess.Result {
            try ChildProcess.run([TestPaths.binDirectory + "/mo-index", "notmuch"] + args, input: input, environment: env)
        }
        #expect(try notmuch(["new"]).status == 0)
        // Both files hold one message: one message, two files, one of them the .gz.
        #expect(try notmuch(["count", "*"]).stdoutString == "1\n")
        let files = try notmuch(["search", "--output=files", "*"]).stdoutString
        #expect(files == "\(mail)/packed.gz\n\(mail)/plain\n" || files == "\(mail)/plain\n\(mail)/packed.gz\n")
        let original = try Data(contentsOf: URL(fileURLWithPath: mail + "/plain"))
        for duplicate in ["--duplicate=1", "--duplicate=2"] {
            #expect(try notmuch(["show", "--format=raw", duplicate, "*"]).stdout == Array(original), "\(duplicate)")
        }
        // dump --gzip is gzip(1)'s format; restore reads it.
        #expect(try notmuch(["tag", "+kept", "*"]).status == 0)
        #expect(try notmuch(["dump", "--gzip", "--output=\(dir.path)/dump.gz"]).status == 0)
        let unpacked = try ChildProcess.run(["gzip", "-dc", dir.path + "/dump.gz"])
        #expect(unpacked.status == 0 && unpacked.stdoutString.contains("+inbox +kept -- id:"))
        #expect(try notmuch(["tag", "-kept", "*"]).status == 0)
        #expect(try notmuch(["restore", "--input=\(dir.path)/dump.gz"]).status == 0)
        #expect(try notmuch(["count", "tag:kept"]).stdoutString == "1\n")
    }
}
