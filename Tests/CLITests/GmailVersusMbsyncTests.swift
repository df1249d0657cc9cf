import Foundation
import Testing
import MoCore
import MoTestSupport

/// Issue 26's comparison, on one label-spread account of the Gmail model (`GmailModeTests.spread`, real
/// lkml messages): mbsync with the setup `mo-sync init` used to write for Gmail (every label folder but
/// All Mail, Important and Starred) downloads a message once per label folder and never sees the archived
/// mail; mo-sync's Gmail mode downloads each message once and stores every one. Skipped where mbsync is
/// not installed (CI installs isync).
@Suite(.serialized) struct GmailVersusMbsyncTests {
    static var mbsync: String? {
        ["/usr/bin/mbsync", "/usr/local/bin/mbsync"].first { access($0, X_OK) == 0 }
    }

    /// One tool's first sync: bodies downloaded, files stored, distinct messages among them, and messages
    /// of All Mail missing.
    struct Outcome: Equatable, CustomStringConvertible {
        var downloads: Int
        var stored: Int
        var distinct: Int
        var missing: Int
        var description: String { "\(downloads) downloads, \(stored) files of \(distinct) messages, \(missing) of All Mail missing" }
    }

    static func outcome(_ model: GmailModel, files: [[UInt8]]) -> Outcome {
        let shown = model.messages.filter { !$0.labels.contains("\\Trash") && !$0.labels.contains("\\Spam") }
        let here = Set(files.map(GmailModeTests.messageID))
        let missing = shown.filter { !here.contains(GmailModeTests.messageID($0.body)) }.count
        return Outcome(downloads: model.bodyDownloads.values.reduce(0, +), stored: files.count, distinct: here.count, missing: missing)
    }

    static func files(under root: String) throws -> [[UInt8]] {
        let r = try ChildProcess.run(["find", root, "-type", "f", "(", "-path", "*/cur/*", "-o", "-path", "*/new/*", ")"])
        return try r.stdoutString.split(separator: "\n").map { Array(try Data(contentsOf: URL(fileURLWithPath: String($0)))) }
    }

    @Test(.enabled(if: mbsync != nil)) func moDownloadsEachMessageOnceWhereMbsyncDownloadsPerLabelAndMissesArchived() throws {
        let seed = GmailModeTests.spread(try GmailModeTests.corpus(60))

        let moModel = GmailModel(seed)
        let moServer = try ScriptedIMAPServer(greeting: GmailModel.greeting, script: { moModel.answer($0) })
        let mo = try ScriptedRun(moServer)
        defer { mo.remove() }
        #expect(try mo.sync().status == 0)
        let moOutcome = Self.outcome(moModel, files: try Self.files(under: mo.maildir))

        let mbModel = GmailModel(seed)
        let mbServer = try ScriptedIMAPServer(greeting: GmailModel.greeting, script: { mbModel.answer($0) })
        defer { mbServer.stop() }
        let dir = try TemporaryDirectory("mo-mbsync-gmail")
        defer { dir.remove() }
        #expect(mkdir(dir.path + "/Mail", 0o700) == 0)
        try writePrivateFile(
            dir.path + "/mbsyncrc",
            """
            IMAPAccount gmail
            Host 127.0.0.1
            Port \(mbServer.port)
            User me@gmail.com
            Pass x
            SSLType None
            AuthMechs LOGIN

            IMAPStore remote
            Account gmail

            MaildirStore local
            Path \(dir.path)/Mail/
            Inbox \(dir.path)/Mail/INBOX
            SubFolders Verbatim

            Channel gmail
            Far :remote:
            Near :local:
            Patterns * !"[Gmail]/All Mail" !"[Gmail]/Important" !"[Gmail]/Starred"
            Create Near
            SyncState *

            """)
        let r = try ChildProcess.run(["timeout", "-s", "KILL", "60", Self.mbsync!, "-c", dir.path + "/mbsyncrc", "-a"])
        #expect(r.status == 0, "\(r.stderrString)")
        let mbOutcome = Self.outcome(mbModel, files: try Self.files(under: dir.path + "/Mail"))

        print("label spread (issue 26): mo-sync: \(moOutcome); mbsync: \(mbOutcome)")  // the closing note's figures
        // mo: every message of All Mail once; mbsync: one per label folder, the archived ones not at all.
        #expect(
            moOutcome.missing == 0 && moOutcome.downloads == moOutcome.distinct && moOutcome.stored == moOutcome.distinct,
            "mo: \(moOutcome)")
        #expect(mbOutcome.missing > 0 && mbOutcome.downloads > mbOutcome.distinct, "mbsync: \(mbOutcome)")
    }
}
