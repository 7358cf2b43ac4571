#!/usr/bin/env bash
# fio's workload options with fio's meaning, each measured against fio
# itself: number_ios with loops, rate and rate_iops on the null engine
# (the rate held within 2 %), thinktime, startdelay, new_group's reporting
# groups, and rw=<pattern>:N offset modifiers compared block by block on
# files written by fio and by blkstack.
source "$(dirname "$0")/lib.sh" "$@"

if ! command -v fio >/dev/null; then
	fail "fio is not installed (scripts/install-deps.sh installs it)"
	finish
	exit
fi

# total I/Os of job 0, blkstack on dev=null and fio on its null engine
ios_blk() { "$BLKSTACK" bench --dev=null --name=x "$@" --output-format=json | jq '[.jobs[0].read.total_ios, .jobs[0].write.total_ios] | add'; }
ios_fio() { fio --ioengine=null --name=x "$@" --output-format=json 2>/dev/null | jq '[.jobs[0].read.total_ios, .jobs[0].write.total_ios] | add'; }

# number_ios: per loop, never more than the region; no effect when time_based
for args in "--number_ios=100 --loops=3" "--number_ios=1000 --loops=3" "--number_ios=10"; do
	# shellcheck disable=SC2086
	b=$(ios_blk --rw=read --size=1m $args) f=$(ios_fio --rw=read --size=1m $args)
	check "number_ios ($args): $b I/Os as fio's $f" test "$b" = "$f"
done
b=$(ios_blk --rw=read --size=1m --number_ios=10 --time_based --runtime=100ms)
check "number_ios with time_based: no effect, as in fio ($b I/Os)" test "$b" -gt 1000

# rate and rate_iops over one second, within 2 % of the target and of fio
within() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= b * p / 100) }'; }
for args in "--rate_iops=2000" "--rate=8m" "--rate_iops=500 --iodepth=8"; do
	# shellcheck disable=SC2086
	b=$(ios_blk --rw=randread --size=16m --runtime=1 --time_based $args)
	# shellcheck disable=SC2086
	f=$(ios_fio --rw=randread --size=16m --runtime=1 --time_based $args)
	case $args in
	--rate_iops=2000) want=2000 ;;
	--rate=8m) want=2048 ;;
	*) want=500 ;;
	esac
	check "rate ($args): $b I/Os in 1 s, target $want" within "$b" "$want" 2
	check "rate ($args): as fio's $f" within "$b" "$f" 2
done
# with several block sizes fio takes rate_iops as a bandwidth: that many
# blocks of the smallest size per second
bw() { jq '.jobs[0].read.io_bytes'; }
b=$("$BLKSTACK" bench --dev=null --name=x --rw=randread --size=64m --runtime=1 --time_based \
	--bssplit=4k/50:64k/50 --rate_iops=2000 --output-format=json | bw)
f=$(fio --ioengine=null --name=x --rw=randread --size=64m --runtime=1 --time_based \
	--bssplit=4k/50:64k/50 --rate_iops=2000 --output-format=json 2>/dev/null | bw)
check "rate_iops with bssplit: $b bytes in 1 s, 2000 x 4 KiB" within "$b" 8192000 2
check "rate_iops with bssplit: as fio's $f" within "$b" "$f" 2
expect_error "rate= and rate_iops= together: refused, as by fio" "rate= and rate_iops= are mutually exclusive" \
	bench --parse-only --rate=4m --rate_iops=3000
# rate= per direction, as fio's rate_ddir(): one value caps reads and
# writes each, so randrw does twice the rate in all; a direction ahead of
# its rate gives way to the other; "R," caps reads only, ",W" writes
rw_ios() { jq -r '"\(.jobs[0].read.total_ios) \(.jobs[0].write.total_ios)"'; }
both_within() { within "$1" "$2" "$4" && within "$1" "$3" "$4"; } # got want fio pct
for args in "--rate_iops=1000" "--rate=4m --rwmixread=70" "--rate_iops=1000,200" "--rate_iops=,500"; do
	# shellcheck disable=SC2086
	read -r br bw < <("$BLKSTACK" bench --dev=null --name=x --rw=randrw --size=16m --runtime=1 \
		--time_based $args --output-format=json | rw_ios)
	# shellcheck disable=SC2086
	read -r fr fw < <(fio --ioengine=null --name=x --rw=randrw --size=16m --runtime=1 \
		--time_based $args --output-format=json 2>/dev/null | rw_ios)
	case $args in
	--rate_iops=1000) wr=1000 ww=1000 tol=2 ;;
	--rate=4m*) wr=1024 ww=1024 tol=2 ;;
	--rate_iops=1000,200) wr=1000 ww=200 tol=2 ;;
	# reads take every CPU cycle left; in one full-suite run (ctest -j2 with
	# a third busy process) writes were 484 (3.2 % short: a stall at the
	# runtime's end is not made up), 500 quiet and under 3 busy loops
	*) wr='' ww=500 tol=5 ;;
	esac
	check "rate per direction ($args): writes $bw in 1 s, target $ww, fio $fw" \
		both_within "$bw" "$ww" "$fw" "$tol"
	if [ -n "$wr" ]; then
		check "rate per direction ($args): reads $br in 1 s, target $wr, fio $fr" \
			both_within "$br" "$wr" "$fr" 2
	else
		check "rate per direction ($args): reads uncapped, $br in 1 s (fio $fr)" test "$br" -gt 100000
	fi
done
# rate_process=poisson: the same mean rate, the gaps exponential: of the
# milliseconds of the run, about 1 - 1/e (63 %) see an I/O, as in fio's,
# where the linear process fills nearly every one
poisson() { # who process: "I/Os share-of-ms-with-an-I/O" from the latency log
	local who=$1 p=$2
	rm -f "$TMP/p$who"_clat.1.log
	printf '[j]\nrw=randread\nsize=16m\ntime_based\nruntime=2\nrate_iops=1000\nrate_process=%s\nwrite_lat_log=%s\n' \
		"$p" "$TMP/p$who" >"$TMP/p$who.fio"
	if [ "$who" = fio ]; then
		sed -i 1a'ioengine=null' "$TMP/p$who.fio"
		fio "$TMP/p$who.fio" >/dev/null 2>&1
	else
		"$BLKSTACK" bench --dev=null "$TMP/p$who.fio" >/dev/null 2>&1
	fi
	awk -F, '{ n++; t[$1 + 0]++; if ($1 + 0 > max) max = $1 + 0 } END { for (k in t) d++; printf "%d %.2f\n", n, d / max }' "$TMP/p$who"_clat.1.log
}
read -r bn bs < <(poisson blk poisson)
read -r fn fs < <(poisson fio poisson)
read -r _ ls < <(poisson blk linear)
check "rate_process=poisson: $bn I/Os in 2 s (fio $fn), within 8 % of 2000" within "$bn" 2000 8
# fio's share is printed beside, not asserted: under load (5 and more on
# 2 vCPUs) its sleeps overshoot and its share fell to 0.38-0.52 while
# blkstack's stayed at 0.59-0.60.  The linear process fills 0.9 and more
# of the ms on a quiet machine; under the suite's load a late wake-up
# makes up its I/Os back to back and the share falls: 0.83 (ASan), 0.74,
# once 0.57 (normal build, poisson 0.60 beside it).  The poisson share
# fell to 0.53 (TSan) and 0.51.  So: poisson at least 0.45 and at most
# 0.71, linear at least 0.65 and 0.1 above it, in one of up to three
# attempts (a pair taken again only when the load spoiled the last one;
# every attempt is printed)
pshare_ok() { awk -v b="$1" -v l="$2" 'BEGIN { exit !(b >= 0.45 && b <= 0.71 && l >= 0.65 && l >= b + 0.1) }'; }
tries="$bs/$ls"
for attempt in 2 3; do
	pshare_ok "$bs" "$ls" && break
	read -r _ bs < <(poisson blk poisson)
	read -r _ ls < <(poisson blk linear)
	tries+=" $bs/$ls"
done
check "rate_process=poisson: $bs of the ms see an I/O (fio $fs, 1 - 1/e = 0.63; linear $ls; poisson/linear by attempt: $tries)" \
	pshare_ok "$bs" "$ls"

# thinktime: 1 ms after each I/O (or each 4 at depth 8), so at most 1000
# (4000) I/Os in the second, as fio; and no fewer than 70 % of fio's count
# or of that bound, whichever is lower (sleeps overshoot by tens of
# microseconds, more on a loaded machine, where fio's own count fell to
# 1516 of 4000 once while blkstack's was 3284: a two-sided check against
# fio alone failed on fio's slowness)
for t in "--thinktime=1ms:1000" "--thinktime=1000 --thinktime_blocks=4 --iodepth=8:4000"; do
	args=${t%:*} max=${t##*:}
	# shellcheck disable=SC2086
	b=$(ios_blk --rw=randread --size=16m --runtime=1 --time_based $args)
	# shellcheck disable=SC2086
	f=$(ios_fio --rw=randread --size=16m --runtime=1 --time_based $args)
	# under a sanitizer 60 %: TSan's blkstack did 674 against fio's 989
	# in one CI run under the suite's load
	pct=70
	[ "$(sanitizer)" = none ] || pct=60
	low=$(( (f < max ? f : max) * pct / 100 ))
	check "thinktime ($args): $b I/Os, at most $max + 2 % (the stalls' bound) and at least $low (fio: $f)" \
		test "$b" -le $((max * 102 / 100)) -a "$b" -ge "$low"
done
# thinktime_spin: half the stall spun (fio 3.33's null engine hangs with
# it, so no fio figure): at most one I/O per 1 ms stall, and not stuck
b=$(ios_blk --rw=randread --size=16m --runtime=1 --time_based --thinktime=1ms --thinktime_spin=500us)
# the bound is the upper one; the lower only says the job was not stuck
# (a CI run under the full suite's load gave 183: sleeps overshot)
check "thinktime_spin: $b I/Os in 1 s, at most one per 1 ms stall" test "$b" -le 1000 -a "$b" -ge 100
"$BLKSTACK" bench --dev=null --name=x --rw=randread --size=16m --runtime=1 --time_based \
	--thinktime=1ms --thinktime_spin=500us --output-format=json >"$TMP/spin.json"
check "thinktime_spin: the spin shows as CPU time (usr_cpu over 10 %: about 50 % spun; under load 16 to 35 % was seen, a sleep alone shows 1 to 2 %)" jq -e '.jobs[0].usr_cpu > 10' "$TMP/spin.json"

# startdelay: the job starts late, its runtime counts from then
start=$(date +%s%N)
"$BLKSTACK" bench --dev=null --rw=read --size=1m --startdelay=1 --output-format=json >"$TMP/sd.json"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "startdelay=1: the run took at least 1 s ($ms ms)" test "$ms" -ge 1000
check "startdelay=1: not counted in the job's runtime" jq -e '.jobs[0].job_runtime < 500' "$TMP/sd.json"
start=$(date +%s%N)
"$BLKSTACK" bench --dev=null --rw=read --size=1m --startdelay=200ms-400ms --numjobs=2 >/dev/null
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "startdelay=200ms-400ms: a delay in the range ($ms ms)" test "$ms" -ge 200 -a "$ms" -lt 2000
expect_error "startdelay=5-2: a range backwards" "startdelay=5-2: the range's end is before its start" \
	bench --parse-only --startdelay=5-2

# bssplit and bsrange: the I/O count for the same bytes, random (with fio's
# random map cutting I/Os at used blocks) and sequential, within 5 % of fio
io_pair() { jq -c '[.jobs[0].read.total_ios, .jobs[0].read.io_bytes]'; }
for args in "--bssplit=4k/50:64k/50" "--bsrange=4k-64k" "--bssplit=4k/20:8k:16k" "--bssplit=4k/50:64k/50 --norandommap"; do
	for rw in randread read; do
		# shellcheck disable=SC2086
		b=$("$BLKSTACK" bench --dev=null --name=x --rw=$rw --size=64m $args --output-format=json | io_pair)
		# shellcheck disable=SC2086
		f=$(fio --ioengine=null --name=x --rw=$rw --size=64m $args --output-format=json 2>/dev/null | io_pair)
		check "$args $rw: [I/Os, bytes] $b, fio $f" \
			within "$(jq '.[0]' <<<"$b")" "$(jq '.[0]' <<<"$f")" 5
		check "$args $rw: 64 MiB moved, the last I/O cut to fit" test "$(jq '.[1]' <<<"$b")" = 67108864
	done
done
expect_error "bssplit shares past 100" "bssplit=4k/70:8k/40: the shares add up to 110%, more than 100%" \
	bench --parse-only --bssplit=4k/70:8k/40
expect_error "bssplit=r,w: a share past 100 in the write list named" "bssplit=4k/100,8k/101: the write value 8k/101: share .101.: a whole percentage 0..100" \
	bench --parse-only --bssplit=4k/100,8k/101
# per-direction values: the error names the list as given and the part
expect_error "bs=4k,3000: the write part named" "^blkstack bench: bs=4k,3000: the write value 3000: not a multiple of 512$" \
	bench --parse-only --rw=randrw --bs=4k,3000
expect_error "bs=4k,,3000: the trim part named" "bs=4k,,3000: the trim value 3000: not a multiple of 512" \
	bench --parse-only --rw=randrw --bs=4k,,3000
expect_error "rate_iops=10,20,xx: the trim part named" "rate_iops=10,20,xx: the trim value xx: not a size" \
	bench --parse-only --rw=randrw --rate_iops=10,20,xx
expect_error "bsrange=4k-8k,1k-3000: the write part named" "bsrange=4k-8k,1k-3000: the write value 1k-3000: block size .3000." \
	bench --parse-only --rw=randrw --bsrange=4k-8k,1k-3000
expect_error "bsrange with verify: refused" "verify= with bssplit= or bsrange= is not supported" \
	bench --parse-only --dev=ram --rw=write --bsrange=4k-8k --verify=crc32c

# random_distribution: how many distinct blocks 4096 random writes over a
# 16 MiB file hit, blkstack against fio.  fio's count moves with the
# file's name (its generator takes the name's hash: zipf:1.2 gave 698..774
# over eight names), so blkstack must land within 5 % of the range fio
# gives over five files of other names.
distinct() {
	python3 - "$1" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
z = bytes(4096)
print(sum(1 for i in range(len(d) // 4096) if d[i * 4096:(i + 1) * 4096] != z))
PY
}
for dist in zipf:1.2 zipf:0.8 pareto:0.9 normal:10 zoned:90/10:10/90 zoned_abs:50/1m:50/3m zipf:1.1:0.25; do
	for who in blk fio0 fio1 fio2 fio3 fio4; do
		# each in a directory of its own: fio's generator hashes the
		# whole path, so five paths show fio's own spread
		mkdir -p "$TMP/$who.d"
		rm -f "$TMP/$who.d/$who.img"
		truncate -s 16m "$TMP/$who.d/$who.img"
		printf '[j]\nrw=randwrite\nbs=4k\nsize=16m\nnumber_ios=4096\nioengine=psync\nrandom_distribution=%s\nfilename=%s\n' \
			"$dist" "$TMP/$who.d/$who.img" >"$TMP/$who.fio"
	done
	"$BLKSTACK" bench "$TMP/blk.fio" >/dev/null
	for k in 0 1 2 3 4; do
		fio "$TMP/fio$k.fio" >/dev/null 2>&1
		distinct "$TMP/fio$k.d/fio$k.img"
	done >"$TMP/fio.counts"
	b=$(distinct "$TMP/blk.d/blk.img")
	lo=$(sort -n "$TMP/fio.counts" | head -1) hi=$(sort -n "$TMP/fio.counts" | tail -1)
	# within 5 % of fio's own spread over the five names (a CI run had
	# zipf:1.1:0.25 at 948 against a median of 999: the median alone asks
	# blkstack to match one name's hash); a wrong distribution is far off
	# (uniform hits ~3600 of the 4096 blocks, zipf:1.2 ~700)
	check "random_distribution=$dist: $b distinct blocks, fio over 5 files $lo..$hi (+-5 %)" \
		test "$((b * 100))" -ge "$((lo * 95))" -a "$((b * 100))" -le "$((hi * 105))"
done
expect_error "zipf:1 refused (theta must not be 1)" "zipf's theta: a number above 0, not 1" \
	bench --parse-only --random_distribution=zipf:1
expect_error "zoned shares must add to 100" "the zones' shares add up to 90%, not 100%" \
	bench --parse-only --random_distribution=zoned:50/10:40/90
expect_error "r,w distributions refused" "separate read,write\[,trim\] distributions" \
	bench --parse-only --random_distribution=zipf:1.2,pareto:0.5

# new_group: reporting groups as fio numbers them
printf '[a]\nrw=read\nsize=1m\n[b]\nnew_group\nrw=read\nsize=1m\n[c]\nrw=read\nsize=1m\n[d]\nstonewall\nrw=read\nsize=1m\n' >"$TMP/ng.fio"
b=$("$BLKSTACK" bench --dev=null --output-format=json "$TMP/ng.fio" | jq -c '[.jobs[] | .groupid]')
f=$(fio --ioengine=null --output-format=json "$TMP/ng.fio" 2>/dev/null | jq -c '[.jobs[] | .groupid]')
check "new_group: groupids $b as fio's $f" test "$b" = "$f"

# wait_for: b starts once a has ended, c runs alongside a, as in fio; the
# waitee must be an earlier job
printf '[a]\nrw=read\nsize=1m\nruntime=300ms\ntime_based\n[b]\nwait_for=a\nrw=read\nsize=1m\nruntime=300ms\ntime_based\n[c]\nrw=read\nsize=1m\nruntime=300ms\ntime_based\n' >"$TMP/wf.fio"
start=$(date +%s%N)
"$BLKSTACK" bench --dev=null --output-format=json "$TMP/wf.fio" >"$TMP/wf.json"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "wait_for: a then b, 300 ms each: the run took 600 ms or more ($ms)" test "$ms" -ge 600
check "wait_for: each job ran its 300 ms" jq -e '[.jobs[].job_runtime >= 290] | all' "$TMP/wf.json"
check "wait_for: c ran alongside a, not after b (under 1.5 s)" test "$ms" -lt 1500
expect_error "wait_for a later job: refused as by fio" "job 'a': wait_for=b: that job comes later" \
	bench --parse-only --name=a --wait_for=b --name=b

# rw=<pattern>:N: which blocks of a 64 KiB file ten writes touch
map() {
	local i
	for i in $(seq 0 15); do
		if cmp -s -n 4096 -i $((i * 4096)):0 "$1" /dev/zero; then printf 0; else printf 1; fi
	done
}
for mod in write:4k write:-8k write:8k write:-4k; do
	for who in blk fio; do
		rm -f "$TMP/$who.img"
		truncate -s 64k "$TMP/$who.img"
		printf '[j]\nrw=%s\nbs=4k\nsize=64k\nnumber_ios=10\nioengine=psync\nfilename=%s\n' \
			"$mod" "$TMP/$who.img" >"$TMP/$who.fio"
	done
	"$BLKSTACK" bench "$TMP/blk.fio" >/dev/null
	fio "$TMP/fio.fio" >/dev/null 2>&1
	b=$(map "$TMP/blk.img") f=$(map "$TMP/fio.img")
	check "rw=$mod: blocks $b as fio's $f" test "$b" = "$f"
done
# random: runs of N blocks in order from each random offset
rm -f "$TMP/r.img"
truncate -s 1m "$TMP/r.img"
printf '[j]\nrw=randwrite:4\nbs=4k\nsize=1m\nnumber_ios=16\nfilename=%s\n' "$TMP/r.img" >"$TMP/r.fio"
"$BLKSTACK" bench "$TMP/r.fio" >/dev/null
runs=$(for i in $(seq 0 255); do
	if cmp -s -n 4096 -i $((i * 4096)):0 "$TMP/r.img" /dev/zero; then printf 0; else printf 1; fi
done | tr -s 0 '\n' | awk 'length > 0 { print length }' | sort -u | tr '\n' ' ')
check "rw=randwrite:4: the blocks written come in runs of 4 (runs: $runs)" \
	bash -c '[ -n "$1" ] && for r in $1; do [ $((r % 4)) -eq 0 ] || exit 1; done' _ "$runs"
expect_error "rw=read:3k with bs=4k: the skip must be whole blocks" "rw=read:3072: the bytes skipped must be a multiple of bs=4096" \
	bench --parse-only --rw=read:3k
expect_error "rw=randread:-2: a count" "the ':N' of a random pattern is the I/Os per random offset" \
	bench --parse-only --rw=randread:-2
# blockalign: random offsets in its units, as fio's (b * ba over fio's
# last_block()), seen in the latency log's offsets of both
ba_offsets() { # who bs-options...: "I/Os off-ba off-4k max" of the log
	local who=$1
	shift
	rm -f "$TMP/$who"_clat.1.log
	printf '[j]\nrw=randread\nsize=1m\nnumber_ios=2000\nnorandommap\nwrite_lat_log=%s\nlog_offset=1\n' "$TMP/$who" >"$TMP/$who.fio"
	printf '%s\n' "$@" >>"$TMP/$who.fio"
	if [ "$who" = fio ]; then
		sed -i 1a'ioengine=null' "$TMP/$who.fio"
		fio "$TMP/$who.fio" >/dev/null 2>&1
	else
		"$BLKSTACK" bench --dev=null "$TMP/$who.fio" >/dev/null 2>&1
	fi
	awk -F, -v ba="$BA" '{ n++; if ($5 % ba) off++; if ($5 % 4096) o4++; if ($5 + 0 > max) max = $5 + 0 }
		END { print n + 0, off + 0, o4 + 0, max + 0 }' "$TMP/$who"_clat.1.log
}
BA=512
read -r bn boff b4 bmax < <(ba_offsets blk bs=4k ba=512)
read -r fn foff f4 fmax < <(ba_offsets fio bs=4k ba=512)
check "bs=4k ba=512: every offset a multiple of 512, most not of 4k ($b4 of $bn; fio $f4 of $fn), the last at most 1m - 4k ($bmax, fio $fmax)" \
	test "$boff" = 0 -a "$foff" = 0 -a "$b4" -gt $((bn / 2)) -a "$f4" -gt $((fn / 2)) -a "$bmax" -le $((1048576 - 4096))
BA=2048
read -r bn boff b4 bmax < <(ba_offsets blk bssplit=512/50:4k/50 blockalign=2k)
read -r fn foff f4 fmax < <(ba_offsets fio bssplit=512/50:4k/50 blockalign=2k)
check "bssplit=512/50:4k/50 blockalign=2k: every offset a multiple of 2k ($boff off of $bn; fio $foff of $fn)" \
	test "$boff" = 0 -a "$foff" = 0 -a "$bn" -gt 100
"$BLKSTACK" bench --parse-only --rw=randread --bs=4k --ba=1k 2>"$TMP/ba.err" >/dev/null
check "blockalign with the random map on: a note that it turns the map off, as fio's" \
	grep -q "blockalign=1024 turns the random map off (norandommap), as fio does" "$TMP/ba.err"
expect_error "blockalign with verify: refused" "blockalign=1024 with verify=: not supported" \
	bench --parse-only --rw=randwrite --bs=4k --ba=1k --verify=crc32c
# flow: two jobs of one flow_id issue in the ratio of their weights (1:8
# as fio's flow.fio), as fio's token counts do
printf '[global]\ntime_based\nruntime=1\nsize=100m\nbs=8k\nnorandommap\n[w]\nrw=write\nflow=1\n[r]\nrw=randread\nflow=8\n' >"$TMP/flow.fio"
ratio() { jq '[.jobs[] | .read.total_ios + .write.total_ios] | .[1] / .[0]'; }
b=$("$BLKSTACK" bench --dev=null --output-format=json "$TMP/flow.fio" | ratio)
sed 's/^\[global\]/[global]\nioengine=null/' "$TMP/flow.fio" >"$TMP/flowf.fio"
f=$(fio --output-format=json "$TMP/flowf.fio" 2>/dev/null | ratio)
check "flow=1 and flow=8: I/Os in the ratio $b, 8 within 3 % (fio: $f)" within "$b" 8 3
# regression (CI, 2 vCPUs under the suite's load: 7.48): the threads
# started milliseconds apart, and the one that ended later ran outside the
# flow once the other had left it.  A flow's threads now share one clock
# (ramp included) and end together; two busy loops make the contention.
spin() { local end=$((SECONDS + 4)); while [ $SECONDS -lt $end ]; do :; done; }
spin & sp1=$!; spin & sp2=$!
b=$("$BLKSTACK" bench --dev=null --output-format=json --ramp_time=200ms "$TMP/flow.fio" | ratio)
kill "$sp1" "$sp2" 2>/dev/null; wait "$sp1" "$sp2" 2>/dev/null
check "flow_ratio_under_cpu_contention: flow=1 and flow=8 with two busy loops and ramp_time=200ms: I/Os in the ratio $b, 8 within 3 %" within "$b" 8 3
printf '[a]\nrw=read\nsize=1m\nflow=1\n[b]\nstonewall\nrw=read\nsize=1m\nflow=1\n' >"$TMP/flowsw.fio"
expect_error "a flow across a stonewall: refused (fio waits for ever)" "flow_id=0 has jobs on both sides of a stonewall" \
	bench --dev=null "$TMP/flowsw.fio"
expect_error "a flow through wait_for: refused (fio 3.33 waits for ever too)" \
	"b: wait_for=a: a is in the same flow \\(flow_id=0\\)" \
	bench --dev=null --rw=randread --size=1m --name=a --flow=1 --name=b --flow=8 --wait_for=a
expect_error "a flow through a chain of wait_for: refused" "b: wait_for=m: a is in the same flow" \
	bench --dev=null --rw=randread --size=1m --name=a --flow=1 --name=m --wait_for=a --name=b --flow=8 --wait_for=m
# regression: flow_sleep was cut to 2 ms (one job_pause()): 100 ms gave
# ~1500 I/Os a job in 1 s where fio's gave 30 (blkstack now 40-52; 86 in
# TSan under the suite's load: how far a thread gets each turn depends on
# when the other wakes)
fs=$("$BLKSTACK" bench --dev=null --rw=randread --runtime=1s --time_based --flow_sleep=100000 \
	--name=a --flow=1 --name=b --flow=1 --output-format=json | jq '[.jobs[].read.total_ios] | max')
check "flow_sleep_past_2ms: flow_sleep=100000 (100 ms) between turns: at most 300 I/Os a job in 1 s ($fs)" \
	test -n "$fs" -a "$fs" -le 300 -a "$fs" -ge 5
# io_submit_mode=offload: fio's submitting threads hold the rate whatever
# the completions do; so does blkstack's job thread.  20 ms completions
# at iodepth=32 and rate_iops=1000: 1000 a second, where waiting on each
# completion would make 50; the run ends with 20 ms of I/Os in flight
# (not counted), so 980
b=$("$BLKSTACK" bench --dev=null --irqmode=2 --completion_nsec=20ms --name=x --rw=randread \
	--size=16m --iodepth=32 --rate_iops=1000 --io_submit_mode=offload --runtime=1 --time_based \
	--output-format=json | jq '.jobs[0].read.total_ios')
check "io_submit_mode=offload: $b I/Os in 1 s with 20 ms completions, the rate's 1000 less those in flight" \
	within "$b" 980 3
# zonemode=strided: the offsets of each I/O, from the latency log with
# log_offset=1, against fio's on the same 256 KiB file: zonesize below,
# above and equal to zonerange, a wrap past the end, a zone that
# overhangs the end (the job ends there, as fio's), and random offsets
# (compared by the zone they fall in)
head -c 262144 /dev/urandom >"$TMP/zones.dat"
zoffs() { # who rw zonesize zonerange zoneskip: offsets in KiB (random: zone numbers)
	local who=$1 rw=$2 zs=$3 zr=$4 zk=$5
	local -a cmd=(fio)
	[ "$who" = blk ] && cmd=("$BLKSTACK" bench)
	rm -f "$TMP/z$who"_*
	"${cmd[@]}" --name=z --filename="$TMP/zones.dat" --rw="$rw" --bs=4k --size=256k \
		--ioengine=psync --zonemode=strided --zonesize="$zs" --zonerange="$zr" \
		--zoneskip="$zk" --write_lat_log="$TMP/z$who" --log_offset=1 \
		--output-format=json >/dev/null 2>&1
	case $rw in
	rand*) awk -F, -v z="$(( (${zr%k} + ${zk%k}) * 1024 ))" '{ printf "%d ", int($5 / z) }' "$TMP/z$who"_clat.1.log ;;
	*) awk -F, '{ printf "%d ", $5 / 1024 }' "$TMP/z$who"_clat.1.log ;;
	esac
}
for cfg in "read 16k 32k 64k" "read 48k 16k 16k" "read 32k 64k 56k" "write 8k 8k 0k" \
	   "randread 16k 32k 64k" "randwrite 48k 16k 16k"; do
	# shellcheck disable=SC2086
	b=$(zoffs blk $cfg) f=$(zoffs fio $cfg)
	check "zonemode=strided ($cfg): offsets as fio's ($(echo "$b" | wc -w) I/Os: ${b:0:40}...)" \
		test -n "$b" -a "$b" = "$f"
done
expect_error "zonemode=strided without zonesize: refused as by fio" "zonemode=strided needs zonesize=" \
	bench --parse-only --zonemode=strided
expect_error "zonemode=none with zonesize: refused as by fio" "zonemode=none and zonesize= are not compatible" \
	bench --parse-only --zonemode=none --zonesize=1m
# zonemode=zbd: fio's emulated zones (tests/func/test_jobfile_zbd.sh)
expect_error "zonemode=zbd without zonesize: refused at the run, as by fio" \
	"Specifying the zone size is mandatory for regular file/block device with --zonemode=zbd" \
	bench --dev=ram --rw=write --size=1m --zonemode=zbd
# exitall, exit_what: job a (25 I/Os at 250 a second: 0.1 s, so that b is
# running, which fio's exit_what=stonewall needs) ends; b (time_based 2 s)
# is stopped as fio stops it: exit_what=group only in a's reporting
# group, stonewall every running job, all the later stonewall groups too
# (they run no I/O)
exits() { # who args...: "name:ios:runtime_ms ..." of the jobs
	local who=$1
	shift
	local -a cmd=(fio --ioengine=null)
	[ "$who" = blk ] && cmd=("$BLKSTACK" bench --dev=null)
	"${cmd[@]}" --output-format=json --rw=read --name=a --size=100k --rate_iops=250 --exitall "$@" 2>/dev/null |
		jq -r '[.jobs[] | "\(.jobname):\(.read.total_ios):\(.read.runtime)"] | join(" ")'
}
b_runtime() { echo "$1" | tr ' ' '\n' | awk -F: '$1 == "b" { print $3 }'; }
for w in group stonewall; do
	for g in "" --new_group; do
		b=$(exits blk --exit_what=$w --name=b $g --size=1g --time_based --runtime=2)
		f=$(exits fio --exit_what=$w --name=b $g --size=1g --time_based --runtime=2)
		rb=$(b_runtime "$b") rf=$(b_runtime "$f")
		stopped() { [ "$1" -lt 1000 ]; }
		if stopped "$rf"; then want="stopped"; else want="runs its 2 s"; fi
		check "exitall exit_what=$w ${g:-same group}: b $want as in fio (b: ${rb} ms, fio: ${rf} ms)" \
			test "$(stopped "$rb" && echo y)" = "$(stopped "$rf" && echo y)"
	done
done
b=$(exits blk --exit_what=all --name=b --stonewall --size=1m --name=c --size=1m)
f=$(exits fio --exit_what=all --name=b --stonewall --size=1m --name=c --size=1m)
check "exitall exit_what=all: the later stonewall group runs no I/O ($b), as fio ($f)" \
	test "$(echo "$b" | cut -d' ' -f2-)" = "b:0:0 c:0:0" -a "$(echo "$f" | cut -d' ' -f2-)" = "b:0:0 c:0:0"
ex=/usr/share/doc/fio/examples/exitwhat.fio
[ -f "$ex" ] && check "exitwhat.fio: accepted (rate=300,300,300: the same value for each)" \
	"$BLKSTACK" bench --parse-only --dev=null "$ex" 2>/dev/null
b=$("$BLKSTACK" bench --dev=null --name=x --rw=randread --size=16m --runtime=1 --time_based \
	--rate_iops=500,500,500 --output-format=json | jq '.jobs[0].read.total_ios')
check "rate_iops=500,500,500: as rate_iops=500 ($b I/Os in 1 s)" within "$b" 500 2
# random_generator=lfsr: every block once a pass, with norandommap too
# (fio's lfsr); without it norandommap repeats blocks
distinct() { # who args...: distinct offsets of 256 random 4k reads of 1 MiB
	local who=$1
	shift
	local -a cmd=(fio --ioengine=null)
	[ "$who" = blk ] && cmd=("$BLKSTACK" bench --dev=null)
	rm -f "$TMP/r$who"_*
	"${cmd[@]}" --name=r --rw=randread --bs=4k --size=1m --norandommap \
		--write_lat_log="$TMP/r$who" --log_offset=1 "$@" >/dev/null 2>&1
	cut -d, -f5 "$TMP/r$who"_clat.1.log | sort -u | wc -l
}
b=$(distinct blk --random_generator=lfsr) f=$(distinct fio --random_generator=lfsr)
check "random_generator=lfsr with norandommap: $b distinct blocks of 256, as fio's $f" test "$b" = 256 -a "$f" = 256
b=$(distinct blk --random_generator=tausworthe)
check "random_generator=tausworthe with norandommap: repeats ($b distinct of 256)" test "$b" -lt 240
# continue_on_error: fio's error classes; every 10th request fails (EIO)
# on dev=null: a class that names reads goes on past them (fio's
# td_non_fatal_error(), whose errors fio's null engine cannot make, so no
# fio beside it), counting total_err and first_error; one that does not
# ends at the first
coe() { "$BLKSTACK" bench --dev=null --fail_every=10 --name=x --rw=randread --size=1m \
	--continue_on_error="$1" --output-format=json 2>/dev/null |
	jq -c '.jobs[0] | [.error, .read.total_ios, .total_err, .first_error]'; }
for c in read io all 1; do
	b=$(coe $c)
	# fio's report (stat.c): error is the first error gone past, and
	# total_ios counts the I/Os issued, the failed ones too
	check "continue_on_error=$c: 256 reads issued, 25 failed and passed over, error 5 as fio's ($b)" test "$b" = "[5,256,25,5]"
done
for c in none write verify 0; do
	b=$(coe $c)
	check "continue_on_error=$c: the first read error ends the job ($b)" test "$(echo "$b" | cut -d, -f1)" = "[5"
done
"$BLKSTACK" bench --dev=null --fail_every=10 --name=x --rw=randread --size=1m --continue_on_error=io \
	>"$TMP/coe.txt" 2>/dev/null
check "continue_on_error: fio's text line 'errors : total=25, first_error=5/<Input/output error>'" \
	grep -q "errors    : total=25, first_error=5/<Input/output error>" "$TMP/coe.txt"
finish
