#!/usr/bin/env bash
# fio's percentage_random=, bs_unaligned= and iodepth_low= with fio's
# meaning, checked against fio 3.33's null engine on the same jobs through
# the per-I/O latency logs (log_offset=1: each I/O's size and offset).
source "$(dirname "$0")/lib.sh" "$@"

if ! command -v fio >/dev/null; then
	fail "fio is not installed (scripts/install-deps.sh installs it)"
	finish
	exit
fi
cd "$TMP" || exit 1

# blk PREFIX ARGS... / fio PREFIX ARGS...: one job, its clat log PREFIX_clat.1.log
blk() { local p=$1; shift; "$BLKSTACK" bench --dev=null --name=x --write_lat_log="$p" --log_offset=1 "$@" >/dev/null; }
fio_run() { local p=$1; shift; fio --ioengine=null --name=x --write_lat_log="$p" --log_offset=1 "$@" >/dev/null 2>&1; }
# % of I/Os (of direction $2, all when empty) starting where the last of that direction ended
follow() { awk -F', ' -v d="${2:-}" '(d == "" || $3 == d) { if (seen[$3]) { n++; if ($5 == end[$3]) s++ } seen[$3] = 1; end[$3] = $5 + $4 } END { printf "%d", n ? 100 * s / n : -1 }' "$1"; }
near() { awk -v a="$1" -v b="$2" -v d="$3" 'BEGIN { x = a - b; if (x < 0) x = -x; exit !(x <= d) }'; }

# percentage_random: about that share of a random job's I/Os at random offsets
for p in 100 50 10 0; do
	blk b$p --rw=randread --size=16m --percentage_random=$p
	fio_run f$p --rw=randread --size=16m --percentage_random=$p
	b=$(follow b${p}_clat.1.log) f=$(follow f${p}_clat.1.log)
	check "percentage_random=$p: $b % of I/Os follow the last (fio $f %)" near "$b" "$((100 - p))" 4
	check "percentage_random=$p: as fio's $f %" near "$b" "$f" 4
done
# per direction: reads all random, writes all sequential
blk bd --rw=randrw --size=256m --number_ios=8000 --percentage_random=100,0
fio_run fd --rw=randrw --size=256m --number_ios=8000 --percentage_random=100,0
for d in 0 1; do
	b=$(follow bd_clat.1.log $d) f=$(follow fd_clat.1.log $d)
	want=$((d == 0 ? 0 : 100))
	check "percentage_random=100,0: direction $d, $b % follow (fio $f %)" near "$b" "$want" 4
done
expect_error "percentage_random above 100 refused" "not a percentage, allowed 0..100" \
	bench --parse-only --percentage_random=101

# bs_unaligned: bsrange sizes not multiples of the smallest, and
# sequential offsets off its multiples, each I/O where the last ended
stats() { awk -F', ' '{ n++; if ($4 % 4096) us++; if ($5 % 4096) uo++; if ($4 % 512) u5++; if (NR > 1 && $5 != prev) gap++; prev = $5 + $4 } END { printf "%d %d %d %d", us, uo, u5, gap }' "$1"; }
for u in 0 1; do
	blk bu$u --rw=read --size=4m --bsrange=4k-16k --bs_unaligned=$u
	fio_run fu$u --rw=read --size=4m --bsrange=4k-16k --bs_unaligned=$u
	read -r bs bo b5 bg < <(stats bu${u}_clat.1.log)
	read -r fs fo _ _ < <(stats fu${u}_clat.1.log)
	if [ "$u" = 1 ]; then
		check "bs_unaligned=1: $bs sizes, $bo offsets not multiples of 4k (fio $fs, $fo)" \
			test "$bs" -gt 50 -a "$bo" -gt 50 -a "$fs" -gt 50 -a "$fo" -gt 50
		check "bs_unaligned=1: sizes multiples of the 512-byte sector ($b5 not)" test "$b5" = 0
	else
		check "bs_unaligned=0: every size and offset a multiple of 4k (fio too: $fs, $fo)" \
			test "$bs$bo$fs$fo" = 0000
	fi
	check "bs_unaligned=$u: each I/O starts where the last ended ($bg gaps)" test "$bg" = 0
done
# bssplit sizes: rounded down to the smallest's multiple unless bs_unaligned,
# as fio (the last I/O left out: blkstack cuts it at the job's byte count)
sizes() { head -n -1 "$1" | awk -F', ' '{ c[$4] = 1 } END { for (k in c) printf "%s ", k }' | tr ' ' '\n' | sort -n | xargs; }
for u in 0 1; do
	blk bs$u --rw=randread --size=4m --bssplit=4k/50:6k/50 --bs_unaligned=$u --number_ios=200
	fio_run fs$u --rw=randread --size=4m --bssplit=4k/50:6k/50 --bs_unaligned=$u --number_ios=200
	b=$(sizes bs${u}_clat.1.log) f=$(sizes fs${u}_clat.1.log)
	check "bssplit=4k/50:6k/50 bs_unaligned=$u: sizes '$b' as fio's '$f'" test "$b" = "$f"
done

# allrandrepeat: with randrepeat=0 the offsets and directions differ run
# to run, with allrandrepeat=1 too they repeat (fio's td_fill_rand_seeds())
offs() { cut -d, -f3,5 "$1" | md5sum; }
for a in 0 1; do
	for k in 1 2; do
		blk ar$a$k --rw=randrw --size=64m --number_ios=500 --randrepeat=0 --allrandrepeat=$a --percentage_random=80
	done
	fio_run far$a --rw=randrw --size=64m --number_ios=500 --randrepeat=0 --allrandrepeat=$a
done
check "randrepeat=0: two runs' offsets differ" test "$(offs ar01_clat.1.log)" != "$(offs ar02_clat.1.log)"
check "randrepeat=0 allrandrepeat=1: two runs' offsets and directions repeat" \
	test "$(offs ar11_clat.1.log)" = "$(offs ar12_clat.1.log)"
check "allrandrepeat=1: fio takes it too" test -s far1_clat.1.log

# max_latency: a completion later than it ends the job with ETIMEDOUT (110),
# as fio's lat_fatal(); per direction, a read,write list
err_of() { jq '.jobs[0].error'; }
b=$("$BLKSTACK" bench --dev=null --name=x --rw=randrw --size=16m --max_latency=1us --output-format=json 2>"$TMP/ml.err" | err_of)
f=$(fio --ioengine=null --name=x --rw=randrw --size=16m --max_latency=1us --output-format=json 2>/dev/null | sed -n "/^{/,\$p" | err_of)
check "max_latency=1us: the job ends with error $b, as fio's $f (ETIMEDOUT)" test "$b" = 110 -a "$f" = 110
check "max_latency=1us: fio's message" grep -q "exceeds specified max (1000 nsec)" "$TMP/ml.err"
b=$("$BLKSTACK" bench --dev=null --name=x --rw=randrw --size=16m --max_latency=10s --output-format=json | err_of)
f=$(fio --ioengine=null --name=x --rw=randrw --size=16m --max_latency=10s --output-format=json 2>/dev/null | err_of)
check "max_latency=10s: no error ($b), as fio ($f)" test "$b" = 0 -a "$f" = 0
b=$("$BLKSTACK" bench --dev=null --name=x --rw=randrw --size=16m --max_latency=10s,1us --output-format=json 2>"$TMP/ml.err" | err_of)
check "max_latency=10s,1us: a write ends the job ($b)" \
	sh -c "test '$b' = 110 && grep -q 'nsec): write' '$TMP/ml.err'"

# thinktime_iotime: I/O runs that long (the first time from the start, its
# thinktime included, as fio's last_thinktime), then a thinktime stall;
# thinktime_blocks counts only when given
gaps() { awk -F', ' 'NR > 1 && $1 - t >= 150 { g++ } { t = $1; n++ } END { printf "%d %d", g, n }' "$1"; }
blk ti --rw=randread --size=64m --runtime=1 --time_based --thinktime=200ms --thinktime_iotime=100ms
fio_run fti --rw=randread --size=64m --runtime=1 --time_based --thinktime=200ms --thinktime_iotime=100ms
read -r bg bn < <(gaps ti_clat.1.log)
read -r fg fn < <(gaps fti_clat.1.log)
check "thinktime_iotime=100ms thinktime=200ms: $bg stalls of 150+ ms in 1 s, $bn I/Os (fio: $fg, $fn)" \
	test "$bg" -ge 2 -a "$bg" = "$fg" -a "$bn" -gt 10000 -a "$fn" -gt 10000
blk tb --rw=randread --size=64m --runtime=1 --time_based --thinktime=200ms --thinktime_iotime=100ms --thinktime_blocks=4
read -r bg bn < <(gaps tb_clat.1.log)
check "thinktime_iotime with thinktime_blocks=4 given: a stall every 4 I/Os ($bn I/Os)" test "$bn" -le 24

# file_service_type: the file of each next I/O, on 4 files (blkstack's
# files in a directory, fio's null engine: the same per-file offsets)
mkdir -p "$TMP/fst"
fst_blk() { rm -f "$TMP"/fst/*; "$BLKSTACK" bench --name=x --directory="$TMP/fst" --rw=read --nrfiles=4 --write_lat_log="$1" --log_offset=1 "${@:2}" >/dev/null; }
seqof() { cut -d, -f5 "$1" | xargs; }
for t in roundrobin roundrobin:3 sequential; do
	fst_blk fb --size=256k --file_service_type=$t
	fio_run ff --size=256k --nrfiles=4 --rw=read --file_service_type=$t
	check "file_service_type=$t: the offsets in fio's order" test "$(seqof fb_clat.1.log)" = "$(seqof ff_clat.1.log)"
done
# random: the next I/O stays on its file (the offset after the last) about
# a quarter of the time, as fio's; roundrobin never, sequential always
cont() { awk -F', ' 'NR > 1 { n++; if ($5 == p + 4096) c++ } { p = $5 } END { printf "%d", 100 * c / n }' "$1"; }
fst_blk fb --size=4m --file_service_type=random
fio_run ff --size=4m --nrfiles=4 --rw=read --file_service_type=random
b=$(cont fb_clat.1.log) f=$(cont ff_clat.1.log)
check "file_service_type=random: $b % of I/Os continue on the last's file (fio $f %)" \
	sh -c "test $b -ge 20 -a $b -le 40 && test $((b - f)) -le 6 -a $((f - b)) -le 6"
expect_error "file_service_type=zipf refused with its reason" "fio's zipf file choice is not implemented" \
	bench --parse-only --file_service_type=zipf:1.2

# lockmem: the job's thread holds that much memory locked while it runs
# (the process's VmLck), as fio's; refused by RLIMIT_MEMLOCK, a clear error
# (ASan's mlock() interceptor does nothing: checked on plain builds only)
vmlck() { "$@" >/dev/null 2>&1 & local p=$! k=0 c; sleep 0.7; for c in $p $(pgrep -P $p); do k=$((k + $(awk '/^VmLck/ { print $2 }' /proc/$c/status 2>/dev/null || echo 0))); done; wait $p; echo "$k"; }
if [ "$(sanitizer)" = none ]; then
b=$(vmlck "$BLKSTACK" bench --dev=null --name=x --rw=randread --size=16m --runtime=1500ms --time_based --lockmem=64m)
f=$(vmlck fio --ioengine=null --name=x --rw=randread --size=16m --runtime=1500ms --time_based --lockmem=64m)
check "lockmem=64m: $b KiB locked (fio $f KiB)" test "$b" -ge 65536 -a "$f" -ge 65536
if command -v setpriv >/dev/null && command -v prlimit >/dev/null; then
	prlimit --memlock=1048576 setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock \
		"$BLKSTACK" bench --dev=null --name=x --rw=randread --size=16m --lockmem=64m >/dev/null 2>"$TMP/lm.err"
	rc=$?
	check "lockmem over RLIMIT_MEMLOCK without CAP_IPC_LOCK: exit $rc, the limit named" \
		sh -c "test $rc = 1 && grep -qE 'lockmem=67108864: mlock\(2\): .*RLIMIT_MEMLOCK is 1048576 bytes' '$TMP/lm.err'"
fi
fi

# iodepth_low: a full queue is reaped down to it before refilling, so
# I/Os go at depths below iodepth (the IO depths distribution)
lvl() { "$BLKSTACK" bench --dev=null --name=x --rw=randread --size=64m --iodepth=16 "$@" --output-format=json | jq '.jobs[0].iodepth_level["16"]'; }
a=$(lvl) b=$(lvl --iodepth_low=4)
check "iodepth=16: every I/O at depth 16 ($a %)" test "${a%.*}" = 100
check "iodepth_low=4: most I/Os below depth 16 ($b % at 16)" awk -v x="$b" 'BEGIN { exit !(x != "" && x < 50) }'
# regression: a wait for the completions that timed out (2 ms; here they
# take 5 ms) handed over the few gathered, and the queue was refilled by
# 1-4 at a time (6.6 % of the submissions), above iodepth_low
sub=$("$BLKSTACK" bench --dev=null --irqmode=2 --completion_nsec=5ms --name=x --rw=randread --size=64m \
	--iodepth=16 --iodepth_low=4 --runtime=500ms --time_based --output-format=json |
	jq -c '.jobs[0] | [.iodepth_submit["4"], .iodepth_submit["8"], .read.total_ios]')
check "iodepth_low_refill_after_wait_timeout: 5 ms completions, every refill of 12 (submissions of 1-4, 5-8 in %, I/Os: $sub)" \
	jq -e '.[0] == 0 and .[1] == 0 and .[2] > 100' <<<"$sub"
# regression: with iodepth_low the "complete" histogram stayed empty
comp=$("$BLKSTACK" bench --dev=null --name=x --rw=randread --size=64m --iodepth=16 --iodepth_low=4 \
	--output-format=json | jq -c '[.jobs[0].iodepth_complete[]] | add')
check "iodepth_low_complete_histogram: the complete buckets add up to 100 % ($comp)" \
	awk -v x="$comp" 'BEGIN { exit !(x > 99.9 && x < 100.1) }'
# iodepth_batch_complete_max=1 with iodepth_low=12: fio's getevents take
# one each and stop at 12 held, so the queue is refilled 4 at a time, at
# depths 13..16 (fio's buckets 8..15 and 16..31: 3 of 4 and 1 of 4)
lv=$("$BLKSTACK" bench --dev=null --irqmode=2 --completion_nsec=5ms --name=x --rw=randread --size=64m --iodepth=16 \
	--iodepth_low=12 --iodepth_batch_complete_min=1 --iodepth_batch_complete_max=1 --runtime=500ms --time_based \
	--output-format=json | jq -c '.jobs[0] | [.iodepth_submit["4"], .iodepth_level["8"], .iodepth_level["16"], .iodepth_complete["4"]]')
check "iodepth_low_with_complete_max: refills of 4 at depths 13..16, completions one at a time ([submit 1-4, level 8, level 16, complete 1-4] %: $lv)" \
	jq -e '.[0] > 99 and (.[1] > 70 and .[1] < 80) and (.[2] > 20 and .[2] < 30) and .[3] == 100' <<<"$lv"
finish
