// SPDX-License-Identifier: MIT
/*
 * blkstack block core: tag sets, hardware queues, plugging, dispatch,
 * batched completion, requeue and timeouts.  The design and the list of
 * atomics that remain are in docs/design-block-core.md.
 *
 * Locking: a hardware queue used by one ctx (the default) is touched only
 * by that ctx's thread, so submit, dispatch and poll take no lock and no
 * atomic read-modify-write.  A hardware queue shared by several ctxs
 * (shared_hctx) takes hctx->lock around dispatch and reaping; its tag
 * bitmaps are then atomic.  Device threads only ever touch the hctx's
 * completion ring.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk-mq.h"

__thread struct blk_mq_ctx *blk_current_ctx;

#define BLK_MQ_RESOURCE_DELAY_NS (3ull * 1000 * 1000) /* as the kernel's 3 ms */

/*
 * A shared hctx takes an adaptive mutex (spins briefly, then sleeps), not a
 * spinlock: in user space a lock holder can be preempted, and shared
 * queues mean more submitting threads than queues, often than cores.
 * Measured the same as pthread_spin_lock for 4 jobs on one queue on 2
 * cores with a competing busy loop (~300 ms per 4096-I/O run, both).
 */
static inline void hctx_lock(struct blk_mq_hw_ctx *hctx)
{
	if (unlikely(hctx->shared))
		blk_mutex_lock(&hctx->lock);
}

static inline void hctx_unlock(struct blk_mq_hw_ctx *hctx)
{
	if (unlikely(hctx->shared))
		blk_mutex_unlock(&hctx->lock);
}

static unsigned int roundup_pow_of_two(unsigned int v)
{
	unsigned int r = 1;

	while (r < v)
		r <<= 1;
	return r;
}

/* ---------------------------------------------------------------- tags */

static void blk_mq_free_tags(struct blk_mq_tags *tags)
{
	if (!tags)
		return;
	sbitmap_free(&tags->bitmap_tags);
	sbitmap_free(&tags->breserved_tags);
	free(tags->rqs);
	free(tags->static_rqs);
	free(tags->rq_mem);
	free(tags->stage_mem);
	free(tags);
}

static struct blk_mq_tags *blk_mq_alloc_tags(unsigned int depth,
					     unsigned int reserved,
					     bool atomic, size_t cmd_size,
					     bool stages)
{
	struct blk_mq_tags *tags;
	unsigned int i;

	tags = calloc(1, sizeof(*tags));
	if (!tags)
		return NULL;
	tags->nr_tags = depth;
	tags->nr_reserved_tags = reserved;
	tags->rq_size = (sizeof(struct request) + cmd_size + CACHELINE - 1) &
			~(size_t)(CACHELINE - 1);
	tags->rq_mem = aligned_alloc(CACHELINE, tags->rq_size * depth);
	tags->rqs = calloc(depth, sizeof(*tags->rqs));
	tags->static_rqs = calloc(depth, sizeof(*tags->static_rqs));
	if (!tags->rq_mem || !tags->rqs || !tags->static_rqs)
		goto fail;
#ifdef BLK_STAGE_TIMERS
	if (stages) {
		tags->stage_mem = calloc((size_t)depth * BLK_STAGE_NR,
					 sizeof(uint64_t));
		if (!tags->stage_mem)
			goto fail;
	}
#else
	(void)stages;
#endif
	memset(tags->rq_mem, 0, tags->rq_size * depth);
	if (sbitmap_init(&tags->bitmap_tags, depth - reserved, atomic))
		goto fail;
	if (reserved && sbitmap_init(&tags->breserved_tags, reserved, atomic))
		goto fail;
	for (i = 0; i < depth; i++) {
		struct request *rq =
			(struct request *)((char *)tags->rq_mem + i * tags->rq_size);

		rq->tag = -1;
		rq->internal_tag = -1;
#ifdef BLK_STAGE_TIMERS
		if (tags->stage_mem)
			rq->stage_ns = tags->stage_mem + (size_t)i * BLK_STAGE_NR;
#endif
		tags->static_rqs[i] = rq;
	}
	return tags;
fail:
	blk_mq_free_tags(tags);
	return NULL;
}

/*
 * The request's fields are reset before its bit is released: once the bit
 * is free, another thread sharing the tag set may allocate the request and
 * initialise it (regression: writing rq->tag and rq->state after the put
 * clobbered the new owner's request and leaked its tag, hanging
 * shared_tags runs).  The atomic put has release semantics.
 */
static void blk_mq_put_driver_tag(struct blk_mq_ctx *ctx, struct request *rq)
{
	struct blk_mq_tags *tags = rq->mq_hctx->tags;
	unsigned int tag = (unsigned int)rq->tag;

	rq->tag = -1;
	if (unlikely(tag < tags->nr_reserved_tags))
		sbitmap_put(&tags->breserved_tags, tag, &ctx->reserved_hint);
	else
		sbitmap_put(&tags->bitmap_tags, tag - tags->nr_reserved_tags,
			    &ctx->tag_hint);
}

static inline void owned_set(uint64_t *map, unsigned int bit)
{
	map[bit / 64] |= 1ull << (bit % 64);
}

static inline void owned_clear(uint64_t *map, unsigned int bit)
{
	map[bit / 64] &= ~(1ull << (bit % 64));
}

/* blk_mq_free_rq_tags() for scheduler tags or a tracked (owned) tag. */
static void __attribute__((noinline))
blk_mq_free_rq_tags_slow(struct blk_mq_ctx *ctx, struct request *rq)
{
	struct blk_mq_tags *st = rq->mq_hctx->sched_tags;
	unsigned int itag = (unsigned int)rq->internal_tag;

	if (rq->rq_flags & RQF_OWNED) {
		rq->rq_flags &= (uint16_t)~RQF_OWNED;
		if (rq->rq_flags & RQF_ELV) {
			owned_clear(ctx->owned_sched, itag);
		} else {
			owned_clear(ctx->owned, (unsigned int)rq->tag);
			if (rq->tag >= 0)
				blk_mq_put_driver_tag(ctx, rq);
			return;
		}
	}
	/* the driver tag first: the request owns it until then */
	if (rq->tag >= 0)
		blk_mq_put_driver_tag(ctx, rq);
	rq->internal_tag = -1;
	sbitmap_put(&st->bitmap_tags, itag - st->nr_reserved_tags,
		    &ctx->sched_tag_hint);
}

/*
 * Release every tag a request holds; it returns to the idle pool.  The
 * common case inline, the rest out of line (an inline whole measured 2
 * more instructions per I/O on null: it was no longer inlined itself).
 */
static inline void blk_mq_free_rq_tags(struct blk_mq_ctx *ctx,
				       struct request *rq)
{
	rq->state = MQ_RQ_IDLE;
	if (unlikely(rq->rq_flags & (RQF_ELV | RQF_OWNED))) {
		blk_mq_free_rq_tags_slow(ctx, rq);
		return;
	}
	if (rq->tag >= 0)
		blk_mq_put_driver_tag(ctx, rq);
}

/*
 * Get a driver tag for a request allocated from scheduler tags, at
 * dispatch.  The search hint is the hctx's, not the request's ctx's: the
 * thread dispatching (under the hctx lock when the queue is shared) may
 * not be the one that owns the request, whose own hint its owner writes
 * as it frees tags (a ThreadSanitizer report, issue 11).
 */
static bool blk_mq_get_driver_tag(struct blk_mq_hw_ctx *hctx,
				  struct request *rq)
{
	struct blk_mq_tags *tags = rq->mq_hctx->tags;
	int bit;

	bit = sbitmap_get(&tags->bitmap_tags, &hctx->dispatch_tag_hint);
	if (bit < 0)
		return false;
	rq->tag = bit + (int)tags->nr_reserved_tags;
	tags->rqs[rq->tag] = rq;
	return true;
}

static inline void blk_mq_rq_init(struct blk_mq_ctx *ctx, struct request *rq,
				  unsigned int op, uint16_t rq_flags)
{
	/*
	 * state is MQ_RQ_IDLE already (set when the tag was freed), status
	 * and deadline_ns are written at completion and dispatch: not
	 * storing them here is measurable at ~300 instructions per I/O.
	 */
	rq->mq_hctx = ctx->hctx;
	rq->mq_ctx = ctx;
	rq->op = (uint8_t)op;
	rq->rq_flags = rq_flags;
	rq->gen++;
	rq->timeouts = 0;
	rq->retries = 0;
	rq->bio_done = 0;
	if (ctx->iostats) {
		rq->start_time_ns = ctx->now_ns;
		rq->rq_flags |= RQF_STATS;
	}
}

/* A request with a driver tag from the hctx's tags, or NULL when out. */
static inline __attribute__((always_inline)) struct request *
blk_mq_get_tagged(struct blk_mq_ctx *ctx, unsigned int op, uint16_t rq_flags)
{
	struct blk_mq_tags *tags = ctx->hctx->tags;
	struct request *rq;
	int bit;

	bit = sbitmap_get(&tags->bitmap_tags, &ctx->tag_hint);
	if (unlikely(bit < 0))
		return NULL;
	rq = tags->static_rqs[bit + tags->nr_reserved_tags];
	rq->tag = bit + (int)tags->nr_reserved_tags;
	blk_mq_rq_init(ctx, rq, op, rq_flags);
	return rq;
}

/*
 * Stage timers.  Off, they cost no instruction on the fast path that the
 * path did not have: allocation goes through the slow allocator
 * (slow_alloc), dispatch through a queue_rq() wrapper (hctx->ops), the
 * plug flush and the end of a completion batch test ctx->stage_on once
 * per batch, and the completion tests rq_flags, a line it writes anyway.
 */
#ifdef BLK_STAGE_TIMERS
static void blk_stage_begin(struct request *rq)
{
	memset(rq->stage_ns, 0, BLK_STAGE_NR * sizeof(uint64_t));
	rq->stage_ns[BLK_STAGE_SUBMIT] = blk_time_ns();
}

static blk_status_t blk_stage_queue_rq(struct blk_mq_hw_ctx *hctx,
				       const struct blk_mq_queue_data *bd)
{
	bd->rq->stage_ns[BLK_STAGE_DISPATCH] = blk_time_ns();
	return hctx->dev->ops->queue_rq(hctx, bd);
}

static void __attribute__((noinline))
blk_stage_list(struct request *rq, unsigned int stage)
{
	uint64_t now = blk_time_ns();

	for (; rq; rq = rq->rq_next)
		if (rq->rq_flags & RQF_STAGES)
			rq->stage_ns[stage] = now;
}

/* The end of a completion batch: stamp end_io, account every request. */
static void __attribute__((noinline))
blk_stage_end(struct blk_mq_ctx *ctx, struct request *rq)
{
	uint64_t now = blk_time_ns();

	for (; rq; rq = rq->rq_next) {
		if (!(rq->rq_flags & RQF_STAGES))
			continue;
		rq->stage_ns[BLK_STAGE_END_IO] = now;
		blk_stage_account(ctx->stages, rq->stage_ns);
	}
}
#define BLK_STAGE_ON(x) unlikely(x)
#else
static inline void blk_stage_list(struct request *rq, unsigned int s)
{
	(void)rq;
	(void)s;
}
static inline void blk_stage_end(struct blk_mq_ctx *ctx, struct request *rq)
{
	(void)ctx;
	(void)rq;
}
#define BLK_STAGE_ON(x) 0
#endif

/*
 * An elevator's scheduler tags, or tags shared with other ctxs (owned);
 * @extra: RQF_STAGES or 0.
 */
static inline __attribute__((always_inline)) struct request *
__blk_mq_get_request_slow(struct blk_mq_ctx *ctx, unsigned int op,
			  uint16_t extra)
{
	struct blk_mq_hw_ctx *hctx = ctx->hctx;
	uint16_t owned = ctx->owned ? RQF_OWNED : 0;
	struct blk_mq_tags *tags;
	struct request *rq;
	int bit;

	if (!hctx->elv) {
		rq = blk_mq_get_tagged(ctx, op, owned | extra);
		if (rq && owned)
			owned_set(ctx->owned, (unsigned int)rq->tag);
		return rq;
	}
	tags = hctx->sched_tags;
	bit = sbitmap_get(&tags->bitmap_tags, &ctx->sched_tag_hint);
	if (unlikely(bit < 0))
		return NULL;
	rq = tags->static_rqs[bit];
	rq->internal_tag = bit;
	rq->tag = -1;
	blk_mq_rq_init(ctx, rq, op, RQF_ELV | owned | extra);
	if (owned)
		owned_set(ctx->owned_sched, (unsigned int)bit);
	return rq;
}

#ifdef BLK_STAGE_TIMERS
/* Stage timers on: the request stamped at birth. */
static struct request *__attribute__((noinline))
blk_mq_get_request_stage(struct blk_mq_ctx *ctx, unsigned int op)
{
	struct request *rq = __blk_mq_get_request_slow(ctx, op, RQF_STAGES);

	if (rq)
		blk_stage_begin(rq);
	return rq;
}
#endif

static struct request *__attribute__((noinline))
blk_mq_get_request_slow(struct blk_mq_ctx *ctx, unsigned int op)
{
#ifdef BLK_STAGE_TIMERS
	if (unlikely(ctx->stage_on))
		return blk_mq_get_request_stage(ctx, op);
#endif
	return __blk_mq_get_request_slow(ctx, op, 0);
}

/* Allocate a request for @op on the ctx's hctx, or NULL when out of tags. */
static inline __attribute__((always_inline)) struct request *
blk_mq_get_request(struct blk_mq_ctx *ctx, unsigned int op)
{
	if (likely(!ctx->slow_alloc))
		return blk_mq_get_tagged(ctx, op, 0);
	return blk_mq_get_request_slow(ctx, op);
}

struct request *blk_mq_alloc_request(struct blk_mq_ctx *ctx, unsigned int op,
				     unsigned int flags)
{
	struct blk_mq_hw_ctx *hctx = ctx->hctx;
	struct request *rq;

	if (ctx->iostats)
		ctx->now_ns = blk_time_ns();
	if (flags & BLK_MQ_REQ_RESERVED) {
		struct blk_mq_tags *tags = hctx->tags;
		int bit;

		if (!tags->nr_reserved_tags)
			return NULL;
		bit = sbitmap_get(&tags->breserved_tags, &ctx->reserved_hint);
		if (bit < 0)
			return NULL;
		rq = tags->static_rqs[bit];
		rq->tag = bit;
		rq->internal_tag = -1;
		blk_mq_rq_init(ctx, rq, op,
			       RQF_RESERVED | (ctx->owned ? RQF_OWNED : 0));
		if (ctx->owned)
			owned_set(ctx->owned, (unsigned int)bit);
	} else {
		rq = blk_mq_get_request(ctx, op);
		if (!rq)
			return NULL;
	}
	rq->offset = 0;
	rq->data_len = 0;
	rq->cmd_flags = 0;
	rq->nr_segments = 0;
	rq->bio = rq->biotail = NULL;
	return rq;
}

void blk_mq_free_request(struct request *rq)
{
	blk_mq_free_rq_tags(rq->mq_ctx, rq);
}

/* ------------------------------------------------------------ dispatch */

static inline void blk_mq_start_request(struct request *rq, uint64_t deadline)
{
	rq->state = MQ_RQ_IN_FLIGHT;
	rq->deadline_ns = deadline;
}

/* The request failed or finished while dispatching: complete it inline. */
static inline void blk_mq_complete_local(struct request *rq, blk_status_t st)
{
	struct blk_mq_ctx *ctx = rq->mq_ctx;

	rq->state = MQ_RQ_COMPLETE;
	rq->status = st;
	rq_list_add_tail(&ctx->done, rq);
}

#ifdef BLK_STAGE_TIMERS
/* Stage timers: stamp the completion, then complete. */
static bool __attribute__((noinline))
blk_mq_complete_stage(struct request *rq, blk_status_t status)
{
	rq->stage_ns[BLK_STAGE_COMPLETE] = blk_time_ns();
	blk_mq_complete_local(rq, status);
	return true;
}
#endif

bool blk_mq_complete_request(struct request *rq, blk_status_t status)
{
	if (unlikely(rq->state != MQ_RQ_IN_FLIGHT))
		return false;
#ifdef BLK_STAGE_TIMERS
	/* a tail call: the common path stays a leaf, with no frame */
	if (unlikely(rq->rq_flags & RQF_STAGES))
		return blk_mq_complete_stage(rq, status);
#endif
	blk_mq_complete_local(rq, status);
	return true;
}

int blk_mq_complete_request_remote(struct blk_mq_hw_ctx *hctx,
				   struct request *rq, uint32_t gen,
				   blk_status_t status)
{
	struct blk_mq_cring *cr = &hctx->cring;
	uint32_t tail = atomic_load_explicit(&cr->tail, memory_order_relaxed);
	struct blk_mq_cring_entry *e;

	if (tail - cr->cached_head > cr->mask) {
		cr->cached_head =
			atomic_load_explicit(&cr->head, memory_order_acquire);
		if (tail - cr->cached_head > cr->mask)
			return -EAGAIN;
	}
	e = &cr->ring[tail & cr->mask];
	e->rq = rq;
	e->gen = gen;
	e->status = status;
	atomic_store_explicit(&cr->tail, tail + 1, memory_order_release);
	return 0;
}

/*
 * Hand a list of requests to the driver: queue_rq() for each, then one
 * commit_rqs().  Requests the driver could not take (BLK_STS_RESOURCE, or
 * no driver tag) go back to the front of hctx->dispatch and the queue is
 * stopped until completions restart it.  Returns requests queued.
 * Called with the hctx held.
 */
static unsigned int blk_mq_dispatch_rq_list(struct blk_mq_hw_ctx *hctx,
					    struct rq_list *list)
{
	const struct blk_mq_ops *ops = hctx->ops;
	struct blk_mq_queue_data bd;
	unsigned int queued = 0;
	uint64_t coarse = blk_time_coarse_ns();
	uint64_t deadline = coarse + hctx->dev->rq_timeout_ns;
	struct request *rq;
	bool busy = false;

	/* the ctx of the dispatching thread counts it, not another's */
	STAT_ADD(&hctx->queue_runs, 1);
	while ((rq = rq_list_pop(list))) {
		blk_status_t ret;

		if (unlikely(rq->tag < 0) &&
		    !blk_mq_get_driver_tag(hctx, rq)) {
			rq_list_add_head(list, rq);
			busy = true;
			break;
		}
		blk_mq_start_request(rq, deadline);
		/* count before queue_rq: it may complete the request inline */
		STAT_ADD(&rq->mq_ctx->stats.dispatched[rq_data_dir(rq)], 1);
		bd.rq = rq;
		bd.last = list->head == NULL;
		ret = ops->queue_rq(hctx, &bd);
		if (likely(ret == BLK_STS_OK)) {
			queued++;
			continue;
		}
		if (ret == BLK_STS_RESOURCE) {
			STAT_ADD(&rq->mq_ctx->stats.dispatched[rq_data_dir(rq)],
				 (uint64_t)-1);
			rq->state = MQ_RQ_IDLE;
			if (rq->rq_flags & RQF_ELV)
				blk_mq_put_driver_tag(rq->mq_ctx, rq);
			STAT_ADD(&rq->mq_ctx->stats.requeues, 1);
			rq_list_add_head(list, rq);
			busy = true;
			break;
		}
		/* the driver refused it: fail it now */
		blk_mq_complete_local(rq, ret);
	}
	if (queued && ops->commit_rqs)
		ops->commit_rqs(hctx);
	if (unlikely(busy)) {
		rq_list_splice_head(list, &hctx->dispatch);
		hctx->stopped = true;
		hctx->completions_since_stop = 0;
		hctx->stop_time_ns = coarse;
	}
	return queued;
}

/* Run a hardware queue: requeued requests first, then the elevator. */
static void blk_mq_run_hw_queue(struct blk_mq_hw_ctx *hctx)
{
	struct rq_list list;

	hctx->stopped = false;
	hctx->run_pending = false;
	if (hctx->dispatch.head) {
		list = hctx->dispatch;
		rq_list_init(&hctx->dispatch);
		blk_mq_dispatch_rq_list(hctx, &list);
		if (hctx->stopped)
			return;
	}
	if (!hctx->elv)
		return;
	hctx->elv_now_ns = blk_time_coarse_ns();
	while (hctx->elv->has_work(hctx)) {
		struct request *rq;

		rq_list_init(&list);
		while (list.count < BLK_PLUG_MAX_RQS &&
		       (rq = hctx->elv->dispatch_request(hctx)))
			rq_list_add_tail(&list, rq);
		if (!list.head)
			break;
		blk_mq_dispatch_rq_list(hctx, &list);
		if (hctx->stopped)
			return;
	}
}

/* Dispatch a plug's (or a single bio's) requests. */
static void blk_mq_flush_list(struct blk_mq_ctx *ctx, struct rq_list *list)
{
	struct blk_mq_hw_ctx *hctx = ctx->hctx;

	if (BLK_STAGE_ON(ctx->stage_on))
		blk_stage_list(list->head, BLK_STAGE_FLUSH);
	hctx_lock(hctx);
	if (hctx->elv) {
		blk_current_ctx = ctx;
		hctx->elv_now_ns = blk_time_coarse_ns();
		hctx->elv->insert_requests(hctx, list);
		if (!hctx->stopped)
			blk_mq_run_hw_queue(hctx);
	} else if (unlikely(hctx->stopped || hctx->dispatch.head)) {
		/* keep order behind requests waiting for the driver */
		while (list->head)
			rq_list_add_tail(&hctx->dispatch, rq_list_pop(list));
		if (!hctx->stopped)
			blk_mq_run_hw_queue(hctx);
	} else {
		blk_mq_dispatch_rq_list(hctx, list);
	}
	hctx_unlock(hctx);
}

void blk_start_plug(struct blk_mq_ctx *ctx)
{
	ctx->plugged = true;
	if (ctx->iostats)
		ctx->now_ns = blk_time_ns();
}

static void blk_mq_flush_plug(struct blk_mq_ctx *ctx)
{
	struct rq_list list;

	if (!ctx->plug.head)
		return;
	list = ctx->plug;
	rq_list_init(&ctx->plug);
	blk_mq_flush_list(ctx, &list);
}

void blk_finish_plug(struct blk_mq_ctx *ctx)
{
	blk_mq_flush_plug(ctx);
	ctx->plugged = false;
}

void blk_mq_account_merge(struct blk_mq_ctx *ctx, unsigned int op)
{
	if (ctx)
		STAT_ADD(&ctx->stats.merges[blk_op_stat_dir(op)], 1);
}

/* Check a bio against the device; 0 or -errno. */
static inline int blk_bio_check(const struct blk_mq_ctx *ctx,
				const struct blk_bio *bio)
{
	const struct blk_dev *dev = ctx->dev;
	uint64_t cap = ctx->capacity;
	uint32_t mask = ctx->lbs_mask;

	switch (bio->bi_op) {
	case BLK_OP_READ:
	case BLK_OP_WRITE: {
		/* the common case: one iovec */
		uint64_t sum = 0;
		unsigned int i;

		if (unlikely(!bio->bi_size || !bio->bi_vcnt || !bio->bi_io_vec))
			return -EINVAL;
		if (likely(bio->bi_vcnt == 1))
			sum = bio->bi_io_vec[0].iov_len;
		else
			for (i = 0; i < bio->bi_vcnt; i++)
				sum += bio->bi_io_vec[i].iov_len;
		if (unlikely(sum != bio->bi_size))
			return -EINVAL;
		break;
	}
	case BLK_OP_FLUSH:
		if (unlikely(bio->bi_size))
			return -EINVAL;
		return 0;
	case BLK_OP_DISCARD:
		if (!dev->cfg.can_discard)
			return -EOPNOTSUPP;
		if (unlikely(!bio->bi_size))
			return -EINVAL;
		break;
	case BLK_OP_WRITE_ZEROES:
		if (!dev->cfg.can_write_zeroes)
			return -EOPNOTSUPP;
		if (unlikely(!bio->bi_size))
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (unlikely((bio->bi_offset | bio->bi_size) & mask))
		return -EINVAL;
	if (unlikely(bio->bi_size > cap || bio->bi_offset > cap - bio->bi_size))
		return -ERANGE;
	return 0;
}

int blk_submit(struct blk_mq_ctx *ctx, struct blk_bio *bio)
{
	struct blk_mq_hw_ctx *hctx = ctx->hctx;
	struct request *rq;
	int ret;

	ret = blk_bio_check(ctx, bio);
	if (unlikely(ret))
		return ret;
	blk_current_ctx = ctx; /* merges are allowed into this ctx's requests */
	if (ctx->iostats) {
		if (!ctx->plugged)
			ctx->now_ns = blk_time_ns();
		if (!ctx->inflight)
			ctx->last_busy_ns = ctx->now_ns;
	}

	/*
	 * plug merge: the last request only, as the kernel does.  The
	 * contiguity test is inlined so that random I/O pays two compares,
	 * not a call (32 instructions per I/O under callgrind).
	 */
	if (ctx->plugged && ctx->plug.tail &&
	    (ctx->plug.tail->offset + ctx->plug.tail->data_len == bio->bi_offset ||
	     bio->bi_offset + bio->bi_size == ctx->plug.tail->offset)) {
		enum elv_merge how;

		rq = ctx->plug.tail;
		how = blk_try_merge(ctx->dev, rq, bio);
		if (how != ELEVATOR_NO_MERGE) {
			blk_rq_merge_bio(rq, bio, how);
			blk_mq_account_merge(ctx, bio->bi_op);
			ctx->inflight++;
			return 0;
		}
	}
	if (hctx->elv) {
		bool merged;

		hctx_lock(hctx);
		blk_current_ctx = ctx;
		hctx->elv_now_ns = blk_time_coarse_ns();
		merged = hctx->elv->bio_merge(hctx, bio);
		hctx_unlock(hctx);
		if (merged) {
			ctx->inflight++;
			return 0;
		}
	}

	rq = blk_mq_get_request(ctx, bio->bi_op);
	if (unlikely(!rq)) {
		/* the plug may hold the tags: dispatch it so polls free them */
		blk_mq_flush_plug(ctx);
		return -EAGAIN;
	}
	rq->offset = bio->bi_offset;
	rq->data_len = bio->bi_size;
	rq->cmd_flags = bio->bi_flags;
	rq->nr_segments = bio->bi_vcnt;
	bio->bi_next = NULL;
	rq->bio = rq->biotail = bio;
	ctx->inflight++;

	if (likely(ctx->plugged)) {
		rq_list_add_tail(&ctx->plug, rq);
		if (unlikely(ctx->plug.count >= BLK_PLUG_MAX_RQS))
			blk_mq_flush_plug(ctx);
	} else {
		struct rq_list list;

		rq_list_init(&list);
		rq_list_add_tail(&list, rq);
		blk_mq_flush_list(ctx, &list);
	}
	return 0;
}

void blk_mq_merge_requests(struct blk_mq_hw_ctx *hctx, struct request *rq,
			   struct request *next)
{
	rq->biotail->bi_next = next->bio;
	rq->biotail = next->biotail;
	rq->data_len += next->data_len;
	rq->nr_segments += next->nr_segments;
	if ((next->rq_flags & RQF_STATS) && next->start_time_ns < rq->start_time_ns)
		rq->start_time_ns = next->start_time_ns;
	next->bio = next->biotail = NULL;
	blk_mq_account_merge(next->mq_ctx, next->op);
	/* the caller holds the hctx; the tag's owner ctx gets the hint */
	blk_mq_free_rq_tags(next->mq_ctx, next);
}

void blk_mq_requeue_request(struct request *rq)
{
	struct blk_mq_hw_ctx *hctx = rq->mq_hctx;

	if (rq->state == MQ_RQ_IN_FLIGHT)
		STAT_ADD(&rq->mq_ctx->stats.dispatched[rq_data_dir(rq)],
			 (uint64_t)-1);
	rq->state = MQ_RQ_IDLE;
	/*
	 * With an elevator the driver tag goes back, as on BLK_STS_RESOURCE
	 * (and in the kernel's __blk_mq_requeue_request()); dispatch gets
	 * one again.  Kept, it could sit behind a request on the dispatch
	 * list that waits for that very tag: nothing would move again
	 * (an nvme reset at one tag per queue with mq-deadline hung so).
	 */
	if ((rq->rq_flags & RQF_ELV) && rq->tag >= 0)
		blk_mq_put_driver_tag(rq->mq_ctx, rq);
	STAT_ADD(&rq->mq_ctx->stats.requeues, 1);
	rq_list_add_tail(&hctx->dispatch, rq);
	hctx->run_pending = true;
}

uint32_t blk_mq_update_request(struct request *rq, uint32_t nr_bytes)
{
	struct blk_mq_ctx *ctx = rq->mq_ctx;
	uint32_t done = nr_bytes, moved = nr_bytes;

	if (nr_bytes > rq->data_len)
		done = moved = nr_bytes = rq->data_len;
	while (rq->bio && done) {
		struct blk_bio *bio = rq->bio;
		uint32_t left = bio->bi_size - rq->bio_done;

		if (done < left) {
			rq->bio_done += done;
			break;
		}
		done -= left;
		rq->bio_done = 0;
		rq->bio = bio->bi_next;
		if (!rq->bio)
			rq->biotail = NULL;
		bio->bi_next = NULL;
		bio->bi_status = BLK_STS_OK;
		bio->bi_native_status = 0;
		if (ctx->partial_tail)
			ctx->partial_tail->bi_next = bio;
		else
			ctx->partial_head = bio;
		ctx->partial_tail = bio;
	}
	rq->offset += moved;
	rq->data_len -= moved;
	STAT_ADD(&ctx->stats.sectors[blk_op_stat_dir(rq->op)], moved >> 9);
	return rq->data_len;
}

void blk_mq_kick_hw_queue(struct blk_mq_hw_ctx *hctx)
{
	hctx->run_pending = true;
}

/* End the bios partial completions ended (blk_mq_update_request()). */
static unsigned int __attribute__((noinline))
blk_mq_end_partial(struct blk_mq_ctx *ctx, struct blk_bio *bio)
{
	unsigned int n = 0;

	while (bio) {
		struct blk_bio *next = bio->bi_next;

		ctx->inflight--;
		n++;
		bio->bi_end_io(bio);
		bio = next;
	}
	ctx->nr_done += n;
	return n;
}

/* ---------------------------------------------------------- completion */

/* Reap the device threads' completions onto their ctxs' done lists. */
static inline void blk_mq_reap_cring(struct blk_mq_hw_ctx *hctx)
{
	struct blk_mq_cring *cr = &hctx->cring;
	uint32_t head = atomic_load_explicit(&cr->head, memory_order_relaxed);
	uint32_t tail = atomic_load_explicit(&cr->tail, memory_order_acquire);

	if (head == tail)
		return;
	while (head != tail) {
		struct blk_mq_cring_entry *e = &cr->ring[head & cr->mask];
		struct request *rq = e->rq;

		/* a stale completion: the request timed out and was reused */
		if (likely(rq->gen == e->gen && rq->state == MQ_RQ_IN_FLIGHT &&
			   rq->mq_hctx == hctx)) {
			blk_mq_stage(rq, BLK_STAGE_COMPLETE);
			blk_mq_complete_local(rq, e->status);
		}
		head++;
	}
	atomic_store_explicit(&cr->head, head, memory_order_release);
}

static void blk_mq_timeout_work(struct blk_mq_ctx *ctx, uint64_t now);

/*
 * End the requests of a done list: account them, free their tags, then
 * call every bio's bi_end_io.  Tags are freed before the callbacks so that
 * a callback that submits again reuses the tag just freed (still cached).
 */
static unsigned int blk_mq_end_requests(struct blk_mq_ctx *ctx,
					struct request *rq)
{
	uint64_t ios[BLK_STAT_NR_DIRS] = { 0 }, sectors[BLK_STAT_NR_DIRS] = { 0 };
	uint64_t ticks[BLK_STAT_NR_DIRS] = { 0 }, completed[2] = { 0 };
	uint64_t now = 0, run_start = 0, run_n = 0, errors = 0;
	enum blk_stat_dir run_dir = BLK_STAT_READ;
	unsigned int nr_bios = 0, d;

	if (BLK_STAGE_ON(ctx->stage_on))
		blk_stage_end(ctx, rq);
	if (ctx->iostats) {
		now = blk_time_ns();
		/* a counter other threads read (blk_dev_get_stats()) */
		STAT_ADD(&ctx->stats.io_ticks_ns, now - ctx->last_busy_ns);
		ctx->last_busy_ns = now;
	}
	while (rq) {
		struct request *next = rq->rq_next;
		struct blk_bio *bio = rq->bio;
		blk_status_t status = rq->status;
		enum blk_stat_dir dir = blk_op_stat_dir(rq->op);

		ios[dir]++;
		sectors[dir] += rq->data_len >> 9;
		completed[rq_data_dir(rq)]++;
		if (unlikely(status))
			errors++;
		if (rq->rq_flags & RQF_STATS) {
			/*
			 * Requests of one plug share their start time: add a
			 * run of equal latencies to the histogram at once.
			 */
			if (run_n && (rq->start_time_ns != run_start ||
				      dir != run_dir)) {
				ticks[run_dir] += (now - run_start) * run_n;
				if (run_dir <= BLK_STAT_WRITE)
					blk_hist_add_n(ctx->lat_hist[run_dir],
						       now - run_start, run_n);
				run_n = 0;
			}
			run_start = rq->start_time_ns;
			run_dir = dir;
			run_n++;
		}
		blk_mq_free_rq_tags(ctx, rq);
		while (bio) {
			struct blk_bio *bnext = bio->bi_next;

			bio->bi_status = status;
			bio->bi_native_status = unlikely(status) ?
				rq->native_status : 0;
			ctx->inflight--;
			nr_bios++;
			bio->bi_end_io(bio);
			bio = bnext;
		}
		rq = next;
	}
	if (run_n) {
		ticks[run_dir] += (now - run_start) * run_n;
		if (run_dir <= BLK_STAT_WRITE)
			blk_hist_add_n(ctx->lat_hist[run_dir], now - run_start,
				       run_n);
	}
	for (d = 0; d < BLK_STAT_NR_DIRS; d++) {
		if (!ios[d])
			continue;
		STAT_ADD(&ctx->stats.ios[d], ios[d]);
		STAT_ADD(&ctx->stats.sectors[d], sectors[d]);
		if (ticks[d])
			STAT_ADD(&ctx->stats.ticks_ns[d], ticks[d]);
	}
	ctx->nr_done += nr_bios;
	STAT_ADD(&ctx->stats.completed[0], completed[0]);
	STAT_ADD(&ctx->stats.completed[1], completed[1]);
	if (unlikely(errors))
		STAT_ADD(&ctx->stats.errors, errors);
	return nr_bios;
}

int blk_poll(struct blk_mq_ctx *ctx)
{
	struct blk_mq_hw_ctx *hctx = ctx->hctx;
	struct blk_bio *partial;
	struct request *done;
	unsigned int nr_rqs, nr = 0;

	hctx_lock(hctx);
	if (hctx->ops->poll)
		hctx->ops->poll(hctx);
	blk_mq_reap_cring(hctx);
	if (unlikely(++ctx->polls_since_clock >= 64)) {
		uint64_t coarse = blk_time_coarse_ns();

		ctx->polls_since_clock = 0;
		if (coarse >= ctx->next_timeout_check_ns) {
			blk_mq_timeout_work(ctx, coarse);
			ctx->next_timeout_check_ns =
				coarse + ctx->dev->timeout_check_ns;
		}
		if (hctx->stopped &&
		    coarse - hctx->stop_time_ns >= BLK_MQ_RESOURCE_DELAY_NS)
			hctx->run_pending = true;
	}
	done = ctx->done.head;
	nr_rqs = ctx->done.count;
	rq_list_init(&ctx->done);
	partial = ctx->partial_head;
	if (unlikely(partial))
		ctx->partial_head = ctx->partial_tail = NULL;
	hctx_unlock(hctx);

	if (unlikely(partial))
		nr += blk_mq_end_partial(ctx, partial);
	if (done)
		nr += blk_mq_end_requests(ctx, done);

	/*
	 * Restart a stopped queue only now that the completed requests'
	 * tags are free (regression: restarting before blk_mq_end_requests()
	 * found no driver tag, stopped again, and waited 3 ms per request
	 * with mq-deadline at hw_queue_depth=1).  Requests the run completes
	 * inline are reaped at the next poll.
	 */
	if (unlikely(hctx->shared || hctx->stopped || hctx->run_pending)) {
		hctx_lock(hctx);
		if (hctx->stopped && nr_rqs) {
			hctx->completions_since_stop += nr_rqs;
			if (hctx->completions_since_stop >= ctx->dev->cfg.run_batch)
				hctx->run_pending = true;
		}
		if (hctx->run_pending)
			blk_mq_run_hw_queue(hctx);
		hctx_unlock(hctx);
	}
	return (int)nr;
}

/*
 * Spin: poll until a completion, @spin_ns or @deadline.  Gaps between two
 * polls longer than BLK_WAIT_PREEMPT_GAP_NS are time the thread spent off
 * the CPU (preempted); the policy counts them.
 */
static int blk_wait_spin(struct blk_mq_ctx *ctx, uint64_t *now,
			 uint64_t spin_ns, uint64_t deadline, bool report)
{
	uint64_t start = *now, last = start, preempt = 0, end;
	int n = 0;

	end = spin_ns > deadline - start ? deadline : start + spin_ns;
	while (ctx->inflight) {
		n = blk_poll(ctx);
		if (n)
			break;
		__builtin_ia32_pause();
		*now = blk_time_ns();
		if (*now - last > BLK_WAIT_PREEMPT_GAP_NS)
			preempt += *now - last;
		last = *now;
		if (*now >= end)
			break;
	}
	if (report)
		blk_wait_policy_spun(&ctx->wp, *now - start, preempt,
				     !n && ctx->inflight && *now < deadline);
	return n;
}

int blk_wait(struct blk_mq_ctx *ctx, uint64_t timeout_ns)
{
	struct blk_mq_hw_ctx *hctx = ctx->hctx;
	bool can_sleep = hctx->ops->wait && !hctx->shared;
	uint64_t now, deadline, spin;
	int n, ret;

	n = blk_poll(ctx);
	if (n || !ctx->inflight)
		return n;
	now = blk_time_ns();
	deadline = timeout_ns && timeout_ns < UINT64_MAX - now ?
		   now + timeout_ns : UINT64_MAX;
	if (!can_sleep)
		return blk_wait_spin(ctx, &now, UINT64_MAX, deadline, false);
	spin = blk_wait_policy_begin(&ctx->wp, now, ctx->nr_done);
	if (spin) {
		n = blk_wait_spin(ctx, &now, spin, deadline, true);
		if (n || !ctx->inflight || now >= deadline)
			return n;
	}
	/*
	 * Sleep in the driver, in slices no longer than the timeout scan
	 * interval, each followed by a poll that runs the scan when due.
	 */
	while (ctx->inflight) {
		uint64_t slice = deadline - now;

		if (slice > ctx->dev->timeout_check_ns)
			slice = ctx->dev->timeout_check_ns;
		ret = hctx->ops->wait(hctx, slice);
		ctx->polls_since_clock = 63; /* the next poll reads the clock */
		n = blk_poll(ctx);
		if (n)
			return n;
		now = blk_time_ns();
		if (now >= deadline)
			return 0;
		if (ret && ret != -ETIME && ret != -EINTR)
			return blk_wait_spin(ctx, &now, UINT64_MAX, deadline,
					     false);
	}
	return 0;
}

void blk_ctx_get_wait_stats(const struct blk_mq_ctx *ctx,
			    struct blk_wait_stats *st)
{
	st->spins = ctx->wp.spins;
	st->sleeps = ctx->wp.sleeps;
	st->probes = ctx->wp.probes;
	st->chose_spin = ctx->wp.chose_spin;
	st->contended = ctx->wp.contended;
	st->last_gain = ctx->wp.last_gain;
}

int blk_ctx_register_buffer(struct blk_mq_ctx *ctx, void *addr, size_t len)
{
	struct blk_mq_hw_ctx *hctx = ctx->hctx;

	if (!addr || !len)
		return -EINVAL;
	if (!hctx->ops->register_buffer || hctx->shared)
		return -EOPNOTSUPP;
	return hctx->ops->register_buffer(hctx, addr, len);
}

unsigned int blk_ctx_inflight(const struct blk_mq_ctx *ctx)
{
	return ctx->inflight;
}

int blk_drain(struct blk_mq_ctx *ctx, uint64_t timeout_ns)
{
	uint64_t start = timeout_ns ? blk_time_ns() : 0;
	unsigned int spins = 0;

	if (ctx->plugged)
		blk_mq_flush_plug(ctx);
	while (ctx->inflight) {
		if (blk_poll(ctx) == 0) {
			__builtin_ia32_pause();
			if (timeout_ns && ++spins % 1024 == 0 &&
			    blk_time_ns() - start > timeout_ns)
				return -ETIMEDOUT;
		}
	}
	return 0;
}

/* ------------------------------------------------------------ timeouts */

static void blk_mq_check_expired(struct blk_mq_ctx *ctx, struct request *rq,
				 uint64_t now)
{
	enum blk_eh_timer_return ret;

	if (rq->mq_ctx != ctx || rq->state != MQ_RQ_IN_FLIGHT ||
	    !rq->deadline_ns || rq->deadline_ns > now)
		return;
	rq->timeouts++;
	STAT_ADD(&ctx->stats.timeouts, 1);
	ret = ctx->hctx->ops->timeout ? ctx->hctx->ops->timeout(rq) : BLK_EH_FAIL;
	switch (ret) {
	case BLK_EH_RESET_TIMER:
		rq->deadline_ns = now + ctx->dev->rq_timeout_ns;
		break;
	case BLK_EH_REQUEUE:
		blk_mq_requeue_request(rq);
		break;
	case BLK_EH_FAIL:
		blk_mq_complete_request(rq, BLK_STS_TIMEOUT);
		break;
	case BLK_EH_DONE:
		break;
	}
}

/* Expire the late requests among those @map says this ctx holds. */
static void blk_mq_timeout_owned(struct blk_mq_ctx *ctx, const uint64_t *map,
				 struct blk_mq_tags *tags, uint64_t now)
{
	unsigned int w, nw = (tags->nr_tags + 63) / 64;

	for (w = 0; w < nw; w++) {
		uint64_t bits = map[w];

		while (bits) {
			unsigned int b = (unsigned int)__builtin_ctzll(bits);

			bits &= bits - 1;
			blk_mq_check_expired(ctx, tags->static_rqs[w * 64 + b], now);
		}
	}
}

/* Walk the driver tags in use and expire this ctx's late requests. */
static void blk_mq_timeout_work(struct blk_mq_ctx *ctx, uint64_t now)
{
	struct blk_mq_tags *tags = ctx->hctx->tags;
	unsigned int tag;

	if (ctx->owned) {
		/* shared tags: only ours, never a request another thread owns */
		blk_mq_timeout_owned(ctx, ctx->owned, tags, now);
		if (ctx->owned_sched)
			blk_mq_timeout_owned(ctx, ctx->owned_sched,
					     ctx->hctx->sched_tags, now);
		return;
	}

	for (tag = 0; tag < tags->nr_tags; tag++) {
		struct sbitmap *sb = tag < tags->nr_reserved_tags ?
					     &tags->breserved_tags :
					     &tags->bitmap_tags;
		unsigned int bit = tag < tags->nr_reserved_tags ?
					   tag : tag - tags->nr_reserved_tags;

		if (sbitmap_test_bit(sb, bit) && tags->rqs[tag])
			blk_mq_check_expired(ctx, tags->rqs[tag], now);
	}
}

/* ------------------------------------------------------ device, ctx */

int blk_elevator_parse(const char *name, enum blk_elevator *elv)
{
	if (!strcmp(name, "none")) {
		*elv = BLK_ELV_NONE;
		return 0;
	}
	if (!strcmp(name, "mq-deadline")) {
		*elv = BLK_ELV_MQ_DEADLINE;
		return 0;
	}
	return -EINVAL;
}

static int blk_dev_check_config(struct blk_dev_config *c)
{
	const char *what = NULL;

	if (!c->logical_block_size)
		c->logical_block_size = 512;
	if (!c->max_sectors)
		c->max_sectors = 2560;
	if (!c->max_segments)
		c->max_segments = 128;
	if (!c->nr_hw_queues)
		c->nr_hw_queues = 1;
	if (!c->queue_depth)
		c->queue_depth = 64;
	if (!c->nr_requests)
		c->nr_requests = c->queue_depth > 32768 ? 65536 : 2 * c->queue_depth;
	if (!c->rq_timeout_ms)
		c->rq_timeout_ms = 30000;
	if (!c->run_batch)
		c->run_batch = 1;
	if (!c->ops || !c->ops->queue_rq)
		what = "ops: queue_rq is required";
	else if (c->logical_block_size < 512 || c->logical_block_size > 65536 ||
		 (c->logical_block_size & (c->logical_block_size - 1)))
		what = "logical_block_size: allowed 512..65536, a power of two";
	else if (!c->capacity || c->capacity % c->logical_block_size)
		what = "capacity: must be a non-zero multiple of logical_block_size";
	else if (c->max_sectors < (c->logical_block_size >> 9) ||
		 c->max_sectors > (1u << 22))
		what = "max_sectors: allowed logical_block_size/512..4194304";
	else if (c->max_segments > 65535)
		what = "max_segments: allowed 1..65535";
	else if (c->nr_hw_queues > 256)
		what = "nr_hw_queues: allowed 1..256";
	else if (c->queue_depth > 65536)
		what = "queue_depth: allowed 1..65536";
	else if (c->nr_reserved_tags >= c->queue_depth)
		what = "nr_reserved_tags: must be less than queue_depth";
	else if (c->nr_requests > 65536)
		what = "nr_requests: allowed 1..65536";
	else if (c->cmd_size > 65536)
		what = "cmd_size: allowed 0..65536";
	if (what) {
		fprintf(stderr, "blkstack: %s: invalid device config: %s\n",
			c->name ? c->name : "?", what);
		return -EINVAL;
	}
	return 0;
}

static int blk_mq_init_hctx(struct blk_dev *dev, unsigned int i)
{
	struct blk_mq_hw_ctx *hctx;
	unsigned int ring;

	hctx = aligned_alloc(CACHELINE, sizeof(*hctx));
	if (!hctx)
		return -ENOMEM;
	memset(hctx, 0, sizeof(*hctx));
	dev->hctxs[i] = hctx;
	hctx->dev = dev;
	hctx->ops = dev->cfg.stage_timers ? &dev->stage_ops : dev->ops;
	hctx->queue_num = i;
	hctx->shared = dev->cfg.shared_hctx;
	hctx->tags = dev->tags[dev->cfg.shared_tags ? 0 : i];
	rq_list_init(&hctx->dispatch);
	blk_mutex_init(&hctx->lock, "&hctx->lock", PTHREAD_MUTEX_ADAPTIVE_NP);
	ring = roundup_pow_of_two(hctx->tags->nr_tags);
	hctx->cring.ring = calloc(ring, sizeof(*hctx->cring.ring));
	if (!hctx->cring.ring)
		return -ENOMEM;
	hctx->cring.mask = ring - 1;
	return 0;
}

int blk_dev_create(const struct blk_dev_config *cfg, struct blk_dev **devp)
{
	struct blk_dev *dev;
	unsigned int i;
	int ret = -ENOMEM;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dev->cfg = *cfg;
	ret = blk_dev_check_config(&dev->cfg);
	if (ret) {
		free(dev);
		return ret;
	}
#ifndef BLK_STAGE_TIMERS
	if (dev->cfg.stage_timers) {
		free(dev);
		return -EOPNOTSUPP;
	}
#else
	dev->stage_ops = *dev->cfg.ops;
	dev->stage_ops.queue_rq = blk_stage_queue_rq;
#endif
	ret = -ENOMEM;
	dev->ops = dev->cfg.ops;
	dev->lbs_shift = (unsigned int)__builtin_ctz(dev->cfg.logical_block_size);
	dev->rq_timeout_ns = (uint64_t)dev->cfg.rq_timeout_ms * 1000000ull;
	dev->timeout_check_ns = dev->rq_timeout_ns / 4;
	if (dev->timeout_check_ns < 1000000)
		dev->timeout_check_ns = 1000000;
	if (dev->timeout_check_ns > 1000000000)
		dev->timeout_check_ns = 1000000000;
	blk_mutex_init(&dev->ctx_lock, "&blk_dev->ctx_lock", -1);
	dev->nr_tags = dev->cfg.shared_tags ? 1 : dev->cfg.nr_hw_queues;
	dev->tags = calloc(dev->nr_tags, sizeof(*dev->tags));
	dev->hctxs = calloc(dev->cfg.nr_hw_queues, sizeof(*dev->hctxs));
	if (!dev->tags || !dev->hctxs)
		goto fail;
	for (i = 0; i < dev->nr_tags; i++) {
		dev->tags[i] = blk_mq_alloc_tags(
			dev->cfg.queue_depth, dev->cfg.nr_reserved_tags,
			dev->cfg.shared_tags || dev->cfg.shared_hctx,
			dev->cfg.cmd_size, dev->cfg.stage_timers);
		if (!dev->tags[i])
			goto fail;
		/* without an elevator, tag i is always static request i */
		memcpy(dev->tags[i]->rqs, dev->tags[i]->static_rqs,
		       sizeof(*dev->tags[i]->rqs) * dev->cfg.queue_depth);
	}
	for (i = 0; i < dev->cfg.nr_hw_queues; i++) {
		ret = blk_mq_init_hctx(dev, i);
		if (ret)
			goto fail;
	}
	for (i = 0; i < dev->cfg.nr_hw_queues; i++) {
		if (!dev->ops->init_hctx)
			break;
		ret = dev->ops->init_hctx(dev->hctxs[i], dev->cfg.driver_data, i);
		if (ret) {
			while (i--)
				if (dev->ops->exit_hctx)
					dev->ops->exit_hctx(dev->hctxs[i], i);
			goto fail;
		}
	}
	*devp = dev;
	return 0;
fail:
	dev->ops = NULL; /* no exit_hctx, no free: the driver cleans up */
	blk_dev_close(dev);
	return ret;
}

static void blk_dev_exit_elevator(struct blk_dev *dev)
{
	unsigned int i;

	for (i = 0; i < dev->cfg.nr_hw_queues; i++) {
		struct blk_mq_hw_ctx *hctx = dev->hctxs[i];

		if (!hctx)
			continue;
		if (hctx->elv)
			hctx->elv->exit_hctx(hctx);
		hctx->elv = NULL;
		blk_mq_free_tags(hctx->sched_tags);
		hctx->sched_tags = NULL;
		/* driver tags map to their static requests again */
		memcpy(hctx->tags->rqs, hctx->tags->static_rqs,
		       sizeof(*hctx->tags->rqs) * hctx->tags->nr_tags);
	}
	dev->elevator = BLK_ELV_NONE;
}

int blk_dev_set_elevator(struct blk_dev *dev, enum blk_elevator elv)
{
	const struct elevator_type *type;
	unsigned int i;
	int ret;

	if (elv != BLK_ELV_NONE && elv != BLK_ELV_MQ_DEADLINE)
		return -EINVAL;
	blk_mutex_lock(&dev->ctx_lock);
	if (dev->nr_ctx) {
		blk_mutex_unlock(&dev->ctx_lock);
		return -EBUSY;
	}
	blk_dev_exit_elevator(dev);
	if (elv == BLK_ELV_NONE) {
		blk_mutex_unlock(&dev->ctx_lock);
		return 0;
	}
	type = &elv_mq_deadline;
	for (i = 0; i < dev->cfg.nr_hw_queues; i++) {
		struct blk_mq_hw_ctx *hctx = dev->hctxs[i];

		hctx->sched_tags = blk_mq_alloc_tags(dev->cfg.nr_requests, 0,
						     hctx->shared,
						     dev->cfg.cmd_size,
						     dev->cfg.stage_timers);
		if (!hctx->sched_tags) {
			ret = -ENOMEM;
			goto fail;
		}
		memset(hctx->tags->rqs, 0,
		       sizeof(*hctx->tags->rqs) * hctx->tags->nr_tags);
		ret = type->init_hctx(hctx);
		if (ret)
			goto fail;
		hctx->elv = type;
	}
	dev->elevator = elv;
	blk_mutex_unlock(&dev->ctx_lock);
	return 0;
fail:
	blk_dev_exit_elevator(dev);
	blk_mutex_unlock(&dev->ctx_lock);
	return ret;
}

void blk_dev_close(struct blk_dev *dev)
{
	unsigned int i;

	if (!dev)
		return;
	if (dev->hctxs)
		blk_dev_exit_elevator(dev);
	for (i = 0; dev->hctxs && i < dev->cfg.nr_hw_queues; i++) {
		struct blk_mq_hw_ctx *hctx = dev->hctxs[i];

		if (!hctx)
			continue;
		if (dev->ops && dev->ops->exit_hctx)
			dev->ops->exit_hctx(hctx, i);
		free(hctx->cring.ring);
		blk_mutex_destroy(&hctx->lock);
		free(hctx);
	}
	for (i = 0; dev->tags && i < dev->nr_tags; i++)
		blk_mq_free_tags(dev->tags[i]);
	if (dev->ops && dev->ops->free)
		dev->ops->free(dev->cfg.driver_data);
	free(dev->retired_hist[0]);
	free(dev->retired_hist[1]);
	free(dev->tags);
	free(dev->hctxs);
	blk_mutex_destroy(&dev->ctx_lock);
	free(dev);
}

void blk_dev_get_info(const struct blk_dev *dev, struct blk_dev_info *info)
{
	const struct blk_dev_config *c = &dev->cfg;

	info->name = c->name;
	info->capacity = c->capacity;
	info->logical_block_size = c->logical_block_size;
	info->max_sectors = c->max_sectors;
	info->max_segments = c->max_segments;
	info->max_discard_sectors = c->max_discard_sectors;
	info->max_write_zeroes_sectors = c->max_write_zeroes_sectors;
	info->nr_hw_queues = c->nr_hw_queues;
	info->queue_depth = c->queue_depth;
	info->can_flush = c->can_flush;
	info->can_discard = c->can_discard;
	info->can_write_zeroes = c->can_write_zeroes;
	info->stores_data = c->stores_data;
}

int blk_dev_block_status(struct blk_dev *dev, uint64_t offset, uint64_t len,
			 struct blk_extent *ext, unsigned int nr_ext,
			 unsigned int flags)
{
	uint64_t cap = dev->cfg.capacity;

	if (!len || !nr_ext || (flags & ~BLK_STATUS_NOWAIT))
		return -EINVAL;
	if (offset >= cap || len > cap - offset)
		return -ERANGE;
	if (!dev->ops->block_status) {
		ext[0].length = len;
		ext[0].flags = 0;
		return 1;
	}
	return dev->ops->block_status(dev->cfg.driver_data, offset, len, ext,
				      nr_ext, flags);
}

void *blk_dev_driver_data(struct blk_dev *dev)
{
	return dev->cfg.driver_data;
}

void blk_mq_hctx_set_driver_data(struct blk_mq_hw_ctx *hctx, void *data)
{
	hctx->driver_data = data;
}

unsigned int blk_mq_hctx_index(const struct blk_mq_hw_ctx *hctx)
{
	return hctx->queue_num;
}

struct blk_dev *blk_mq_hctx_dev(struct blk_mq_hw_ctx *hctx)
{
	return hctx->dev;
}

void blk_dev_poll_idle(struct blk_dev *dev)
{
	unsigned int i;

	/* the ctx lock keeps blk_ctx_attach() from handing one out meanwhile */
	blk_mutex_lock(&dev->ctx_lock);
	for (i = 0; i < dev->cfg.nr_hw_queues; i++) {
		struct blk_mq_hw_ctx *h = dev->hctxs[i];

		if (!h->nr_ctx && h->ops->poll)
			h->ops->poll(h);
	}
	blk_mutex_unlock(&dev->ctx_lock);
}

int blk_ctx_attach(struct blk_dev *dev, struct blk_mq_ctx **ctxp)
{
	struct blk_mq_hw_ctx *best = NULL;
	struct blk_mq_ctx *ctx;
	unsigned int i;
	int ret = 0;

	blk_mutex_lock(&dev->ctx_lock);
	for (i = 0; i < dev->cfg.nr_hw_queues; i++) {
		struct blk_mq_hw_ctx *h = dev->hctxs[i];

		if (!best || h->nr_ctx < best->nr_ctx)
			best = h;
	}
	if (best->nr_ctx && !dev->cfg.shared_hctx) {
		ret = -EBUSY;
		goto out;
	}
	ctx = aligned_alloc(CACHELINE, sizeof(*ctx));
	if (!ctx) {
		ret = -ENOMEM;
		goto out;
	}
	memset(ctx, 0, sizeof(*ctx));
	ctx->dev = dev;
	ctx->hctx = best;
	ctx->capacity = dev->cfg.capacity;
	ctx->lbs_mask = dev->cfg.logical_block_size - 1;
	ctx->iostats = dev->cfg.iostats;
	rq_list_init(&ctx->plug);
	rq_list_init(&ctx->done);
	if (ctx->iostats) {
		for (i = 0; i < 2; i++) {
			ctx->lat_hist[i] = malloc(sizeof(struct blk_hist));
			if (!ctx->lat_hist[i]) {
				free(ctx->lat_hist[0]);
				free(ctx);
				ret = -ENOMEM;
				goto out;
			}
			blk_hist_init(ctx->lat_hist[i]);
		}
	}
	ctx->next_timeout_check_ns = blk_time_coarse_ns() + dev->timeout_check_ns;
	blk_wait_policy_init(&ctx->wp, dev->cfg.wait_mode, dev->cfg.spin_max_ns);
	if (dev->cfg.shared_tags || dev->cfg.shared_hctx) {
		struct blk_mq_tags *st = best->sched_tags;

		ctx->owned = calloc((best->tags->nr_tags + 63) / 64, 8);
		if (st)
			ctx->owned_sched = calloc((st->nr_tags + 63) / 64, 8);
		if (!ctx->owned || (st && !ctx->owned_sched)) {
			free(ctx->owned);
			free(ctx->owned_sched);
			free(ctx->lat_hist[0]);
			free(ctx->lat_hist[1]);
			free(ctx);
			ret = -ENOMEM;
			goto out;
		}
	}
	if (dev->cfg.stage_timers) {
		ctx->stages = malloc(sizeof(*ctx->stages));
		if (!ctx->stages) {
			free(ctx->owned);
			free(ctx->owned_sched);
			free(ctx->lat_hist[0]);
			free(ctx->lat_hist[1]);
			free(ctx);
			ret = -ENOMEM;
			goto out;
		}
		blk_stage_stats_init(ctx->stages, dev->cfg.stage_win_from,
				     dev->cfg.stage_win_to, BLK_STAGE_WINDOW_NS);
		ctx->stage_on = true;
	}
	/* stage timers stamp the submit stage in the slow allocator */
	ctx->slow_alloc = best->elv || ctx->owned || ctx->stage_on;
	best->nr_ctx++;
	ctx->next = dev->ctxs;
	dev->ctxs = ctx;
	dev->nr_ctx++;
	*ctxp = ctx;
out:
	blk_mutex_unlock(&dev->ctx_lock);
	return ret;
}

static void blk_stats_add(struct blk_mq_ctx_stats *dst,
			  const struct blk_mq_ctx_stats *src)
{
	const uint64_t *s = (const uint64_t *)src;
	uint64_t *d = (uint64_t *)dst;
	size_t i;

	for (i = 0; i < sizeof(*src) / sizeof(uint64_t); i++)
		d[i] += STAT_READ(&s[i]);
}

void blk_ctx_detach(struct blk_mq_ctx *ctx)
{
	struct blk_dev *dev = ctx->dev;
	struct blk_mq_ctx **pp;
	unsigned int i;

	blk_drain(ctx, 0);
	ctx->plugged = false;
	blk_mutex_lock(&dev->ctx_lock);
	for (pp = &dev->ctxs; *pp; pp = &(*pp)->next) {
		if (*pp == ctx) {
			*pp = ctx->next;
			break;
		}
	}
	blk_stats_add(&dev->retired, &ctx->stats);
	for (i = 0; i < 2; i++) {
		if (!ctx->lat_hist[i])
			continue;
		if (!dev->retired_hist[i]) {
			dev->retired_hist[i] = malloc(sizeof(struct blk_hist));
			if (dev->retired_hist[i])
				blk_hist_init(dev->retired_hist[i]);
		}
		if (dev->retired_hist[i])
			blk_hist_merge(dev->retired_hist[i], ctx->lat_hist[i]);
		free(ctx->lat_hist[i]);
	}
	ctx->hctx->nr_ctx--;
	dev->nr_ctx--;
	blk_mutex_unlock(&dev->ctx_lock);
	free(ctx->owned);
	free(ctx->owned_sched);
	if (ctx->stages) {
		blk_stage_stats_free(ctx->stages);
		free(ctx->stages);
	}
	free(ctx);
}

int blk_ctx_get_stage_stats(const struct blk_mq_ctx *ctx,
			    struct blk_stage_stats *out)
{
	if (!ctx->stages)
		return -ENODATA;
	return blk_stage_stats_merge(out, ctx->stages);
}

/* Sum of every ctx's counters, retired ones included.  stats.c reports. */
void blk_dev_sum_stats(const struct blk_dev *dev, struct blk_mq_ctx_stats *sum)
{
	struct blk_dev *d = (struct blk_dev *)dev;
	const struct blk_mq_ctx *ctx;

	memset(sum, 0, sizeof(*sum));
	blk_mutex_lock(&d->ctx_lock);
	blk_stats_add(sum, &dev->retired);
	for (ctx = dev->ctxs; ctx; ctx = ctx->next)
		blk_stats_add(sum, &ctx->stats);
	blk_mutex_unlock(&d->ctx_lock);
}

void blk_dev_get_lat_hist(const struct blk_dev *dev, enum blk_stat_dir dir,
			  struct blk_hist *out)
{
	struct blk_dev *d = (struct blk_dev *)dev;
	const struct blk_mq_ctx *ctx;

	if (dir > BLK_STAT_WRITE)
		return;
	blk_mutex_lock(&d->ctx_lock);
	if (dev->retired_hist[dir])
		blk_hist_merge(out, dev->retired_hist[dir]);
	for (ctx = dev->ctxs; ctx; ctx = ctx->next)
		if (ctx->lat_hist[dir])
			blk_hist_merge(out, ctx->lat_hist[dir]);
	blk_mutex_unlock(&d->ctx_lock);
}
