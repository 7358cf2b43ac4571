#!/usr/bin/env bash
# What the NVMe path adds per 4 KiB I/O (randread, QD32, one job), same run,
# alternating rounds, medians:
#   nvme (inline controller, namespace on ram)  against  --dev=null
#   nvme (inline controller, --nvme-ns=null)    against  --dev=null   (protocol only)
#   nvme (inline controller, namespace on ram)  against  --dev=ram    (same data copy)
# in ns per I/O (1e9 / IOPS) and in instructions per I/O under callgrind,
# with the instructions split into host driver (queue_rq + commit_rqs +
# poll, less the controller calls), controller (nvme_ctrl_write32, less the
# namespace device's block core and driver) and namespace device.
# Goal: under 150 ns added per 4k I/O (nvme on ram against null).
#
# usage: bench/nvme-overhead.sh [runtime_s=3] [rounds=5]
# env:   BLKSTACK=path/to/blkstack (default build/blkstack)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
RUNTIME=${1:-3}
ROUNDS=${2:-5}
BLKSTACK=${BLKSTACK:-build/blkstack}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
command -v jq >/dev/null || { echo "jq is not installed: scripts/install-deps.sh" >&2; exit 1; }
[ -x "$BLKSTACK" ] || make build >/dev/null
bench_machine_start valgrind

WL="--rw=randread --bs=4k --iodepth=32 --numjobs=1 --size=1G --gtod_reduce=1 --iostats=0"
declare -A ARGS=(
	[null]="--dev=null"
	[ram]="--dev=ram"
	[nvme_null]="--dev=nvme --nvme-ctrl=inline --nvme-ns=null"
	[nvme_ram]="--dev=nvme --nvme-ctrl=inline --nvme-ns=ram"
)
ORDER="null nvme_ram ram nvme_null"

iops() {
	# shellcheck disable=SC2086
	bench_cmd timeout -k 10 $((RUNTIME + 60)) "$BLKSTACK" bench ${ARGS[$1]} $WL --runtime="$RUNTIME" \
		--time_based --output-format=json | jq '.jobs[0].read.iops'
}

echo "workload: $WL"
echo "rounds: $ROUNDS, alternating $ORDER"
# Both ram and nvme-on-ram start empty in every run and read the same
# never-written blocks, so they do the same data work.
for _ in $(seq "$ROUNDS"); do
	for d in $ORDER; do
		iops "$d" >>"$TMP/$d"
	done
done
declare -A NS
printf '\n%-40s %12s %10s\n' "median" "IOPS" "ns/IO"
for d in $ORDER; do
	M=$(median <"$TMP/$d")
	NS[$d]=$(calc "1e9 / $M")
	printf '%-40s %12.0f %10.1f\n' "$d (${ARGS[$d]})" "$M" "${NS[$d]}"
done
printf '\n%-40s %10s\n' "added by the NVMe path" "ns/IO"
printf '%-40s %10.1f   (goal < 150)\n' "nvme on ram - null" "$(calc "${NS[nvme_ram]} - ${NS[null]}")"
printf '%-40s %10.1f\n' "nvme ns=null - null (protocol only)" "$(calc "${NS[nvme_null]} - ${NS[null]}")"
printf '%-40s %10.1f\n' "nvme on ram - ram" "$(calc "${NS[nvme_ram]} - ${NS[ram]}")"

command -v valgrind >/dev/null || { echo "valgrind is not installed: scripts/install-deps.sh" >&2; exit 1; }
# incl FUNC FILE: inclusive Ir of all calls to FUNC (see null-vs-fio.sh)
incl() {
	(cd / && callgrind_annotate --threshold=100 --inclusive=yes --tree=calling "$2" 2>/dev/null) |
		awk -v f=":$1 [(]" '$0 ~ "=>" && $0 ~ f {gsub(",", "", $1); s += $1} END{print s + 0}'
}
# ns_cost FILE: inclusive Ir of the block API calls (blk_submit, blk_poll,
# blk_finish_plug) made by the controller (src/devices/nvme_ctrl/): the
# namespace device's pass through the block core and its driver.
ns_cost() {
	(cd / && callgrind_annotate --threshold=100 --inclusive=yes --tree=caller "$1" 2>/dev/null) | awk '
	/^ *[0-9,]+ \([ 0-9.]+%\)  < / { x = $1; gsub(",", "", x); c[n] = x; l[n] = $0; n++; next }
	/^ *[0-9,]+ \([ 0-9.]+%\)  \* / {
		if ($0 ~ /:blk_(submit|poll|finish_plug)(\047[0-9]+)?( |$)/)
			for (i = 0; i < n; i++) if (l[i] ~ /nvme_ctrl\//) s += c[i]
		n = 0; next }
	/^$/ { n = 0 }
	END { print s + 0 }'
}
declare -A IT IH IC IB
for d in $ORDER; do
	out=$TMP/cg.$d
	# shellcheck disable=SC2086
	bench_cmd valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file="$out" "$BLKSTACK" bench ${ARGS[$d]} $WL \
		--size=256M --output-format=json >"$TMP/cg.json" 2>/dev/null
	ios=$(jq '.jobs[0].read.total_ios' "$TMP/cg.json")
	total=$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
	IT[$d]=$(calc "$total / $ios")
	if [[ $d == nvme_* ]]; then
		host=$(( $(incl nvme_queue_rq "$out") + $(incl nvme_commit_rqs "$out") + $(incl nvme_poll "$out") ))
		ctrl=$(incl nvme_ctrl_write32 "$out")
		nsdev=$(ns_cost "$out")
		IH[$d]=$(calc "($host - $ctrl) / $ios")
		IC[$d]=$(calc "($ctrl - $nsdev) / $ios")
		IB[$d]=$(calc "$nsdev / $ios")
		[ -n "${KEEP_CG:-}" ] && cp "$out" "$KEEP_CG.$d"
	fi
done
printf '\n%-40s %10s\n' "instructions per I/O (callgrind)" "process"
for d in $ORDER; do
	printf '%-40s %10.1f\n' "$d" "${IT[$d]}"
done
printf '%-40s %10.1f\n' "added: nvme on ram - null" "$(calc "${IT[nvme_ram]} - ${IT[null]}")"
printf '%-40s %10.1f\n' "added: nvme ns=null - null" "$(calc "${IT[nvme_null]} - ${IT[null]}")"
printf '%-40s %10.1f\n' "added: nvme on ram - ram" "$(calc "${IT[nvme_ram]} - ${IT[ram]}")"
printf '\n%-40s %10s %10s %10s\n' "split (instructions per I/O)" "host drv" "controller" "ns device+core"
for d in nvme_null nvme_ram; do
	printf '%-40s %10.1f %10.1f %10.1f\n' "$d" "${IH[$d]}" "${IC[$d]}" "${IB[$d]}"
done
echo
echo "host drv: nvme_queue_rq + nvme_commit_rqs + nvme_poll, less nvme_ctrl_write32 (the controller runs inside doorbell writes)"
echo "controller: nvme_ctrl_write32, less the namespace device's block core and driver it calls"
echo "ns device+core: the controller's calls into the block API (blk_submit, blk_poll, blk_finish_plug): the namespace's block core and driver"
echo "KEEP_CG=/path/prefix keeps the callgrind files of the nvme runs (--dump-instr=yes: callgrind_annotate or kcachegrind per instruction)"
bench_machine_end
