import Foundation

/// Calls a progress report at most every 0.2 s, and once at the end.
struct ProgressTicker {
    let total: Int
    let report: ((Int, Int) -> Void)?
    private(set) var done = 0
    private var last = DispatchTime.now().uptimeNanoseconds

    init(total: Int, report: ((Int, Int) -> Void)?) {
        self.total = total
        self.report = report
    }

    mutating func step(by n: Int = 1) {
        done += n
        guard let report else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        if now - last >= 200_000_000 { last = now; report(done, total) }
    }

    func finish() { if total > 0 { report?(done, total) } }
}
