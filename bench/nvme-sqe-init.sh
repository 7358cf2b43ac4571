#!/usr/bin/env bash
# Seed 002's experiment: fill each NVMe SQE with memset + the used fields,
# or store every field once in ascending order.  Same run, alternating
# rounds, medians: IOPS with the controller on its own thread (the SQE line
# crosses cores, as it does to a device) and inline, then instructions per
# I/O under callgrind (inline controller: deterministic), whole process and
# nvme_queue_rq alone, and the ratios fields / memset.
#
# usage: bench/nvme-sqe-init.sh [runtime_s=3] [rounds=5]
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

WL="--dev=nvme --nvme-ns=null --rw=randread --bs=4k --iodepth=32 --numjobs=1 --size=1G --gtod_reduce=1 --iostats=0"

iops() {
	# shellcheck disable=SC2086
	bench_cmd timeout -k 10 $((RUNTIME + 60)) "$BLKSTACK" bench $WL --runtime="$RUNTIME" --time_based \
		--output-format=json "$@" | jq '.jobs[0].read.iops'
}

echo "workload: $WL"
echo "rounds: $ROUNDS, alternating memset and fields"
for _ in $(seq "$ROUNDS"); do
	for ctrl in thread inline; do
		iops --nvme-ctrl=$ctrl --nvme-sqe-init=memset >>"$TMP/m_$ctrl"
		iops --nvme-ctrl=$ctrl --nvme-sqe-init=fields >>"$TMP/f_$ctrl"
	done
done
printf '\n%-34s %14s %14s %8s\n' "median IOPS" "memset" "fields" "f/m"
for ctrl in thread inline; do
	M=$(median <"$TMP/m_$ctrl")
	F=$(median <"$TMP/f_$ctrl")
	printf '%-34s %14.0f %14.0f %7.3fx\n' "nvme_ctrl=$ctrl" "$M" "$F" "$(calc "$F / $M")"
	printf '%-34s %14.2f %14.2f\n' "  ns per I/O" "$(calc "1e9 / $M")" "$(calc "1e9 / $F")"
done

command -v valgrind >/dev/null || { echo "valgrind is not installed: scripts/install-deps.sh" >&2; exit 1; }
# incl FUNC FILE: inclusive Ir of all calls to FUNC (see null-vs-fio.sh)
incl() {
	(cd / && callgrind_annotate --threshold=100 --inclusive=yes --tree=calling "$2" 2>/dev/null) |
		awk -v f=":$1 [(]" '$0 ~ "=>" && $0 ~ f {gsub(",", "", $1); s += $1} END{print s + 0}'
}
cg() {
	local out=$TMP/cg.$1
	# shellcheck disable=SC2086
	bench_cmd valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file="$out" "$BLKSTACK" bench $WL \
		--nvme-ctrl=inline --nvme-sqe-init="$1" --size=256M --output-format=json \
		>"$TMP/cg.json" 2>/dev/null
	local ios total qrq
	ios=$(jq '.jobs[0].read.total_ios' "$TMP/cg.json")
	total=$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
	qrq=$(incl nvme_queue_rq "$out")
	echo "$(calc "$total / $ios") $(calc "$qrq / $ios")"
}
read -r MT MQ <<<"$(cg memset)"
read -r FT FQ <<<"$(cg fields)"
printf '\n%-34s %14s %14s %8s\n' "instructions per I/O (callgrind)" "memset" "fields" "f/m"
printf '%-34s %14.1f %14.1f %7.3fx\n' "process (inline ctrl, ns=null)" "$MT" "$FT" "$(calc "$FT / $MT")"
printf '%-34s %14.1f %14.1f %7.3fx\n' "nvme_queue_rq" "$MQ" "$FQ" "$(calc "$FQ / $MQ")"
bench_machine_end
