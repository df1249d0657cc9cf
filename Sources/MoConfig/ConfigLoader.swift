#if canImport(Glibc)
    import Glibc
#endif
import MoCore
import Synchronization

/// Reads, parses and validates the configuration file. Every failure is a `ConfigError`.
public enum ConfigLoader {
    /// Locates (see `ConfigLocator`) and loads the configuration.
    /// - Parameter explicitPath: the `--config` argument, if given.
    public static func load(
        explicitPath: String? = nil,
        environment: [String: String] = ProcessEnvironment.current
    ) throws(ConfigError) -> Config {
        let location = ConfigLocator.locate(explicit: explicitPath, environment: environment)
        return try load(path: location.path, environment: environment)
    }

    /// Loads the configuration at `path`.
    public static func load(
        path: String,
        environment: [String: String] = ProcessEnvironment.current
    ) throws(ConfigError) -> Config {
        let bytes = try readFile(path)
        if let warning = permissionWarning(path) { warnOnce(warning) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigError(file: path, problem: "the file is not valid UTF-8")
        }
        return try parse(text: text, path: path, environment: environment)
    }

    /// Parses and validates configuration `text` as if read from `path` (which names the file in
    /// messages and anchors relative paths). No file I/O.
    public static func parse(
        text: String, path: String,
        environment: [String: String] = ProcessEnvironment.current
    ) throws(ConfigError) -> Config {
        let root: TOMLTable
        do {
            root = try TOML.parse(text)
        } catch {
            throw ConfigError(file: path, line: error.line, column: error.column, problem: error.message)
        }
        let absolute = path.hasPrefix("/") ? path : PathExpander.join(ProcessEnvironment.currentDirectory(), path)
        let xdg = XDGPaths(environment: environment)
        let schema = ConfigSchema(
            file: path, xdg: xdg,
            paths: PathExpander(home: xdg.home, baseDirectory: PathExpander.directory(of: absolute)))
        return try schema.read(root)
    }

    /// The one-line warning for a config file other users can read or change (its password-command runs as
    /// the user, and it names the mail's paths), or nil. The one home of this rule, for every tool.
    public static func permissionWarning(_ path: String) -> String? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        let mode = st.st_mode & 0o777
        let open = mode & 0o022 != 0 ? "writable" : mode & 0o044 != 0 ? "readable" : nil
        guard let open else { return nil }
        return "warning: \(escapedForMessage(path)) is \(open) by other users (mode 0\(String(mode, radix: 8))); chmod 600 it"
    }

    /// Written on stderr once per process, as `tool: warning: …`.
    private static func warnOnce(_ warning: String) {
        guard !warned.exchange(true, ordering: .relaxed) else { return }
        let tool = CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? "mo") } ?? "mo"
        let line = Array("\(escapedForMessage(tool)): \(warning)\n".utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
    private static let warned = Atomic<Bool>(false)

    /// The whole file; a missing file gets the message that says how to point at one.
    static func readFile(_ path: String) throws(ConfigError) -> [UInt8] {
        switch readWholeFile(path) {
        case .success(let bytes): return bytes
        case .failure(let e) where e.code == ENOENT:
            throw ConfigError(
                problem: "no config file at \(path) (mo-sync init ADDRESS writes one; or pass --config FILE or set MO_CONFIG)")
        case .failure(let e):
            throw ConfigError(file: path, problem: "cannot read: \(e)")
        }
    }
}
