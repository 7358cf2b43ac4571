#!/usr/bin/env bash
# What blkstack bench's writes carry, as fio's buffer options say, measured
# on the written files by tools that know nothing of either: gzip for how
# well they compress (buffer_compress_percentage, buffer_compress_chunk),
# od | sort | uniq for how many 4 KiB blocks repeat an earlier one
# (dedupe_percentage, dedupe_mode, dedupe_working_set_percentage,
# dedupe_global), cmp for the bytes (buffer_pattern, zero_buffers).  fio
# writes the same job to a file of its own in the same run; both must
# land near what was asked, and near each other.  Then mem=/iomem= (each
# allocator writes the same bytes), iomem_align, and the refusals.
source "$(dirname "$0")/lib.sh" "$@"

for c in fio gzip od jq perl; do
	command -v "$c" >/dev/null || { fail "$c is not installed (scripts/install-deps.sh)"; finish; exit; }
done
SIZE=8m
BYTES=$((8 << 20))
BLOCKS=$((BYTES / 4096))

# ratio FILE: gzip's output over the file's size
ratio() {
	awk -v c="$(gzip -c "$1" | wc -c)" -v s="$(stat -c %s "$1")" \
		'BEGIN { printf "%.4f", c / s }'
}
# dupfrac FILE...: the share of 4 KiB blocks (of all the files together)
# whose bytes another block before them had
dupfrac() {
	cat "$@" | od -An -v -tx8 -w4096 | sort | uniq -c |
		awk '{ n += $1; u++ } END { printf "%.4f", (n - u) / n }'
}
# repeated FILE: how many different block contents appear more than once
repeated() {
	od -An -v -tx8 -w4096 "$1" | sort | uniq -c | awk '$1 > 1' | wc -l
}
# near A B TOL: |A - B| <= TOL
near() {
	awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'
}
# all_near WANT TOL V...: every V within TOL of WANT
all_near() {
	local want=$1 tol=$2
	shift 2
	for v; do near "$v" "$want" "$tol" || return 1; done
}
# bytes_are FILE WIDTH FROM TO HEX: in each WIDTH-byte row of FILE, bytes
# FROM..TO (from 1) are HEX
bytes_are() {
	od -An -v -tx1 -w"$2" "$1" |
		awk -v from="$3" -v to="$4" -v hex="$5" '{ for (i = from; i <= to; i++) if ($i != hex) exit 1 }'
}
# both NAME ARGS...: the same sequential 4 KiB write job, blkstack to
# $TMP/blk.NAME and fio to $TMP/fio.NAME; 1 when either fails
both() {
	local name=$1
	shift
	rm -f "$TMP/blk.$name" "$TMP/fio.$name"
	if ! "$BLKSTACK" bench --name="$name" --ioengine=libaio --rw=write --bs=4k \
		--size=$SIZE --iodepth=8 "$@" --filename="$TMP/blk.$name" >"$TMP/out" 2>"$TMP/err"; then
		fail "$name: blkstack bench failed: $(head -c 300 "$TMP/err")"
		return 1
	fi
	if ! fio --name="$name" --ioengine=libaio --rw=write --bs=4k --size=$SIZE \
		--iodepth=8 "$@" --filename="$TMP/fio.$name" >"$TMP/fout" 2>&1; then
		fail "$name: fio failed: $(head -c 300 "$TMP/fout")"
		return 1
	fi
}

# --- buffer_compress_percentage: gzip shrinks the file to about 100 - N %
# (the random part does not compress, the zeros nearly vanish)
for p in 25 50 75 90; do
	both "c$p" --buffer_compress_percentage=$p || continue
	b=$(ratio "$TMP/blk.c$p")
	f=$(ratio "$TMP/fio.c$p")
	want=$(awk -v p=$p 'BEGIN { printf "%.2f", (100 - p) / 100 }')
	check "buffer_compress_percentage=$p: blkstack's file gzips to $b of its size (asked: $want)" near "$b" "$want" 0.04
	check "buffer_compress_percentage=$p: fio's file gzips to $f" near "$f" "$want" 0.04
	check "buffer_compress_percentage=$p: blkstack $b, fio $f: within 0.03" near "$b" "$f" 0.03
done
# a larger chunk: the same share, in 4 KiB runs (gzip's window finds the
# zeros either way; the shares are what is checked)
both chunk --buffer_compress_percentage=60 --buffer_compress_chunk=4k &&
	check "buffer_compress_chunk=4k, 60 %: blkstack $(ratio "$TMP/blk.chunk"), fio $(ratio "$TMP/fio.chunk")" \
		all_near 0.40 0.04 "$(ratio "$TMP/blk.chunk")" "$(ratio "$TMP/fio.chunk")"
# each 4 KiB: 2458 random bytes then 1638 zeros, as fio lays them out
check "buffer_compress_chunk=4k: each block's last 1638 bytes are zeros (blkstack)" \
	bytes_are "$TMP/blk.chunk" 4096 2459 4096 00

# --- dedupe_percentage: that share of the blocks repeats another
for mode in repeat working_set; do
	both "d$mode" --dedupe_percentage=40 --dedupe_mode=$mode \
		--dedupe_working_set_percentage=10 || continue
	b=$(dupfrac "$TMP/blk.d$mode")
	f=$(dupfrac "$TMP/fio.d$mode")
	check "dedupe_percentage=40 mode=$mode: blkstack's blocks repeat at $b (of $BLOCKS)" near "$b" 0.40 0.05
	check "dedupe_percentage=40 mode=$mode: fio's at $f" near "$f" 0.40 0.05
	check "dedupe_percentage=40 mode=$mode: blkstack $b, fio $f: within 0.05" near "$b" "$f" 0.05
	rb=$(repeated "$TMP/blk.d$mode")
	rf=$(repeated "$TMP/fio.d$mode")
	if [ "$mode" = working_set ]; then
		# every repeat is one of the working set: 10 % of the blocks
		check "working_set: $rb different contents repeat (blkstack; fio $rf), at most the set's $((BLOCKS / 10))" \
			test "$rb" -le $((BLOCKS / 10)) -a "$rb" -ge $((BLOCKS / 20))
	else
		# each run of dedupe writes repeats the unique block after it:
		# about N x 0.4 x 0.6 different ones, far more than the set
		check "repeat: $rb different contents repeat (blkstack; fio $rf), more than a working set's $((BLOCKS / 10))" \
			test "$rb" -gt $((BLOCKS / 10))
	fi
done
# compression and dedupe together: 30 % repeat, each right before the
# block it repeats (repeat mode), which gzip's 32 KiB window then finds:
# the file gzips to about 0.7 x 0.5
if both dc --dedupe_percentage=30 --buffer_compress_percentage=50; then
	check "dedupe 30 + compress 50: blkstack repeats $(dupfrac "$TMP/blk.dc") (fio $(dupfrac "$TMP/fio.dc"))" \
		near "$(dupfrac "$TMP/blk.dc")" 0.30 0.05
	check "dedupe 30 + compress 50: blkstack gzips to $(ratio "$TMP/blk.dc") (fio $(ratio "$TMP/fio.dc"), asked 0.35)" \
		all_near 0.35 0.04 "$(ratio "$TMP/blk.dc")" "$(ratio "$TMP/fio.dc")"
fi
both d100 --dedupe_percentage=100 &&
	check "dedupe_percentage=100: every block the same (blkstack $(repeated "$TMP/blk.d100") content, fio $(repeated "$TMP/fio.d100"))" \
		test "$(od -An -v -tx8 -w4096 "$TMP/blk.d100" | sort -u | wc -l)" -eq 1

# --- fio's own dedupe-global.fio, cut to 8 MiB a job: the two files share
# the working set, so that together they repeat more than each alone.
# iodepth=8, not 256: fio's first fill of its iodepth buffers takes the
# first unique seeds, which its refills then overwrite, so that 256 of
# the 1024 pages of an 8 MiB job's working set never reach the disk and
# fio's repeats fall short of its own figures (not so at 100 MiB a job)
EX=/usr/share/doc/fio/examples/dedupe-global.fio
if [ -r "$EX" ]; then
	sed 's/^size=100m/size=8m/; s/^iodepth=256/iodepth=8/' "$EX" >"$TMP/dg.fio"
	mkdir -p "$TMP/dg.blk" "$TMP/dg.fio.d"
	"$BLKSTACK" bench --directory="$TMP/dg.blk" "$TMP/dg.fio" >"$TMP/out" 2>"$TMP/err"
	check "dedupe-global.fio (8 MiB a job): runs ($(head -c 200 "$TMP/err"))" test $? -eq 0
	fio --directory="$TMP/dg.fio.d" "$TMP/dg.fio" >"$TMP/fout" 2>&1
	check "dedupe-global.fio: fio runs" test $? -eq 0
	ba=$(dupfrac "$TMP/dg.blk/a.0.0")
	bab=$(dupfrac "$TMP/dg.blk/a.0.0" "$TMP/dg.blk/b.0.0")
	fa=$(dupfrac "$TMP/dg.fio.d/a.0.0")
	fab=$(dupfrac "$TMP/dg.fio.d/a.0.0" "$TMP/dg.fio.d/b.0.0")
	# alone: half the writes dedupe, half of those against the other
	# job's 512 pages of the set, of which about 1 - 1/e are drawn once
	# or more: 0.25 + 0.25 x (1 - 0.63) = 0.34 repeat within the file;
	# both files: half (fio's example says 0.34 and 0.50 at 100 MiB)
	check "dedupe-global: a alone repeats $ba (fio $fa)" all_near 0.34 0.05 "$ba" "$fa"
	check "dedupe-global: both files $bab (fio $fab)" all_near 0.50 0.05 "$bab" "$fab"
	check "dedupe-global: each file gzips to about half (compress 50): $(ratio "$TMP/dg.blk/b.0.0")" \
		near "$(ratio "$TMP/dg.blk/b.0.0")" 0.50 0.05
else
	fail "$EX is missing (fio-examples: scripts/install-deps.sh)"
fi

# --- buffer_pattern, zero_buffers: the very bytes fio writes
both pat --buffer_pattern=0xdeadbeef &&
	check "buffer_pattern=0xdeadbeef: blkstack's file is fio's, byte for byte" cmp "$TMP/blk.pat" "$TMP/fio.pat"
perl -e 'print "\xde\xad\xbe\xef" x ($ARGV[0] / 4)' $BYTES >"$TMP/want.pat"
check "buffer_pattern=0xdeadbeef: de ad be ef repeated" cmp "$TMP/blk.pat" "$TMP/want.pat"
both str '--buffer_pattern="abc"12' &&
	check "buffer_pattern=\"abc\"12: blkstack's file is fio's" cmp "$TMP/blk.str" "$TMP/fio.str"
perl -e 'my $s = "abc\x0c"; print substr($s x ($ARGV[0] / 4 + 1), 0, $ARGV[0])' $BYTES >"$TMP/want.str"
check "buffer_pattern=\"abc\"12: 'abc' then byte 12, repeated" cmp "$TMP/blk.str" "$TMP/want.str"
# the job file form, a space inside the quotes: fio's bytes too
for w in blk fio; do
	printf '[q]\nrw=write\nbs=4k\nsize=64k\nbuffer_pattern="ab c"0x0a\nfilename=%s\n' \
		"$TMP/q.$w" >"$TMP/q.$w.fio"
done
"$BLKSTACK" bench "$TMP/q.blk.fio" >"$TMP/out" 2>"$TMP/err"
check "job file buffer_pattern=\"ab c\"0x0a: runs ($(head -c 200 "$TMP/err"))" test $? -eq 0
fio "$TMP/q.fio.fio" >"$TMP/fout" 2>&1
check "job file buffer_pattern=\"ab c\"0x0a: blkstack's file is fio's" cmp "$TMP/q.blk" "$TMP/q.fio"
# the pattern starts again at each buffer's start: each 4 KiB block
check "job file buffer_pattern=\"ab c\"0x0a: 'ab c\\n' repeated from each block's start" \
	cmp "$TMP/q.blk" <(perl -e 'print substr("ab c\n" x 820, 0, 4096) x 16')
both zero --zero_buffers &&
	check "zero_buffers: blkstack's file is fio's (all zeros)" cmp "$TMP/blk.zero" "$TMP/fio.zero"
check "zero_buffers: all zeros" cmp "$TMP/blk.zero" <(head -c $BYTES /dev/zero)
# pattern in the compressible part
both pc --buffer_pattern=0x55 --buffer_compress_percentage=50 &&
	check "buffer_pattern with compression: the second half of each 512 bytes is the pattern" \
		bytes_are "$TMP/blk.pc" 512 257 512 55

# --- scramble_buffers (fio's default): blocks never repeat, even rewrites
# of one buffer; off, the iodepth buffers repeat over the file
both scr --iodepth=1 &&
	check "scramble_buffers (default): no block repeats (blkstack $(dupfrac "$TMP/blk.scr"), fio $(dupfrac "$TMP/fio.scr"))" \
		test "$(dupfrac "$TMP/blk.scr")" = 0.0000
both noscr --scramble_buffers=0 --iodepth=1 &&
	check "scramble_buffers=0, iodepth=1: one buffer written over and over (blkstack $(repeated "$TMP/blk.noscr"), fio $(repeated "$TMP/fio.noscr") contents)" \
		test "$(repeated "$TMP/blk.noscr")" -eq 1
both refill --refill_buffers --scramble_buffers=0 &&
	check "refill_buffers: every block new (blkstack $(dupfrac "$TMP/blk.refill"), fio $(dupfrac "$TMP/fio.refill"))" \
		test "$(dupfrac "$TMP/blk.refill")" = 0.0000

# --- mem=, iomem_align: where the buffers are changes nothing written
for m in malloc shm mmap mmapshared "mmap:$TMP/backing" "mmapshared:$TMP/backing2"; do
	rm -f "$TMP/m.img"
	"$BLKSTACK" bench --name=m --rw=write --bs=4k --size=1m --buffer_pattern=0xdeadbeef \
		--mem="$m" --filename="$TMP/m.img" >"$TMP/out" 2>"$TMP/err"
	check "mem=$m: runs ($(head -c 200 "$TMP/err"))" test $? -eq 0
	check "mem=$m: the pattern written" cmp "$TMP/m.img" <(head -c 1048576 "$TMP/want.pat")
done
check "mem=mmap:FILE: the file it created is removed after" test ! -e "$TMP/backing"
"$BLKSTACK" bench --name=m --rw=write --bs=4k --size=1m --buffer_pattern=0xdeadbeef \
	--iomem_align=512 --iodepth=4 --filename="$TMP/m.img" >"$TMP/out" 2>"$TMP/err"
check "iomem_align=512: runs ($(head -c 200 "$TMP/err"))" test $? -eq 0
check "iomem_align=512: the pattern written" cmp "$TMP/m.img" <(head -c 1048576 "$TMP/want.pat")
for m in shmhuge mmaphuge; do
	rm -f "$TMP/m.img"
	"$BLKSTACK" bench --name=m --rw=write --bs=4k --size=1m --zero_buffers \
		--mem=$m --filename="$TMP/m.img" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$(cat /proc/sys/vm/nr_hugepages)" -eq 0 ]; then
		check "mem=$m without huge pages: refused, naming them (rc=$rc)" \
			grep -q "mem=$m: .*huge pages: see /proc/sys/vm/nr_hugepages" "$TMP/err"
	else
		check "mem=$m: runs ($(head -c 200 "$TMP/err"))" test $rc -eq 0
	fi
done

# --- refusals, each naming the option
expect_error "mem=cudamalloc refused" "mem=cudamalloc.*not supported" \
	bench --parse-only --mem=cudamalloc --rw=write
expect_error "mem=bogus: the allowed types" "mem=bogus.*allowed malloc, shm" \
	bench --parse-only --mem=bogus --rw=write
expect_error "buffer_pattern with %o refused" "buffer_pattern=.*takes none" \
	bench --parse-only --buffer_pattern=0x12%o --rw=write
expect_error "buffer_pattern: an unquoted string refused, as fio does" "buffer_pattern=.*unexpected 'a'" \
	bench --parse-only --buffer_pattern=abc --rw=write
expect_error "buffer_compress_percentage=101 out of range" "buffer_compress_percentage=101.*0\.\.100" \
	bench --parse-only --buffer_compress_percentage=101 --rw=write
expect_error "working set and dedupe above 100 %" "more than 100" \
	bench --parse-only --rw=write --size=8m --dedupe_percentage=60 --dedupe_mode=working_set --dedupe_working_set_percentage=50
expect_error "working set without size=" "needs size=" \
	bench --parse-only --rw=write --dedupe_percentage=60 --dedupe_mode=working_set
finish
