#if canImport(Glibc)
    import Glibc
#endif
import ArgumentParser
import MoCore

/// Runs a root command, turning thrown errors into one line on stderr and a sysexits code.
/// ArgumentParser's own errors (usage, --help, --version) keep its behaviour and exit codes.
public enum CommandLineRunner {
    public static func main<Command: ParsableCommand>(
        _ type: Command.Type, tool: String,
        arguments: [String]? = nil
    ) -> Never {
        run(type, tool: tool) {
            var command = try type.parseAsRoot(arguments)
            try command.run()
        }
    }

    /// Runs `body` and exits as `main` does: 0, a `MoError`'s code with its line, an `ExitWith`'s code, any
    /// other error as `type`'s ArgumentParser reports it. Also for the invocations a tool reads without
    /// ArgumentParser (mo-index's `FastQuery`, mo-sync's `SyncRun`).
    public static func run<Command: ParsableCommand>(_ type: Command.Type, tool: String, _ body: () throws -> Void) -> Never {
        do {
            try body()
            exit(0)
        } catch let error as MoError {
            fail(tool: tool, error)
        } catch let error as ExitWith {
            exit(error.code.rawValue)
        } catch {
            type.exit(withError: error)
        }
    }

    /// Prints `tool: message` on stderr and exits with the code for the error's kind.
    public static func fail(tool: String, _ error: MoError) -> Never {
        // Escaped here too, whatever the error type did: the last line a run prints must not drive the terminal.
        printError("\(tool): \(escapedForMessage(error.description))")
        exit(SysExit(error.kind).rawValue)
    }

    /// Writes one line on stderr, escaped (`escapedForMessage`): the terminal edge, so no outside text a
    /// caller quoted can drive the terminal, even where the message itself forgot to escape it.
    public static func printError(_ line: String) {
        var text = escapedForMessage(line.hasSuffix("\n") ? String(line.dropLast()) : line)
        text += "\n"
        // write(2) on fd 2: unbuffered, and free of the shared `stderr` FILE that Swift 6 flags as unsafe.
        writeStderr(text)
    }
}

/// Options every command that reads the configuration shares.
public struct ConfigOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Configuration file.",
            discussion: "Default: $MO_CONFIG, else $XDG_CONFIG_HOME/mo/config.toml, else ~/.config/mo/config.toml.",
            valueName: "file"))
    public var config: String?

    public init() {}
}

extension CommandLineRunner {
    /// Rewrites one status line on a terminal (stderr); an empty line clears it.
    public static func printProgress(_ line: String) {
        let line = escapedForMessage(line)  // folder names from the server
        let clipped = line.count > 78 ? String(line.prefix(77)) + "…" : line
        writeStderr("\r\u{1B}[K" + clipped)
    }

    /// A question on stderr, without a line end, for the answer typed after it.
    public static func writePrompt(_ text: String) { writeStderr(escapedForMessage(text)) }

    static func writeStderr(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 { if n < 0 && errno == EINTR { continue }; break }
            offset += n
        }
    }
}

/// Ends the program with a given status after the command has printed what it had to say.
public struct ExitWith: Error {
    public let code: SysExit
    public init(_ code: SysExit) { self.code = code }
}
