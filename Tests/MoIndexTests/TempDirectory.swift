import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under /tmp, removed with everything in it when released.
final class TempDirectory {
    let path: String
    init() {
        var template = Array("/tmp/mo-index-test.XXXXXX".utf8CString)
        let p = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(p != nil, "mkdtemp failed")
        path = String(cString: p!)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

func utf8(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
