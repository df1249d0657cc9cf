import IMAPCodec

// libFuzzer driver for the IMAP response parser; build and run it as docs/fuzzing.md says. Built
// normally (by `swift build`, without the FUZZING condition) it only prints how to build it, so the
// package needs no fuzzer runtime.

#if FUZZING
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

/// SwiftPM names an executable's entry point `<target>_main` and aliases `main` to it; with
/// -parse-as-library we define it ourselves and hand control to libFuzzer's driver, so libFuzzer's own
/// `main` is never linked in.
@_cdecl("IMAPFuzz_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    var count = argc
    var vector = argv
    return LLVMFuzzerRunDriver(&count, &vector) { data, size in
        fuzzParseResponses(UnsafeRawBufferPointer(start: data, count: size))
        return 0
    }
}
#else
// A declaration, not a statement: the file must also parse in library mode, where this branch is inactive.
let usage: Void = print("""
    IMAPFuzz was built without the fuzzer. Build it with:
      swift build -c release --product IMAPFuzz --scratch-path .build-fuzz \\
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -DFUZZING -Xswiftc -use-ld=lld
    """)
#endif
