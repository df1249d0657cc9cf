import Foundation
import MoCore
import MoTestSupport
import MailMessage
import Threading

/// A minimal header reader for the oracle tests, mimicking what notmuch (via GMime) sees:
/// an mbox `From ` line is skipped, headers are unfolded and read up to the first blank line,
/// the first instance of a header wins, values are trimmed, non-UTF-8 bytes read as Latin-1.
/// Not the product's parser (that is MailMessage); just enough to get ids out.
enum CorpusReader {
    static let sharedDirectory = TestPaths.sharedDirectory

    static func corpusExists(_ name: String) -> Bool {
        FileManager.default.fileExists(atPath: "\(sharedDirectory)/corpora/\(name)")
            && FileManager.default.fileExists(atPath: "\(sharedDirectory)/oracles/\(name)/threads.txt")
    }

    /// Every file of a corpus that notmuch would index, as a thread input, in path order.
    static func inputs(corpus: String) throws -> [ThreadInput] {
        let root = "\(sharedDirectory)/corpora/\(corpus)"
        let walker = FileManager.default.enumerator(atPath: root)!
        var paths: [String] = []
        while let rel = walker.nextObject() as? String {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: "\(root)/\(rel)", isDirectory: &isDir), !isDir.boolValue {
                paths.append("\(root)/\(rel)")
            }
        }
        return try paths.sorted().compactMap { path in
            let bytes = try readWholeFile(path).get()
            return input(fileContents: bytes)
        }
    }

    /// nil for what notmuch rejects as "not e-mail": no From, Subject or To, or a multi-message mbox.
    static func input(fileContents bytes: [UInt8]) -> ThreadInput? {
        var lines = splitLines(headerBlock(bytes))
        if startsWithFrom(bytes) {
            lines.removeFirst()
            // GMime reads a second "From " line as a second message; notmuch then refuses the file.
            if splitLines(bytes).dropFirst().contains(where: { $0.starts(with: Array("From ".utf8)) }) {
                return nil
            }
        }
        let headers = unfold(lines)
        func value(_ name: String) -> String? { headers.first { $0.name == name }?.value }
        if [value("from"), value("subject"), value("to")].allSatisfy({ ($0 ?? "").isEmpty }) {
            return nil
        }
        return ThreadInput(
            messageIDHeader: value("message-id"),
            inReplyToHeader: value("in-reply-to"),
            referencesHeader: value("references"),
            syntheticMessageID: ParsedMessage.syntheticMessageID(for: bytes))
    }

    static func startsWithFrom(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: Array("From ".utf8))
    }

    /// The bytes up to the first empty line (LF or CRLF), `From ` line included.
    static func headerBlock(_ bytes: [UInt8]) -> ArraySlice<UInt8> {
        var lineStart = 0
        var i = 0
        while i < bytes.count {
            if bytes[i] == 0x0A {
                let line = bytes[lineStart..<i]
                if line.isEmpty || line.elementsEqual([0x0D]) { return bytes[0..<lineStart] }
                lineStart = i + 1
            }
            i += 1
        }
        return bytes[...]
    }

    static func splitLines<C: Collection<UInt8>>(_ bytes: C) -> [ArraySlice<UInt8>] {
        Array(bytes).split(separator: 0x0A, omittingEmptySubsequences: false).map {
            $0.last == 0x0D ? $0.dropLast() : $0
        }
    }

    /// (lower-cased name, value) pairs; continuation lines are appended without their line break.
    static func unfold(_ lines: [ArraySlice<UInt8>]) -> [(name: String, value: String)] {
        var raw: [(String, [UInt8])] = []
        for line in lines {
            if let first = line.first, first == 0x20 || first == 0x09 {
                if !raw.isEmpty { raw[raw.count - 1].1.append(contentsOf: line) }
                continue
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let name = decode(line[..<colon]).trimmingCharacters(in: .whitespaces).lowercased()
            raw.append((name, Array(line[(colon + 1)...])))
        }
        return raw.map { ($0.0, decode($0.1[...]).trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    static func decode(_ bytes: ArraySlice<UInt8>) -> String {
        if let s = String(validating: bytes, as: UTF8.self) { return s }
        return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }

    static func escape(_ id: String) -> String { MessageID.listingEscaped(id) }

    /// The oracle's threads, each a set of escaped ids.
    static func oracleThreads(corpus: String) throws -> [Set<String>] {
        let text = try String(contentsOfFile: "\(sharedDirectory)/oracles/\(corpus)/threads.txt", encoding: .utf8)
        return text.split(separator: "\n").map { Set($0.split(separator: " ").map(String.init)) }
    }
}
