#if canImport(Glibc)
    import Glibc
#endif
import Testing
import MoCore
import MoTestSupport

/// Every shipped systemd unit passes `systemd-analyze --user verify` (syntax, dependencies, the programs
/// they start), with the programs installed where the units expect them (`~/.local/bin`).
@Suite struct SystemdUnitTests {
    static let directory = TestPaths.projectRoot + "/contrib/systemd"

    @Test func everyShippedUnitVerifies() throws {
        guard access("/usr/bin/systemd-analyze", X_OK) == 0 else {
            Issue.record("systemd-analyze missing (Debian package systemd): the units were not verified")
            return
        }
        let units = try #require(try? directoryNames(Self.directory).get()).filter { $0.hasSuffix(".service") || $0.hasSuffix(".timer") }
            .sorted()
        #expect(units.contains("mo-index-update.service") && units.contains("mo-sync.timer"))
        let home = try TemporaryDirectory("mo-systemd")
        defer { home.remove() }
        _ = makeDirectories(home.path + "/.local/bin")
        _ = makeDirectories(home.path + "/run")
        chmod(home.path + "/run", 0o700)
        for program in ["mo-sync", "mo-index", "mo-sendmail"] {
            #expect(symlink(TestPaths.binDirectory + "/" + program, home.path + "/.local/bin/" + program) == 0)
        }
        let r = try ChildProcess.run(
            ["systemd-analyze", "--user", "--man=no", "verify"] + units.map { Self.directory + "/" + $0 },
            environment: ["HOME": home.path, "XDG_RUNTIME_DIR": home.path + "/run"])
        #expect(r.status == 0 && r.stderrString.isEmpty, "\(r.stdoutString)\(r.stderrString)")
    }

    /// The timer's sync is followed by an index update.
    @Test func theSyncStartsTheIndexUpdate() throws {
        guard case .success(let bytes) = readWholeFile(Self.directory + "/mo-sync.service") else {
            Issue.record("no mo-sync.service"); return
        }
        #expect(String(decoding: bytes, as: UTF8.self).contains("\nOnSuccess=mo-index-update.service\n"))
    }
}
