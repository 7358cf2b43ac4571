#!/usr/bin/env bash
# I/O priorities with fio's meaning: prio=, prioclass=, cmdprio_percentage=,
# cmdprio_class=, cmdprio=, cmdprio_bssplit=, log_prio=.  fio's stock
# cmdprio-percentage.fio runs unchanged on dev=ram: about 20 % of the
# logged I/Os carry class RT (0x2000), the others the job's idle class
# (0x6000), and the JSON has fio 3.33's "prios" per direction.  The stock
# cmdprio-bssplit.fio (per-direction bssplit=) parses; a
# copy with one bssplit for both directions gives each block size the
# priorities its cmdprio_bssplit= names.  Beside fio (libaio on a file)
# when installed: the same "prios" keys, the same share.
source "$(dirname "$0")/lib.sh" "$@"

EX=/usr/share/doc/fio/examples
PCT_FIO=$EX/cmdprio-percentage.fio
BSS_FIO=$EX/cmdprio-bssplit.fio
if [ ! -r "$PCT_FIO" ]; then
	# the stock file's job, for machines without fio's examples
	PCT_FIO=$TMP/cmdprio-percentage.fio
	printf '[global]\nfilename=/dev/sda\ndirect=1\nwrite_lat_log=prio-run.log\nlog_prio=1\n[randread]\nrw=randread\nbs=128k\nioengine=libaio\niodepth=8\nprioclass=3\ncmdprio_percentage=20\ncmdprio_class=1\n' >"$PCT_FIO"
fi

# share FILE CLASSVALUE: the fraction of FILE's log lines whose last
# column is CLASSVALUE (fio's log_prio=1 hex)
share() {
	awk -F', ' -v v="$2" '{ n++; if ($NF == v) k++ } END { if (n) printf "%.3f %d", k / n, n; else print "0 0" }' "$1"
}

# 1. the stock cmdprio-percentage.fio, unchanged, on dev=ram
mkdir -p "$TMP/pct" && cd "$TMP/pct" || exit 1
"$BLKSTACK" bench --dev=ram --size=256m --output-format=json \
	--output="$TMP/pct.json" "$PCT_FIO" >"$TMP/pct.out" 2>&1
rc=$?
check "cmdprio-percentage.fio on dev=ram: exit 0 (got $rc)" test "$rc" = 0
read -r rt n < <(share prio-run.log_clat.1.log 0x2000)
read -r idle _ < <(share prio-run.log_clat.1.log 0x6000)
check "cmdprio_percentage=20: $rt of $n logged I/Os are class RT level 0 (0x2000), 0.16..0.24" \
	awk -v s="$rt" -v n="$n" 'BEGIN { exit !(n >= 2000 && s >= 0.16 && s <= 0.24) }'
check "prioclass=3: the others are idle (0x6000): $rt + $idle = 1" \
	awk -v a="$rt" -v b="$idle" 'BEGIN { exit !(a + b > 0.999) }'
check "log_prio=1: fio's line, 'T, V, DIR, BS, 0x%04x'" \
	grep -qE '^[0-9]+, [0-9]+, 0, 131072, 0x[26]000$' prio-run.log_clat.1.log
check "JSON read.prios: idle 3/0 first (the job's), then RT 1/0, clat_ns with percentiles; N add up to the reads" \
	jq_true '.jobs[0].read as $r | ($r.prios | map([.prioclass, .prio]) == [[3,0],[1,0]])
		and ($r.prios | map(.clat_ns.N) | add) == $r.total_ios
		and ($r.prios[0] | keys == ["clat_ns","prio","prioclass"])
		and ($r.prios[1].clat_ns | has("percentile"))
		and ($r.prios[1].clat_ns.N > 0)' "$TMP/pct.json"
check "JSON write: no prios (no writes, as fio)" jq_true '.jobs[0].write | has("prios") | not' "$TMP/pct.json"
"$BLKSTACK" bench --dev=ram --size=64m "$PCT_FIO" >"$TMP/pct.txt" 2>&1
check "text: fio's 'clat prio 3/0 (...)' and 'clat prio 1/0 (P% of IOs) percentiles' lines" \
	bash -c 'grep -qE "^    clat prio 3/0 \((n|u|m)sec\): min=" "$1" && grep -qE "^    clat prio 1/0 \([0-9.]+% of IOs\) percentiles \((n|u|m)sec\):" "$1"' _ "$TMP/pct.txt"

# log_prio=0: fio's last column is 1 for class RT, 0 for the others
sed 's/^log_prio=1/log_prio=0/' "$PCT_FIO" >"$TMP/pct0.fio"
rm -f prio-run.log_*
"$BLKSTACK" bench --dev=ram --size=64m "$TMP/pct0.fio" >/dev/null 2>&1
read -r rt1 _ < <(share prio-run.log_clat.1.log 1)
read -r rt0 _ < <(share prio-run.log_clat.1.log 0)
check "log_prio=0: last column 1 for RT ($rt1), 0 for idle ($rt0), nothing else" \
	awk -v a="$rt1" -v b="$rt0" 'BEGIN { exit !(a > 0.1 && a < 0.3 && a + b > 0.999) }'

# 2. the stock cmdprio-bssplit.fio (per-direction bssplit=): accepted
if [ -r "$BSS_FIO" ]; then
	"$BLKSTACK" bench --dev=ram --parse-only "$BSS_FIO" >/dev/null 2>"$TMP/bss.err"
	check "cmdprio-bssplit.fio: accepted by --parse-only" test $? = 0
fi
# a copy with one bssplit for both directions
cat >"$TMP/bss1.fio" <<EOF
[global]
direct=1
write_lat_log=bss-run.log
log_prio=1
rw=randrw
ioengine=libaio
iodepth=16
size=64m
io_size=1g
bssplit=64k/40:1024k/60

[cmdprio]
cmdprio_bssplit=64k/100:1024k/0,1024k/0
cmdprio_class=1
cmdprio=0

[cmdprio-adv-def]
stonewall
prioclass=2
prio=7
cmdprio_bssplit=64k/25/1/1:64k/75/3/2:1024k/0,1024k/0
EOF
mkdir -p "$TMP/bss" && cd "$TMP/bss" || exit 1
"$BLKSTACK" bench --dev=ram --output-format=json --output="$TMP/bss.json" "$TMP/bss1.fio" >"$TMP/bss.out" 2>&1
rc=$?
check "cmdprio_bssplit copy on dev=ram: exit 0 (got $rc)" test "$rc" = 0
# cmdprio: every 64k read is RT 1/0, nothing else is
check "cmdprio_bssplit=64k/100: every 64k read 0x2000, 1M reads and all writes 0x0000" \
	awk -F', ' '($3 == 0 && $4 == 65536) != ($5 == "0x2000") { bad++ } ($5 != "0x2000" && $5 != "0x0000") { bad++ } END { exit !(NR > 100 && !bad) }' bss-run.log_clat.1.log
# adv-def: 64k reads 1/1 (25 %) or 3/2 (75 %), the rest 2/7
awk -F', ' '$3 == 0 && $4 == 65536 { n++; if ($5 == "0x2001") a++; else if ($5 != "0x6002") bad++ }
	!($3 == 0 && $4 == 65536) && $5 != "0x4007" { bad++ }
	END { printf "%d %d %d\n", n, a, bad }' bss-run.log_clat.2.log >"$TMP/adv"
read -r n64 a64 bad <"$TMP/adv"
check "cmdprio_bssplit=64k/25/1/1:64k/75/3/2 with prio=7 prioclass=2: $a64 of $n64 64k reads 0x2001 (0.17..0.33), the others 0x6002, the rest 0x4007 ($bad wrong)" \
	awk -v a="$a64" -v n="$n64" -v b="$bad" 'BEGIN { exit !(n >= 200 && b == 0 && a / n >= 0.17 && a / n <= 0.33) }'
check "JSON: fio's order of prios (the job's own first, then by block size), none for writes" \
	jq_true '(.jobs[0].read.prios | map([.prioclass, .prio]) == [[0,0],[1,0]])
		and (.jobs[1].read.prios | map([.prioclass, .prio]) == [[2,7],[1,1],[3,2]])
		and (.jobs[1].write | has("prios") | not)' "$TMP/bss.json"

# 3. errors name the option and the allowed range
expect_error "cmdprio_percentage=101: refused with its range" "cmdprio_percentage.*101.*0\\.\\.100" \
	bench --parse-only --name=a --cmdprio_percentage=101
expect_error "cmdprio_class=4: refused with its range" "cmdprio_class.*1\\.\\.3" \
	bench --parse-only --name=a --cmdprio_class=4
expect_error "prio=8: refused with its range" "prio.*0\\.\\.7" \
	bench --parse-only --name=a --prio=8
expect_error "cmdprio_bssplit=64k/25/1: a class needs a level" "cmdprio_bssplit.*CLASS/LEVEL" \
	bench --parse-only --name=a --cmdprio_bssplit=64k/25/1
expect_error "cmdprio_bssplit shares of one size over 100: refused" "more than 100%" \
	bench --parse-only --name=a --cmdprio_bssplit=64k/60/1/0:64k/60/3/0
expect_error "cmdprio_percentage with cmdprio_bssplit: mutually exclusive, as in fio" "mutually exclusive" \
	bench --parse-only --name=a --cmdprio_percentage=10 --cmdprio_bssplit=64k/10

# 4. beside fio, libaio on a file (fio's null engine has no cmdprio):
# the same keys and about the same share of RT I/Os
if command -v fio >/dev/null && command -v jq >/dev/null; then
	mkdir -p "$TMP/f" && cd "$TMP/f" || exit 1
	sed "s|^filename=.*|filename=$TMP/f/data.img\nsize=32m\nio_size=256m|" "$PCT_FIO" >"$TMP/f.fio"
	fio --output-format=json --output="$TMP/fio.json" "$TMP/f.fio" >/dev/null 2>&1
	"$BLKSTACK" bench --output-format=json --output="$TMP/bs.json" "$TMP/f.fio" >/dev/null 2>&1
	rc=$?
	check "on a file (dev=uring, the kernel takes the SQE's priority): exit 0 (got $rc), no errors" \
		jq_true '.jobs[0].error == 0 and .jobs[0].read.total_ios == 2048' "$TMP/bs.json"
	fk=$(jq -c '[.jobs[0].read.prios[] | [.prioclass, .prio, (keys), (.clat_ns | keys)]]' "$TMP/fio.json")
	bk=$(jq -c '[.jobs[0].read.prios[] | [.prioclass, .prio, (keys), (.clat_ns | keys)]]' "$TMP/bs.json")
	check "prios beside fio's: the same priorities and keys (fio: $fk)" test "$fk" = "$bk"
	fs=$(jq '.jobs[0].read.prios[1].clat_ns.N / .jobs[0].read.total_ios' "$TMP/fio.json")
	bs=$(jq '.jobs[0].read.prios[1].clat_ns.N / .jobs[0].read.total_ios' "$TMP/bs.json")
	check "share of RT reads: blkstack $bs, fio $fs, within 0.05" \
		awk -v a="$bs" -v b="$fs" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.05) }'
else
	echo "ok - # SKIP fio or jq not installed: no comparison"
fi
cd / || exit 1
finish
