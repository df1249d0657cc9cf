#!/bin/bash
# mo-index vs notmuch new vs mu index, run by hand (not in tests):
#   bench/index/bench.sh MAILDIR LABEL      e.g. /tmp/bench/sa sa ; /tmp/bench/sa10 sa10 (make-copies.py)
# Prints: full index wall time and peak RSS (/usr/bin/time -v), DB size, no-op update, listing all
# threads, and the total latency of the oracle queries. Needs packages notmuch, maildir-utils, time.
# The full indexes of mo-index and mu run REPEAT times (default 3), alternating, and the medians are
# printed too: on a shared machine one run of each can be 30% apart for the same binary.
set -eu
mail=$1; label=$2
here=$(cd "$(dirname "$0")/../.." && pwd)
mo=${MO_INDEX:-$here/.build/release/mo-index}
work=${TMPDIR:-/tmp}/mo-bench-$label; rm -rf "$work"; mkdir -p "$work"
queries=/work/shared/oracles/spamassassin-2002/queries.tsv
t() { /usr/bin/time -v "$@" 2> "$work/time" >/dev/null; awk -F': ' '/Elapsed/ {print "wall " $2} /Maximum resident/ {print "rss_kb " $2}' "$work/time" | tr '\n' ' '; }
ms() { local s=$(date +%s%N); "$@" >/dev/null 2>&1; echo $(( ($(date +%s%N) - s) / 1000000 ))ms; }

repeat=${REPEAT:-3}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
secs() { awk '{for (i=1;i<=NF;i++) if ($i=="wall") print $(i+1)}' | awk -F: '{print NF==2 ? $1*60+$2 : $1*3600+$2*60+$3}'; }

# Full indexes, mo-index and mu alternating.
: > "$work/mo-times"; : > "$work/mu-times"
for i in $(seq "$repeat"); do
    rm -rf "$work/mo"
    line=$(t "$mo" --maildir "$mail" --index-dir "$work/mo" update --quiet)
    echo "mo-index full:   $line db_kb $(du -sk "$work/mo" | cut -f1)"
    echo "$line" | secs >> "$work/mo-times"
    rm -rf "$work/mu"
    mu init --quiet --muhome="$work/mu" --maildir="$mail" >/dev/null
    line=$(t mu index --quiet --muhome="$work/mu")
    echo "mu full:         $line db_kb $(du -sk "$work/mu" | cut -f1)"
    echo "$line" | secs >> "$work/mu-times"
done
mo_med=$(median < "$work/mo-times"); mu_med=$(median < "$work/mu-times")
echo "full index medians of $repeat: mo-index ${mo_med} s, mu ${mu_med} s, ratio $(awk -v a="$mo_med" -v b="$mu_med" 'BEGIN {printf "%.2f", a/b}')"

# mo-index
echo "mo-index no-op:  $(ms "$mo" --maildir "$mail" --index-dir "$work/mo" update) $(ms "$mo" --maildir "$mail" --index-dir "$work/mo" update)"
echo "mo-index threads: $(ms "$mo" --index-dir "$work/mo" query '*')"
qs=$(date +%s%N); grep -v '^#' $queries | while IFS=$'\t' read -r n q _; do "$mo" --index-dir "$work/mo" query --output message-ids -- "${q/tag:attachment/has:attachment}" >/dev/null; done
echo "mo-index queries: $(( ($(date +%s%N) - qs) / 1000000 ))ms (18 queries, message ids)"

# notmuch
cat > "$work/notmuch-config" <<CFG
[database]
path=$mail
mail_root=$mail
[new]
tags=
[maildir]
synchronize_flags=true
CFG
export NOTMUCH_CONFIG=$work/notmuch-config
mkdir -p "$work/nm"; rm -rf "$mail/.notmuch"
cat >> "$work/notmuch-config" <<CFG
CFG
echo "notmuch full:    $(t notmuch new --quiet) db_kb $(du -sk "$mail/.notmuch" | cut -f1)"
echo "notmuch no-op:   $(ms notmuch new --quiet) $(ms notmuch new --quiet)"
echo "notmuch threads: $(ms notmuch search '*')"
qs=$(date +%s%N); grep -v '^#' $queries | while IFS=$'\t' read -r n q _; do notmuch search --output=messages -- "$q" >/dev/null; done
echo "notmuch queries: $(( ($(date +%s%N) - qs) / 1000000 ))ms"
rm -rf "$mail/.notmuch"

# mu (its index is the last full one above)
echo "mu no-op:        $(ms mu index --quiet --muhome="$work/mu") $(ms mu index --quiet --muhome="$work/mu")"
echo "mu threads:      $(ms mu find --muhome="$work/mu" --threads '""')"
qs=$(date +%s%N); grep -v '^#' $queries | while IFS=$'\t' read -r n _ q; do a=(); [[ $q == "-r "* ]] && { a=(-r); q=${q#-r }; }; mu find --muhome="$work/mu" "${a[@]}" -f i -- "$q" >/dev/null 2>&1 || true; done
echo "mu queries:      $(( ($(date +%s%N) - qs) / 1000000 ))ms"
