#!/usr/bin/env bash
# fio's per-direction block sizes: bs=R,W[,T], bsrange=R,W[,T],
# bssplit=R,W[,T] (fio's str_split_parse(): "a,b" gives reads a, writes
# and trims b).  Each I/O's size is drawn from its direction's value, as
# fio's get_next_buflen(): bs=4k,64k on randrw reads 4 KiB and writes
# 64 KiB (JSON bytes / I/Os per direction), a per-direction bssplit gives
# each direction its shares (lat log sizes, beside fio 3.33's null engine
# when installed), bsrange keeps each direction in its range; trims take
# the trim direction's size; number_ios counts I/Os of any size.  The
# stock cmdprio-bssplit.fio parses, and a short copy runs on dev=ram.
# verify= with per-direction sizes is refused by name.
source "$(dirname "$0")/lib.sh" "$@"

HAVE_FIO=0
if command -v fio >/dev/null 2>&1; then HAVE_FIO=1; fi
cd "$TMP" || exit 1

# per_dir JSON: "RBYTES RIOS WBYTES WIOS" of the first job
per_dir() {
	python3 -c 'import json,sys
j = json.load(open(sys.argv[1]))["jobs"][0]
print(j["read"]["io_bytes"], j["read"]["total_ios"], j["write"]["io_bytes"], j["write"]["total_ios"])' "$1"
}

# 1. bs=4k,64k
printf '[j]\nrw=randrw\nbs=4k,64k\nsize=64m\niodepth=8\nnorandommap=1\n' >bs.fio
"$BLKSTACK" bench --dev=null --output-format=json --output=bs.json bs.fio >bs.out 2>&1
check "bs=4k,64k randrw on dev=null: exit 0" test $? = 0
read -r rb ri wb wi < <(per_dir bs.json)
check "bs=4k,64k: reads are 4 KiB ($rb bytes / $ri I/Os)" \
	awk -v b="$rb" -v n="$ri" 'BEGIN { exit !(n > 100 && b == n * 4096) }'
# the job's last I/O ends at its byte count (as fio's): one may be shorter
check "bs=4k,64k: writes are 64 KiB ($wb bytes / $wi I/Os)" \
	awk -v b="$wb" -v n="$wi" 'BEGIN { exit !(n > 100 && b > (n - 1) * 65536 && b <= n * 65536) }'
if [ $HAVE_FIO = 1 ]; then
	sed 's/^\[j\]/[j]\nioengine=null/' bs.fio >bsf.fio
	fio --output-format=json --output=bsf.json bsf.fio >/dev/null 2>&1
	read -r frb fri fwb fwi < <(per_dir bsf.json)
	check "fio 3.33 on the same job: reads $((frb / fri)), writes $((fwb / fwi)) bytes each" \
		test "$((frb / fri)):$((fwb / fwi))" = 4096:65536
fi

# share LOG DIR BS: the share of DIR's (0 read, 1 write) logged I/Os of BS bytes
share() {
	awk -F', ' -v d="$2" -v s="$3" '$3 == d { n++; if ($4 == s) k++ } END { printf "%.3f", n ? k / n : -1 }' "$1"
}
# range LOG DIR LO HI: every DIR I/O's size within LO..HI ("ok"), and its count
range() {
	awk -F', ' -v d="$2" -v lo="$3" -v hi="$4" '$3 == d { n++; if ($4 < lo || $4 > hi) bad++ } END { print (n > 100 && !bad) ? "ok" : "bad", n }' "$1"
}

# The shares and ranges are the draw's: with the random map on, fio and
# blkstack both cut an I/O at the first block already done (so
# norandommap=1 here).
# 2. bssplit per direction
printf '[j]\nrw=randrw\nbssplit=4k/50:8k/50,8k/90:16k/10\nsize=64m\niodepth=8\nnorandommap=1\nwrite_lat_log=ss\n' >ss.fio
"$BLKSTACK" bench --dev=null ss.fio >ss.out 2>&1
check "bssplit=R,W on dev=null: exit 0" test $? = 0
r4=$(share ss_clat.1.log 0 4096); r8=$(share ss_clat.1.log 0 8192)
w8=$(share ss_clat.1.log 1 8192); w16=$(share ss_clat.1.log 1 16384)
check "bssplit reads 4k/50:8k/50: $r4 + $r8, each 0.45..0.55" \
	awk -v a="$r4" -v b="$r8" 'BEGIN { exit !(a >= 0.45 && a <= 0.55 && a + b > 0.995) }'
check "bssplit writes 8k/90:16k/10: $w8 + $w16, 8k 0.87..0.93" \
	awk -v a="$w8" -v b="$w16" 'BEGIN { exit !(a >= 0.87 && a <= 0.93 && a + b > 0.995) }'
if [ $HAVE_FIO = 1 ]; then
	sed 's/^\[j\]/[j]\nioengine=null/; s/write_lat_log=ss/write_lat_log=fss/' ss.fio >fss.fio
	fio fss.fio >/dev/null 2>&1
	fr4=$(share fss_clat.1.log 0 4096); fw8=$(share fss_clat.1.log 1 8192)
	check "beside fio 3.33: read 4k share $r4 against $fr4, write 8k share $w8 against $fw8 (within 0.04)" \
		awk -v a="$r4" -v b="$fr4" -v c="$w8" -v d="$fw8" 'function ab(x) { return x < 0 ? -x : x } BEGIN { exit !(ab(a - b) <= 0.04 && ab(c - d) <= 0.04) }'
fi

# 3. bsrange per direction
printf '[j]\nrw=randrw\nbsrange=4k-8k,16k-32k\nsize=64m\niodepth=8\nnorandommap=1\nwrite_lat_log=rg\n' >rg.fio
"$BLKSTACK" bench --dev=null rg.fio >rg.out 2>&1
check "bsrange=R,W on dev=null: exit 0" test $? = 0
read -r ok n < <(range rg_clat.1.log 0 4096 8192)
check "bsrange reads within 4k-8k ($n I/Os)" test "$ok" = ok
read -r ok n < <(range rg_clat.1.log 1 16384 32768)
check "bsrange writes within 16k-32k ($n I/Os)" test "$ok" = ok

# 4. fio's forms: "8k," reads only (writes the default 4k); 4 values refused
printf '[j]\nrw=randrw\nbs=8k,\nsize=16m\nnorandommap=1\n' >b2.fio
"$BLKSTACK" bench --dev=null --output-format=json --output=b2.json b2.fio >/dev/null 2>&1
read -r rb ri wb wi < <(per_dir b2.json)
check "bs=8k,: reads 8k, writes the default 4k" \
	awk -v a="$rb" -v b="$ri" -v c="$wb" -v d="$wi" 'BEGIN { exit !(b > 0 && d > 0 && a == b * 8192 && c > (d - 1) * 4096 && c <= d * 4096) }'
expect_error "bs= with 4 values refused" "bs=4k,8k,4k,4k: more than 3 values" \
	bench --parse-only --bs=4k,8k,4k,4k
expect_error "verify= with per-direction sizes refused" \
	"verify= with separate read,write\[,trim\] block sizes" \
	bench --parse-only --rw=randrw --bs=4k,8k --verify=crc32c

# 5. trims take the trim direction's size (fio's get_next_buflen(): a
# third value, or the last one given; bssplit and bsrange too), as fio's
# null engine: bs=4k,4k,16k trims 1 MiB in 64 trims, bs=4k,8k in 128;
# a sequential trim of 1 MiB with bssplit=4k/50:16k/50 takes between 64
# and 256 (regression: trims were always the smallest size, 256)
trims() { # ARGS...: "TRIMS BYTES" of a 1 MiB trim job
	"$BLKSTACK" bench --dev=ram --size=1m --output-format=json "$@" 2>/dev/null |
		jq -r '.jobs[0].trim | "\(.total_ios) \(.io_bytes)"'
}
for c in "--bs=4k,4k,16k 64" "--bs=4k,8k 128"; do
	read -r args want <<<"$c"
	read -r n b < <(trims --rw=trim $args)
	check "rw=trim $args: $n trims of 1 MiB, $want wanted" test "$n:$b" = "$want:1048576"
	read -r n b < <(trims --rw=randtrim --norandommap --number_ios=$want $args)
	check "rw=randtrim norandommap $args number_ios=$want: $b bytes, $want x $((1048576 / want))" \
		test "$n:$b" = "$want:1048576"
done
read -r n b < <(trims --rw=trim --bssplit=4k/50:16k/50)
check "rw=trim bssplit=4k/50:16k/50: $n trims (64..256, not all 4 KiB)" \
	awk -v n="$n" -v b="$b" 'BEGIN { exit !(n > 64 && n < 256 && b == 1048576) }'
if [ $HAVE_FIO = 1 ]; then
	f=$(fio --name=t --ioengine=null --rw=trim --bs=4k,4k,16k --size=1m --output-format=json 2>/dev/null |
		jq -r '.jobs[0].trim.total_ios')
	check "fio 3.33 on rw=trim bs=4k,4k,16k: $f trims" test "$f" = 64
fi

# 6. number_ios counts I/Os whatever their sizes (fio's
# exceeds_number_ios()); it was a byte budget of number_ios x the
# smallest size: bs=4k,64k randrw number_ios=100 did 12 I/Os
for args in "--rw=randrw --bs=4k,64k" "--rw=randread --bssplit=4k/50:64k/50" "--rw=read --bsrange=4k-64k --loops=2"; do
	want=100
	case $args in *loops=2*) want=200 ;; esac
	# shellcheck disable=SC2086
	n=$("$BLKSTACK" bench --dev=ram --size=64m --number_ios=100 $args --output-format=json 2>/dev/null |
		jq '.jobs[0] | .read.total_ios + .write.total_ios')
	check "number_ios=100 $args: $n I/Os, $want wanted" test "$n" = "$want"
	if [ $HAVE_FIO = 1 ]; then
		# shellcheck disable=SC2086
		f=$(fio --name=n --ioengine=null --size=64m --number_ios=100 $args --output-format=json 2>/dev/null |
			jq '.jobs[0] | .read.total_ios + .write.total_ios')
		check "fio 3.33, number_ios=100 $args: $f I/Os" test "$f" = "$want"
	fi
done

# 7. the stock cmdprio-bssplit.fio
BSS_FIO=/usr/share/doc/fio/examples/cmdprio-bssplit.fio
if [ -r "$BSS_FIO" ]; then
	"$BLKSTACK" bench --dev=ram --parse-only "$BSS_FIO" >pp.out 2>&1
	check "cmdprio-bssplit.fio: accepted by --parse-only --dev=ram" test $? = 0
	grep -v '^filename=\|^ioengine=' "$BSS_FIO" | sed 's/^iodepth=16/iodepth=16\nsize=16m\nruntime=1\nnorandommap=1/' >bss.fio
	mkdir -p bss && (cd bss && "$BLKSTACK" bench --dev=ram --output-format=json --output=../bss.json ../bss.fio >../bss.out 2>&1)
	check "a short copy runs on dev=ram: exit 0" test $? = 0
	check "its writes are all 1 MiB" python3 -c 'import json,sys
for j in json.load(open(sys.argv[1]))["jobs"]:
    w = j["write"]
    assert w["total_ios"] > 0 and w["io_bytes"] <= w["total_ios"] << 20 and w["io_bytes"] > (w["total_ios"] - 1) << 20
    r = j["read"]
    assert r["io_bytes"] > r["total_ios"] * 65536' bss.json
fi

cd / || exit 1
finish
