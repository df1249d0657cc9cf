import Foundation
@testable import MailMessage

/// Fixture files in Tests/Fixtures/mail, read relative to this source file.
enum Fixtures {
    static let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/mail")

    static func bytes(_ name: String) -> [UInt8] {
        guard let d = FileManager.default.contents(atPath: dir.appendingPathComponent(name).path) else {
            fatalError("missing fixture \(name)")
        }
        return [UInt8](d)
    }

    static func message(_ name: String) -> ParsedMessage { ParsedMessage.parse(bytes(name)) }

    static var names: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter { $0.hasSuffix(".eml") }.sorted()
    }
}
