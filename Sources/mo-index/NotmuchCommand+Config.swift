import Foundation
import Glibc
import MoCLI
import MoConfig
import MoCore
import MoIndex
import NotmuchCompat

/// Which configuration notmuch's command line answers from, and its `config` command.
///
/// | given                                              | configuration                | mail and index |
/// |----------------------------------------------------|------------------------------|----------------|
/// | `--config=FILE` or `$NOTMUCH_CONFIG` (and no mo location option) | that notmuch file (`NotmuchConfig`), notmuch's defaults for the rest | `database.path` (every file a message, as notmuch), the index in its `.notmuch/mo-index` |
/// | otherwise                                          | mo's (`$MO_CONFIG`, `mo-index --config`) | mo's accounts and index |
///
/// So a notmuch setup (and notmuch's own tests) runs as it is, and a mo user's `notmuch` link reads mo's
/// accounts. `config set` writes the notmuch file; with mo's configuration it exits 64.
extension NotmuchCommand {
    /// notmuch's keys with their values and whether notmuch keeps a list there: from the notmuch file
    /// with notmuch's defaults, or from mo's configuration.
    static func configValues(_ resolved: IndexLocation.Resolved) -> [(key: String, value: [String], isList: Bool)] {
        var name = ""
        if let pw = getpwuid(getuid()), let gecos = pw.pointee.pw_gecos {
            name = String(String(cString: gecos).split(separator: ",", omittingEmptySubsequences: false).first ?? "")
        }
        guard let setup else {
            let roots = resolved.config?.accounts.compactMap(\.maildir) ?? resolved.roots.map(\.path)
            let root = commonDirectory(roots)
            let addresses = resolved.config.map { c in c.accounts.flatMap { [$0.address] + $0.aliases } } ?? []
            return [
                ("database.mail_root", [root], false), ("database.path", [root], false), ("maildir.synchronize_flags", ["true"], false),
                ("new.ignore", [], true), ("new.tags", [], true), ("search.exclude_tags", [], true),
                ("user.name", name.isEmpty ? [] : [name], false), ("user.other_email", Array(addresses.dropFirst()), true),
                ("user.primary_email", Array(addresses.prefix(1)), false)
            ]
        }
        let defaults: [(String, [String], Bool)] = [
            ("database.autocommit", ["8000"], false), ("database.backup_dir", [setup.mailRoot + "/.notmuch/backups"], false),
            ("database.hook_dir", [setup.mailRoot + "/.notmuch/hooks"], false), ("database.mail_root", [setup.mailRoot], false),
            ("database.path", [setup.databasePath], false), ("maildir.synchronize_flags", ["true"], false),
            ("new.ignore", [], true), ("new.tags", ["unread", "inbox"], true), ("search.exclude_tags", [], true),
            ("user.name", name.isEmpty ? [] : [name], false), ("user.other_email", [], true),
            ("user.primary_email", [ProcessEnvironment.current["EMAIL"] ?? ""], false)
        ]
        // notmuch settles these two only when it opens a database.
        let opened = FileManager.default.fileExists(atPath: setup.indexDirectory)
        var out = defaults.filter { opened || !["database.backup_dir", "database.hook_dir"].contains($0.0) }.map { key, value, isList in
            (key: key, value: key.hasPrefix("database.") ? value : setup.values(key) ?? value, isList: isList)
        }
        for i in out.indices where out[i].key == "new.tags" || out[i].key == "search.exclude_tags" { out[i].value = tags(out[i].value) }
        for key in setup.keys where !out.contains(where: { $0.key == key }) {
            out.append((key, setup.values(key) ?? [], (setup.values(key)?.count ?? 0) > 1))
        }
        return out.sorted { $0.key < $1.key }
    }

    /// A tag list's items as notmuch takes them: blanks around a tag and empty items are not tags.
    static func tags(_ values: [String]) -> [String] {
        values.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// `notmuch config get KEY`, `list` and `set KEY [VALUE…]`. An unknown key prints nothing, as notmuch.
    static func config(_ args: [String], _ location: LocationValues) throws {
        let parsed = NotmuchArguments.parse(args, shared.merging(["database": .bool]) { $1 })
        guard case .success(let o) = parsed else { fail(parsed) }
        guard let verb = o.rest.first else {
            writeError("Error: notmuch config requires at least one argument.\n")
            exit(1)
        }
        let values = try configValues(
            setup == nil ? location.forReading() : IndexLocation.Resolved(indexPath: "", roots: [], ownAddresses: []))
        let builtWith = ["compact", "field_processor", "retry_lock", "sexp_queries"]
        switch verb {
        case "get":
            guard o.rest.count == 2 else {
                writeError("Error: notmuch config requires at least two arguments.\n")
                exit(1)
            }
            let key = o.rest[1]
            if key.hasPrefix("built_with.") {
                writeStandardOutput(Array((builtWith.contains(String(key.dropFirst(11))) ? "true\n" : "false\n").utf8))
                return
            }
            let out = (values.first { $0.key == key }?.value ?? []).map { $0 + "\n" }.joined()
            writeStandardOutput(Array(out.utf8))
        case "list":
            var lines = setup == nil ? [] : builtWith.map { "built_with.\($0)=true" }
            for v in values {
                // A notmuch file's own value as written (`a;b;`); mo's lists end each item with ";".
                if let setup, let raw = setup.file.rawValue(v.key) ?? setup.database.rawValue(v.key) {
                    lines.append(v.key + "=" + raw)
                } else {
                    lines.append(
                        v.key + "=" + (v.isList && setup == nil ? v.value.map { $0 + ";" }.joined() : v.value.joined(separator: ";")))
                }
            }
            writeStandardOutput(Array(lines.map { $0 + "\n" }.joined().utf8))
        case "set":
            guard var current = setup else { refuse("config set (mo's settings are in its configuration file, mo.toml(5))") }
            // `set`'s own option comes after it: `config set --database KEY VALUE`.
            let setParsed = NotmuchArguments.parse(Array(o.rest.dropFirst()), ["database": .bool])
            guard case .success(let so) = setParsed else { fail(setParsed) }
            let args = [verb] + so.rest
            guard args.count >= 2 else {
                writeError("Error: notmuch config set requires at least one argument.\n")
                exit(1)
            }
            let key = args[1]
            if key.hasPrefix("built_with.") {
                writeError("Error: read only option: \(key)\n")
                exit(1)
            }
            if key.hasPrefix("index.header.") {
                if key.unicodeScalars.contains("\u{FFFD}") {
                    writeError("Invalid utf8: \(key)\n")
                    exit(1)
                }
                if let problem = UserHeader.problem(withName: String(key.dropFirst(13))) {
                    writeError(problem + "\n")
                    exit(1)
                }
            }
            // A saved S-expression query is called as (Name …): its name must not read as a field or operator.
            if key.hasPrefix("squery."), !(key.dropFirst(7).first?.isUppercase ?? false) {
                writeError("Error: saved query names must start with a capital letter: \(key)\n")
                exit(1)
            }
            try setValues([(key, Array(args.dropFirst(2)))], in: &current, database: o.flag("database") || so.flag("database"))
        default:
            writeError("Unrecognized command: config \(verb)\n")
            exit(1)
        }
    }

    /// `config set [--database] KEY VALUE…` (and restore's `#@` lines, all in one write): into the file, or
    /// into the database's own values (which need the database to exist, as notmuch's do).
    static func setValues(_ changes: [(key: String, values: [String])], in current: inout NotmuchSetup, database: Bool) throws {
        let path: String
        let text: String
        if database || current.path.isEmpty {
            guard FileManager.default.fileExists(atPath: current.indexDirectory) else {
                writeError("Error: Cannot open database at \(current.mailRoot): No such file or directory.\n")
                exit(1)
            }
            for c in changes { current.database.set(c.key, c.values) }
            (path, text) = (current.databaseConfigPath, current.database.text)
        } else {
            for c in changes { current.file.set(c.key, c.values) }
            (path, text) = (Self.resolvedLink(current.path), current.file.text)
        }
        if case .failure(let e) = replaceFileAtomically(path, Array(text.utf8), mode: 0o644) {
            writeError("Error writing configuration file \(path): \(errnoDescription(e.code))\n")
            exit(1)
        }
    }

    /// Writing through a symbolic link writes its target, as notmuch does.
    static func resolvedLink(_ path: String) -> String {
        var buf = [CChar](repeating: 0, count: 4096)
        let n = readlink(path, &buf, buf.count - 1)
        guard n > 0 else { return path }
        let target = String(decoding: buf.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if target.hasPrefix("/") { return target }
        return (path.lastIndex(of: "/").map { String(path[...$0]) } ?? "") + target
    }

    /// The deepest directory holding every one of `paths`.
    static func commonDirectory(_ paths: [String]) -> String {
        guard var common = paths.first?.split(separator: "/", omittingEmptySubsequences: true) else { return "" }
        if paths.count == 1 { return paths[0] }
        for p in paths.dropFirst() {
            let parts = p.split(separator: "/", omittingEmptySubsequences: true)
            var n = 0
            while n < min(common.count, parts.count) && common[n] == parts[n] { n += 1 }
            common = Array(common.prefix(n))
        }
        return "/" + common.joined(separator: "/")
    }
}
