#!/usr/bin/env bash
# Run-to-run spread of the matrix: `blkstack bench` run N times in a row,
# and for every table and cell the median, the range, and the largest
# deviation from the median in percent, against the issue's bound (every
# cell within 15 % of its median over five consecutive runs).  The cells
# are read from the text tables themselves, two decimals as printed: the
# claim is about what the matrix shows.  The layout lines' times are
# summarised the same way.
#
# With "--vs B-ARGS...", a second configuration runs interleaved with the
# first (A B A B ...), both are reported, and the ratio of the medians,
# B/A, per cell: an A/B comparison on a shared machine must interleave.
#
# With "--fio", fio runs the same cells after each of A's matrices, and
# their IOPS spread is reported beside blkstack's: what the machine itself
# allows.  fio's peer of each column: null -> ioengine=null; uring ->
# ioengine=io_uring on a 1 GiB file of its own (new each run, laid out by
# fio before its read rows; invalidate=0: the page cache the layout left
# is read, as the matrix's uring column reads it); ram -> ioengine=mmap
# on a 1 GiB file in /dev/shm (copies to and from memory).  bs=4k
# iodepth=32 runtime=1 time_based as the matrix's defaults (mmap is
# synchronous: depth 1).  The peers are for the spread, not for IOPS
# against blkstack's (bench/uring-vs-fio.sh and null-vs-fio.sh are).
#
# usage: bench/matrix-stability.sh [-n RUNS] [--fio] [BENCH-ARGS...] [--vs B-ARGS...]
#   -n RUNS   matrices per configuration (5)
#   BENCH-ARGS are passed to `blkstack bench` (default: none, the default
#   matrix, null and ram).  The literal word FILE in them is replaced by a
#   file in a temporary folder, removed before each run and at the end, so
#   that every run lays out a new file, as `make run` does:
#     bench/matrix-stability.sh --dev=null,ram,uring --filename=FILE --dev_size=1G
# env:   BLKSTACK=path/to/blkstack (default build/blkstack)
#        BLKSTACK_B=path/to/another/blkstack for B (default BLKSTACK): two
#        builds compared, e.g. before and after a change
#        KEEP=DIR keeps each run's output there (a.1.txt, b.1.txt, ...)
#        REUSE=DIR summarises the runs kept in DIR instead of running
#        BOUND=percent (15)
#        QUIET=S: before each run, wait (at most S seconds) until the
#        machine has been idle for 3 s (at most 15 % of its CPUs busy);
#        runs on a shared machine are then runs that started quiet.
#
# Each run's line gives the CPUs that other processes kept busy while it
# ran (all CPU time on the machine, /proc/stat, less the bench's own): a
# single-job cell gets a core only when the others leave it one.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
BLKSTACK=${BLKSTACK:-build/blkstack}
BLKSTACK_B=${BLKSTACK_B:-$BLKSTACK}
BOUND=${BOUND:-15}
RUNS=5
if [ "${1:-}" = -n ]; then
	RUNS=$2
	shift 2
fi
case $RUNS in
'' | *[!0-9]* | 0) echo "-n $RUNS: a number of runs, 1 or more" >&2; exit 2 ;;
esac
FIO=0
if [ "${1:-}" = --fio ]; then
	FIO=1
	shift
	command -v fio >/dev/null || { echo "--fio: fio is not installed" >&2; exit 2; }
fi
A=()
B=()
vs=0
for a in "$@"; do
	if [ "$a" = --vs ]; then
		vs=1
		continue
	fi
	if [ $vs = 0 ]; then A+=("$a"); else B+=("$a"); fi
done
TMP=$(mktemp -d)
SHM=/dev/shm/blkstack-stability.$$.img
trap 'rm -rf "$TMP" "$SHM"' EXIT
OUT=${REUSE:-${KEEP:-$TMP}}
mkdir -p "$OUT"
[ -x "$BLKSTACK" ] || make build >/dev/null

# FILE -> a file in the temporary folder (each configuration its own)
subst() {
	local cfg=$1
	shift
	local x
	for x in "$@"; do
		printf '%s\n' "${x//FILE/$TMP/$cfg.img}"
	done
}
mapfile -t A < <(subst a "${A[@]+"${A[@]}"}")
mapfile -t B < <(subst b "${B[@]+"${B[@]}"}")

PEERS=()
[ $FIO = 1 ] && PEERS=(fio)
bench_machine_start "${PEERS[@]+"${PEERS[@]}"}"
echo "A: $BLKSTACK bench ${A[*]+"${A[*]}"}"
[ $vs = 1 ] && echo "B: $BLKSTACK_B bench ${B[*]+"${B[*]}"}"
echo "runs: $RUNS per configuration, consecutive$([ $vs = 1 ] && echo ', A and B interleaved')"

# busy jiffies of all CPUs (user nice system irq softirq steal)
busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; }
HZ=$(getconf CLK_TCK)

# user + system CPU seconds of the finished children of this shell: times,
# run in this shell (in a $(...) subshell it would count the subshell's)
children_cpu() {
	times >"$TMP/times"
	awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); t += p[1] * 60 + p[2] } print t }' "$TMP/times"
}

# wait until 3 s with at most 15 % of the CPUs busy, at most QUIET seconds
quiet() {
	local waited=0 b0 b1
	while :; do
		b0=$(busy)
		sleep 3
		b1=$(busy)
		if [ $(((b1 - b0) * 100 / (3 * HZ * $(nproc)))) -le 15 ]; then
			echo "quiet after ${waited}s"
			return
		fi
		waited=$((waited + 3))
		if [ "$waited" -ge "$QUIET" ]; then
			echo "not quiet after ${waited}s"
			return
		fi
	done
}

# run CFG BINARY ARGS...: one matrix into $OUT/CFG.$i.txt, with a line on the load
run() {
	local cfg=$1 bin=$2 b0 b1 c0 t0 t1 own wait=""
	shift 2
	rm -f "$TMP"/a.img "$TMP"/b.img
	[ -n "${QUIET:-}" ] && wait="$(quiet), "
	children_cpu >"$TMP/c0"
	c0=$(cat "$TMP/c0")
	b0=$(busy)
	t0=$(date +%s.%N)
	bench_cmd "$bin" bench "$@" >"$OUT/$cfg.$i.txt"
	t1=$(date +%s.%N)
	b1=$(busy)
	children_cpu >"$TMP/c1"
	own=$(awk -v a="$c0" -v b="$(cat "$TMP/c1")" 'BEGIN { print b - a }')
	awk -v c="$cfg" -v i="$i" -v w="$wait" -v b="$((b1 - b0))" -v hz="$HZ" -v own="$own" -v t0="$t0" -v t1="$t1" \
		'BEGIN { printf "run %s.%d: %s%.1f s, bench %.2f CPUs, others %.2f CPUs\n", c, i, w, t1 - t0, own / (t1 - t0), (b / hz - own) / (t1 - t0) }'
}

# A's devices (the matrix's default: null,ram)
FIO_DEVS=null,ram
for a in "${A[@]+"${A[@]}"}"; do
	case $a in --dev=*) FIO_DEVS=${a#--dev=} ;; esac
done

# fio's peer of the matrix: "IOPS(K)<TAB>dev<TAB>row<TAB>value" per cell
# into $OUT/f.$i.tsv, as cells() reads blkstack's tables
fio_run() {
	local dev rw eng iops
	rm -f "$TMP/fio.img" "$SHM"
	for dev in ${FIO_DEVS//,/ }; do
		case $dev in
		null) eng=(--ioengine=null --size=1G) ;;
		uring) eng=(--ioengine=io_uring --invalidate=0 --filename="$TMP/fio.img" --size=1G) ;;
		ram) eng=(--ioengine=mmap --iodepth=1 --filename="$SHM" --size=1G) ;;
		*) continue ;;
		esac
		for rw in read randread write randwrite; do
			iops=$(bench_cmd fio --name="$rw" --rw="$rw" --bs=4k --iodepth=32 --runtime=1 --time_based \
				"${eng[@]}" --output-format=json | sed -n '/^{/,$p' |
				jq '(.jobs[0].read.iops + .jobs[0].write.iops) / 1000')
			printf 'IOPS(K)\t%s\t%s\t%.2f\n' "$dev" "$rw" "$iops"
		done
	done >"$OUT/f.$i.tsv"
	echo "run f.$i: fio's cells ($FIO_DEVS)"
}

for i in $(seq "$RUNS"); do
	[ -n "${REUSE:-}" ] && break
	run a "$BLKSTACK" "${A[@]+"${A[@]}"}"
	[ $FIO = 1 ] && fio_run
	if [ $vs = 1 ]; then
		run b "$BLKSTACK_B" "${B[@]+"${B[@]}"}"
	fi
done

# "metric<TAB>dev<TAB>row<TAB>value" for every cell of every run file; the
# layout lines as metric "layout(s)", row "-".
cells() {
	awk '
	/^layout: / && / s\)$/ {
		ldev = $2; sub(":$", "", ldev)
		t = $NF; sub("\\)$", "", t); t = $(NF - 1)
		printf "%s\t%s\t-\t%s\n", "layout(s)", ldev, t
		next
	}
	/^[A-Z]+\([^)]*\) +\|/ {
		metric = $1; n = split($0, f, "|")
		for (i = 2; i <= n; i++) { d = f[i]; gsub(/ /, "", d); col[i] = d }
		nd = n; next
	}
	metric != "" && /^[a-z]+ +\|/ {
		n = split($0, f, "|"); row = f[1]; gsub(/ /, "", row)
		for (i = 2; i <= n; i++) { v = f[i]; gsub(/ /, "", v); printf "%s\t%s\t%s\t%s\n", metric, col[i], row, v }
	}
	/^$/ { metric = "" }' "$@"
}

# IOPS(K) / (CPU(%) / 100) per run and cell: thousands of I/Os per second
# of CPU the process had.  On a shared machine the process gets less than
# a core when others run; this ratio shows whether a cell's spread is the
# CPU it was given (ratio steady) or its own (ratio spread too).
per_cpu() {
	local f
	for f in "$@"; do
		cells "$f" | awk -F'\t' '
			$1 == "IOPS(K)" { iops[$2 "\t" $3] = $4; order[++n] = $2 "\t" $3 }
			$1 == "CPU(%)" { cpu[$2 "\t" $3] = $4 }
			END { for (i = 1; i <= n; i++) { k = order[i]
				if (cpu[k] > 0) printf "IOPS/CPU\t%s\t%.2f\n", k, iops[k] * 100 / cpu[k] } }'
	done
}

# per cell: median, min, max, largest deviation from the median in %
summary() {
	local cfg=$1
	if [ "$cfg" = f ]; then
		cat "$OUT"/f.*.tsv
	else
		cells "$OUT"/"$cfg".*.txt
		per_cpu "$OUT"/"$cfg".*.txt
	fi | awk -F'\t' -v bound="$BOUND" '
	# sorted numbers of the list @s into @a (mawk has no asort); their count
	function sorted(s, a,   n, i, j, x) {
		n = split(s, a, " ")
		for (i = 2; i <= n; i++) {
			x = a[i] + 0
			for (j = i - 1; j >= 1 && a[j] + 0 > x; j--) a[j + 1] = a[j]
			a[j + 1] = x
		}
		return n
	}
	function med(s,   a, n) {
		n = sorted(s, a)
		return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	{
		k = $1 "\t" $2 "\t" $3
		if (!(k in vals)) order[++nk] = k
		vals[k] = vals[k] " " $4
	}
	END {
		printf "%-10s %-6s %-10s %12s %12s %12s %8s\n", "table", "dev", "row", "median", "min", "max", "maxdev%"
		for (i = 1; i <= nk; i++) {
			k = order[i]; split(k, p, "\t")
			n = sorted(vals[k], a); m = med(vals[k]); lo = a[1]; hi = a[n]
			dev = 0
			for (j = 1; j <= n; j++) {
				d = (m != 0) ? 100 * (a[j] - m) / m : 0
				if (d < 0) d = -d
				if (d > dev) dev = d
			}
			diag = p[1] == "layout(s)" || p[1] == "IOPS/CPU"
			flag = (!diag && dev > bound) ? "  > " bound "%" : ""
			printf "%-10s %-6s %-10s %12.2f %12.2f %12.2f %8.1f%s\n", p[1], p[2], p[3], m, lo, hi, dev, flag
			if (!diag) { cellsn[p[1]]++; if (dev > bound) over[p[1]]++ }
		}
		printf "cells over %s%% of their median:", bound
		for (t in cellsn) printf " %s %d/%d;", t, over[t] + 0, cellsn[t]
		printf "\n"
		for (i = 1; i <= nk; i++) print order[i] "\t" med(vals[order[i]]) > "/dev/stderr"
	}' 2>"$TMP/med.$cfg"
}

echo
echo "== A =="
summary a
if [ $FIO = 1 ] || ls "$OUT"/f.*.tsv >/dev/null 2>&1; then
	echo
	echo "== fio, the same cells (the peers in the header) =="
	summary f
	echo
	echo "== IOPS(K) spread, blkstack against fio: the largest deviation from the median, % =="
	# maxdev per cell of both, from the two summaries' tables
	summary a | awk '$1 == "IOPS(K)" { print $2 "\t" $3 "\t" $7 }' >"$TMP/dev.a"
	summary f | awk '$1 == "IOPS(K)" { print $2 "\t" $3 "\t" $7 }' >"$TMP/dev.f"
	awk -F'\t' -v bound="$BOUND" 'NR == FNR { f[$1 "\t" $2] = $3; next }
		($1 "\t" $2) in f { printf "%-6s %-10s blkstack %6.1f  fio %6.1f%s\n", $1, $2, $3, f[$1 "\t" $2],
			($3 > bound && f[$1 "\t" $2] > bound) ? "  (both over " bound " %)" : ($3 > bound ? "  (blkstack only)" : "") }' \
		"$TMP/dev.f" "$TMP/dev.a"
fi
if [ $vs = 1 ]; then
	echo
	echo "== B =="
	summary b
	echo
	echo "== B/A, ratio of the medians =="
	awk -F'\t' 'NR == FNR { a[$1 "\t" $2 "\t" $3] = $4; next }
		{ k = $1 "\t" $2 "\t" $3; printf "%-10s %-6s %-10s %8.3f\n", $1, $2, $3, (a[k] != 0) ? $4 / a[k] : 0 }' \
		"$TMP/med.a" "$TMP/med.b"
fi
bench_machine_end
