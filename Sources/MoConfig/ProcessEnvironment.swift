#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// The process environment as a dictionary. APIs take an environment parameter defaulting to this,
/// so tests can inject their own.
public enum ProcessEnvironment {
    public static var current: [String: String] { processEnvironment() }

    /// `$HOME`, else the password database entry of the current user, else `/`.
    static func home(_ environment: [String: String]) -> String {
        if let home = environment["HOME"], !home.isEmpty { return home }
        if let pw = getpwuid(getuid()), let dir = pw.pointee.pw_dir {
            return String(cString: dir)
        }
        return "/"
    }

    /// The current directory, or `/` if it cannot be determined.
    static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "/" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
