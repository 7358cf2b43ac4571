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
# usage: bench/matrix-stability.sh [-n RUNS] [BENCH-ARGS...] [--vs B-ARGS...]
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
trap 'rm -rf "$TMP"' EXIT
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

bench_machine_start
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

for i in $(seq "$RUNS"); do
	[ -n "${REUSE:-}" ] && break
	run a "$BLKSTACK" "${A[@]+"${A[@]}"}"
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
	{ cells "$OUT"/"$cfg".*.txt; per_cpu "$OUT"/"$cfg".*.txt; } | awk -F'\t' -v bound="$BOUND" '
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
