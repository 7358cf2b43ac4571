#!/usr/bin/env bash
# iodepth_batch_complete_min/_max: fio's "complete" histogram
# (iodepth_complete in the JSON, the text's "complete :" line) counts
# the completions of each getevents, min..max at a time.  blkstack
# counted each wait on the device instead, so that with
# iodepth_batch_complete_min=8 96 % of its reaps showed 1-4 completions
# (fio: 5-8, 100 %).  On a null device completing on a 20 us timer.
source "$(dirname "$0")/lib.sh" "$@"

# hist ARGS...: "bucket=pct ..." of iodepth_complete, the empty ones left out
hist() {
	"$BLKSTACK" bench --name=x --dev=null --irqmode=2 --completion_nsec=20000 \
		--rw=randread --size=64m --io_size=8m --output-format=json "$@" 2>/dev/null |
		python3 -c "import json,sys; h=json.load(sys.stdin)['jobs'][0]['iodepth_complete']
print(' '.join('%s=%d' % (k, round(v)) for k, v in h.items() if v >= 0.5))"
}
h=$(hist --iodepth=16 --iodepth_batch=8 --iodepth_batch_complete_min=8)
[ "$h" = "8=100" ] && pass "complete_min=8: every reap 5-8 ($h)" ||
	fail "complete_min=8 at depth 16: iodepth_complete $h, fio's 8=100"
h=$(hist --iodepth=16 --iodepth_batch_complete_min=1)
[ "$h" = "4=100" ] && pass "complete_min=1: every reap 1-4 ($h)" ||
	fail "complete_min=1 (max = min = 1): iodepth_complete $h, expected 4=100"
h=$(hist --iodepth=16 --iodepth_batch_complete_min=16)
[ "$h" = "16=100" ] && pass "complete_min=16: every reap 9-16 ($h)" ||
	fail "complete_min=16 at depth 16: iodepth_complete $h, expected 16=100"
finish
