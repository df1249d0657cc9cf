/// notmuch's option parsing (command-line-arguments.c), so scripts' command lines mean the same: options
/// come first and end at the first argument not starting with "--" (or after "--"); a value follows
/// `=` or `:` (`--format=sexp`), or is the next argument (`--format sexp`); a boolean is `--name`,
/// `--name=true|false` or `--no-name`. Errors carry notmuch's words.
public enum NotmuchArguments {
    public enum Kind: Equatable, Sendable {
        case keyword([String])
        case int
        case string
        case bool
    }

    public struct Parsed: Equatable {
        /// Each option given, by name, as its raw value (a boolean's is "true" or "false"); repeated
        /// options keep every value in order.
        public var values: [String: [String]] = [:]
        /// The arguments after the options.
        public var rest: [String] = []

        public func last(_ name: String) -> String? { values[name]?.last }
        public func flag(_ name: String) -> Bool { values[name]?.last == "true" }
        public func int(_ name: String) -> Int? { values[name]?.last.flatMap { Int($0) } }
    }

    public struct Failure: Error, Equatable {
        /// notmuch's lines, each ending in a newline.
        public let message: String
    }

    public static func parse(_ args: [String], _ options: [String: Kind]) -> Result<Parsed, Failure> {
        var parsed = Parsed()
        var i = 0
        while i < args.count {
            let arg = args[i]
            // Only `--…` is an option: `-inbox` (a tag change) or `-tag:spam` starts the words.
            guard arg.hasPrefix("--") else { break }
            i += 1
            if arg == "--" { break }
            var name = String(arg.dropFirst(2))
            var value: String?
            if let sep = name.firstIndex(where: { $0 == "=" || $0 == ":" }) {
                value = String(name[name.index(after: sep)...])
                name = String(name[..<sep])
            }
            var negated = false
            if options[name] == nil, name.hasPrefix("no-"), options[String(name.dropFirst(3))] == .bool {
                name = String(name.dropFirst(3))
                negated = true
            }
            guard let kind = options[name] else { return .failure(Failure(message: "Unrecognized option: \(arg)\n")) }
            if kind == .bool {
                let v: Bool
                switch value {
                case nil: v = true
                case "true"?: v = true
                case "false"?: v = false
                default:
                    return .failure(
                        Failure(message: "Unknown argument \"\(value!)\" for (boolean) option \"\(name)\".\nUnrecognized option: \(arg)\n"))
                }
                parsed.values[name, default: []].append(String(negated ? !v : v))
                continue
            }
            if value == nil {
                guard i < args.count else {
                    return .failure(Failure(message: "Option \"\(name)\" needs an argument.\nUnrecognized option: \(arg)\n"))
                }
                value = args[i]
                i += 1
            }
            let v = value!
            switch kind {
            case .keyword(let words) where !words.contains(v):
                return .failure(
                    Failure(message: "Unknown keyword argument \"\(v)\" for option \"\(name)\".\nUnrecognized option: \(arg)\n"))
            case .int where Int(v) == nil:
                return .failure(
                    Failure(message: "Unable to parse \"\(v)\" as an integer for option \"\(name)\".\nUnrecognized option: \(arg)\n"))
            default: break
            }
            parsed.values[name, default: []].append(v)
        }
        parsed.rest = Array(args[i...])
        return .success(parsed)
    }
}
