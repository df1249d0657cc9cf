import ArgumentParser
import Foundation
import MoCLI
import MoIndex

extension MoIndexCommand {
    struct Compact: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Re-pack the index into the least space (as after a full index).",
            discussion: """
                Incremental updates leave the database's blocks part-empty: it settles near 2.5 times the size \
                a full index leaves. This writes a compacted copy beside it and switches to it atomically; \
                searches keep working meanwhile. With an update running, the second of the two exits with \
                status 75. Takes about a second per 150 MB.
                """)

        @OptionGroup var location: IndexLocation
        @OptionGroup(title: "Global") var global: GlobalLocation

        @Flag(name: .shortAndLong, help: "Print nothing unless there is an error.")
        var quiet = false

        func run() throws {
            let where_ = try global.merged(location).forReading()
            let sizes = try IndexUpdater.compact(indexPath: where_.indexPath)
            if quiet { return }
            func mb(_ n: Int64) -> String { String(format: "%.1f MB", Double(n) / 1_000_000) }
            print("mo-index: compacted \(where_.indexPath): \(mb(sizes.before)) -> \(mb(sizes.after))")
        }
    }
}
