import Testing
import MoCore

@Suite struct SizeTextTests {
    @Test func parsesWholeNumbersWithOneUnit() {
        #expect(SizeText.parse("2500M") == 2500 << 20 && SizeText.parse("2g") == 2 << 30 && SizeText.parse("512K") == 512 << 10)
        #expect(SizeText.parse("1048576") == 1_048_576 && SizeText.parse("0") == 0)
        for bad in ["", "M", "-1M", "+5M", "1.5G", "5 M", "5T", "99999999999999999G"] { #expect(SizeText.parse(bad) == nil, "\(bad)") }
    }

    @Test func formatsForALine() {
        #expect(SizeText.format(512) == "512 bytes" && SizeText.format(2048) == "2 KB" && SizeText.format(340 << 20) == "340 MB")
        #expect(SizeText.format(2_300 << 20) == "2.2 GB")
    }
}
