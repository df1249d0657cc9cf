import IMAPCodec
import MailMessage
import Maildir
import MoIndex
import SMTPClient

/// The fuzzed parsers: each closure feeds the input to one parser that reads bytes from outside (a
/// server, a mail file, a file name, a query, a state file) and ignores its errors. A crash, a hang or a
/// runaway allocation is a bug; a refusal is not.
enum FuzzTargets {
    static let all: [String: @Sendable (UnsafeRawBufferPointer) -> Void] = [
        "imap": fuzzParseResponses,
        "mime": { data in
            let message = ParsedMessage.parse(Array(data))
            _ = message.bodyText
        },
        "header": { data in
            let bytes = Array(data)
            let block = HeaderBlock.parse(bytes)
            for field in block.fields {
                _ = AddressParser.parse(field.rawValue)
                _ = DateParser.parse(field.rawValue)
                _ = EncodedWords.decode(field.rawValue)
            }
        },
        "maildir-name": { data in
            _ = try? MaildirFilename(parsing: String(decoding: data, as: UTF8.self))
            _ = MaildirKeywords(parsing: Array(data))
            _ = try? MaildirKeywords.parse(Array(data), file: "f")
        },
        "query": { data in
            _ = try? QueryParser.parse(String(decoding: data, as: UTF8.self))
        },
        "smtp-reply": { data in
            var parser = SMTPReplyParser(limits: .init(maxLineLength: 1024, maxLines: 64))
            var i = 0
            while i < data.count {
                let n = 1 + Int(data[i]) % 32  // chunk sizes from the input: boundaries are fuzzed too
                parser.append(data[i..<min(data.count, i + n)])
                i += n
                do { while try parser.next() != nil {} } catch { return }
            }
        },
        "sync-state": fuzzSyncState,
        "action-journal": fuzzActionJournal
    ]
}
