import Foundation
import ArgumentParser
import MoCLI
import MoConfig
import MoCore
import Maildir
import MoIndex

/// Where the mail and the index are: from the configuration, or from --maildir / --index-dir.
struct IndexLocation: ParsableArguments {
    @OptionGroup var config: ConfigOptions

    @Option(help: ArgumentHelp("Index this Maildir tree instead of the configured accounts.", valueName: "dir"))
    var maildir: String?

    @Option(
        help: ArgumentHelp(
            "Where the index lives (default: index-dir from the configuration, "
                + "else $XDG_CACHE_HOME/mo/index).", valueName: "dir"))
    var indexDir: String?

    func validate() throws {
        if maildir != nil && config.config != nil {
            throw ValidationError("--maildir and --config exclude each other.")
        }
    }

    struct Resolved {
        var indexPath: String
        var roots: [IndexRoot]
        /// The user's own addresses (accounts and aliases), lower-cased.
        var ownAddresses: [String]
        /// The configuration, if one was loaded (not with --maildir).
        var config: Config? = nil
        /// Tags kept on this machine only (`LocalTagStore`): not derived data, so never in a cache
        /// directory: in the configuration's state directory, where mo-sync keeps its state, whatever
        /// --index-dir says; without a configuration (--maildir), beside an index given with --index-dir,
        /// else in XDG's default state directory.
        var localTagsPath: String = ""
        /// Headers indexed as fields (a notmuch configuration's `index.header.*`).
        var userHeaders: [UserHeader] = []
        /// A notmuch configuration's new.ignore.
        var ignore: IgnoreList?
        /// The triage log `mo-index undo` reads (`TriageLog`): beside `local-tags`, for the same reasons.
        var triageLogPath: String {
            (localTagsPath.lastIndex(of: "/").map { String(localTagsPath[..<$0]) } ?? ".") + "/" + TriageLog.fileName
        }

        /// The tag names of keywords: defaults and the configuration's `[keywords]`.
        var vocabulary: TagVocabulary {
            TagVocabulary(extra: (config?.keywords ?? []).map { ($0.keyword, $0.tag) })
        }

        /// Tags other than the flag tags go into file names as keywords (for mo-sync to carry), except
        /// under notmuch's mail root, where notmuch keeps them out of names (`IndexRoot.allFiles`).
        var keywordsInNames: Bool { !roots.contains { $0.allFiles } }

        /// A tagger for this location's messages.
        func tagger() throws -> MessageTagger {
            try MessageTagger(vocabulary: vocabulary, localTagsPath: localTagsPath, keywordsInNames: keywordsInNames)
        }

        /// An updater of this index, with the configuration's keyword table (every update must use the
        /// same one, or it would rewrite every message's tags back and forth).
        func updater() -> IndexUpdater {
            let updater = IndexUpdater(indexPath: indexPath, roots: roots)
            updater.keywordTable = (config?.keywords ?? []).map { ($0.keyword, $0.tag) }
            updater.recordsNewMessages = !(config?.tagRules.isEmpty ?? true)
            updater.localTagsPath = localTagsPath
            updater.userHeaders = userHeaders
            updater.ignore = ignore
            return updater
        }
    }

    /// The parsed values, for `LocationValues`' resolution.
    var values: LocationValues { LocationValues(config: config.config, maildir: maildir, indexDir: indexDir) }

    /// For `update`: the roots to index. Without --maildir the configuration must load.
    func forUpdate() throws -> Resolved { try values.forUpdate() }

    /// For reading commands: only the index is needed; a missing configuration is not an error.
    func forReading() throws -> Resolved { try values.forReading() }

    static func addresses(_ cfg: Config) -> [String] {
        cfg.accounts.flatMap { [$0.address] + $0.aliases }.map { $0.lowercased() }
    }
}

/// --config, --maildir and --index-dir as plain values, and how they resolve (shared by `IndexLocation`
/// and `FastQuery`, which parses them without ArgumentParser).
struct LocationValues {
    var config: String?
    var maildir: String?
    var indexDir: String?
    /// The --maildir tree is notmuch's mail root: every file is a message (`IndexRoot.allFiles`).
    var allFiles = false
    /// See `Resolved.userHeaders`.
    var userHeaders: [UserHeader] = []
    /// notmuch's new.ignore entries (see `Resolved.ignore`).
    var ignore: [String] = []

    typealias Resolved = IndexLocation.Resolved

    /// For `update`: the roots to index. Without --maildir the configuration must load.
    func forUpdate() throws -> Resolved {
        if let maildir {
            let path = absolute(maildir)
            return Resolved(
                indexPath: indexDir.map(absolute) ?? XDGPaths().defaultIndexDirectory,
                roots: [IndexRoot(name: "", path: path, layout: .verbatim, allFiles: allFiles)], ownAddresses: [],
                localTagsPath: localTagsPath(config: nil), userHeaders: userHeaders, ignore: try ignoreList())
        }
        let cfg = try ConfigLoader.load(explicitPath: config)
        return Resolved(
            indexPath: indexDir.map(absolute) ?? cfg.indexDirectory,
            // Send-only accounts have no Maildir: nothing to index.
            roots: cfg.accounts.compactMap { a in a.maildir.map { IndexRoot(name: a.name, path: $0, layout: a.layout) } },
            ownAddresses: IndexLocation.addresses(cfg), config: cfg, localTagsPath: localTagsPath(config: cfg))
    }

    /// For reading commands: only the index is needed; a missing configuration is not an error.
    func forReading() throws -> Resolved {
        if maildir != nil { return try forUpdate() }
        var cfg: Config?
        do {
            cfg = try ConfigLoader.load(explicitPath: config)
        } catch {
            if config != nil || indexDir == nil && ProcessEnvironment.current["MO_CONFIG"] != nil { throw error }
        }
        let path = indexDir.map(absolute) ?? cfg?.indexDirectory ?? XDGPaths().defaultIndexDirectory
        return Resolved(
            indexPath: path, roots: [], ownAddresses: cfg.map(IndexLocation.addresses) ?? [], config: cfg,
            localTagsPath: localTagsPath(config: cfg))
    }

    /// The new.ignore entries read; a bad one is notmuch's error line, as a configuration error.
    func ignoreList() throws -> IgnoreList? {
        guard !ignore.isEmpty else { return nil }
        do {
            return try IgnoreList(ignore)
        } catch {
            throw GenericError(.config, error.message)
        }
    }

    /// See `Resolved.localTagsPath`.
    func localTagsPath(config: Config?) -> String {
        if let config { return config.stateDirectory + "/" + LocalTagStore.fileName }
        if let indexDir { return LocalTagStore.path(forIndex: absolute(indexDir)) }
        return XDGPaths().defaultStateDirectory + "/" + LocalTagStore.fileName
    }

    /// The path absolute, with links, `.` and `..` resolved: `realpath` for a path that exists (every
    /// notmuch command resolves two or three at start, and Foundation's first path call costs ~0.3 ms of
    /// runtime set-up); Foundation's `standardizingPath`, which resolves what it can, for one that does not.
    func absolute(_ path: String) -> String {
        let full = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        if let resolved = realpath(full, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        return (full as NSString).standardizingPath
    }
}
