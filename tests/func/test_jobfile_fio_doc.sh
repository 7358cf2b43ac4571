#!/usr/bin/env bash
# The job files of fio's own documentation (Debian's HOWTO.rst.gz), read
# at run time by bench/fio-doc-corpus.sh: every job file and command line
# fio accepts, blkstack accepts too; of the option examples, at least the
# floor below (what is accepted today: it only rises).  Each refusal names
# its reason in the script's output.
source "$(dirname "$0")/lib.sh" "$@"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
HOWTO=/usr/share/doc/fio/HOWTO.rst.gz
if ! command -v fio >/dev/null || [ ! -f "$HOWTO" ]; then
	fail "fio or its HOWTO is not installed (scripts/install-deps.sh installs fio)"
	finish
	exit
fi
BLKSTACK=$(realpath "$BLKSTACK") QUIET=1 TSV="$TMP/doc.tsv" \
	"$SRC/bench/fio-doc-corpus.sh" "$HOWTO" >"$TMP/doc.out" 2>&1
rc=$?
check "fio-doc-corpus.sh runs" test $rc -eq 0
[ $rc -eq 0 ] || tail -20 "$TMP/doc.out"
count() { awk -F'\t' -v k="$1" -v f="${2:-}" -v b="${3:-}" \
	'$1 == k && (f == "" || $3 == f) && (b == "" || $4 == b)' "$TMP/doc.tsv" | wc -l; }
check "the HOWTO's job files found: at least 5 runs ($(count job))" test "$(count job)" -ge 5
check "the HOWTO's option examples found: at least 35 ($(count option))" test "$(count option)" -ge 35
check "the include file blocks written: including.fio accepted by fio" \
	grep -qP '^job\tincluding.fio .*\tok\t' "$TMP/doc.tsv"
for k in job command; do
	missed=$(awk -F'\t' -v k=$k '$1 == k && $3 == "ok" && $4 != "ok" { print $2 ": " $5 }' "$TMP/doc.tsv")
	check "every documentation $k fio accepts, blkstack accepts ($(count $k ok ok) of $(count $k ok))${missed:+: $missed}" \
		test -z "$missed"
done
# the unset ${SIZE} of the HOWTO's example: refused by both, as fio
check "the \${SIZE} example without its variables: refused by fio and by blkstack" \
	grep -qP '^job\tdoc-[0-9]+.fio .*\trefused\trefused\t.*the environment variable .SIZE. is not set' "$TMP/doc.tsv"
both=$(count option ok ok)
check "option examples fio accepts: blkstack at least 23 ($both of $(count option ok))" test "$both" -ge 23
awk -F'\t' '$3 == "ok" && $4 != "ok" { print "# fio accepts, blkstack refuses: " $2 ": " $5 }' "$TMP/doc.tsv"
finish
