import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under /tmp, removed with everything in it when released.
final class TempDirectory {
    let path: String
    init() {
        var template = Array("/tmp/mo-maildir-test.XXXXXX".utf8CString)
        let p = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(p != nil, "mkdtemp failed")
        path = String(cString: p!)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }

    func write(_ relative: String, _ contents: String) {
        let ok = FileManager.default.createFile(atPath: path + "/" + relative, contents: Data(contents.utf8))
        precondition(ok, "cannot create \(relative)")
    }
    func read(_ absolute: String) -> String? {
        FileManager.default.contents(atPath: absolute).map { String(decoding: $0, as: UTF8.self) }
    }
    func list(_ relative: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path + "/" + relative)) ?? []).sorted()
    }
    func mkdir(_ relative: String) {
        try! FileManager.default.createDirectory(atPath: path + "/" + relative, withIntermediateDirectories: true)
    }
    func maildir(_ relative: String) {
        for sub in ["cur", "new", "tmp"] { mkdir(relative.isEmpty ? sub : relative + "/" + sub) }
    }
    func symlink(_ target: String, _ relative: String) {
        try! FileManager.default.createSymbolicLink(atPath: path + "/" + relative, withDestinationPath: target)
    }
}

func lastComponent(_ path: String) -> String {
    String(path.split(separator: "/", omittingEmptySubsequences: false).last!)
}
