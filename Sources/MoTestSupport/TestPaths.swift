#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// Paths of the project checkout, for tests that run its scripts and binaries.
public enum TestPaths {
    /// The package root, found from this file's location (Sources/MoTestSupport/TestPaths.swift).
    public static let projectRoot: String = {
        var parts = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }()

    /// `../shared` beside the checkout (real corpora and notmuch's answers, see its README.md), or
    /// `MO_SHARED_DIR`. The one lookup: CI clones the project with `../shared` beside it.
    public static var sharedDirectory: String {
        if let dir = getenv("MO_SHARED_DIR") { return String(cString: dir) }
        return projectRoot + "/../shared"
    }

    /// `corpora/NAME` in the shared directory.
    public static func corpus(_ name: String) -> String { sharedDirectory + "/corpora/" + name }

    /// A directory with the built executables (`swift build` puts them beside the test bundle).
    public static var binDirectory: String {
        if let dir = getenv("MO_BIN_DIR") { return String(cString: dir) }
        // The test runner lives in the same build directory as the executables.
        var exe = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &exe, exe.count - 1)
        let path = n > 0 ? String(decoding: exe[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        var parts = path.split(separator: "/", omittingEmptySubsequences: false)
        // .build/debug/MagnumOpusPackageTests.xctest (a file on Linux)
        parts.removeLast()
        return parts.joined(separator: "/")
    }
}

/// A fresh directory under $TMPDIR (or /tmp), removed when `remove()` is called.
public struct TemporaryDirectory: Sendable {
    public let path: String

    public init(_ label: String = "mo-test") throws {
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(base)/\(label).XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw GenericError(.localIO, "cannot create a temporary directory in \(base): \(errnoDescription(errno))")
        }
        path = String(cString: made)
    }

    public func remove() {
        _ = try? ChildProcess.run(["rm", "-rf", path])
    }
}

/// A child that runs while the test goes on (for killing it at a random moment).
public struct BackgroundProcess {
    public let pid: pid_t

    /// Starts `argv` with stdin, stdout and stderr on /dev/null, an empty signal mask and default actions.
    public init(_ argv: [String], environment: [String: String] = [:]) throws {
        pid = try ChildProcess.startDetached(argv, environment: environment)
    }

    /// SIGKILL, then reap. Returns the wait status.
    @discardableResult
    public func kill() -> Int32 {
        Glibc.kill(pid, SIGKILL)
        return wait()
    }

    @discardableResult
    public func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }
}
