#!/usr/bin/env python3
"""Makes N copies of a Maildir corpus with Message-IDs rewritten per copy (copy k: "<" -> "<ck."
in Message-ID, In-Reply-To and References), so threads stay within a copy and no id repeats.
Usage: make-copies.py SRC DEST N"""
import os, re, sys

src, dest, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
header = re.compile(rb"^(message-id|in-reply-to|references):", re.I)
for k in range(n):
    for dirpath, _, files in os.walk(src):
        rel = os.path.relpath(dirpath, src)
        out = os.path.join(dest, f"copy{k}", rel)
        os.makedirs(out, exist_ok=True)
        for sub in ("cur", "new", "tmp"):
            if os.path.basename(out) == "cur":
                os.makedirs(os.path.join(os.path.dirname(out), sub), exist_ok=True)
        for f in files:
            data = open(os.path.join(dirpath, f), "rb").read()
            head, sep, body = data.partition(b"\n\n")
            lines, inside = [], False
            for line in head.split(b"\n"):
                if header.match(line):
                    inside = True
                elif line[:1] not in (b" ", b"\t"):
                    inside = False
                lines.append(line.replace(b"<", b"<c%d." % k) if inside else line)
            name = f"c{k}.{f}"
            open(os.path.join(out, name), "wb").write(b"\n".join(lines) + sep + body)
