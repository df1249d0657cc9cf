import IMAPCodec

// libFuzzer driver for every parser that reads bytes from outside; build and run it as docs/fuzzing.md
// says (`scripts/fuzz TARGET SECONDS`). The target comes from MO_FUZZ_TARGET (`FuzzTargets.all`). Built
// normally (by `swift build`, without the FUZZING condition) it only prints how to build it, so the
// package needs no fuzzer runtime.

#if FUZZING
    import Glibc

    @_silgen_name("LLVMFuzzerRunDriver")
    func LLVMFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<Int32>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    ) -> Int32

    nonisolated(unsafe) var selected: @Sendable (UnsafeRawBufferPointer) -> Void = { _ in }

    /// SwiftPM names an executable's entry point `<target>_main` and aliases `main` to it; with
    /// -parse-as-library we define it ourselves and hand control to libFuzzer's driver, so libFuzzer's own
    /// `main` is never linked in.
    @_cdecl("MoFuzz_main")
    public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
        let name = getenv("MO_FUZZ_TARGET").map { String(cString: $0) } ?? "imap"
        guard let target = FuzzTargets.all[name] else {
            print("MoFuzz: unknown MO_FUZZ_TARGET \(name); one of \(FuzzTargets.all.keys.sorted().joined(separator: ", "))")
            return 64
        }
        selected = target
        var count = argc
        var vector = argv
        return LLVMFuzzerRunDriver(&count, &vector) { data, size in
            selected(UnsafeRawBufferPointer(start: data, count: size))
            return 0
        }
    }
#else
    // A declaration, not a statement: the file must also parse in library mode, where this branch is inactive.
    let usage: Void = print(
        """
        MoFuzz was built without the fuzzer. Build and run it with scripts/fuzz TARGET SECONDS, which runs:
          swift build -c release --product MoFuzz --scratch-path .build-fuzz \\
            -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -DFUZZING -Xswiftc -use-ld=lld
        Targets: \(FuzzTargets.all.keys.sorted().joined(separator: ", "))
        """)
#endif
