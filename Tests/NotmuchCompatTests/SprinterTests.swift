import Testing

@testable import NotmuchCompat

/// The sprinter against bytes notmuch 0.37 printed (`notmuch search` on the shared notmuch-test corpus).
@Suite struct SprinterTests {
    /// Two summaries the way notmuch-search.c calls the printer.
    static func render(_ format: Sprinter.Format) -> String {
        var out: [UInt8] = []
        var p = Sprinter(format) { out += $0 }
        p.beginList()
        for (thread, tags, query) in [
            ("0000000000000006", ["inbox", "unread"], "id:a@b"), ("0000000000000036", ["attachment"], "id:\"x y\"")
        ] {
            p.beginMap()
            p.mapKey("thread")
            p.string(thread)
            p.mapKey("timestamp")
            p.integer(1_782_193_672)
            p.mapKey("query")
            p.beginList()
            p.string(query)
            p.null()
            p.end()
            p.mapKey("tags")
            p.beginList()
            for t in tags { p.string(t) }
            p.end()
            p.end()
            p.separator()
        }
        p.end()
        p.flush()
        return String(decoding: out, as: UTF8.self)
    }

    @Test func json() {
        #expect(
            Self.render(.json) == """
                [{"thread": "0000000000000006", "timestamp": 1782193672, "query": ["id:a@b", null], "tags": ["inbox", "unread"]},
                {"thread": "0000000000000036", "timestamp": 1782193672, "query": ["id:\\"x y\\"", null], "tags": ["attachment"]}]

                """)
    }

    @Test func sexp() {
        #expect(
            Self.render(.sexp) == """
                ((:thread "0000000000000006" :timestamp 1782193672 :query ("id:a@b" nil) :tags ("inbox" "unread"))
                (:thread "0000000000000036" :timestamp 1782193672 :query ("id:\\"x y\\"" nil) :tags ("attachment")))

                """)
    }

    /// `--output=threads`: a prefix and a separator per value; the empty list is "[]\n" and "()\n".
    @Test func listsOfStrings() {
        for (format, expected) in [
            (Sprinter.Format.json, "[\"0000000000000006\",\n\"0000000000000036\"]\n"),
            (.sexp, "(\"0000000000000006\"\n\"0000000000000036\")\n"),
            (.text, "thread:0000000000000006\nthread:0000000000000036\n"),
            (.text0, "thread:0000000000000006\0thread:0000000000000036\0")
        ] {
            var out: [UInt8] = []
            var p = Sprinter(format) { out += $0 }
            p.beginList()
            for t in ["0000000000000006", "0000000000000036"] {
                p.setPrefix("thread")
                p.string(t)
                p.separator()
            }
            p.end()
            p.flush()
            #expect(String(decoding: out, as: UTF8.self) == expected, "\(format)")
        }
        for (format, expected) in [(Sprinter.Format.json, "[]\n"), (.sexp, "()\n"), (.text, "")] {
            var out: [UInt8] = []
            var p = Sprinter(format) { out += $0 }
            p.beginList()
            p.end()
            p.flush()
            #expect(String(decoding: out, as: UTF8.self) == expected)
        }
    }

    /// Escapes: JSON names `\b \f \n \t`, other control bytes `\u00XX` (CR too); sexp `\n` and octal.
    @Test func escapes() {
        var out: [UInt8] = []
        var p = Sprinter(.json) { out += $0 }
        p.string("a\"b\\c\u{8}\u{c}\n\t\r\u{1}é")
        p.flush()
        #expect(String(decoding: out, as: UTF8.self) == "\"a\\\"b\\\\c\\b\\f\\n\\t\\u000d\\u0001é\"")
        out = []
        var s = Sprinter(.sexp) { out += $0 }
        s.string("a\"b\\c\n\t\r\u{1}é")
        s.boolean(true)
        s.flush()
        #expect(String(decoding: out, as: UTF8.self) == "\"a\\\"b\\\\c\\n\\011\\015\\001é\"t")
    }
}
