/// Extracts the addr-specs from an RFC 5322 address-list value, leniently.
///
/// Handles display names (quoted or not), comments, angle addresses, groups (`team: a@x, b@y;` and the
/// empty `undisclosed-recipients:;`). Returns the addresses in order, without duplicates.
func addressSpecs(in value: String) -> [String] {
    var items: [String] = []
    var item = ""
    var inQuote = false, escaped = false, commentDepth = 0, inAngle = false
    var angle: String?  // the text inside <...> of the current item
    var angleText = ""

    func endItem() {
        let spec = (angle ?? item).trimmingCharacters(inSet: [" ", "\t"])
        if !spec.isEmpty { items.append(spec) }
        item = ""; angle = nil
    }

    for ch in value {
        if escaped { escaped = false; if inAngle { angleText.append(ch) } else { item.append(ch) }; continue }
        if commentDepth > 0 {
            if ch == "\\" { escaped = true } else if ch == "(" { commentDepth += 1 } else if ch == ")" { commentDepth -= 1 }
            continue
        }
        if inQuote {
            if ch == "\\" { escaped = true } else if ch == "\"" { inQuote = false }
            if inAngle { angleText.append(ch) } else { item.append(ch) }
            continue
        }
        switch ch {
        case "\"": inQuote = true; if inAngle { angleText.append(ch) } else { item.append(ch) }
        case "(": commentDepth = 1
        case "<" where !inAngle: inAngle = true; angleText = ""
        case ">" where inAngle:
            inAngle = false
            // Drop an obsolete source route "@a,@b:".
            if angleText.hasPrefix("@"), let colon = angleText.firstIndex(of: ":") {
                angleText = String(angleText[angleText.index(after: colon)...])
            }
            angle = angleText
        case ":" where !inAngle: item = ""  // a group's display name
        case ";" where !inAngle: endItem()
        case "," where !inAngle: endItem()
        default: if inAngle { angleText.append(ch) } else { item.append(ch) }
        }
    }
    endItem()
    var seen: Set<String> = []
    return items.filter { seen.insert($0.lowercased()).inserted }
}

extension String {
    func trimmingCharacters(inSet set: Set<Character>) -> String {
        String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}
