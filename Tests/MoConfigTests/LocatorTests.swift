import Testing
@testable import MoConfig

@Suite struct LocatorTests {
    /// Where the config is looked for, in order: --config, MO_CONFIG, $XDG_CONFIG_HOME, ~/.config (a relative
    /// XDG variable is ignored, as the XDG specification requires; an empty value counts as unset).
    @Test(
        arguments: [
            ("/cli.toml", ["MO_CONFIG": "/env.toml", "XDG_CONFIG_HOME": "/xdg"], "/cli.toml", ConfigLocator.Source.commandLine),
            (nil, ["MO_CONFIG": "/env.toml", "XDG_CONFIG_HOME": "/xdg"], "/env.toml", .environment),
            ("", ["MO_CONFIG": "", "XDG_CONFIG_HOME": "/xdg"], "/xdg/mo/config.toml", .xdgConfigHome),
            (nil, [:], "/h/.config/mo/config.toml", .home),
            (nil, ["XDG_CONFIG_HOME": "rel"], "/h/.config/mo/config.toml", .home)
        ] as [(String?, [String: String], String, ConfigLocator.Source)])
    func firstSourceWins(explicit: String?, env: [String: String], path: String, source: ConfigLocator.Source) {
        let environment = env.merging(["HOME": "/h"]) { $1 }
        #expect(ConfigLocator.locate(explicit: explicit, environment: environment) == .init(path: path, source: source))
    }

    @Test func xdgPaths() {
        let defaults = XDGPaths(environment: ["HOME": "/h"])
        #expect(defaults.configHome == "/h/.config")
        #expect(defaults.stateHome == "/h/.local/state")
        #expect(defaults.cacheHome == "/h/.cache")
        #expect(defaults.defaultStateDirectory == "/h/.local/state/mo")
        #expect(defaults.defaultIndexDirectory == "/h/.cache/mo/index")
        let set = XDGPaths(environment: ["HOME": "/h", "XDG_CONFIG_HOME": "/c", "XDG_STATE_HOME": "/s", "XDG_CACHE_HOME": "/k"])
        #expect([set.configHome, set.stateHome, set.cacheHome] == ["/c", "/s", "/k"])
    }
}
