#!/usr/bin/env bash
# Where the SCSI path's instructions and cache misses go, per function and
# per I/O, next to the NVMe path's: callgrind with its cache model
# (--cache-sim=yes: instructions Ir, D1 read misses D1mr, D1 write misses
# D1mw; --branch-sim=yes: conditional branches mispredicted Bcm, in the
# totals), 4 KiB randread, one job, QD32, inline, on ram, each device run
# twice (32 and 64 MiB once: 8192 and 16384 I/Os) and the difference of
# the two runs divided by the I/Os between them (the slope: start-up and
# teardown drop out).  Functions by self cost (callgrind_annotate), the
# ones with at least 1 Ir or 0.05 misses per I/O in some device; then
# the totals per I/O and what scsi and nvme add over ram.
# Deterministic (instructions exactly; the cache model is a simulation of
# the host's D1, not a measurement), so one run each is enough.
#
# usage: bench/scsi-profile.sh [dev...]   (default: ram scsi_ram nvme_ram)
# env:   BLKSTACK=path/to/blkstack (default build/blkstack)
#        KEEP=dir: keep the callgrind files there
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
BLKSTACK=${BLKSTACK:-build/blkstack}
DEVS=("$@")
[ ${#DEVS[@]} -gt 0 ] || DEVS=(ram scsi_ram nvme_ram)
TMP=${KEEP:-$(mktemp -d)}
mkdir -p "$TMP"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$TMP"' EXIT
command -v valgrind >/dev/null || { echo "valgrind is not installed: scripts/install-deps.sh" >&2; exit 1; }
command -v jq >/dev/null || { echo "jq is not installed: scripts/install-deps.sh" >&2; exit 1; }
[ -x "$BLKSTACK" ] || make build >/dev/null
bench_machine_start valgrind

WL="--rw=randread --bs=4k --numjobs=1 --gtod_reduce=1 --iostats=0 --iodepth=32"
declare -A ARGS=(
	[null]="--dev=null"
	[ram]="--dev=ram"
	[scsi_ram]="--dev=scsi --lower=ram"
	[nvme_ram]="--dev=nvme --nvme-ctrl=inline --lower=ram"
	[scsi_null]="--dev=scsi --lower=null"
	[nvme_null]="--dev=nvme --nvme-ctrl=inline --lower=null"
)

# self cost per function: "Ir D1mr D1mw file:function" (the file's base
# name; a function's recursion levels, '2, summed)
selfcost() {
	callgrind_annotate --auto=no --show=Ir,D1mr,D1mw --threshold=100 "$1" 2>/dev/null |
		awk '/file:function/ { on = 1; next }
		     on && NF >= 4 && $1 ~ /^[0-9,]+$/ {
			n = 0; v[0] = v[1] = v[2] = 0; f = ""
			for (i = 1; i <= NF && n < 3; i++) {
				if ($i ~ /^\(/) continue       # (pct%)
				if ($i ~ /^[0-9,.]+$/) { g = $i; gsub(",", "", g); v[n++] = g; continue }
				if ($i == "%)") continue
			}
			f = $NF; if (f ~ /^\[/) f = $(NF - 1)
			sub(/^.*\//, "", f); sub(/\x27[0-9]+$/, "", f)
			ir[f] += v[0]; mr[f] += v[1]; mw[f] += v[2]
		     }
		     END { for (f in ir) print ir[f], mr[f], mw[f], f }'
}
total() {
	callgrind_annotate --auto=no --show=Ir,D1mr,D1mw,Bcm "$1" 2>/dev/null |
		awk '/PROGRAM TOTALS/ { n = 0; for (i = 1; i <= NF; i++) if ($i ~ /^[0-9,]+$/) { g = $i; gsub(",", "", g); v[n++] = g }
					print v[0], v[1], v[2], v[3] }'
}

for d in "${DEVS[@]}"; do
	for mb in 32 64; do
		out=$TMP/cg.$d.$mb
		# shellcheck disable=SC2086
		bench_cmd valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes --callgrind-out-file="$out" \
			"$BLKSTACK" bench ${ARGS[$d]} $WL --size=${mb}M --output-format=json \
			>"$TMP/$d.$mb.json" 2>/dev/null
		jq '.jobs[0].read.total_ios' "$TMP/$d.$mb.json" >"$TMP/$d.$mb.ios"
		selfcost "$out" >"$TMP/$d.$mb.self"
		total "$out" >"$TMP/$d.$mb.total"
	done
	IOS=$(( $(cat "$TMP/$d.64.ios") - $(cat "$TMP/$d.32.ios") ))
	# per function: (64 MiB run - 32 MiB run) / I/Os between them
	awk -v ios="$IOS" -v d="$d" 'FNR == NR { a[$4] = $1; b[$4] = $2; c[$4] = $3; next }
		{ print d, $4, ($1 - a[$4]) / ios, ($2 - b[$4]) / ios, ($3 - c[$4]) / ios; seen[$4] = 1 }
		END { for (f in a) if (!(f in seen)) print d, f, -a[f] / ios, -b[f] / ios, -c[f] / ios }' \
		"$TMP/$d.32.self" "$TMP/$d.64.self" >"$TMP/$d.slope"
	paste "$TMP/$d.32.total" "$TMP/$d.64.total" |
		awk -v ios="$IOS" -v d="$d" '{ print d, ($5 - $1) / ios, ($6 - $2) / ios, ($7 - $3) / ios, ($8 - $4) / ios }' >"$TMP/$d.tot"
done

printf '\nper function, per I/O (slope between 32 and 64 MiB; self cost): Ir D1mr D1mw\n'
printf '%-44s' "function"
for d in "${DEVS[@]}"; do printf ' %26s' "$d"; done
printf '\n'
for d in "${DEVS[@]}"; do cat "$TMP/$d.slope"; done |
	awk -v devs="${DEVS[*]}" '
	{ ir[$2, $1] = $3; mr[$2, $1] = $4; mw[$2, $1] = $5; fn[$2] = 1
	  if ($3 >= 1 || $4 >= 0.05 || $5 >= 0.05 || $3 <= -1) keep[$2] = 1
	  w = $3 > w_[$2] ? $3 : w_[$2]; w_[$2] = w }
	END {
		n = split(devs, D, " ")
		for (f in keep) {
			line = sprintf("%-44s", substr(f, 1, 44))
			for (i = 1; i <= n; i++)
				line = line sprintf(" %10.1f %7.2f %7.2f", ir[f, D[i]], mr[f, D[i]], mw[f, D[i]])
			print w_[f], line
		}
	}' | sort -k1,1gr | cut -d' ' -f2-
printf '\n%-44s %10s %7s %7s %7s\n' "per I/O" Ir D1mr D1mw Bcm
for d in "${DEVS[@]}"; do
	read -r _ a b c e <"$TMP/$d.tot"
	printf '%-44s %10.1f %7.2f %7.2f %7.2f\n' "total: $d" "$a" "$b" "$c" "$e"
done
if [ -f "$TMP/ram.tot" ]; then
	read -r _ r0 r1 r2 r3 <"$TMP/ram.tot"
	for d in "${DEVS[@]}"; do
		[ "$d" = ram ] && continue
		case $d in *_ram) ;; *) continue ;; esac
		read -r _ a b c e <"$TMP/$d.tot"
		printf '%-44s %10.1f %7.2f %7.2f %7.2f\n' "added: $d - ram" "$(calc "$a - $r0")" \
			"$(calc "$b - $r1")" "$(calc "$c - $r2")" "$(calc "$e - $r3")"
	done
fi
bench_machine_end
