func utf8(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
