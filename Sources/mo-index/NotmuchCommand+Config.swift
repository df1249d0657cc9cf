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
    struct NotmuchSetup {
        let path: String
        var file: NotmuchConfig

        /// `database.path`, else `database.mail_root`, else `$MAILDIR`, else `$HOME/mail`; relative to `$HOME`.
        var databasePath: String {
            let home = ProcessEnvironment.current["HOME"] ?? "/"
            let given = file.values("database.path")?.first ?? file.values("database.mail_root")?.first
            guard let p = given, !p.isEmpty else { return ProcessEnvironment.current["MAILDIR"] ?? home + "/mail" }
            return p.hasPrefix("/") ? p : home + "/" + p
        }

        var location: LocationValues {
            LocationValues(maildir: databasePath, indexDir: databasePath + "/.notmuch/mo-index", allFiles: true)
        }
    }

    /// The notmuch file given (`--config=FILE`, else `$NOTMUCH_CONFIG`; `--config=''` means none), else,
    /// when there is no mo configuration at all, notmuch's own default (`$XDG_CONFIG_HOME/notmuch/PROFILE/
    /// config`, `~/.notmuch-config[.PROFILE]`, `PROFILE` from `$NOTMUCH_PROFILE`), loaded; a file given
    /// that cannot be read is notmuch's error.
    static func notmuchSetup(_ option: String?, _ location: LocationValues) -> NotmuchSetup? {
        guard location.config == nil && location.maildir == nil && location.indexDir == nil else { return nil }
        let env = ProcessEnvironment.current
        var given = option ?? env["NOTMUCH_CONFIG"]
        if given?.isEmpty ?? true, !FileManager.default.fileExists(atPath: ConfigLocator.locate(explicit: nil).path) {
            let home = env["HOME"] ?? "/", profile = env["NOTMUCH_PROFILE"].flatMap { $0.isEmpty ? nil : $0 }
            let xdg = env["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.config"
            given = [xdg + "/notmuch/" + (profile ?? "default") + "/config", home + "/.notmuch-config" + (profile.map { "." + $0 } ?? "")]
                .first { FileManager.default.fileExists(atPath: $0) }
        }
        guard let path = given, !path.isEmpty else { return nil }
        switch readWholeFile(path) {
        case .success(let bytes): return NotmuchSetup(path: path, file: NotmuchConfig(text: String(decoding: bytes, as: UTF8.self)))
        case .failure(let e):
            writeError("Error: cannot read configuration file \(path): \(errnoDescription(e.code))\n")
            exit(1)
        }
    }

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
        let f = setup.file
        let defaults: [(String, [String], Bool)] = [
            ("database.autocommit", ["8000"], false), ("database.mail_root", [setup.databasePath], false),
            ("database.path", [setup.databasePath], false), ("maildir.synchronize_flags", ["true"], false),
            ("new.ignore", [], true), ("new.tags", ["unread", "inbox"], true), ("search.exclude_tags", [], true),
            ("user.name", name.isEmpty ? [] : [name], false), ("user.other_email", [], true),
            ("user.primary_email", [ProcessEnvironment.current["EMAIL"] ?? ""], false)
        ]
        var out = defaults.map { key, value, isList in
            (key: key, value: key.hasPrefix("database.") ? value : f.values(key) ?? value, isList: isList)
        }
        // Tags lists: blanks around a tag and empty items are not tags (notmuch drops them).
        for i in out.indices where out[i].key == "new.tags" || out[i].key == "search.exclude_tags" {
            out[i].value = out[i].value.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        for key in f.keys where !out.contains(where: { $0.key == key }) {
            out.append((key, f.values(key) ?? [], (f.values(key)?.count ?? 0) > 1))
        }
        return out.sorted { $0.key < $1.key }
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
                if let setup, let raw = setup.file.rawValue(v.key) {
                    lines.append(v.key + "=" + raw)
                } else {
                    lines.append(
                        v.key + "=" + (v.isList && setup == nil ? v.value.map { $0 + ";" }.joined() : v.value.joined(separator: ";")))
                }
            }
            writeStandardOutput(Array(lines.map { $0 + "\n" }.joined().utf8))
        case "set":
            guard var current = setup else { refuse("config set (mo's settings are in its configuration file, mo.toml(5))") }
            guard o.rest.count >= 2 else {
                writeError("Error: notmuch config set requires at least one argument.\n")
                exit(1)
            }
            let key = o.rest[1]
            if key.hasPrefix("built_with.") {
                writeError("Error: read only option: \(key)\n")
                exit(1)
            }
            // A saved S-expression query is called as (Name …): its name must not read as a field or operator.
            if key.hasPrefix("squery."), !(key.dropFirst(7).first?.isUppercase ?? false) {
                writeError("Error: saved query names must start with a capital letter: \(key)\n")
                exit(1)
            }
            current.file.set(key, Array(o.rest.dropFirst(2)))
            if case .failure(let e) = replaceFileAtomically(Self.resolvedLink(current.path), Array(current.file.text.utf8), mode: 0o644) {
                writeError("Error writing configuration file \(current.path): \(errnoDescription(e.code))\n")
                exit(1)
            }
        default:
            writeError("Unrecognized command: config \(verb)\n")
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
