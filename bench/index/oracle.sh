#!/bin/sh
# Indexes a corpus with mo-index and compares threads and query results with notmuch 0.37's
# (/work/shared/oracles). Usage: bench/index/oracle.sh CORPUS [OUT]   (CORPUS: notmuch-test | spamassassin-2002)
# Needs a built mo-index (MO_INDEX=path, default .build/release/mo-index, else .build/debug/mo-index).
set -eu
corpus=$1
shared=${MO_SHARED_DIR:-/work/shared}
out=${2:-${TMPDIR:-/tmp}/mo-index-oracle/$corpus}
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${MO_INDEX:-$here/.build/release/mo-index}
[ -x "$bin" ] || bin=$here/.build/debug/mo-index
rm -rf "$out" && mkdir -p "$out/queries"
index="$out/index"
"$bin" --maildir "$shared/corpora/$corpus" --index-dir "$index" update --quiet
"$bin" --index-dir "$index" query --output thread-members '*' | sort > "$out/threads.txt"
# notmuch syntax -> ours: tag:attachment is has:attachment; the rest is the same language.
grep -v '^#' "$shared/oracles/$corpus/queries.tsv" | while IFS="$(printf '\t')" read -r name nm _mu; do
    q=$(printf '%s' "$nm" | sed 's/tag:attachment/has:attachment/')
    "$bin" --index-dir "$index" query --output message-ids -- "$q" | sort > "$out/queries/$name.txt"
done
shift; [ $# -gt 0 ] && shift
python3 "$shared/oracles/compare.py" "$shared/oracles/$corpus" "$out" "$@"
