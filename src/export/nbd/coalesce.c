// SPDX-License-Identifier: MIT
/*
 * Adaptive request coalescing for one NBD connection - see coalesce.h.
 *
 * The target follows additive increase (1/16 of itself plus 1 us per
 * sleep the client did not drain) and multiplicative decrease (3/4 when it
 * did), like a congestion window: the client's idle time per drained sleep
 * is about the last increase plus the timer's overshoot, and drains come
 * once per few sleeps.
 */
#include "coalesce.h"

void blk_nbd_coalesce_init(struct blk_nbd_coalesce *co, unsigned int max_us)
{
	*co = (struct blk_nbd_coalesce){ .max_ns = (uint64_t)max_us * 1000 };
	co->target_ns = co->max_ns < BLK_NBD_COALESCE_START_NS ?
			co->max_ns : BLK_NBD_COALESCE_START_NS;
}

uint64_t blk_nbd_coalesce_wait(struct blk_nbd_coalesce *co,
			       unsigned int last_batch)
{
	if (!co->max_ns)
		return 0;
	if (co->backoff) {
		co->backoff--;
		return 0;
	}
	if (last_batch < BLK_NBD_COALESCE_MIN_BATCH)
		return 0;
	return co->target_ns;
}

void blk_nbd_coalesce_update(struct blk_nbd_coalesce *co, unsigned int arrived,
			     bool drained)
{
	uint64_t t = co->target_ns;

	co->sleeps++;
	co->gathered += arrived;
	if (!drained && arrived) {
		t += t / 16 + 1000;
		co->target_ns = t > co->max_ns ? co->max_ns : t;
		return;
	}
	co->dry++;
	t = t * 3 / 4;
	/*
	 * Below the floor: this client is too shallow, or the timers too
	 * coarse (they overshoot what it takes the client to drain), for
	 * sleeping to pay.  Leave the connection alone for a while.  (How
	 * long the sleep really lasted is not a sign of coarse timers: the
	 * thread may have been preempted or throttled by a CPU quota.)
	 */
	if (t < BLK_NBD_COALESCE_MIN_NS) {
		co->backoff = BLK_NBD_COALESCE_BACKOFF_TURNS;
		t = BLK_NBD_COALESCE_START_NS;
	}
	co->target_ns = t > co->max_ns ? co->max_ns : t;
}
