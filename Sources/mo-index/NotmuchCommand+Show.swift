import Glibc
import MoCLI
import MoCore
import MoIndex
import NotmuchCompat

/// `notmuch show` and `notmuch reply`: options as notmuch-show.c and notmuch-reply.c parse them, the
/// work in `NotmuchShow` and `NotmuchReply`.
extension NotmuchCommand {
    static func show(_ args: [String], _ location: LocationValues) throws {
        let parsed = NotmuchArguments.parse(
            args,
            shared.merging([
                "sort": .keyword(["oldest-first", "newest-first"]), "format": .keyword(NotmuchShow.Format.allCases.map(\.rawValue)),
                "format-version": .int, "exclude": .bool, "entire-thread": .bool, "unthreaded": .bool, "part": .int,
                "decrypt": .keyword(["false", "auto", "true", "stash", "nostash"]), "verify": .bool, "body": .bool, "include-html": .bool,
                "duplicate": .int
            ]) { $1 })
        guard case .success(let o) = parsed else { fail(parsed) }
        var show = NotmuchShow(now: Int64(WallClock.now()))
        show.part = o.int("part") ?? -1
        show.duplicate = o.int("duplicate") ?? 0
        show.unthreaded = o.flag("unthreaded")
        show.oldestFirst = o.last("sort") == "oldest-first"
        show.format = o.last("format").flatMap(NotmuchShow.Format.init(rawValue:)) ?? (show.part >= 0 ? .raw : .text)
        if show.format == .mbox && show.part > 0 {
            writeError("Error: specifying parts is incompatible with mbox output format.\n")
            exit(1)
        }
        show.layout.formatVersion = try formatVersion(o)
        show.entireThread = o.last("entire-thread").map { $0 == "true" } ?? (show.format == .json || show.format == .sexp)
        show.layout.body = o.last("body").map { $0 == "true" } ?? true
        if !show.layout.body && show.part > 0 {
            writeError("Warning: --body=false is incompatible with --part > 0. Disabling.\n")
            show.layout.body = true
        }
        show.layout.includeHTML = o.flag("include-html")
        if let setup { show.layout.extraHeaders = setup.values("show.extra_headers")?.filter { !$0.isEmpty } ?? [] }
        // --decrypt (notmuch-emacs passes --decrypt=true) is accepted: mo decrypts nothing, so encrypted
        // parts show as they are, as notmuch shows them when no key opens them. Explicit decryption
        // implies verification, as in notmuch.
        show.verify = o.flag("verify") || o.last("decrypt") == "true" || o.last("decrypt") == "nostash"
        let text = o.rest.joined(separator: " ")
        if text.isEmpty {
            writeError("Error: notmuch show requires at least one search term.\n")
            exit(1)
        }
        let index = try MailIndex(path: try location.forReading().indexPath)
        if !show.singleMessage, let excluded = try excludedQuery(text) {
            show.excluded = Set(try index.listing(excluded, order: .relevance, fields: []).documentIDs)
            show.omitExcluded = o.last("exclude") != "false"
        }
        let status = try show.run(
            index, try query(index, text, o), sink: writeStandardOutput, errors: { writeError($0) })
        if status != 0 { exit(status) }
    }

    static func reply(_ args: [String], _ location: LocationValues) throws {
        let parsed = NotmuchArguments.parse(
            args,
            shared.merging([
                "format": .keyword(NotmuchReply.Format.allCases.map(\.rawValue)), "format-version": .int,
                "reply-to": .keyword(["all", "sender"]), "decrypt": .keyword(["false", "auto", "true"]), "duplicate": .int
            ]) { $1 })
        guard case .success(let o) = parsed else { fail(parsed) }
        let format = o.last("format").flatMap(NotmuchReply.Format.init(rawValue:)) ?? .default
        let version = try formatVersion(o)
        let text = o.rest.joined(separator: " ")
        if text.isEmpty {
            writeError("Error: notmuch reply requires at least one search term.\n")
            exit(1)
        }
        let resolved = try location.forReading()
        let values = configValues(resolved)
        func value(_ key: String) -> [String] { values.first { $0.key == key }?.value ?? [] }
        var reply = NotmuchReply(
            user: .init(
                name: value("user.name").first ?? "", primary: value("user.primary_email").first ?? "", other: value("user.other_email")))
        reply.replyAll = o.last("reply-to") != "sender"
        let index = try MailIndex(path: resolved.indexPath)
        let query = try query(index, text, o)
        let now = Int64(WallClock.now())
        var layout = ShowFormat(now: now)
        layout.formatVersion = version
        let structured = format == .json || format == .sexp
        if structured {
            let count = try index.count(query)
            if count != 1 {
                writeError("Error: search term did not match precisely one message (matched \(count) messages).\n")
                exit(1)
            }
        }
        var p = Sprinter(format == .json ? .json : format == .sexp ? .sexp : .text, sink: writeStandardOutput)
        let tags = try IndexedTags(index)
        for m in try index.messages(query, order: .newest) {
            // notmuch's reply reads its messages without a thread search, so none is flagged as matched.
            var shown = try NotmuchShow.shownMessage(m, matched: false, index, tags)
            shown.duplicate = o.int("duplicate") ?? 0
            let body: ShownMessage.Body
            switch shown.open() {
            case .success(let b): body = b
            case .failure(let f):
                writeError(f.message)
                exit(1)
            }
            if structured {
                reply.structured(shown, body, layout: layout, to: &p)
            } else {
                p.raw(reply.text(shown, body, headersOnly: format == .headersOnly))
            }
            p.flush()
        }
    }
}
