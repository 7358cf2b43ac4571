#!/usr/bin/env bash
# Setup checks before anything runs: offset and size (overflow, alignment)
# named as given, I/O buffer and random-map memory, and values inside the
# documented ranges that the device must accept.
source "$(dirname "$0")/lib.sh" "$@"

# --- offset/size: errors name offset= and size=, not a derived dev_size ---
expect_error "offset not a multiple of logical_block_size names offset" \
	"offset=4000: not a multiple of logical_block_size=512" \
	bench --rw=read --offset=4KiB
expect_error "offset not a multiple of a 4k logical_block_size" \
	"offset=2048: not a multiple of logical_block_size=4096" \
	bench --rw=read --logical_block_size=4k --offset=2048
expect_error "size not a multiple of logical_block_size names size" \
	"size=1049576: not a multiple of logical_block_size=512" \
	bench --rw=read --size=1049576
expect_error "offset_increment not a multiple of logical_block_size" \
	"offset_increment=1000: not a multiple of logical_block_size=512" \
	bench --rw=read --size=1m --numjobs=2 --offset_increment=1000
expect_error "offset + default size overflowing 64 bits names offset and size" \
	"offset=18446744073709551615 size=[0-9]+.*overflows 64 bits" \
	bench --rw=read --offset=18446744073709551615
expect_error "offset + size overflowing 64 bits names offset and size" \
	"offset=18446744073709551104 size=1048576: offset \+ size overflows 64 bits" \
	bench --rw=read --offset=18446744073709551104 --size=1m
expect_error "offset_increment x (numjobs-1) overflowing 64 bits" \
	"offset=0 \+ 3 \* offset_increment=8000000000000000000 \+ size=1048576.*overflows 64 bits" \
	bench --rw=read --size=1m --numjobs=4 --offset_increment=8000000000000000000
# a region at 2^63 fits in 64 bits: it runs
"$BLKSTACK" bench --rw=read --offset=9223372036854775808 --size=1m --output-format=json >"$TMP/hi.json"
check "offset=2^63 on null: runs" test $? -eq 0
check "offset=2^63 on null: all 256 I/Os" jq -e '.jobs[0].read.total_ios == 256' "$TMP/hi.json"
check "offset=2^63 randread on null" "$BLKSTACK" bench --rw=randread --offset=9223372036854775808 \
	--runtime=100ms --time_based

# --- memory: I/O buffers and the random map ---
expect_error "I/O buffers over half of physical memory name iodepth, bs, numjobs" \
	"iodepth=65536 x bs=16777216 x numjobs=1024 needs 1 PiB of I/O buffers, more than half of physical memory \([0-9.]+ [KMGT]iB available\)" \
	bench --rw=read --bs=16m --iodepth=65536 --numjobs=1024
expect_error "random map over 1 GiB: error naming size and bs, suggesting norandommap" \
	"size=140737488355328 bs=4096: the random map needs 4.06 GiB .*norandommap" \
	bench --rw=randread --size=128t --runtime=200ms
check "random map over 1 GiB: norandommap runs" "$BLKSTACK" bench --rw=randread --size=128t \
	--runtime=100ms --time_based --norandommap
# The random map is cleared at setup, not by a memset of the whole map on
# the first pick inside the measured window: one random read of an 8 TiB
# range (a 256 MiB map) must not fault the map's pages in.
"$BLKSTACK" bench --rw=randread --size=8t --io_size=4k --output-format=json >"$TMP/rmap.json"
check "random map: one I/O of an 8 TiB range runs" test $? -eq 0
check "random map: not cleared on the first pick (few page faults in the window)" \
	jq -e '.jobs[0].read.total_ios == 1 and .jobs[0].minf < 64' "$TMP/rmap.json"
# a partial last word of the map: every block once per pass
"$BLKSTACK" bench --rw=randread --size=100k --bs=1k --output-format=json >"$TMP/part.json"
check "random map with a partial last word: one pass of 100 blocks" \
	jq -e '.jobs[0].read.total_ios == 100' "$TMP/part.json"
"$BLKSTACK" bench --rw=randread --size=100k --bs=1k --loops=3 --output-format=json >"$TMP/part3.json"
check "random map with a partial last word: three passes" \
	jq -e '.jobs[0].read.total_ios == 300' "$TMP/part3.json"

# --- values inside the documented ranges that the device must accept ---
check "numjobs=257: automatic hardware queues capped at 256, threads share" \
	"$BLKSTACK" bench --rw=read --size=64k --numjobs=257
check "iodepth=65536 with hw_queue_depth=65536: nr_requests capped at 65536" \
	"$BLKSTACK" bench --rw=read --bs=512 --size=1m --iodepth=65536 --hw_queue_depth=65536
finish
