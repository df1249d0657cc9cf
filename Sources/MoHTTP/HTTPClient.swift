import MoCore
import MoNet

/// One request on a connection of its own (`HTTPConnection`, asked to close after it): no redirects, no
/// cookies, a bounded body. `https` verifies the certificate as every connection does; plain `http` is
/// refused except to a loopback host (the tests' local servers). The one HTTP client: autoconfig's GET,
/// OAuth2's token requests and JMAP. Nothing is logged: headers and bodies may carry secrets.
public enum HTTPClient {
    /// Sends `method` to `url` with `headers` (besides Host, User-Agent, Connection and, with a body,
    /// Content-Length) and `body`; returns the status and at most `maxBody` bytes of body (more is an error).
    public static func send(
        _ method: String, _ url: WebAddress, headers: [(String, String)] = [], body: [UInt8]? = nil,
        maxBody: Int, timeout: Double = 10
    ) throws(GenericError) -> (status: Int, body: [UInt8]) {
        let connection = HTTPConnection(origin: url, timeout: timeout)
        defer { connection.close() }
        let response = try connection.send(method, url.target, headers: headers, body: body, maxBody: maxBody, close: true)
        return (response.status, response.body)
    }
}
