/* SPDX-License-Identifier: MIT */
/*
 * null driver: a device that transfers no data (unless memory_backed),
 * modelled on Linux's null_blk (Documentation/block/null_blk.rst).  It is
 * the device the block core is measured with.
 */
#ifndef BLKSTACK_NULL_H
#define BLKSTACK_NULL_H

#include "blk_mq.h"

#ifdef __cplusplus
extern "C" {
#endif

/* null_blk's irqmode: how requests complete */
enum blk_null_irqmode {
	NULL_IRQ_NONE = 0,    /* inline, inside queue_rq() */
	NULL_IRQ_SOFTIRQ = 1, /* on the queue's completion thread, at once */
	NULL_IRQ_TIMER = 2,   /* on the completion thread, completion_nsec after queue_rq() */
};

/**
 * struct blk_null_config - a null device.
 * @queue: capacity (bytes), queue limits and tag set; name, ops, cmd_size
 *	and driver_data are set by the driver.
 * @irqmode: enum blk_null_irqmode.
 * @completion_nsec: completion delay for NULL_IRQ_TIMER, in ns (0..1e9).
 * @spin_nsec: busy-wait this long (ns, 0..1e9) in queue_rq() for every
 *	request, on the submitting thread: a CPU cost per request that a
 *	benchmark can plant and then look for (A/B validation); 0: none.
 * @memory_backed: store data (pages on first write) so reads return it.
 * @fail_every: complete every Nth request with BLK_STS_IOERR (0: never).
 * @timeout_every: drop every Nth request so it times out (0: never); the
 *	timeout handler fails it with BLK_STS_TIMEOUT.
 * @requeue_every: answer BLK_STS_RESOURCE to every Nth request, once per
 *	request (0: never).
 * @discard_keeps_data: with @memory_backed, DISCARD completes without
 *	touching the data (a device whose discard does not zero: a fault to
 *	test that trimmed blocks are checked); WRITE_ZEROES still zeroes.
 */
struct blk_null_config {
	struct blk_dev_config queue;
	enum blk_null_irqmode irqmode;
	uint64_t completion_nsec;
	uint64_t spin_nsec;
	bool memory_backed;
	uint64_t fail_every;
	uint64_t timeout_every;
	uint64_t requeue_every;
	bool discard_keeps_data;
};

/**
 * blk_null_create() - create a null device.
 * @cfg: configuration; copied.
 * @dev: set on success.
 *
 * With irqmode 1 or 2 one completion thread per hardware queue is started;
 * it polls for work and sleeps 50 us when idle for 100 us.
 * Return: 0, -EINVAL for irqmode, completion_nsec or spin_nsec out of range or a bad
 * queue limit, -ENOMEM, -EAGAIN when a thread cannot be started.
 * Context: any thread.
 */
int blk_null_create(const struct blk_null_config *cfg, struct blk_dev **dev);

#ifdef __cplusplus
}
#endif

#endif /* BLKSTACK_NULL_H */
