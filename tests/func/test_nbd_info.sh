#!/usr/bin/env bash
# blkstack serve seen by nbdinfo: size, block sizes, flags, contexts, the
# export list, and base:allocation maps of ram and of a sparse uring file.
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/nbd_lib.sh"
need nbdinfo nbdcopy jq python3

start_server --dev=ram --size=64M --export=main --description=scratch \
	--export=ro --read-only --size=8M \
	--export=file --dev=uring --filename="$TMP/sparse.img" --size=16M || exit 1

J=$(timeout 20 nbdinfo --json "$URI" 2>"$TMP/err")
check "nbdinfo connects" test -n "$J"
check "size is 64 MiB" test "$(jq '.exports[0]."export-size"' <<<"$J")" = 67108864
check "minimum block size is the logical block size" test "$(jq '.exports[0]."block_size_minimum"' <<<"$J")" = 512
check "preferred block size 4096" test "$(jq '.exports[0]."block_size_preferred"' <<<"$J")" = 4096
check "maximum block size 32 MiB" test "$(jq '.exports[0]."block_size_maximum"' <<<"$J")" = 33554432
check "base:allocation context offered" jq -e '.exports[0].contexts | index("base:allocation")' <<<"$J"
for f in can_flush can_fua can_trim can_zero can_fast_zero can_multi_conn can_df can_cache; do
	check "ram export $f" jq -e ".exports[0].$f == true" <<<"$J"
done
check "ram export is writable" jq -e '.exports[0].is_read_only == false' <<<"$J"
check "description" jq -e '.exports[0].description == "scratch"' <<<"$J"

L=$(timeout 20 nbdinfo --list --json "$URI")
check "--list shows three exports" test "$(jq '.exports | length' <<<"$L")" = 3
check "--list names" test "$(jq -r '[.exports[]."export-name"] | sort | join(",")' <<<"$L")" = "file,main,ro"

RO=$(timeout 20 nbdinfo --json "$URI/ro")
check "read-only export flagged" jq -e '.exports[0].is_read_only == true and .exports[0]."export-size" == 8388608' <<<"$RO"
check "read-only export does not offer trim" jq -e '.exports[0].can_trim == false' <<<"$RO"
check "unknown export refused" bash -c "! timeout 20 nbdinfo '$URI/nope' 2>/dev/null"

# base:allocation on ram: a fresh device is one hole; written data shows up
M=$(timeout 20 nbdinfo --map --json "$URI")
check "fresh ram device is one hole" jq -e 'length == 1 and .[0].type == 3' <<<"$M"
head -c 1M /dev/urandom >"$TMP/1m"
timeout 20 nbdcopy "$TMP/1m" "$UURI" # over the Unix socket; copies the 1 MiB source only
M=$(timeout 20 nbdinfo --map --json "$URI")
check "written MiB is data, the rest a hole" jq -e '.[0].length == 1048576 and .[0].type == 0 and .[1].type == 3' <<<"$M"

# uring over a sparse file: write 64 KiB at 4 MiB, the map follows SEEK_DATA
head -c 65536 /dev/urandom >"$TMP/64k"
timeout 20 qemu-io -f raw -c "write -P 0x5a 4M 64k" "$URI/file" >/dev/null 2>&1 ||
	timeout 20 nbdcopy "$TMP/64k" "$URI/file"
M=$(timeout 20 nbdinfo --map --json "$URI/file")
check "sparse file: a data extent exists" jq -e 'map(select(.type == 0)) | length >= 1' <<<"$M"
check "sparse file: holes exist" jq -e 'map(select(.type == 3)) | length >= 1' <<<"$M"
check "sparse file: extents cover 16 MiB" jq -e 'map(.length) | add == 16777216' <<<"$M"

check "server still running" alive
check "one log line per connection" grep -q "nbd: conn 1 " "$TMP/server.log"
stop_server
check "SIGTERM stops the server with status 0" test $? -eq 0
check "stop is logged" grep -q "stopped (signal 15)" "$TMP/server.log"
finish
