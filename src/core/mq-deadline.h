/* SPDX-License-Identifier: MIT */
/*
 * mq-deadline I/O scheduler: tunables and counters.
 *
 * The scheduler itself is reached through elv_mq_deadline (blk-mq.h).  Its
 * state is per hardware queue, so every function here takes the hctx; to
 * tune a whole device, call it for each of the device's hctxs.
 *
 * Semantics follow Documentation/block/deadline-iosched.rst.
 */
#ifndef BLKSTACK_CORE_MQ_DEADLINE_H
#define BLKSTACK_CORE_MQ_DEADLINE_H

#include <stdint.h>

struct blk_mq_hw_ctx;

/* Defaults, as the kernel's (the sysfs iosched attributes). */
#define DD_READ_EXPIRE_MS 500
#define DD_WRITE_EXPIRE_MS 5000
#define DD_WRITES_STARVED 2
#define DD_FIFO_BATCH 16
#define DD_FRONT_MERGES 1
#define DD_PRIO_AGING_EXPIRE_MS 10000 /* Linux's prio_aging_expire (10 s) */

/**
 * struct mq_deadline_stats - what one hctx's scheduler did.
 * @inserted: requests handed to insert_requests() per READ/WRITE, flushes
 *	excluded, insert-merged ones included.
 * @dispatched: requests dispatched from the sort trees, per READ/WRITE.
 * @fifo_expired: batches started at the FIFO head because its deadline
 *	had passed, per READ/WRITE.
 * @starved_write_batches: write batches started because reads had been
 *	preferred writes_starved times while writes waited.
 * @bypass_dispatched: flushes (and untracked requests) dispatched ahead
 *	of the sorted ones.
 * @untracked: requests inserted without a usable scheduler tag (none,
 *	out of range, or its node still queued), which went to the bypass
 *	list unsorted; should stay 0.
 * @back_merges: bios merged at the end of a queued request.
 * @front_merges: bios merged at the start of a queued request.
 * @insert_merges: inserted requests merged into a queued one.
 * @rq_merges: queued requests merged into a neighbour after a bio merge
 *	or an insert made them contiguous.
 */
struct mq_deadline_stats {
	uint64_t inserted[2];
	uint64_t dispatched[2];
	uint64_t fifo_expired[2];
	uint64_t starved_write_batches;
	uint64_t bypass_dispatched;
	uint64_t untracked;
	uint64_t back_merges;
	uint64_t front_merges;
	uint64_t insert_merges;
	uint64_t rq_merges;
	uint64_t dispatched_prio[3];   /* by class: RT, BE (and none), IDLE */
	uint64_t prio_aged;            /* BE/IDLE sent ahead after prio_aging_expire */
};

/**
 * mq_deadline_set_tunable() - set one scheduler attribute of a queue.
 * @hctx: a hardware queue running mq-deadline.
 * @name: "read_expire" or "write_expire" (ms), "writes_starved",
 *	"fifo_batch", "front_merges" (0 or 1).
 * @value: the new value.
 *
 * Like writing /sys/block/X/queue/iosched/@name, for one hctx.  A new
 * expiry applies to requests inserted from then on.
 * Return: 0; -EINVAL when @hctx does not run mq-deadline or @value is out
 * of range (expiries and counts up to INT_MAX); -ENOENT for an unknown
 * @name.
 * Context: the thread that holds @hctx, or no I/O running on it.
 */
int mq_deadline_set_tunable(struct blk_mq_hw_ctx *hctx, const char *name,
			    uint64_t value);

/**
 * mq_deadline_get_tunable() - read one scheduler attribute of a queue.
 * @hctx: a hardware queue running mq-deadline.
 * @name: as for mq_deadline_set_tunable().
 * @value: set on success, in the attribute's unit (ms for expiries).
 *
 * Return: 0, -EINVAL or -ENOENT as mq_deadline_set_tunable().
 * Context: any; exact when no I/O runs.
 */
int mq_deadline_get_tunable(struct blk_mq_hw_ctx *hctx, const char *name,
			    uint64_t *value);

/**
 * mq_deadline_get_stats() - copy a queue's scheduler counters.
 * @hctx: a hardware queue running mq-deadline.
 * @st: filled in.
 *
 * Return: 0, or -EINVAL when @hctx does not run mq-deadline.
 * Context: the thread that holds @hctx, or no I/O running on it (the
 * counters are plain, written by the hctx's thread).
 */
int mq_deadline_get_stats(struct blk_mq_hw_ctx *hctx,
			  struct mq_deadline_stats *st);

#endif /* BLKSTACK_CORE_MQ_DEADLINE_H */
