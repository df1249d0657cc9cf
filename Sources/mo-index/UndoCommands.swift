#if canImport(Glibc)
    import Glibc
#endif
import ArgumentParser
import Maildir
import MoCLI
import MoConfig
import MoCore
import MoIndex
import XapianKit

// Undo of scripted triage: every `move`, `flag`, `tag` and `snooze` writes what it changed to the triage
// log (`TriageLog`) before changing it; `undo` makes the inverse changes in the Maildir, which the next
// mo-sync carries to the server like any other (a moved-back file is a UID MOVE back, whether or not a
// sync carried the first move already).

extension MoIndexCommand {
    struct Undo: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Take back the last move, flag, tag or snooze command (or the last N): mo-index undo [N]",
            discussion: """
                Moves the files back, and puts their flags, tags and snooze marks back as they were, \
                whether or not mo-sync has carried the command to the server since (the next mo-sync \
                carries the undo too). A file moved or deleted since is passed over with a note. The \
                last 100 commands of the last 30 days can be undone; mo-index history lists them.
                """)

        @OptionGroup var location: IndexLocation
        @OptionGroup(title: "Global") var global: GlobalLocation

        @Argument(help: "How many commands to take back, the newest first.")
        var count: Int = 1

        func run() throws {
            guard count >= 1 else { throw ValidationError("N must be 1 or more.") }
            let resolved = try global.merged(location).forUpdate()
            let log = Triage.log(resolved)
            let now = WallClock.now()
            let open = try log.load().filter { !$0.undone && now - $0.time < TriageLog.maxAge }
            guard !open.isEmpty else {
                throw GenericError(.usage, "nothing to undo (\(log.path) holds no command of the last 30 days that is not undone)")
            }
            var missing = 0
            for command in open.suffix(count).reversed() {
                let (reverted, gone) = try Triage.revert(command, resolved: resolved)
                missing += gone
                try log.markUndone(command.id)
                print(
                    "mo-index: undid \"\(escapedForMessage(command.command))\": \(reverted) change(s); mo-sync will carry them to the server"
                )
            }
            _ = try Tagging.update(resolved)
            if missing > 0 {
                CommandLineRunner.printError("mo-index: note: \(missing) file(s) were moved or deleted since, and were passed over")
            }
        }
    }

    struct History: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the move, flag, tag and snooze commands that undo can take back, newest last.",
            discussion: "One line each: WHEN, the number of changes, the command, and (undone) or (cut short).")

        @OptionGroup var location: IndexLocation
        @OptionGroup(title: "Global") var global: GlobalLocation

        func run() throws {
            let resolved = try global.merged(location).forUpdate()
            let now = WallClock.now()
            for c in try Triage.log(resolved).load() {
                var notes = ""
                if c.undone { notes += " (undone)" } else if !c.ended { notes += " (cut short)" }
                print("\(WhenText.describe(c.time, now: now))\t\(c.changes.count)\t\(escapedForMessage(c.command + notes))")
            }
        }
    }
}

extension Triage {
    static func log(_ resolved: IndexLocation.Resolved) -> TriageLog { TriageLog(path: resolved.triageLogPath) }

    /// The command line as the log shows it.
    static func commandLine() -> String {
        (["mo-index"] + CommandLine.arguments.dropFirst()).joined(separator: " ")
    }

    /// The inverse of each change of `command`, newest first. Returns the changes made and the files not found.
    static func revert(_ command: TriageLog.Command, resolved: IndexLocation.Resolved) throws -> (Int, Int) {
        var reverted = 0, missing = 0
        // Tag changes go through the index (a message's files by its id): brought up to date first, and
        // the tagger (with its lock on local-tags) taken only after that update, whose rules take their own.
        var tagging: (MailIndex, MessageTagger)?
        if command.changes.contains(where: { if case .tag = $0 { true } else { false } }) {
            _ = try Tagging.update(resolved)
            tagging = (
                try MailIndex(path: resolved.indexPath),
                try resolved.tagger()
            )
        }
        for change in command.changes.reversed() {
            switch change {
            case .file(let from, let to, let unique, let c):
                guard let path = MaildirFolder(path: to).path(ofUnique: unique) else { missing += 1; continue }
                let inverse = KeywordMove.Change(
                    addKeywords: c.removeKeywords, removeKeywords: c.addKeywords, addFlags: c.removeFlags, removeFlags: c.addFlags)
                if try KeywordMove.move(path, to: from, change: inverse) != nil { reverted += 1 } else { missing += 1 }
            case .tag(let id, let add, let remove):
                guard let (index, tagger) = tagging else { continue }
                var found = false
                try index.forEachMessage(try XapianQuery(term: IndexSchema.Prefix.id + id), order: .oldest) { m in
                    found = true
                    _ = try tagger.apply(add: remove, remove: add, messageID: id, files: m.record.files.map(index.absolutePath))
                }
                if found { reverted += 1 } else { missing += 1 }
            }
        }
        try tagging?.1.save()
        return (reverted, missing)
    }
}
