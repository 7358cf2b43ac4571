#!/usr/bin/env bash
# fio's CPU and memory placement (cpus_allowed, cpumask,
# cpus_allowed_policy, numa_cpu_nodes, numa_mem_policy), seen from outside
# in each job thread's Cpus_allowed_list; rate_min and rate_iops_min
# failing the job where fio's fail it; a thinktime longer than blkstack's
# wait slice held in full, as fio holds it.
source "$(dirname "$0")/lib.sh" "$@"

ncpu=$(getconf _NPROCESSORS_CONF)
last=$((ncpu - 1))

# the job threads' CPU lists while the run lasts: "name list" a line, the
# main thread's (every CPU it may use) first
affinity() {
	local pid
	"$BLKSTACK" bench --dev=null "$@" >"$TMP/aff.out" 2>&1 &
	pid=$!
	sleep 0.7
	for t in /proc/"$pid"/task/*; do
		sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$t/status"
	done
	wait $pid
}

all=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
lists=$(affinity --name=x --rw=randread --size=16m --time_based --runtime=1 \
	--numjobs=2 --cpus_allowed=0-$last --cpus_allowed_policy=split | sort | tr '\n' ' ')
if [ "$ncpu" -ge 2 ]; then
	check "cpus_allowed=0-$last split: the two threads on CPU 0 and CPU 1, alone (lists: $lists)" \
		bash -c '[[ " $1" == *" 0 "* && " $1" == *" 1 "* ]]' _ "$lists"
fi
lists=$(affinity --name=x --rw=randread --size=16m --time_based --runtime=1 \
	--numjobs=2 --cpumask=1 | sort | tr '\n' ' ')
check "cpumask=1 (shared): both threads on CPU 0 alone, the main thread on $all (lists: $lists)" \
	test "$(tr ' ' '\n' <<<"$lists" | grep -cx 0)" -ge 2
lists=$(affinity --name=x --rw=randread --size=16m --time_based --runtime=1 \
	--numa_cpu_nodes=0 --numa_mem_policy=bind:0 | sort -u | tr '\n' ' ')
node0=$(cat /sys/devices/system/node/node0/cpulist 2>/dev/null || echo "0-$last")
check "numa_cpu_nodes=0: the thread on node 0's CPUs $node0 (lists: $lists)" \
	bash -c '[[ " $1" == *" $2 "* ]]' _ "$lists" "$node0"
check "numa_mem_policy=bind:0: the run succeeds (set_mempolicy and mbind on node 0)" \
	grep -q "err= 0" "$TMP/aff.out"

expect_error "cpus_allowed past the last CPU: named, with the largest" "cpus_allowed=$ncpu: CPU $ncpu too large \\(max=$last\\)" \
	bench --parse-only --cpus_allowed="$ncpu"
expect_error "cpus_allowed=a: not a list" "cpus_allowed=a: not a list of CPUs" bench --parse-only --cpus_allowed=a
expect_error "cpus_allowed=3-1: a range backwards" "the range 3-1 ends before it starts" bench --parse-only --cpus_allowed=3-1
expect_error "numa_cpu_nodes: a node that is not online, and the online ones" "numa_cpu_nodes=63: node 63 is not online \\(online: " \
	bench --parse-only --numa_cpu_nodes=63
expect_error "numa_mem_policy=prefer without its node (fio's rule)" "prefer needs one node" bench --parse-only --numa_mem_policy=prefer
expect_error "numa_mem_policy=local:0 (fio's rule: no list)" "local takes no node list" bench --parse-only --numa_mem_policy=local:0
expect_error "cpus_allowed_policy=other: the choices" "allowed shared\\|split" bench --parse-only --cpus_allowed_policy=other

# rate_iops_min: a 10 ms thinktime holds the job near 100 IOPS; fio and
# blkstack both end it with EIO at the second check (3 s: 2 s to settle,
# then one rate_cycle), and both report about 100 IOPS
if command -v fio >/dev/null; then
	run_min() {
		"$@" --name=x --rw=read --size=1g --time_based --runtime=5 --thinktime=10ms \
			--rate_iops_min=200 --output-format=json 2>/dev/null |
			sed -n '/^{/,$p' | jq -r '"\(.jobs[0].error) \(.jobs[0].read.total_ios) \(.jobs[0].read.runtime)"'
	}
	read -r be bios brt < <(run_min "$BLKSTACK" bench --dev=null)
	read -r fe fios frt < <(run_min fio --ioengine=null)
	check "rate_iops_min=200 at ~100 IOPS: error $be (EIO 5) after $brt ms, as fio's $fe after $frt ms" \
		test "$be" = 5 -a "$fe" = 5 -a "$brt" -ge 2900 -a "$brt" -le 3300
	check "rate_iops_min: $bios I/Os by then, fio $fios (within 15 %)" \
		awk -v a="$bios" -v b="$fios" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b * 0.15) }'
	# rate_min held: no error while the rate is met
	read -r be bios brt < <("$BLKSTACK" bench --dev=null --name=x --rw=read --size=1g --time_based --runtime=4 \
		--rate=1m --rate_min=900k --output-format=json | jq -r '"\(.jobs[0].error) \(.jobs[0].read.total_ios) \(.jobs[0].read.runtime)"')
	check "rate=1m with rate_min=900k: met, no error ($be), the whole 4 s ($brt ms)" test "$be" = 0 -a "$brt" -ge 3990

	# thinktime=10ms (longer than blkstack's 2 ms wait slice): about 100
	# I/Os a second, as fio's
	b=$("$BLKSTACK" bench --dev=null --name=x --rw=read --size=16m --time_based --runtime=1 \
		--thinktime=10ms --output-format=json | jq '.jobs[0].read.total_ios')
	f=$(fio --ioengine=null --name=x --rw=read --size=16m --time_based --runtime=1 \
		--thinktime=10ms --output-format=json 2>/dev/null | jq '.jobs[0].read.total_ios')
	check "thinktime=10ms: $b I/Os in 1 s, at most 100 and at least 70 (fio: $f)" test "$b" -le 100 -a "$b" -ge 70
fi
expect_error "rate_min above rate: refused, as by fio" "rate_min=2097152 is above rate=1048576" \
	bench --parse-only --rate=1m --rate_min=2m
expect_error "rate_min and rate_iops_min together: refused, as by fio" "rate_min= and rate_iops_min= are mutually exclusive" \
	bench --parse-only --rate_min=1m --rate_iops_min=100
finish
