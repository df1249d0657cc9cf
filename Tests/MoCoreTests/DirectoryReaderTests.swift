#if canImport(Glibc)
    import Glibc
#endif
import MoCore
import MoTestSupport
import Testing

@Suite struct DirectoryReaderTests {
    /// A name that is not valid UTF-8 is left out, never turned into a String naming another file (a lossy
    /// decoding read `a\xff` as `a\u{FFFD}`, a file that does not exist, or worse, one that does).
    @Test func directoryNamesLeavesOutNamesThatAreNotUTF8() throws {
        let dir = try TemporaryDirectory("mo-dirnames")
        defer { dir.remove() }
        for name: [UInt8] in [Array("ok".utf8), [UInt8(ascii: "a"), 0xFF], Array("é".utf8)] {
            let fd = (dir.path + "/").utf8CString.dropLast().map { UInt8(bitPattern: $0) }.withUnsafeBufferPointer { prefix in
                (Array(prefix) + name + [0]).withUnsafeBufferPointer { p in
                    p.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT | O_EXCL, 0o600) }
                }
            }
            #expect(fd >= 0)
            close(fd)
        }
        let names = try directoryNames(dir.path).get()
        #expect(names.sorted() == ["ok", "é"])
        for name in names { #expect(access(dir.path + "/" + name, F_OK) == 0, "\(name)") }
        let entries = try DirectoryReader(dir.path).entries()
        #expect(entries.count == 3)
        #expect(entries.filter { $0.name == nil }.map(\.displayName) == ["a\u{FFFD}"])
    }

    @Test func aMissingDirectoryNamesItself() {
        #expect(throws: DirectoryError(operation: "cannot open directory", path: "/nonexistent-mo", code: ENOENT)) {
            try DirectoryReader("/nonexistent-mo")
        }
    }
}
