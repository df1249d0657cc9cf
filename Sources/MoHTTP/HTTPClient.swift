import MoCore
import MoNet

/// A minimal HTTP/1.1 client over `MoNet.Connection`: one request, `Connection: close`, no redirects, no
/// cookies, a bounded body. `https` verifies the certificate as every connection does; plain `http` is
/// refused except to a loopback host (the tests' local servers). The one HTTP client: autoconfig's GET,
/// OAuth2's token requests, and JMAP next. Nothing is logged: headers and bodies may carry secrets.
public enum HTTPClient {
    /// Sends `method` to `url` with `headers` (besides Host, User-Agent, Connection and, with a body,
    /// Content-Length) and `body`; returns the status and at most `maxBody` bytes of body (more is an error).
    public static func send(
        _ method: String, _ url: WebAddress, headers: [(String, String)] = [], body: [UInt8]? = nil,
        maxBody: Int, timeout: Double = 10
    ) throws(GenericError) -> (status: Int, body: [UInt8]) {
        let name = "\(url.secure ? "https" : "http")://\(url.host):\(url.port)"
        guard url.secure || url.isLoopback else { throw GenericError(.security, "\(name): plain http is refused; only https") }
        let connection: Connection
        do {
            connection =
                url.secure
                ? try Connection.connectTLS(host: url.host, port: url.port, timeout: timeout)
                : try Connection.connect(host: url.host, port: url.port, timeout: timeout)
        } catch { throw GenericError(error.kind, error.description) }
        defer { connection.close() }
        let hostField = url.host.contains(":") ? "[\(url.host)]" : url.host
        let defaultPort = url.secure ? 443 : 80
        var head =
            "\(method) \(url.target) HTTP/1.1\r\nHost: \(hostField)\(url.port == defaultPort ? "" : ":\(url.port)")\r\n"
            + "User-Agent: mo/\(MoVersion.string)\r\nConnection: close\r\n"
        for (field, value) in headers { head += "\(field): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        var parser = HTTPResponseParser(maxBody: maxBody)
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        do {
            try connection.write(Array(head.utf8) + (body ?? []))
            while !parser.isComplete {
                let n = try buffer.withUnsafeMutableBytes { raw throws(NetError) in try connection.read(into: raw) }
                if n == 0 { try parser.finish(); break }
                try parser.append(buffer[0..<n])
            }
        } catch let error as NetError {
            throw GenericError(error.kind, error.description)
        } catch let error as GenericError {
            throw GenericError(error.kind, "\(name)\(url.target): \(error.message)")
        } catch {
            throw GenericError(.software, "\(name): \(error)")
        }
        return (parser.status, parser.body)
    }
}
