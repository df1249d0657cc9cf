#if canImport(Glibc)
    import Glibc
#endif
import Foundation
import Synchronization
import Testing
@testable import MoNet
import MoTestSupport

/// `DNSResolver` over real UDP on 127.0.0.1: a private dnsmasq, and a scripted responder for the answers
/// a real server does not send (a stray datagram first, a malformed one, none at all).
@Suite struct ResolverTests {
    static let dnsmasqUsable = LocalDNS.isInstalled || getenv("MO_CI") != nil

    @Test(.enabled(if: dnsmasqUsable, "dnsmasq is not installed (apt-get install dnsmasq-base); CI installs it"))
    func answersFromDnsmasq() throws {
        let dns = try LocalDNS(
            srv: [.init("_imaps._tcp.example.test", "mail.example.test", 993, priority: 5, weight: 7)],
            localDomain: "test")
        defer { dns.stop() }
        let resolver = DNSResolver(host: "127.0.0.1", port: dns.port)
        #expect(try resolver.srv("_imaps._tcp.example.test") == [SRVRecord(priority: 5, weight: 7, port: 993, target: "mail.example.test")])
        #expect(try resolver.srv("_submission._tcp.example.test") == [])
    }

    /// Replies to each query it receives with the datagrams `script` makes from it, then closes.
    final class Responder: @unchecked Sendable {
        let fd: Int32
        let port: Int
        init(queries: Int, script: @escaping @Sendable ([UInt8]) -> [[UInt8]]) {
            let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            self.fd = fd
            port = bindToLoopback(fd) ?? 0
            Thread {
                for _ in 0..<queries {
                    var buffer = [UInt8](repeating: 0, count: 2048)
                    var from = sockaddr_storage()
                    var fromLen = socklen_t(MemoryLayout<sockaddr_storage>.size)
                    let n = buffer.withUnsafeMutableBytes { b in
                        withUnsafeMutablePointer(to: &from) {
                            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                                recvfrom(fd, b.baseAddress, b.count, 0, $0, &fromLen)
                            }
                        }
                    }
                    guard n > 0 else { return }
                    for datagram in script(Array(buffer[0..<n])) {
                        _ = datagram.withUnsafeBytes { d in
                            withUnsafePointer(to: &from) {
                                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                                    sendto(fd, d.baseAddress, d.count, 0, $0, fromLen)
                                }
                            }
                        }
                    }
                }
            }.start()
        }
        deinit { close(fd) }
    }

    /// The answer to `query` (its ID and question) with one SRV record for mail.example.test:993.
    static func answer(to query: [UInt8], id: [UInt8]? = nil) -> [UInt8] {
        var end = 12
        while query[end] != 0 { end += Int(query[end]) + 1 }
        let question = Array(query[12..<(end + 5)])
        let target: [UInt8] = [4] + Array("mail".utf8) + [7] + Array("example".utf8) + [4] + Array("test".utf8) + [0]
        let rdata: [UInt8] = [0, 0, 0, 1, 0x03, 0xE1] + target
        return (id ?? Array(query[0..<2])) + [0x85, 0x80, 0, 1, 0, 1, 0, 0, 0, 0] + question
            + [0xC0, 12, 0, 33, 0, 1, 0, 0, 0, 60, 0, UInt8(rdata.count)] + rdata
    }

    /// A datagram with another ID (late, or forged) is passed over; the answer after it counts.
    @Test func anotherIDIsIgnored() throws {
        let responder = Responder(queries: 1) { q in
            [ResolverTests.answer(to: q, id: [q[0] ^ 0xFF, q[1]]).map { $0 == 0x6D ? 0x78 : $0 }, ResolverTests.answer(to: q)]
        }
        var resolver = DNSResolver(host: "127.0.0.1", port: responder.port)
        resolver.timeout = 5
        #expect(try resolver.srv("_imaps._tcp.example.test").map(\.target) == ["mail.example.test"])
    }

    /// A malformed answer with our ID fails that try; the next try's good answer counts.
    @Test func aMalformedAnswerIsRetried() throws {
        let tries = Mutex(0)
        let responder = Responder(queries: 2) { q in
            let n = tries.withLock {
                $0 += 1; return $0
            }
            return n == 1 ? [Array(ResolverTests.answer(to: q).prefix(30))] : [ResolverTests.answer(to: q)]
        }
        var resolver = DNSResolver(host: "127.0.0.1", port: responder.port)
        resolver.timeout = 5
        #expect(try resolver.srv("_imaps._tcp.example.test").map(\.target) == ["mail.example.test"])
    }

    @Test func silenceAndRefusalAreNetworkErrors() throws {
        let responder = Responder(queries: 2) { _ in [] }
        var quiet = DNSResolver(host: "127.0.0.1", port: responder.port)
        quiet.timeout = 0.2
        let silent = #expect(throws: DNSError.self) { try quiet.srv("_imaps._tcp.example.test") }
        #expect(
            silent?.code == .network && silent?.description == "DNS _imaps._tcp.example.test: no answer from 127.0.0.1:\(responder.port)")
        let closed = freeUDPPort()
        let refused = #expect(throws: DNSError.self) { try DNSResolver(host: "127.0.0.1", port: closed).srv("_imaps._tcp.example.test") }
        #expect(refused?.code == .network)
    }
}
