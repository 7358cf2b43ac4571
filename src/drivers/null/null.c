// SPDX-License-Identifier: MIT
/*
 * null driver - see blkstack/null.h.
 *
 * irqmode 0 completes inside queue_rq().  irqmodes 1 and 2 hand each
 * request to the queue's completion thread through a single-producer ring:
 * queue_rq() fills entries, commit_rqs() publishes them with one release
 * store (the doorbell), and the thread completes them through the core's
 * completion ring, as a device interrupt would.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "blkstack/null.h"
#include "../ram/page_store.h"

#define likely(x) __builtin_expect(!!(x), 1)

/* time from the core (clock.c) */
uint64_t blk_time_ns(void);

struct null_cmd {
	struct request *rq;
	uint32_t gen;
	blk_status_t status;
	uint64_t due_ns;
};

struct null_queue {
	struct null_dev *nd;
	struct blk_mq_hw_ctx *hctx;
	uint64_t nr_rqs;         /* for the *_every faults */
	/* submission ring to the completion thread */
	struct null_cmd *cmds;
	uint32_t mask;
	uint32_t local_tail;     /* filled, not yet published */
	_Alignas(64) _Atomic uint32_t tail;
	_Alignas(64) _Atomic uint32_t head;
	_Atomic bool stop;
	pthread_t thread;
	bool thread_started;
};

struct null_dev {
	bool fast;               /* irqmode 0, no faults, no data */
	struct blk_null_config cfg;
	struct page_store ps;
	struct null_queue *queues;
	unsigned int nr_queues;
};

/* Apply fault injection; returns the status to complete with, or
 * BLK_STS_RESOURCE, or BLK_STS_MAX for "drop it". */
static blk_status_t null_fault(struct null_queue *nq, struct request *rq)
{
	const struct blk_null_config *c = &nq->nd->cfg;
	uint64_t n;

	if (rq->rq_flags & RQF_DRV_FLAG0) {
		/* second attempt after an injected requeue: let it through */
		rq->rq_flags &= (uint16_t)~RQF_DRV_FLAG0;
		return BLK_STS_OK;
	}
	n = ++nq->nr_rqs;
	if (c->requeue_every && n % c->requeue_every == 0) {
		rq->rq_flags |= RQF_DRV_FLAG0;
		return BLK_STS_RESOURCE;
	}
	if (c->timeout_every && n % c->timeout_every == 0)
		return BLK_STS_MAX;
	if (c->fail_every && n % c->fail_every == 0)
		return BLK_STS_IOERR;
	return BLK_STS_OK;
}

static blk_status_t null_handle_data(struct null_dev *nd, struct request *rq)
{
	switch (rq->op) {
	case BLK_OP_READ:
	case BLK_OP_WRITE:
		return ps_rq_rw(&nd->ps, rq) ? BLK_STS_NOSPC : BLK_STS_OK;
	case BLK_OP_DISCARD:
		if (nd->cfg.discard_keeps_data)
			return BLK_STS_OK;
		/* fallthrough */
	case BLK_OP_WRITE_ZEROES:
		ps_zero(&nd->ps, rq->offset, rq->data_len);
		return BLK_STS_OK;
	default:
		return BLK_STS_OK;
	}
}

/*
 * spin_nsec: a CPU cost per request on the submitting thread, as a driver
 * doing work in queue_rq would have.  A busy wait on the monotonic clock
 * rather than a sleep: a sleep's wake-up on a shared VM is late by tens of
 * us (irqmode=2 at completion_nsec=20us measured 98-200 us mean latency
 * run to run), a spin is late by one clock read.
 */
static void null_spin(uint64_t ns)
{
	uint64_t end = blk_time_ns() + ns;

	while (blk_time_ns() < end)
		;
}

static blk_status_t null_queue_rq(struct blk_mq_hw_ctx *hctx,
				  const struct blk_mq_queue_data *bd)
{
	struct null_queue *nq = blk_mq_hctx_driver_data(hctx);
	struct null_dev *nd = nq->nd;
	struct request *rq = bd->rq;
	blk_status_t st = BLK_STS_OK;
	struct null_cmd *cmd;

	/* the measured path: one load and branch before completing */
	if (likely(nd->fast)) {
		blk_mq_complete_request(rq, BLK_STS_OK);
		return BLK_STS_OK;
	}
	blk_mq_stage(rq, BLK_STAGE_DEVICE);
	if (nd->cfg.spin_nsec)
		null_spin(nd->cfg.spin_nsec);
	if (nd->cfg.fail_every | nd->cfg.timeout_every | nd->cfg.requeue_every) {
		st = null_fault(nq, rq);
		if (st == BLK_STS_RESOURCE)
			return st;
		if (st == BLK_STS_MAX)
			return BLK_STS_OK; /* dropped: the timeout handler sees it */
	}
	if (nd->cfg.memory_backed && st == BLK_STS_OK)
		st = null_handle_data(nd, rq);

	if (nd->cfg.irqmode == NULL_IRQ_NONE) {
		blk_mq_stage(rq, BLK_STAGE_DEVICE_DONE);
		blk_mq_complete_request(rq, st);
		return BLK_STS_OK;
	}
	if (nq->local_tail - atomic_load_explicit(&nq->head,
						  memory_order_acquire) > nq->mask)
		return BLK_STS_RESOURCE;
	cmd = &nq->cmds[nq->local_tail & nq->mask];
	cmd->rq = rq;
	cmd->gen = rq->gen;
	cmd->status = st;
	cmd->due_ns = nd->cfg.irqmode == NULL_IRQ_TIMER ?
			      blk_time_ns() + nd->cfg.completion_nsec : 0;
	nq->local_tail++;
	return BLK_STS_OK;
}

/* The doorbell: publish the batch to the completion thread. */
static void null_commit_rqs(struct blk_mq_hw_ctx *hctx)
{
	struct null_queue *nq = blk_mq_hctx_driver_data(hctx);

	if (nq->nd->cfg.irqmode != NULL_IRQ_NONE)
		atomic_store_explicit(&nq->tail, nq->local_tail,
				      memory_order_release);
}

static enum blk_eh_timer_return null_timeout(struct request *rq)
{
	/* as null_blk: a request the device dropped fails with TIMEOUT */
	return BLK_EH_FAIL;
}

static void null_sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };

	nanosleep(&ts, NULL);
}

static void *null_completion_thread(void *arg)
{
	struct null_queue *nq = arg;
	uint32_t head = atomic_load_explicit(&nq->head, memory_order_relaxed);
	unsigned int idle = 0;

	while (!atomic_load_explicit(&nq->stop, memory_order_relaxed)) {
		uint32_t tail = atomic_load_explicit(&nq->tail,
						     memory_order_acquire);

		if (head == tail) {
			/* spin ~100 us, then sleep so an idle queue costs no CPU */
			if (++idle < 2000) {
				__builtin_ia32_pause();
			} else {
				null_sleep_ns(50000);
			}
			continue;
		}
		idle = 0;
		while (head != tail) {
			struct null_cmd *cmd = &nq->cmds[head & nq->mask];

			if (cmd->due_ns) {
				uint64_t now = blk_time_ns();

				if (now < cmd->due_ns) {
					if (cmd->due_ns - now > 100000)
						null_sleep_ns(cmd->due_ns - now -
							      50000);
					continue;
				}
			}
			/* the request is this thread's until the ring
			 * hands it back */
			blk_mq_stage(cmd->rq, BLK_STAGE_DEVICE_DONE);
			while (blk_mq_complete_request_remote(nq->hctx, cmd->rq, cmd->gen,
							      cmd->status))
				__builtin_ia32_pause();
			head++;
			atomic_store_explicit(&nq->head, head,
					      memory_order_release);
		}
	}
	return NULL;
}

static int null_init_hctx(struct blk_mq_hw_ctx *hctx, void *data,
			  unsigned int idx)
{
	struct null_dev *nd = data;
	struct null_queue *nq = &nd->queues[idx];
	unsigned int ring = 1;

	nq->nd = nd;
	nq->hctx = hctx;
	blk_mq_hctx_set_driver_data(hctx, nq);
	if (nd->cfg.irqmode == NULL_IRQ_NONE)
		return 0;
	while (ring < nd->cfg.queue.queue_depth)
		ring <<= 1;
	nq->cmds = calloc(ring, sizeof(*nq->cmds));
	if (!nq->cmds)
		return -ENOMEM;
	nq->mask = ring - 1;
	if (pthread_create(&nq->thread, NULL, null_completion_thread, nq)) {
		free(nq->cmds);
		nq->cmds = NULL;
		return -EAGAIN;
	}
	nq->thread_started = true;
	return 0;
}

static void null_exit_hctx(struct blk_mq_hw_ctx *hctx, unsigned int idx)
{
	struct null_queue *nq = blk_mq_hctx_driver_data(hctx);

	if (nq->thread_started) {
		atomic_store(&nq->stop, true);
		pthread_join(nq->thread, NULL);
		nq->thread_started = false;
	}
	free(nq->cmds);
	nq->cmds = NULL;
}

static void null_free(void *data)
{
	struct null_dev *nd = data;

	if (nd->cfg.memory_backed)
		ps_destroy(&nd->ps);
	free(nd->queues);
	free(nd);
}

/*
 * memory_backed: the page bitmap.  Otherwise every block is reported as
 * data: reads leave the buffer untouched, so "reads as zeroes" would lie.
 */
static int null_block_status(void *data, uint64_t offset, uint64_t len,
			     struct blk_extent *ext, unsigned int nr_ext,
			     unsigned int flags)
{
	struct null_dev *nd = data;

	if (nd->cfg.memory_backed)
		return ps_block_status(&nd->ps, offset, len, ext, nr_ext);
	ext[0].length = len;
	ext[0].flags = 0;
	return 1;
}

static const struct blk_mq_ops null_mq_ops = {
	.block_status = null_block_status,
	.queue_rq = null_queue_rq,
	.commit_rqs = null_commit_rqs,
	.timeout = null_timeout,
	.init_hctx = null_init_hctx,
	.exit_hctx = null_exit_hctx,
	.free = null_free,
};

int blk_null_create(const struct blk_null_config *cfg, struct blk_dev **dev)
{
	struct blk_dev_config qc = cfg->queue;
	struct null_dev *nd;
	int ret;

	if (cfg->irqmode > NULL_IRQ_TIMER || cfg->completion_nsec > 1000000000ull ||
	    cfg->spin_nsec > 1000000000ull)
		return -EINVAL;
	nd = calloc(1, sizeof(*nd));
	if (!nd)
		return -ENOMEM;
	nd->cfg = *cfg;
	/* stage timers stamp the device stages off the fast path */
	nd->fast = cfg->irqmode == NULL_IRQ_NONE && !cfg->memory_backed &&
		   !cfg->spin_nsec && !qc.stage_timers &&
		   !cfg->fail_every && !cfg->timeout_every && !cfg->requeue_every;
	nd->nr_queues = qc.nr_hw_queues ? qc.nr_hw_queues : 1;
	nd->queues = calloc(nd->nr_queues, sizeof(*nd->queues));
	if (!nd->queues) {
		free(nd);
		return -ENOMEM;
	}
	if (!qc.queue_depth)
		qc.queue_depth = 64;
	nd->cfg.queue.queue_depth = qc.queue_depth;
	if (cfg->memory_backed) {
		ret = ps_init(&nd->ps, qc.capacity);
		if (ret) {
			free(nd->queues);
			free(nd);
			return ret;
		}
	}
	qc.name = "null";
	qc.ops = &null_mq_ops;
	qc.driver_data = nd;
	qc.cmd_size = 0;
	qc.can_flush = cfg->memory_backed;
	qc.can_discard = true;
	qc.can_write_zeroes = true;
	qc.stores_data = cfg->memory_backed;
	ret = blk_dev_create(&qc, dev);
	if (ret)
		null_free(nd);
	return ret;
}
