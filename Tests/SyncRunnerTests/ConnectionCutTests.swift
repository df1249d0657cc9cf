/// A TCP relay on 127.0.0.1 that cuts both directions after `cutAfter` bytes have come from the server:
/// the network dying mid-FETCH, mid-literal, mid-TLS-record.
final class CuttingProxy: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let upstreamPort: Int
    private let cutAfter: Int
    let relayed = Atomic<Int>(0)
    private var acceptor: ThreadHandle?
    private let stopping = Atomic<Bool>(false)

    init(upstreamPort: Int, cutAfter: Int) throws {
        self.upstreamPort = upstreamPort
        self.cutAfter = cutAfter
        let (fd, port) = try listenOnLoopback()
        listener = fd
        self.port = port
        acceptor = startThread { self.acceptLoop() }
    }

    func stop() {
        stopping.store(true, ordering: .relaxed)
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        acceptor?.join()
    }

    private func acceptLoop() {
        while !stopping.load(ordering: .relaxed) {
            let client = accept(listener, nil, nil)
            if client < 0 { return }
            // mo-sync opens several connections at once: one relay thread each; the byte budget is shared.
            startDetachedThread { self.relay(client) }
        }
    }

    private func relay(_ client: Int32) {
        let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let ok = withLoopbackAddress(port: upstreamPort) { connect(upstream, $0, $1) }
        defer { close(client); close(upstream) }
        guard ok == 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            var fds = [pollfd(fd: client, events: Int16(POLLIN), revents: 0), pollfd(fd: upstream, events: Int16(POLLIN), revents: 0)]
            if poll(&fds, 2, 10_000) <= 0 { return }
            if fds[0].revents != 0 {
                let n = read(client, &buffer, buffer.count)
                if n <= 0 { return }
                _ = buffer.withUnsafeBytes { write(upstream, $0.baseAddress, n) }
            }
            if fds[1].revents != 0 {
                let already = relayed.load(ordering: .relaxed)
                let room = cutAfter - already
                if room <= 0 { return }
                let n = read(upstream, &buffer, min(buffer.count, room))
                if n <= 0 { return }
                _ = buffer.withUnsafeBytes { write(client, $0.baseAddress, n) }
                relayed.add(n, ordering: .relaxed)
            }
        }
    }
}

@Suite struct ConnectionCutTests {
    @Test func connectionCutAtRandomByteOffsets() throws {
        let f = try SyncFixture()
        // How many bytes an uninterrupted initial sync reads.
        let measure = try CuttingProxy(upstreamPort: f.server.imapsPort, cutAfter: .max)
        let measureConfig = f.configFile(port: measure.port)
        let full = try ChildProcess.run([TestPaths.binDirectory + "/mo-sync", "--config", measureConfig, "--quiet"])
        measure.stop()
        #expect(full.status == 0, "\(full.stderrString)")
        let total = measure.relayed.load(ordering: .relaxed)
        #expect(total > 10_000)

        var rng = SeededGenerator(seed: 0xC07_0001)
        for round in 0..<30 {
            _ = try ChildProcess.run(["rm", "-rf", f.maildir, f.dir.path + "/state"])
            // The first rounds cut inside the greeting and the TLS handshake.
            let offset = round < 6 ? Int.random(in: 0..<3000, using: &rng) : Int.random(in: 0..<total, using: &rng)
            let proxy = try CuttingProxy(upstreamPort: f.server.imapsPort, cutAfter: offset)
            let config = f.configFile(port: proxy.port)
            let cut = try ChildProcess.run([TestPaths.binDirectory + "/mo-sync", "--config", config, "--quiet"])
            proxy.stop()
            // A cut is a temporary failure (EX_TEMPFAIL) with a message, never a crash or a success.
            #expect(cut.status == 75, "round \(round), cut at byte \(offset) of \(total): status \(cut.status): \(cut.stderrString)")
            let rerun = try f.runBinary()
            #expect(rerun.status == 0, "round \(round): rerun failed: \(rerun.stderrString)")
            let report = try SyncChecker.check(account: f.account, config: f.config)
            #expect(report.ok, "round \(round), cut at byte \(offset): \(report.problems.joined(separator: "; "))")
        }
    }
}
