import Foundation
import MoCLI
import MoConfig
import MoCore
import MoIndex
import NotmuchCompat

extension NotmuchCommand {
    /// A notmuch configuration, as notmuch 0.37 finds its parts:
    ///
    /// | part | from |
    /// |---|---|
    /// | the file | `--config=FILE`, else `$NOTMUCH_CONFIG`, else (only when there is no mo configuration) `$XDG_CONFIG_HOME/notmuch/PROFILE/config`, `~/.notmuch-config[.PROFILE]`; `--config=''`: none |
    /// | database path | `$NOTMUCH_DATABASE`, `database.path` (relative to `$HOME`), `$XDG_DATA_HOME/notmuch/PROFILE` if it is a directory, `$MAILDIR`, `$HOME/mail` |
    /// | mail root | `database.mail_root` (relative to `$HOME`), else the database path |
    /// | mo's index | `MAIL_ROOT/.notmuch/mo-index`: never notmuch's own `xapian` (mo's schema is not notmuch's, and a notmuch user's database stays usable) |
    /// | the database's own values | `MAIL_ROOT/.notmuch/mo-config` (`config set --database`, saved queries, dumped as `#@` lines) |
    ///
    /// A value is the file's, else the database's (the file shadows the database, as in notmuch).
    struct NotmuchSetup {
        /// The file, "" for none.
        let path: String
        var file: NotmuchConfig
        /// What notmuch keeps in its database (`config set --database`), read from `databaseConfigPath`.
        var database: NotmuchConfig
        let databasePath: String
        let mailRoot: String

        init(path: String, file: NotmuchConfig, environment env: [String: String] = ProcessEnvironment.current) {
            self.path = path
            self.file = file
            let xdg = XDGPaths(environment: env)
            let home = xdg.home
            func fromHome(_ p: String?) -> String? {
                guard let p, !p.isEmpty else { return nil }
                return p.hasPrefix("/") ? p : home + "/" + p
            }
            let profile = env["NOTMUCH_PROFILE"].flatMap { $0.isEmpty ? nil : $0 } ?? "default"
            let xdgData = xdg.dataHome + "/notmuch/" + profile
            var isDir: ObjCBool = false
            let xdgExists = FileManager.default.fileExists(atPath: xdgData, isDirectory: &isDir) && isDir.boolValue
            databasePath =
                fromHome(env["NOTMUCH_DATABASE"]) ?? fromHome(file.values("database.path")?.first)
                ?? (xdgExists ? xdgData : nil) ?? fromHome(env["MAILDIR"]) ?? home + "/mail"
            mailRoot = fromHome(file.values("database.mail_root")?.first) ?? databasePath
            database = NotmuchConfig(text: "")
            switch readWholeFile(databaseConfigPath) {
            case .success(let bytes): database = NotmuchConfig(text: String(decoding: bytes, as: UTF8.self))
            case .failure(let e) where e.code == ENOENT: break  // none kept yet
            case .failure(let e):
                // Never read as empty: the next `config set --database` would write it back without the rest.
                NotmuchCommand.writeError("Error: cannot read \(databaseConfigPath): \(errnoDescription(e.code))\n")
                exit(1)
            }
        }

        var indexDirectory: String { mailRoot + "/.notmuch/mo-index" }
        var databaseConfigPath: String { mailRoot + "/.notmuch/mo-config" }

        var location: LocationValues {
            LocationValues(
                maildir: mailRoot, indexDir: indexDirectory, allFiles: true, userHeaders: userHeaders,
                ignore: values("new.ignore")?.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty } ?? [])
        }

        /// `index.header.NAME=Header` settings with an allowed NAME, by NAME.
        var userHeaders: [UserHeader] {
            keys.filter { $0.hasPrefix("index.header.") }.sorted().compactMap { key in
                let name = String(key.dropFirst(13))
                guard UserHeader.problem(withName: name) == nil, let header = values(key)?.first, UserHeader.isHeaderName(header)
                else { return nil }
                return UserHeader(name: name, header: header)
            }
        }

        /// `key`'s values: the file's, else the database's; nil when neither has it.
        func values(_ key: String) -> [String]? { file.values(key) ?? database.values(key) }

        /// Every key of the file and the database.
        var keys: [String] { file.keys + database.keys.filter { file.values($0) == nil } }
    }

    /// The notmuch file given (`--config=FILE`, else `$NOTMUCH_CONFIG`; `--config=''`: no file, notmuch's
    /// defaults and the database notmuch would find), else,
    /// when there is no mo configuration at all, notmuch's own default (`$XDG_CONFIG_HOME/notmuch/PROFILE/
    /// config`, `~/.notmuch-config[.PROFILE]`, `PROFILE` from `$NOTMUCH_PROFILE`), loaded; a file given
    /// that cannot be read is notmuch's error.
    static func notmuchSetup(_ option: String?, _ location: LocationValues) -> NotmuchSetup? {
        guard location.config == nil && location.maildir == nil && location.indexDir == nil else { return nil }
        let env = ProcessEnvironment.current
        if option == "" { return NotmuchSetup(path: "", file: NotmuchConfig(text: "")) }
        var given = option ?? env["NOTMUCH_CONFIG"]
        if given?.isEmpty ?? true, !FileManager.default.fileExists(atPath: ConfigLocator.locate(explicit: nil).path) {
            let xdg = XDGPaths(environment: env), profile = env["NOTMUCH_PROFILE"].flatMap { $0.isEmpty ? nil : $0 }
            given = [
                xdg.configHome + "/notmuch/" + (profile ?? "default") + "/config",
                xdg.home + "/.notmuch-config" + (profile.map { "." + $0 } ?? "")
            ]
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
}
