#if canImport(Glibc)
    import Glibc
#endif
import Testing
import MoCore
import MoTestSupport

/// `make install` puts every shipped file under DESTDIR/PREFIX, and `make uninstall` takes them all away.
@Suite struct InstallTests {
    /// The link's target as written.
    func readlink(_ path: String) -> String? {
        var buf = [CChar](repeating: 0, count: 4096)
        let n = Glibc.readlink(path, &buf, buf.count)
        return n < 0 ? nil : String(decoding: buf.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static let expected = [
        "bin/mo-index", "bin/mo-sendmail", "bin/mo-sync", "bin/mo-sync-check",
        "share/bash-completion/completions/mo-index", "share/bash-completion/completions/mo-sync",
        "share/fish/vendor_completions.d/mo-index.fish", "share/fish/vendor_completions.d/mo-sync.fish",
        "share/man/man1/mo-index.1", "share/man/man1/mo-sendmail.1", "share/man/man1/mo-sync-check.1",
        "share/man/man1/mo-sync.1", "share/man/man5/mo.toml.5",
        "share/mo/mo.toml", "share/mo/neomutt/mo-index.muttrc", "share/mo/neomutt/mo-sendmail.muttrc",
        "share/mo/systemd/mo-index-update.service", "share/mo/systemd/mo-sync-watch.service",
        "share/mo/systemd/mo-sync.service", "share/mo/systemd/mo-sync.timer",
        "share/zsh/site-functions/_mo-index", "share/zsh/site-functions/_mo-sync"
    ]

    @Test func installAndUninstall() throws {
        guard access("/usr/bin/make", X_OK) == 0 else { Issue.record("make missing: install not tried"); return }
        let dest = try TemporaryDirectory("mo-install")
        defer { dest.remove() }
        let make = { (target: String) throws -> ChildProcess.Result in
            try ChildProcess.run([
                "make", "-C", TestPaths.projectRoot, target, "CONFIG=debug", "SOURCES=", "DESTDIR=\(dest.path)", "PREFIX=/usr"
            ])
        }
        let installed = try make("install")
        #expect(installed.status == 0, "\(installed.stdoutString)\(installed.stderrString)")
        let found = try ChildProcess.run(["find", dest.path + "/usr", "-type", "f"]).stdoutString
            .split(separator: "\n").map { String($0.dropFirst(dest.path.count + 5)) }.sorted()
        #expect(found == Self.expected)
        let completion = readWholeFile(dest.path + "/usr/share/bash-completion/completions/mo-sync")
        #expect((try? completion.get())?.count ?? 0 > 1000)
        #expect(access(dest.path + "/usr/bin/mo-sync", X_OK) == 0)

        // NOTMUCH=1: bin/notmuch, a link to mo-index; a real notmuch there is left alone.
        let linked = try make("install-notmuch")
        #expect(linked.status == 0, "\(linked.stderrString)")
        #expect(readlink(dest.path + "/usr/bin/notmuch") == "mo-index")
        let real = try TemporaryDirectory("mo-install-real")
        defer { real.remove() }
        _ = try ChildProcess.run(["mkdir", "-p", real.path + "/usr/bin"])
        try writePrivateFile(real.path + "/usr/bin/notmuch", "#!/bin/sh\n")
        let refused = try ChildProcess.run([
            "make", "-C", TestPaths.projectRoot, "install", "NOTMUCH=1", "CONFIG=debug", "SOURCES=", "DESTDIR=\(real.path)", "PREFIX=/usr"
        ])
        #expect(refused.status != 0 && refused.stderrString.contains("is not mo-index's link: left alone"), "\(refused.stderrString)")
        #expect((try? readWholeFile(real.path + "/usr/bin/notmuch").get()) == Array("#!/bin/sh\n".utf8))

        let removed = try make("uninstall")
        #expect(removed.status == 0, "\(removed.stdoutString)\(removed.stderrString)")
        #expect(try ChildProcess.run(["find", dest.path, "-type", "f", "-o", "-type", "l"]).stdoutString.isEmpty)
    }
}
