/// XDG base directories (XDG Base Directory Specification 0.8), resolved from an environment.
/// A variable that is unset, empty or not absolute is ignored, as the specification requires.
public struct XDGPaths: Sendable, Equatable {
    public var home: String
    /// `$XDG_CONFIG_HOME` or `~/.config`.
    public var configHome: String
    /// `$XDG_STATE_HOME` or `~/.local/state`.
    public var stateHome: String
    /// `$XDG_CACHE_HOME` or `~/.cache`.
    public var cacheHome: String
    /// `$XDG_DATA_HOME` or `~/.local/share` (notmuch keeps a database there).
    public var dataHome: String

    public init(environment: [String: String] = ProcessEnvironment.current) {
        let home = ProcessEnvironment.home(environment)
        func resolve(_ variable: String, _ fallback: String) -> String {
            if let v = environment[variable], v.hasPrefix("/") { return v }
            return PathExpander.join(home, fallback)
        }
        self.home = home
        configHome = resolve("XDG_CONFIG_HOME", ".config")
        stateHome = resolve("XDG_STATE_HOME", ".local/state")
        cacheHome = resolve("XDG_CACHE_HOME", ".cache")
        dataHome = resolve("XDG_DATA_HOME", ".local/share")
    }

    /// Default `general.state-dir`: `<stateHome>/mo`.
    public var defaultStateDirectory: String { PathExpander.join(stateHome, "mo") }
    /// Default `general.index-dir`: `<cacheHome>/mo/index`.
    public var defaultIndexDirectory: String { PathExpander.join(cacheHome, "mo/index") }
}
