// swift-tools-version:6.0
import PackageDescription

// Module layout and data flow: docs/architecture.md.
let package = Package(
    name: "MagnumOpus",
    products: [
        .executable(name: "mo-sync", targets: ["mo-sync"]),
        .executable(name: "mo-index", targets: ["mo-index"]),
        .executable(name: "mo-sendmail", targets: ["mo-sendmail"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // System OpenSSL (libssl-dev); the header wraps the macros Swift cannot import.
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        // Xapian (libxapian-dev) behind a C API; no C++ exception crosses it.
        .target(
            name: "CXapian",
            exclude: ["README.md"],
            linkerSettings: [.linkedLibrary("xapian")]
        ),
        // zlib (zlib1g-dev): gzip for notmuch's gzipped mail files and dumps (MoCore's Gzip).
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        .target(name: "MoCore", dependencies: ["CZlib"], exclude: ["README.md"]),
        .target(name: "Maildir", dependencies: ["MoCore"], exclude: ["README.md"]),
        .target(name: "MoConfig", dependencies: ["MoCore"], exclude: ["README.md"]),
        .target(name: "MoNet", dependencies: ["MoCore", "COpenSSL"]),
        // The one HTTP/1.1 client (autoconfig, OAuth2, JMAP next): addresses, a bounded response parser.
        .target(name: "MoHTTP", dependencies: ["MoCore", "MoNet"], exclude: ["README.md"]),
        // JMAP (RFC 8620, 8621): the session, method calls and their answers, blobs; over MoHTTP.
        .target(name: "JMAPClient", dependencies: ["MoCore", "MoNet", "MoHTTP"], exclude: ["README.md"]),
        .target(name: "IMAPCodec", dependencies: ["MoCore"], exclude: ["README.md"]),
        // The IMAP client: login/SASL, commands, pipelining, IDLE, over MoNet with IMAPCodec.
        .target(name: "IMAPClient", dependencies: ["MoCore", "MoNet", "IMAPCodec"], exclude: ["README.md"]),
        .target(name: "MailMessage", dependencies: ["MoCore"], exclude: ["README.md"]),
        // OAuth2 for mail: PKCE, providers, token replies, the token file; pure parts first.
        .target(name: "OAuth2", dependencies: ["MoCore", "MoHTTP", "MoNet"], exclude: ["README.md"]),
        // JWZ threading with ghosts, pure.
        .target(name: "Threading", dependencies: ["MailMessage"], exclude: ["README.md"]),
        // Pure sync decisions: (saved state, local scan, remote listing) -> named actions.
        .target(name: "SyncEngine", dependencies: ["Maildir"], exclude: ["README.md"]),
        // Per-folder state files, the write-ahead journal, and the account lock.
        .target(name: "SyncState", dependencies: ["MoCore", "Maildir", "SyncEngine"], exclude: ["README.md"]),
        // Runs a sync: IMAP listing + Maildir scan -> planner -> journaled execution.
        .target(name: "SyncRunner", dependencies: ["MoCore", "Maildir", "SyncEngine", "SyncState", "IMAPClient", "OAuth2", "JMAPClient",
                                                   "IMAPCodec", "MoConfig", "MailMessage", "MoNet", "MoHTTP", "ClientSettings"],
                exclude: ["README.md"]),
        .target(name: "SMTPClient", dependencies: ["MoCore", "MoNet", "MailMessage"], exclude: ["README.md"]),
        // Client settings (IMAP, SMTP) from an account's configuration: the one mapping every program uses.
        .target(name: "ClientSettings", dependencies: ["MoCore", "MoConfig", "IMAPClient", "SMTPClient", "MoNet", "MoHTTP", "JMAPClient", "OAuth2", "SyncState"], exclude: ["README.md"]),
        // The append-only action journal (offline sends, Sent copies, moves, flags) and its runner.
        .target(name: "ActionJournal", dependencies: ["MoCore", "MoConfig", "SMTPClient", "IMAPClient", "IMAPCodec", "SyncState", "MailMessage", "OAuth2",
                                                      "ClientSettings", "JMAPClient", "MoHTTP"], exclude: ["README.md"]),
        // mo-sync init: known providers, RFC 6186 SRV over its own DNS client, autoconfig over HTTPS, the starting config.
        .target(name: "AccountSetup", dependencies: ["MoCore", "MoConfig", "MoNet", "MoHTTP", "IMAPClient", "SMTPClient", "ClientSettings", "OAuth2"],
                exclude: ["README.md"]),
        // Test helpers: temporary directories, the private Dovecot from scripts/test-server.
        .target(name: "MoTestSupport", dependencies: ["MoCore", "IMAPCodec"], exclude: ["README.md"]),
        // The Swift wrapper over CXapian: databases, documents, queries, errors; no mail knowledge.
        .target(name: "XapianKit", dependencies: ["CXapian", "MoCore"], exclude: ["README.md"]),
        // What we index and how we answer: schema, updater, query language, listings, tags.
        .target(name: "MoIndex", dependencies: ["MoCore", "XapianKit", "MailMessage", "Threading", "Maildir"], exclude: ["README.md"]),
        // notmuch's command line over mo's index: its output formats, options and commands (issue 28).
        .target(name: "NotmuchCompat", dependencies: ["MoCore", "MoIndex", "XapianKit", "MailMessage", "Threading"], exclude: ["README.md"]),
        .target(
            name: "MoCLI",
            dependencies: [
                "MoCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            exclude: ["README.md"]
        ),
        .executableTarget(
            name: "mo-sync",
            dependencies: ["MoCLI", "MoConfig", "MoCore", "MailMessage", "SyncRunner", "IMAPClient", "ActionJournal", "AccountSetup", "Maildir",
                           "ClientSettings", "OAuth2",
                           .product(name: "ArgumentParser", package: "swift-argument-parser")],
            // Run from timers every few minutes: linked statically, it starts faster and its resident set holds
            // only the runtime it uses (ArgumentParser pulls in FoundationEssentials, which needs these shims).
            // Release links with lld: the functions a sync runs first (bench/sync/make-order), relative
            // relocations packed (DT_RELR, glibc 2.36), identical code folded where safe, and no symbol table
            // exported for the whole stdlib (static-stdlib-args adds -export-dynamic; nothing here dlsyms).
            // Together 17.8 → 15.3 MB peak RSS for a 10k-message timer run (bench/sync/RESULTS.md). Still PIE.
            linkerSettings: [.unsafeFlags(["-static-stdlib", "-l_FoundationCShims", "-l_FoundationCollections",
                                           "-use-ld=lld", "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/bench/sync/mo-sync.order",
                                           "-Xlinker", "--no-warn-symbol-ordering", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                                           "-Xlinker", "--icf=safe", "-Xlinker", "--no-export-dynamic"],
                                          .when(configuration: .release))]
        ),
        .executableTarget(
            name: "mo-index",
            dependencies: ["MoCLI", "MoConfig", "MoCore", "Maildir", "MailMessage", "Threading", "MoIndex", "NotmuchCompat", "XapianKit", "SyncState",
                           .product(name: "ArgumentParser", package: "swift-argument-parser")],
            // Every query is a process: with the Swift runtime and Foundation linked statically it starts in
            // ~4 ms instead of ~13 (dynamic loading of libFoundation and ICU). The libraries after
            // -static-stdlib are what the static Foundation needs and the dynamic modules do not name.
            // jemalloc (libjemalloc-dev), loaded before libc so that its malloc serves Xapian too: indexing makes
            // millions of small C++ allocations, and glibc's malloc cost ~15% of a full index
            // (bench/RESULTS-index.md). (Linked from libjemalloc.a instead, with -static-stdlib its malloc ended up a
            // local symbol of the executable, which the shared libraries did not use.)
            linkerSettings: [.unsafeFlags(["-ljemalloc", "-static-stdlib", "-lCoreFoundation", "-l_FoundationICU",
                                           "-l_FoundationCShims", "-l_FoundationCollections", "-luuid"],
                                          .when(configuration: .release))]
        ),
        .executableTarget(
            name: "mo-sendmail",
            dependencies: ["MoCLI", "MoConfig", "MoCore", "SMTPClient", "ActionJournal", "MailMessage", "Maildir", "SyncState"]
        ),
        // The sync checker: server account vs Maildir tree, message by message (tests, crash runs, benchmarks).
        .target(name: "MoCheck", dependencies: ["MoCore", "Maildir", "IMAPClient", "IMAPCodec", "MoConfig", "ClientSettings", "OAuth2", "SyncState",
                                                "JMAPClient", "MoHTTP", "MoNet"],
                exclude: ["README.md"]),
        .executableTarget(name: "mo-sync-check", dependencies: ["MoCheck", "MoCLI", "MoConfig", "MoCore"]),
        // libFuzzer driver for every parser of outside bytes (docs/fuzzing.md).
        .executableTarget(name: "MoFuzz", dependencies: ["IMAPCodec", "MailMessage", "Maildir", "MoIndex", "SMTPClient",
                                                       "SyncState", "ActionJournal"]),
        .testTarget(name: "MoCoreTests", dependencies: ["MoCore", "MoTestSupport"]),
        .testTarget(name: "MaildirTests", dependencies: ["Maildir", "MoCore", "MoTestSupport"]),
        .testTarget(name: "MoConfigTests", dependencies: ["MoConfig", "MoCore", "MoTestSupport"]),
        .testTarget(name: "MoNetTests", dependencies: ["MoNet", "MoCore", "MoTestSupport"]),
        .testTarget(name: "IMAPCodecTests", dependencies: ["IMAPCodec", "MoTestSupport"]),
        .testTarget(name: "IMAPClientTests", dependencies: ["IMAPClient", "IMAPCodec", "MoNet", "MoCore", "MoTestSupport"]),
        .testTarget(name: "SyncEngineTests", dependencies: ["SyncEngine", "Maildir"]),
        .testTarget(name: "SyncRunnerTests", dependencies: ["SyncRunner", "JMAPClient", "ClientSettings", "MoCheck", "SyncEngine", "SyncState", "Maildir", "IMAPClient",
                                                            "IMAPCodec", "MoConfig", "MoCore", "MoTestSupport"]),
        .testTarget(name: "SyncStateTests", dependencies: ["SyncState", "SyncEngine", "Maildir", "MoCore", "MoTestSupport"]),
        .testTarget(name: "ThreadingTests", dependencies: ["Threading", "MailMessage", "MoCore", "MoTestSupport"]),
        .testTarget(name: "MailMessageTests", dependencies: ["MailMessage", "MoTestSupport"]),
        .testTarget(name: "ActionJournalTests", dependencies: ["ActionJournal", "ClientSettings", "SMTPClient", "IMAPClient", "MailMessage", "MoConfig", "MoCore", "MoNet", "MoTestSupport"]),
        .testTarget(name: "SMTPClientTests", dependencies: ["SMTPClient", "MoCore", "MoTestSupport"]),
        .testTarget(name: "MoIndexTests", dependencies: ["MoIndex", "XapianKit", "MoCore", "Maildir", "MoTestSupport"]),
        .testTarget(name: "XapianKitTests", dependencies: ["XapianKit", "MoCore", "MoTestSupport"]),
        .testTarget(name: "AccountSetupTests", dependencies: ["AccountSetup", "ClientSettings", "MoConfig", "MoCore", "MoHTTP", "MoNet", "MoTestSupport"]),
        .testTarget(name: "JMAPClientTests", dependencies: ["JMAPClient", "MoHTTP", "MoCore", "MoTestSupport"]),
        .testTarget(name: "OAuth2Tests", dependencies: ["OAuth2", "MoCore", "MoHTTP", "MoTestSupport"]),
        .testTarget(name: "NotmuchCompatTests", dependencies: ["NotmuchCompat", "MoIndex", "MailMessage", "MoTestSupport"]),
        .testTarget(name: "CLITests", dependencies: ["MoCore", "MoTestSupport", "Maildir", "MoHTTP", "MoNet", "JMAPClient"]),
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx17
)

// Release builds put each function in a section of its own, so the linker can gather the functions a sync
// runs (bench/sync/mo-sync.order, see bench/sync/make-order) into few pages: the resident set of a timer run
// holds the code it runs, not the code around it.
for target in package.targets where target.type == .regular || target.type == .executable {
    target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-Xfrontend", "-function-sections"], .when(configuration: .release))]
}
