#!/usr/bin/env bash
# blkstack serve's command line: errors name the option and what is
# allowed; help texts list the subcommand and its options; the default
# export and --unix alone work.
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/nbd_lib.sh"

expect_error "--nbd without a value" "--nbd needs a value" serve --nbd
expect_error "job options are refused" "option 'bs' cannot be set here" serve --bs=4k --size=1M
expect_error "ram needs a size" "--size= is required for dev=ram" serve --dev=ram
expect_error "unknown device" "unknown device 'nvme2', allowed" serve --dev=nvme2 --size=1M
expect_error "bad address" "--nbd=nohost: expected HOST:PORT" serve --nbd=nohost --size=1M
expect_error "port out of range (not taken modulo 65536)" "--nbd=127.0.0.1:99999: port must be 0..65535" \
	serve --nbd=127.0.0.1:99999 --size=1M
expect_error "port not a number" "--nbd=127.0.0.1:-5: port must be 0..65535" \
	serve --nbd=127.0.0.1:-5 --size=1M
expect_error "export named twice" "--export=a given twice" serve --size=1M --export=a --export=a
expect_error "bad --max-inflight" "--max-inflight=0: allowed 1..1024" serve --size=1M --max-inflight=0
expect_error "uring needs a file" "dev=uring needs filename=" serve --dev=uring
# regression (issue 11): serve's size errors called the option dev_size=
expect_error "size not a multiple of the block size names --size" "^blkstack serve: --size=1000: not a multiple of 512" \
	serve --size=1000 --logical_block_size=4096
expect_error "a bad size names --size" "^blkstack serve: --size=abc: not a size" serve --size=abc
# regression (issue 11): a failed create left a 0-byte file behind
expect_error "a file too large to create" "filename=$TMP/big.img: cannot size it to .*File too large" \
	serve --dev=uring --filename="$TMP/big.img" --size=1P
check "a failed create leaves no file behind" test ! -e "$TMP/big.img"
# regression (issue 11): a directory as the file named the path, not the option
expect_error "a directory as filename" "filename=$TMP: a directory; dev=uring takes a regular file" \
	serve --dev=uring --filename="$TMP" --size=1M
expect_error "unknown option" "unknown option 'frobnicate'" serve --frobnicate=1 --size=1M
check "blkstack help lists serve" bash -c "'$BLKSTACK' help | grep -q '^  serve'"
check "serve --help lists --export and --read-only" \
	bash -c "'$BLKSTACK' serve --help | grep -q -- '--export=NAME' && '$BLKSTACK' serve --help | grep -q -- '--read-only'"

# a port in use is an error that names the address
start_server --size=1M || exit 1
expect_error "port in use" "127.0.0.1:$PORT: cannot listen: Address already in use" \
	serve --size=1M --nbd=127.0.0.1:$PORT
stop_server
check "server stopped" test $? -eq 0
finish
