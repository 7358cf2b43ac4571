/* SPDX-License-Identifier: MIT */
/*
 * Block core internals: device, hardware queue (hctx), software context
 * (ctx), elevator interface.  Not part of the public API.
 */
#ifndef BLKSTACK_CORE_BLK_MQ_H
#define BLKSTACK_CORE_BLK_MQ_H

#include <pthread.h>
#include <stdatomic.h>

#include "blkstack/lock.h"
#include "blkstack/blk_mq.h"
#include "blkstack/hist.h"
#include "sbitmap.h"
#include "wait_policy.h"

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define CACHELINE 64

/* Requests a plug holds before it is flushed (the kernel's BLK_MAX_REQUEST_COUNT). */
#define BLK_PLUG_MAX_RQS 32

/*
 * Counters written by one thread and read by any: updated with a relaxed
 * load and store, never a read-modify-write (a plain add on x86).
 */
#define STAT_ADD(p, v) \
	__atomic_store_n((p), __atomic_load_n((p), __ATOMIC_RELAXED) + (v), \
			 __ATOMIC_RELAXED)
#define STAT_READ(p) __atomic_load_n((p), __ATOMIC_RELAXED)

/* A singly linked request list with a tail, linked through rq_next. */
struct rq_list {
	struct request *head;
	struct request *tail;
	unsigned int count;
};

static inline void rq_list_init(struct rq_list *l)
{
	l->head = l->tail = NULL;
	l->count = 0;
}

static inline void rq_list_add_tail(struct rq_list *l, struct request *rq)
{
	rq->rq_next = NULL;
	if (l->tail)
		l->tail->rq_next = rq;
	else
		l->head = rq;
	l->tail = rq;
	l->count++;
}

static inline void rq_list_add_head(struct rq_list *l, struct request *rq)
{
	rq->rq_next = l->head;
	l->head = rq;
	if (!l->tail)
		l->tail = rq;
	l->count++;
}

static inline struct request *rq_list_pop(struct rq_list *l)
{
	struct request *rq = l->head;

	if (rq) {
		l->head = rq->rq_next;
		if (!l->head)
			l->tail = NULL;
		l->count--;
		rq->rq_next = NULL;
	}
	return rq;
}

/* Move all of @src to the front of @dst. */
static inline void rq_list_splice_head(struct rq_list *src, struct rq_list *dst)
{
	if (!src->head)
		return;
	src->tail->rq_next = dst->head;
	if (!dst->tail)
		dst->tail = src->tail;
	dst->head = src->head;
	dst->count += src->count;
	rq_list_init(src);
}

/* Tags of one hardware queue, or of all of them when the set is shared. */
struct blk_mq_tags {
	struct sbitmap bitmap_tags;   /* tags nr_reserved .. depth-1 */
	struct sbitmap breserved_tags; /* tags 0 .. nr_reserved-1 */
	unsigned int nr_tags;
	unsigned int nr_reserved_tags;
	struct request **rqs;         /* tag -> request it is assigned to */
	struct request **static_rqs;  /* tag -> request owned by the tag */
	void *rq_mem;                 /* static requests (with pdu) */
	size_t rq_size;
	uint64_t *stage_mem;          /* stage timers: BLK_STAGE_NR per request */
};

/* Completion handed back by a device thread. */
struct blk_mq_cring_entry {
	struct request *rq;
	uint32_t gen;
	blk_status_t status;
};

/*
 * Single-producer single-consumer ring.  Producer: the hctx's device
 * thread.  Consumer: the ctx thread(s) of the hctx (under the hctx lock
 * when shared).  head and tail live in separate cache lines; the only
 * atomics are an acquire load and a release store on each side.
 */
struct blk_mq_cring {
	_Alignas(CACHELINE) _Atomic uint32_t tail; /* producer writes */
	uint32_t cached_head;                      /* producer's view */
	_Alignas(CACHELINE) _Atomic uint32_t head; /* consumer writes */
	uint32_t mask;
	struct blk_mq_cring_entry *ring;
};

struct elevator_type;

struct blk_mq_hw_ctx {
	/* hot: dispatch.  driver_data first: blk_mq_hctx_driver_data() */
	void *driver_data;
	struct blk_dev *dev;
	const struct blk_mq_ops *ops;
	struct blk_mq_tags *tags;       /* driver tags */
	struct blk_mq_tags *sched_tags; /* with an elevator */
	void *sched_data;
	const struct elevator_type *elv;
	bool shared;                    /* more than one ctx: lock */
	bool stopped;                   /* RESOURCE seen: wait for completions */
	bool run_pending;               /* requeued work: run at next poll */
	uint64_t stop_time_ns;          /* coarse time the queue stopped */
	unsigned int queue_num;
	unsigned int nr_ctx;
	unsigned int nr_active;         /* driver tags in use (dispatched) */
	unsigned int completions_since_stop;
	struct rq_list dispatch;        /* requeued / RESOURCE, before elevator */
	uint64_t elv_now_ns;            /* coarse time for the elevator */
	unsigned int dispatch_tag_hint; /* driver tag search hint at dispatch */
	uint64_t queue_runs;            /* dispatch runs (STAT_ADD, hctx held) */
	struct blk_mutex lock;          /* only when shared: adaptive mutex */
	struct blk_mq_cring cring;
};

_Static_assert(__builtin_offsetof(struct blk_mq_hw_ctx, driver_data) == 0,
	       "blk_mq_hctx_driver_data() reads the first member");

/* Per-ctx counters; see struct blk_disk_stats. */
struct blk_mq_ctx_stats {
	uint64_t ios[BLK_STAT_NR_DIRS];
	uint64_t sectors[BLK_STAT_NR_DIRS];
	uint64_t merges[BLK_STAT_NR_DIRS];
	uint64_t ticks_ns[BLK_STAT_NR_DIRS];
	uint64_t dispatched[2];
	uint64_t completed[2];
	uint64_t io_ticks_ns;
	uint64_t requeues;
	uint64_t timeouts;
	uint64_t queue_runs;
	uint64_t errors;
};

struct blk_mq_ctx {
	/* hot: submit and poll */
	struct blk_dev *dev;
	struct blk_mq_hw_ctx *hctx;
	uint64_t capacity;              /* copies of the device's limits, */
	uint32_t lbs_mask;              /* in the ctx's first cache line */
	unsigned int tag_hint;
	unsigned int sched_tag_hint;
	unsigned int reserved_hint;
	unsigned int inflight;          /* bios accepted, not completed */
	bool plugged;
	bool iostats;
	bool slow_alloc;                /* elevator, or owned tags tracked */
	bool stage_on;                  /* stage timers (pad byte of line 0) */
	struct rq_list plug;
	struct rq_list done;            /* completed, end_io pending */
	uint64_t now_ns;                /* cached clock for a batch (iostats) */
	uint64_t coarse_ns;             /* cached coarse clock (timeouts) */
	uint64_t next_timeout_check_ns;
	uint64_t last_busy_ns;          /* io_ticks accounting */
	unsigned int polls_since_clock;
	struct blk_mq_ctx_stats stats;
	struct blk_hist *lat_hist[2];   /* READ, WRITE; NULL without iostats */
	struct blk_mq_ctx *next;        /* device's list of ctxs */
	uint64_t nr_done;               /* bios completed, for blk_wait() */
	/* bios a partial completion ended (blk_mq_update_request()): their
	 * bi_end_io runs at the next blk_poll(); appended with the hctx held */
	struct blk_bio *partial_head, *partial_tail;
	/*
	 * Where other ctxs draw from the same tags (shared_tags, shared_hctx):
	 * the tags this ctx holds, one bit per driver tag (@owned) and per
	 * scheduler tag (@owned_sched), written only by this ctx's thread.
	 * The timeout scan walks them instead of the whole tag space, so it
	 * never reads a request another thread is setting up.  NULL when the
	 * tags are this ctx's alone.
	 */
	uint64_t *owned;
	uint64_t *owned_sched;
	struct blk_wait_policy wp;      /* blk_wait(): spin or sleep */
	struct blk_stage_stats *stages; /* stage timers: NULL when off */
} __attribute__((aligned(CACHELINE)));

struct blk_dev {
	struct blk_dev_config cfg;
	const struct blk_mq_ops *ops;
	unsigned int lbs_shift;
	uint64_t rq_timeout_ns;
	uint64_t timeout_check_ns;      /* interval of the timeout scan */
	struct blk_mq_hw_ctx **hctxs;
	struct blk_mq_tags **tags;      /* per hctx, or one if shared */
	unsigned int nr_tags;           /* entries in tags[] */
	enum blk_elevator elevator;
	struct blk_mutex ctx_lock;      /* attach / detach, ctx list */
	struct blk_mq_ctx *ctxs;
	unsigned int nr_ctx;
	/* counters of detached ctxs, so totals survive detach */
	struct blk_mq_ctx_stats retired;
	struct blk_hist *retired_hist[2];
	/* stage timers: the driver's ops with queue_rq() behind a stamp */
	struct blk_mq_ops stage_ops;
};

/*
 * Elevator interface (the kernel's struct elevator_mq_ops, per hctx).
 * Called with the hctx held (its lock taken when shared).  hctx->elv_now_ns
 * is current before every call.
 */
struct elevator_type {
	const char *name;
	int (*init_hctx)(struct blk_mq_hw_ctx *hctx);
	void (*exit_hctx)(struct blk_mq_hw_ctx *hctx);
	/* merge @bio into a queued request; true if merged */
	bool (*bio_merge)(struct blk_mq_hw_ctx *hctx, struct blk_bio *bio);
	/* take every request of @list (linked through rq_next) */
	void (*insert_requests)(struct blk_mq_hw_ctx *hctx, struct rq_list *list);
	/* next request to hand to the driver, or NULL */
	struct request *(*dispatch_request)(struct blk_mq_hw_ctx *hctx);
	bool (*has_work)(struct blk_mq_hw_ctx *hctx);
};

extern const struct elevator_type elv_mq_deadline;

/* merge.c: merge decisions shared by the plug and the elevators */
enum elv_merge {
	ELEVATOR_NO_MERGE = 0,
	ELEVATOR_FRONT_MERGE = 1,
	ELEVATOR_BACK_MERGE = 2,
};

/**
 * blk_try_merge() - can @bio join @rq, and at which end?
 * Both must be READ or WRITE of the same op and FUA flag, contiguous, and
 * the result must fit max_sectors and max_segments.
 */
enum elv_merge blk_try_merge(const struct blk_dev *dev,
			     const struct request *rq,
			     const struct blk_bio *bio);

/** blk_rq_merge_bio() - do the merge blk_try_merge() allowed. */
void blk_rq_merge_bio(struct request *rq, struct blk_bio *bio,
		      enum elv_merge how);

/**
 * blk_rq_merge_ok_rq() - can request @next be appended to @rq (rq end ==
 * next start, same op, limits)?
 */
bool blk_rq_merge_ok_rq(const struct blk_dev *dev, const struct request *rq,
			const struct request *next);

/**
 * blk_mq_merge_requests() - append @next's bios to @rq and free @next
 * (its tags are released, a merge is counted).  For elevators.
 */
void blk_mq_merge_requests(struct blk_mq_hw_ctx *hctx, struct request *rq,
			   struct request *next);

/** blk_mq_account_merge() - count a bio merge on the current ctx. */
void blk_mq_account_merge(struct blk_mq_ctx *ctx, unsigned int op);

/* Current ctx of the thread inside the core (for elevator accounting). */
extern __thread struct blk_mq_ctx *blk_current_ctx;

/* blk-mq.c: every ctx's counters added up, detached ones included */
void blk_dev_sum_stats(const struct blk_dev *dev, struct blk_mq_ctx_stats *sum);

/* clock.c */
uint64_t blk_time_ns(void);        /* CLOCK_MONOTONIC */
uint64_t blk_time_coarse_ns(void); /* CLOCK_MONOTONIC_COARSE */

/* Translate a bio op into a stats direction. */
static inline enum blk_stat_dir blk_op_stat_dir(unsigned int op)
{
	switch (op) {
	case BLK_OP_READ:
		return BLK_STAT_READ;
	case BLK_OP_WRITE:
		return BLK_STAT_WRITE;
	case BLK_OP_FLUSH:
		return BLK_STAT_FLUSH;
	case BLK_OP_DISCARD:
		return BLK_STAT_DISCARD;
	default:
		return BLK_STAT_WRITE; /* write zeroes, as the kernel counts it */
	}
}

#endif /* BLKSTACK_CORE_BLK_MQ_H */
