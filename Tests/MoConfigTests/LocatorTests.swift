import Testing
@testable import MoConfig

@Suite struct LocatorTests {
    @Test func explicitPathWins() {
        let env = ["HOME": "/h", "MO_CONFIG": "/env.toml", "XDG_CONFIG_HOME": "/xdg"]
        #expect(
            ConfigLocator.locate(explicit: "/cli.toml", environment: env)
                == .init(path: "/cli.toml", source: .commandLine))
    }

    @Test func environmentBeforeXDG() {
        let env = ["HOME": "/h", "MO_CONFIG": "/env.toml", "XDG_CONFIG_HOME": "/xdg"]
        #expect(ConfigLocator.locate(explicit: nil, environment: env) == .init(path: "/env.toml", source: .environment))
    }

    @Test func xdgConfigHomeBeforeHome() {
        let env = ["HOME": "/h", "MO_CONFIG": "", "XDG_CONFIG_HOME": "/xdg"]
        #expect(
            ConfigLocator.locate(explicit: "", environment: env)
                == .init(path: "/xdg/mo/config.toml", source: .xdgConfigHome))
    }

    @Test func homeFallback() {
        #expect(
            ConfigLocator.locate(explicit: nil, environment: ["HOME": "/h"])
                == .init(path: "/h/.config/mo/config.toml", source: .home))
        // A relative XDG variable is ignored, as the XDG specification requires.
        #expect(
            ConfigLocator.locate(explicit: nil, environment: ["HOME": "/h", "XDG_CONFIG_HOME": "rel"])
                == .init(path: "/h/.config/mo/config.toml", source: .home))
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
