/// Finds the configuration file: `--config` > `$MO_CONFIG` > `$XDG_CONFIG_HOME/mo/config.toml` >
/// `~/.config/mo/config.toml`. It does not check that the file exists; `ConfigLoader` reports that.
public enum ConfigLocator {
    /// Where the chosen path came from.
    public enum Source: String, Sendable, Equatable {
        case commandLine, environment, xdgConfigHome, home
    }

    public struct Location: Sendable, Equatable {
        public var path: String
        public var source: Source
    }

    /// The configuration path to use. `explicit` is the `--config` argument; empty values count as unset.
    public static func locate(explicit: String?, environment: [String: String] = ProcessEnvironment.current) -> Location {
        if let explicit, !explicit.isEmpty { return Location(path: explicit, source: .commandLine) }
        if let env = environment["MO_CONFIG"], !env.isEmpty { return Location(path: env, source: .environment) }
        let xdg = XDGPaths(environment: environment)
        let source: Source = environment["XDG_CONFIG_HOME"].map { $0.hasPrefix("/") } == true ? .xdgConfigHome : .home
        return Location(path: PathExpander.join(xdg.configHome, "mo/config.toml"), source: source)
    }
}
