import Testing
@testable import MoConfig

/// Parses `text` and returns the root table.
private func parse(_ text: String) throws -> TOMLTable {
    try TOML.parse(text)
}

/// The error `text` produces, as "LINE:COL: MESSAGE".
private func parseError(_ text: String) -> String? {
    do {
        _ = try TOML.parse(text)
        return nil
    } catch {
        return error.description
    }
}

private extension TOMLTable {
    func value(_ path: String...) -> TOMLValue? {
        var table = self
        for key in path.dropLast() {
            guard case .table(let t)? = table[key]?.value else { return nil }
            table = t
        }
        return table[path[path.count - 1]]?.value
    }
}

@Suite struct TOMLParserTests {
    @Test func commentsAndBareKeys() throws {
        let t = try parse(
            """
            # comment
            key = "value"  # trailing comment
            bare_key-1 = 1
            1234 = true
            """)
        #expect(t.keys == ["key", "bare_key-1", "1234"])
        #expect(t.value("key") == .string("value"))
        #expect(t.value("bare_key-1") == .integer(1))
        #expect(t.value("1234") == .bool(true))
    }

    @Test func quotedAndDottedKeys() throws {
        let t = try parse(
            """
            "a b" = 1
            'c.d' = 2
            "" = 3
            site."google.com" . x = 4
            fruit.apple.color = "red"
            fruit.apple.size = 5
            """)
        #expect(t.value("a b") == .integer(1))
        #expect(t.value("c.d") == .integer(2))
        #expect(t.value("") == .integer(3))
        #expect(t.value("site", "google.com", "x") == .integer(4))
        #expect(t.value("fruit", "apple", "size") == .integer(5))
    }

    @Test func linesOfKeysAndValues() throws {
        let t = try parse(
            """
            a = 1

            [server]
            host = "x"
              port = [
                1,
                2,
              ]
            """)
        #expect(t.entry("a")?.line == 1)
        #expect(t.entry("server")?.line == 3)
        guard case .table(let server)? = t["server"]?.value else { Issue.record("no table"); return }
        #expect(server.line == 3)
        #expect(server.entry("host")?.line == 4)
        #expect(server.entry("port")?.line == 5)
        #expect(server.entry("port")?.column == 3)
        guard case .array(let ports)? = server["port"]?.value else { Issue.record("no array"); return }
        #expect(ports.map(\.line) == [6, 7])
    }

    @Test func tablesKeepOrderAndNesting() throws {
        let t = try parse(
            """
            [b]
            x = 1
            [a."b c".d]
            y = 2
            [a]
            z = 3
            """)
        #expect(t.keys == ["b", "a"])
        #expect(t.value("a", "b c", "d", "y") == .integer(2))
        #expect(t.value("a", "z") == .integer(3))
        guard case .table(let a)? = t["a"]?.value else { Issue.record("no table"); return }
        #expect(a.line == 5)  // the implicit table takes the line of its own header
        #expect(a.keys == ["b c", "z"])
    }

    @Test func arraysOfTables() throws {
        let t = try parse(
            """
            [[fruit]]
            name = "apple"
            [fruit.physical]
            color = "red"
            [[fruit.variety]]
            name = "red delicious"
            [[fruit]]
            name = "banana"
            """)
        guard case .array(let fruits)? = t["fruit"]?.value else { Issue.record("no array"); return }
        #expect(fruits.count == 2)
        #expect(fruits.map(\.line) == [1, 7])
        guard case .table(let apple) = fruits[0].value else { Issue.record("no table"); return }
        #expect(apple.value("physical", "color") == .string("red"))
        guard case .array(let varieties)? = apple["variety"]?.value else { Issue.record("no array"); return }
        #expect(varieties.count == 1)
    }

    @Test func basicStringEscapes() throws {
        let t = try parse(
            #"""
            s = "tab\there \"q\" back\\slash \b\f\n\r é \u00E9 \U0001F600"
            """#)
        #expect(t.value("s") == .string("tab\there \"q\" back\\slash \u{8}\u{C}\n\r é é 😀"))
    }

    @Test func literalStrings() throws {
        let t = try parse(
            #"""
            path = 'C:\Users\nodejs\templates'
            regex = '<\i\c*\s*>'
            """#)
        #expect(t.value("path") == .string(#"C:\Users\nodejs\templates"#))
        #expect(t.value("regex") == .string(#"<\i\c*\s*>"#))
    }

    @Test func multiLineBasicStrings() throws {
        let t = try parse(
            #"""
            a = """
            Roses are red
            Violets are blue"""
            b = """\
                   The quick brown \
                   fox.\
                   """
            c = """Here are two quotation marks: "". Simple enough."""
            d = """"This," she said, "is just a pointless statement.""""
            e = "x\r\ny"
            """#)
        #expect(t.value("a") == .string("Roses are red\nViolets are blue"))
        #expect(t.value("b") == .string("The quick brown fox."))
        #expect(t.value("c") == .string("Here are two quotation marks: \"\". Simple enough."))
        #expect(t.value("d") == .string("\"This,\" she said, \"is just a pointless statement.\""))
        #expect(t.value("e") == .string("x\r\ny"))
    }

    @Test func multiLineLiteralStrings() throws {
        let t = try parse(
            """
            a = '''
            The first newline is
            trimmed in raw strings.\\n
            '''
            b = ''''That,' she said, 'is still pointless.''''
            """)
        #expect(t.value("a") == .string("The first newline is\ntrimmed in raw strings.\\n\n"))
        #expect(t.value("b") == .string("'That,' she said, 'is still pointless.'"))
    }

    @Test func crlfLineEnds() throws {
        let t = try parse("a = 1\r\nb = \"\"\"\r\nx\r\ny\"\"\"\r\n[t]\r\nc = 2\r\n")
        #expect(t.value("a") == .integer(1))
        #expect(t.value("b") == .string("x\ny"))
        #expect(t.value("t", "c") == .integer(2))
        #expect(t.entry("t")?.line == 5)
    }

    @Test(arguments: [
        ("+99", Int64(99)), ("42", 42), ("0", 0), ("-17", -17), ("1_000", 1000), ("5_349_221", 5_349_221),
        ("0xDEADBEEF", 0xDEADBEEF), ("0xdead_beef", 0xDEADBEEF), ("0o755", 0o755), ("0b1101_0110", 0b1101_0110),
        ("9223372036854775807", Int64.max), ("-9223372036854775808", Int64.min)
    ])
    func integers(text: String, expected: Int64) throws {
        #expect(try parse("n = \(text)").value("n") == .integer(expected))
    }

    @Test(arguments: [
        ("+1.0", 1.0), ("3.1415", 3.1415), ("-0.01", -0.01), ("5e+22", 5e22), ("1e06", 1e6), ("-2E-2", -2e-2),
        ("6.626e-34", 6.626e-34), ("224_617.445_991_228", 224617.445991228), ("inf", .infinity), ("-inf", -.infinity)
    ])
    func floats(text: String, expected: Double) throws {
        #expect(try parse("f = \(text)").value("f") == .float(expected))
    }

    @Test func nan() throws {
        guard case .float(let f)? = try parse("f = -nan").value("f") else { Issue.record("not a float"); return }
        #expect(f.isNaN)
    }

    @Test func booleans() throws {
        let t = try parse("a = true\nb = false")
        #expect(t.value("a") == .bool(true))
        #expect(t.value("b") == .bool(false))
    }

    @Test func arrays() throws {
        let t = try parse(
            """
            empty = []
            mixed = [ 1, "two", [3.0], { four = 4 } ]
            multi = [  # comment
              "a",     # another
              # own line
              "b",
            ]
            """)
        #expect(t.value("empty") == .array([]))
        guard case .array(let mixed)? = t.value("mixed") else { Issue.record("not an array"); return }
        #expect(mixed.map(\.value.typeDescription) == ["an integer", "a string", "an array", "a table"])
        guard case .array(let multi)? = t.value("multi") else { Issue.record("not an array"); return }
        #expect(multi.map(\.value) == [.string("a"), .string("b")])
        #expect(multi.map(\.line) == [4, 6])
    }

    @Test func inlineTables() throws {
        let t = try parse(
            """
            name = { first = "Tom", last = "Preston-Werner" }
            point = {x=1,y=2}
            animal = { type.name = "pug" }
            empty = {}
            """)
        #expect(t.value("name", "last") == .string("Preston-Werner"))
        #expect(t.value("point", "y") == .integer(2))
        #expect(t.value("animal", "type", "name") == .string("pug"))
        #expect(t.value("empty") == .table(TOMLTable(line: 4)))
    }

    @Test func headerMayNameTableCreatedByDottedKeysAsParent() throws {
        let t = try parse(
            """
            [fruit]
            apple.color = "red"
            apple.taste.sweet = true
            [fruit.apple.texture]
            smooth = true
            """)
        #expect(t.value("fruit", "apple", "texture", "smooth") == .bool(true))
    }

    @Test(arguments: [
        // Duplicates and redefinitions
        ("a = 1\na = 2", "2:1: duplicate key a (first defined on line 1)"),
        ("[t]\nx = 1\n[t]", "3:1: table t is already defined (line 1)"),
        ("[a.b]\n[a]\n[a]", "3:1: table a is already defined (line 2)"),
        ("[fruit]\napple.color = 1\n[fruit.apple]", "3:1: table fruit.apple is already defined by dotted keys (line 2)"),
        ("[a.b.c]\nz = 9\n[a]\nb.c.t = 1", "4:1: table a.b is already defined (line 1); dotted keys cannot add to it"),
        ("a = 1\n[a.b]", "2:2: a is already a value (line 1), not a table"),
        ("a = [1]\n[[a]]", "2:1: a is already a value (line 1), not a table"),
        ("[[a]]\n[a]", "2:1: a is already an array of tables (line 1)"),
        ("a = {b = 1}\na.c = 2", "2:1: a is an inline table (line 1); it cannot be extended"),
        ("a = {b = 1, b = 2}", "1:13: duplicate key a.b (first defined on line 1)"),
        // Strings
        (#"s = "a\qb""#, #"1:7: invalid escape sequence '\q'"#),
        (#"s = "\uD800""#, #"1:6: \uD800 is not a Unicode scalar value"#),
        (#"s = "\u12""#, #"1:6: \u needs 4 hex digits"#),
        ("s = \"a\u{1}b\"", "1:7: control character U+0001 must be escaped"),
        ("s = \"abc\nd = 1", "1:5: unterminated string (a single-line string cannot span lines; use \"\"\")"),
        ("s = '''abc", "1:5: unterminated multi-line string"),
        ("# bad \u{7F} comment", "1:7: control character U+007F in a comment"),
        // Numbers and values
        ("n = 012", "1:5: leading zeros are not allowed in '012'"),
        ("n = 1__0", "1:5: invalid number '1__0'"),
        ("n = _1", "1:5: invalid value '_1' (strings need quotes)"),
        ("n = 1.", "1:5: invalid number '1.'"),
        ("n = .5", "1:5: invalid number '.5'"),
        ("n = +0x10", "1:5: a sign is not allowed on '+0x10'"),
        ("n = 9223372036854775808", "1:5: '9223372036854775808' does not fit in a 64-bit integer"),
        ("n = yes", "1:5: invalid value 'yes' (strings need quotes)"),
        ("d = 1979-05-27", "1:5: dates are not supported here"),
        ("d = 07:32:00", "1:5: dates are not supported here"),
        ("d = [1, 1979-05-27T07:32:00Z]", "1:9: dates are not supported here"),
        // Structure
        ("a = 1 b = 2", "1:7: expected the end of the line, found 'b'"),
        ("a =", "1:4: expected a value, found the end of the file"),
        ("= 1", "1:1: expected a key, found '='"),
        ("a b = 1", "1:3: expected '=' after the key a, found 'b'"),
        ("[a\nb = 1", "1:3: expected ']' to end the table header, found the end of the line"),
        ("a = [1 2]", "1:8: expected ',' or ']' in the array, found '2'"),
        ("a = {b = 1,}", "1:12: a trailing comma is not allowed in an inline table"),
        ("a = {b = 1\n}", "1:11: an inline table must be on one line (TOML 1.0)"),
        ("\"\"\"k\"\"\" = 1", "1:1: a multi-line string cannot be a key"),
        ("x = 1\n  é = 2", "2:3: expected a key, found 'é'")
    ])
    func errors(text: String, expected: String) {
        #expect(parseError(text) == expected)
    }
}
