import Foundation

/// A `TemporaryDirectory` removed with everything in it when released, with the small file helpers unit
/// tests use to lay out Maildirs and fixtures. (The one home of test temp directories: the Maildir and
/// index tests each kept a copy of this class.)
public final class TempDirectory {
    public let path: String
    private let directory: TemporaryDirectory

    public init(_ label: String = "mo-test") {
        do { directory = try TemporaryDirectory(label) } catch { preconditionFailure("\(error)") }
        path = directory.path
    }
    deinit { directory.remove() }

    public func write(_ relative: String, _ contents: String) {
        let ok = FileManager.default.createFile(atPath: path + "/" + relative, contents: Data(contents.utf8))
        precondition(ok, "cannot create \(relative)")
    }
    public func read(_ absolute: String) -> String? {
        FileManager.default.contents(atPath: absolute).map { String(decoding: $0, as: UTF8.self) }
    }
    public func list(_ relative: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path + "/" + relative)) ?? []).sorted()
    }
    public func mkdir(_ relative: String) {
        try! FileManager.default.createDirectory(atPath: path + "/" + relative, withIntermediateDirectories: true)
    }
    /// `relative/{cur,new,tmp}` ("" for the directory itself).
    public func maildir(_ relative: String) {
        for sub in ["cur", "new", "tmp"] { mkdir(relative.isEmpty ? sub : relative + "/" + sub) }
    }
    public func symlink(_ target: String, _ relative: String) {
        try! FileManager.default.createSymbolicLink(atPath: path + "/" + relative, withDestinationPath: target)
    }
}
