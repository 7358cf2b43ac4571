/* SPDX-License-Identifier: MIT */
/*
 * blkstack driver interface: what a driver implements (struct blk_mq_ops)
 * and what the block core gives it (requests, tags, completion).
 *
 * Model: Linux include/linux/blk-mq.h.  The core owns each request and
 * gives the driver a private area of cmd_size bytes behind it
 * (blk_mq_rq_to_pdu()).
 */
#ifndef BLKSTACK_BLK_MQ_H
#define BLKSTACK_BLK_MQ_H

#include "blk.h"

#ifdef __cplusplus
extern "C" {
#endif

struct blk_mq_hw_ctx;

/* Request state, as blk-mq's MQ_RQ_*. Owned by the ctx's thread. */
enum mq_rq_state {
	MQ_RQ_IDLE = 0,
	MQ_RQ_IN_FLIGHT = 1,
	MQ_RQ_COMPLETE = 2,
};

/* rq_flags */
#define RQF_RESERVED (1u << 0)    /* tag from the reserved pool */
#define RQF_ELV (1u << 1)         /* allocated from scheduler tags */
#define RQF_STATS (1u << 2)       /* start_time_ns is valid */
#define RQF_DONTPREP (1u << 3)    /* driver-private: prepared once */
#define RQF_OWNED (1u << 4)       /* (core) in its ctx's owned-tag bitmap */
#define RQF_STAGES (1u << 5)      /* (core) stage timers on: stage_ns valid */
#define RQF_DRV_FLAG0 (1u << 8)   /* free for the driver */

/**
 * struct request - one unit of work for a driver, built from one or more
 * merged bios.  Fields marked (core) must not be written by drivers.
 *
 * The layout puts what queue_rq() and completion read into the first
 * cache line.
 */
struct request {
	/* first cache line: dispatch and completion */
	struct blk_mq_hw_ctx *mq_hctx; /* (core) */
	struct blk_mq_ctx *mq_ctx;     /* (core) submitting ctx */
	uint64_t offset;               /* (core) bytes */
	uint32_t data_len;             /* (core) bytes */
	int32_t tag;                   /* (core) driver tag, -1 if none */
	int32_t internal_tag;          /* (core) scheduler tag, -1 if none */
	uint32_t gen;                  /* (core) bumped at each allocation */
	uint8_t op;                    /* (core) enum blk_op */
	uint8_t state;                 /* (core) enum mq_rq_state */
	blk_status_t status;           /* (core) */
	uint8_t cmd_flags;             /* (core) BLK_BIO_* of the first bio */
	uint16_t nr_segments;          /* (core) iovecs over all bios */
	uint16_t rq_flags;             /* RQF_* */
	struct blk_bio *bio;           /* (core) first bio */
	struct blk_bio *biotail;       /* (core) last bio */
	struct request *rq_next;       /* (core) plug, dispatch and done lists */
#ifdef BLK_STAGE_TIMERS
	uint64_t *stage_ns;            /* (core) BLK_STAGE_NR stamps; RQF_STAGES */
#endif

	/* second cache line: accounting, timeout, scheduler */
	uint64_t start_time_ns;        /* (core) allocation time (iostats) */
	uint64_t deadline_ns;          /* (core) coarse clock, 0 = none */
	uint64_t fifo_time_ns;         /* elevator: FIFO expiry */
	uint32_t retries;              /* driver: free for retry counting */
	uint32_t timeouts;             /* (core) times the deadline passed */
	/*
	 * driver: the device's own status when completing with an error
	 * (NVMe status field; 0 when none).  The core copies it into every
	 * bio's bi_native_status when status is not OK.  Drivers that set it
	 * once must set it on every error completion.
	 */
	uint32_t native_status;
	uint32_t bio_done;             /* (core) bytes of the first bio ended
					* by blk_mq_update_request() */
	void *elv_priv[4];             /* elevator private */
} __attribute__((aligned(64)));

/**
 * blk_rq_ioprio() - a request's I/O priority (IOPRIO_PRIO_VALUE()): its
 * first bio's bi_ioprio, since bios of different priorities never merge
 * into one request; 0 (none) for a request without bios.  Read from the
 * bio rather than kept in the request, so that submission writes no more
 * of the request than before.
 * @rq: a request the caller holds.
 * Return: the priority.
 * Context: any.
 */
static inline uint16_t blk_rq_ioprio(const struct request *rq)
{
	return rq->bio ? rq->bio->bi_ioprio : 0;
}

/**
 * blk_mq_stage_stamp() - stamp @stage of @rq now (CLOCK_MONOTONIC, ns).
 * Drivers call blk_mq_stage(), which tests RQF_STAGES first.
 * @rq: a request with RQF_STAGES.
 * @stage: enum blk_stage.
 * Context: the thread that has the request at that stage (a device
 * thread's stamp reaches the ctx's thread with the completion ring).
 */
void blk_mq_stage_stamp(struct request *rq, unsigned int stage);

/**
 * blk_mq_stage() - stamp a stage of @rq when stage timers are on.
 * @rq: the request.
 * @stage: enum blk_stage; drivers stamp BLK_STAGE_DEVICE (the device has
 *	the command) and BLK_STAGE_DEVICE_DONE (it completed it).
 *
 * Off, one test of rq_flags (the request's first cache line); without
 * BLK_STAGE_TIMERS in the build, nothing.
 * Context: as blk_mq_stage_stamp().
 */
static inline void blk_mq_stage(struct request *rq, unsigned int stage)
{
#ifdef BLK_STAGE_TIMERS
	if (__builtin_expect(!!(rq->rq_flags & RQF_STAGES), 0))
		blk_mq_stage_stamp(rq, stage);
#else
	(void)rq;
	(void)stage;
#endif
}

/**
 * blk_mq_rq_to_pdu() - the driver's private area behind a request.
 * @rq: the request.
 *
 * Return: pointer to cmd_size bytes, cache-line (64-byte) aligned, as
 * struct request is.
 * Context: any.
 */
static inline void *blk_mq_rq_to_pdu(struct request *rq)
{
	return rq + 1;
}

/**
 * blk_mq_rq_from_pdu() - the request whose private area @pdu is (Linux's
 * blk_mq_rq_from_pdu()): a driver that keeps no pointer to its request.
 * @pdu: what blk_mq_rq_to_pdu() returned.
 *
 * Return: the request.
 * Context: any.
 */
static inline struct request *blk_mq_rq_from_pdu(void *pdu)
{
	return (struct request *)pdu - 1;
}

/** rq_data_dir() - 1 when data flows to the device. */
static inline int rq_data_dir(const struct request *rq)
{
	return rq->op & 1;
}

/**
 * struct blk_mq_queue_data - what queue_rq() is handed.
 * @rq: the request; blk_mq_start_request() has been called.
 * @last: true for the last request of this dispatch batch (commit_rqs()
 *	follows the batch as well).
 */
struct blk_mq_queue_data {
	struct request *rq;
	bool last;
};

/* What a timeout handler decides (compare the kernel's enum blk_eh_timer_return). */
enum blk_eh_timer_return {
	BLK_EH_DONE = 0,        /* driver completed or will complete the request */
	BLK_EH_RESET_TIMER,     /* retry: give the request another timeout period */
	BLK_EH_REQUEUE,         /* core requeues the request and dispatches it again */
	BLK_EH_FAIL,            /* core completes it with BLK_STS_TIMEOUT */
};

/**
 * struct blk_mq_ops - a driver.  Fill with designated initializers.
 * @queue_rq: start one request.  Return BLK_STS_OK when the request will be
 *	completed through blk_mq_complete_request() (possibly already, inline)
 *	or blk_mq_complete_request_remote(); BLK_STS_RESOURCE when the device
 *	is busy (the core requeues it and re-runs the queue after completions);
 *	any other status fails the request at once.
 *	Context: the dispatching thread, hctx lock held when the hctx is shared.
 * @commit_rqs: optional; ring the doorbell for requests queued since the
 *	last commit.  Called once after every dispatch batch.  Same context.
 * @poll: optional; reap device completions for @hctx.  Return the number
 *	reaped.  Same context.
 * @timeout: optional; @rq's deadline passed.  Return what to do.  Without
 *	it the core fails the request with BLK_STS_TIMEOUT.  Same context.
 * @register_buffer: optional; map a consumer's buffer region for this
 *	queue (blk_ctx_register_buffer()).  Return 0 or -errno.  Context: the
 *	ctx's thread, queue not shared, nothing in flight.
 * @init_hctx: optional; set hctx driver data (blk_mq_hctx_set_driver_data).
 *	Return 0 or -errno.  Context: blk_dev_create().
 * @exit_hctx: optional; undo init_hctx.  Context: blk_dev_close().
 * @free: optional; free the driver's device data.  Context: blk_dev_close().
 * @wait: optional; sleep until @hctx has a completion for poll() to reap,
 *	or @timeout_ns (ns, > 0) passes.  Called by blk_wait() when poll()
 *	found nothing and its policy chose to sleep rather than spin (see
 *	blk_wait()); poll() runs again right after.  A driver that defers
 *	its doorbell submits what is queued on the way in.  Never called on a
 *	shared hctx (other threads could not reach the queue meanwhile).
 *	Return 0 when woken (a completion may be ready; spurious wake-ups
 *	are allowed), -ETIME when @timeout_ns passed, -EINTR when a signal
 *	interrupted the sleep, other -errno when the driver cannot sleep now
 *	(the core then polls).  Context: the ctx's thread.
 * @block_status: optional; describe the allocation of [@offset, @offset +
 *	@len) as at most @nr_ext consecutive extents (see
 *	blk_dev_block_status(), which has checked the range and @flags).
 *	Return the number filled (>= 1), -EAGAIN for BLK_STATUS_NOWAIT when
 *	an answer needs system calls, or -errno.  Context: any thread, concurrently
 *	with I/O on every queue; not through a request.
 */
struct blk_mq_ops {
	blk_status_t (*queue_rq)(struct blk_mq_hw_ctx *hctx,
				 const struct blk_mq_queue_data *bd);
	void (*commit_rqs)(struct blk_mq_hw_ctx *hctx);
	int (*poll)(struct blk_mq_hw_ctx *hctx);
	enum blk_eh_timer_return (*timeout)(struct request *rq);
	int (*wait)(struct blk_mq_hw_ctx *hctx, uint64_t timeout_ns);
	int (*register_buffer)(struct blk_mq_hw_ctx *hctx, void *addr,
			       size_t len);
	int (*init_hctx)(struct blk_mq_hw_ctx *hctx, void *driver_data,
			 unsigned int hctx_idx);
	void (*exit_hctx)(struct blk_mq_hw_ctx *hctx, unsigned int hctx_idx);
	void (*free)(void *driver_data);
	int (*block_status)(void *driver_data, uint64_t offset, uint64_t len,
			    struct blk_extent *ext, unsigned int nr_ext,
			    unsigned int flags);
};

/**
 * struct blk_dev_config - queue limits and tag set of a device.
 * @name: driver name, reported by blk_dev_get_info().
 * @capacity: device size in bytes; a multiple of @logical_block_size.
 * @logical_block_size: bytes; power of two 512..65536 (0: 512).
 * @max_sectors: largest merged request, 512-byte sectors (0: 2560).
 * @max_segments: largest iovec count of a merged request (0: 128).
 * @max_discard_sectors, @max_write_zeroes_sectors: largest bio of that op
 *	the driver takes, 512-byte sectors (0: no limit); reported to
 *	consumers by blk_dev_get_info(), who split larger ones.
 * @nr_hw_queues: hardware queues, 1..256 (0: 1).
 * @queue_depth: driver tags per hardware queue, 1..65536 (0: 64).
 * @nr_reserved_tags: of @queue_depth, kept for BLK_MQ_REQ_RESERVED.
 * @nr_requests: scheduler tags per hardware queue when an elevator is
 *	set (0: 2 * queue_depth).
 * @shared_tags: one tag space for all hardware queues (BLK_MQ_F_TAG_HCTX_SHARED).
 * @shared_hctx: allow more ctxs than hardware queues (queues then lock).
 * @rq_timeout_ms: request timeout (0: 30000).
 * @iostats: account ticks and latency histograms (clock reads per batch).
 * @run_batch: re-run a queue stopped by BLK_STS_RESOURCE only after this
 *	many completions (0 or 1: after every completion).  Seed 003's
 *	experiment.
 * @wait_mode: how blk_wait() waits when nothing is ready (enum
 *	blk_wait_mode; 0: adaptive).
 * @spin_max_ns: longest single spin of blk_wait() before it sleeps in the
 *	driver, ns (0: 200000); with BLK_WAIT_SPIN, or a driver without a
 *	wait op, the spin goes on until a completion or the timeout.
 * @stage_timers: stamp every request's stages (enum blk_stage) and keep
 *	per-ctx interval statistics (blk_ctx_get_stage_stats()).  -EOPNOTSUPP
 *	from blk_dev_create() in a build without BLK_STAGE_TIMERS.
 * @stage_win_from, @stage_win_to: with @stage_win_to > @stage_win_from,
 *	also seed 000's windows of that interval (BLK_STAGE_WINDOW_NS each).
 * @cmd_size: bytes of driver private data behind each request.
 * @can_flush, @can_discard, @can_write_zeroes, @stores_data: capabilities.
 * @ops: the driver.
 * @driver_data: handed to init_hctx and free.
 */
struct blk_dev_config {
	const char *name;
	uint64_t capacity;
	uint32_t logical_block_size;
	uint32_t max_sectors;
	uint32_t max_segments;
	uint32_t max_discard_sectors;
	uint32_t max_write_zeroes_sectors;
	uint32_t nr_hw_queues;
	uint32_t queue_depth;
	uint32_t nr_reserved_tags;
	uint32_t nr_requests;
	bool shared_tags;
	bool shared_hctx;
	bool iostats;
	uint32_t rq_timeout_ms;
	uint32_t run_batch;
	uint8_t wait_mode;
	uint32_t spin_max_ns;
	bool stage_timers;
	uint8_t stage_win_from;
	uint8_t stage_win_to;
	uint32_t cmd_size;
	bool can_flush;
	bool can_discard;
	bool can_write_zeroes;
	bool stores_data;
	const struct blk_mq_ops *ops;
	void *driver_data;
};

/**
 * blk_dev_create() - create a device for a driver (driver use).
 * @cfg: limits, tag set and ops; copied.
 * @dev: set on success.
 *
 * Allocates the tag set and its static requests and the hardware queues,
 * and calls init_hctx for each.  On failure the driver's free() is not
 * called: the driver cleans up its own data.
 * Return: 0; -EINVAL naming nothing but logged to stderr for a limit out of
 * range (see struct blk_dev_config); -ENOMEM; an init_hctx error.
 * Context: any thread.
 */
int blk_dev_create(const struct blk_dev_config *cfg, struct blk_dev **dev);

/** blk_dev_driver_data() - the driver_data given to blk_dev_create(). */
void *blk_dev_driver_data(struct blk_dev *dev);
/**
 * blk_mq_hctx_driver_data() - what init_hctx stored.  Inline: the driver
 * data pointer is the first member of every hardware queue (ABI), so
 * queue_rq() reaches it with one load.  Context: any.
 */
static inline void *blk_mq_hctx_driver_data(struct blk_mq_hw_ctx *hctx)
{
	return *(void **)hctx;
}
/** blk_mq_hctx_set_driver_data() - store per-queue driver data. */
void blk_mq_hctx_set_driver_data(struct blk_mq_hw_ctx *hctx, void *data);
/** blk_mq_hctx_index() - queue number, 0..nr_hw_queues-1. */
unsigned int blk_mq_hctx_index(const struct blk_mq_hw_ctx *hctx);
/** blk_mq_hctx_dev() - the device of a queue. */
struct blk_dev *blk_mq_hctx_dev(struct blk_mq_hw_ctx *hctx);

/**
 * blk_mq_complete_request() - complete a request from the dispatching
 * thread (inline completion, or from the driver's poll()).
 * @rq: the request.
 * @status: BLK_STS_OK or an error; not BLK_STS_RESOURCE.
 *
 * The request joins its ctx's done list; bi_end_io runs at the next
 * blk_poll(), batched.  A request that is no longer in flight (its timeout
 * already completed it) is ignored.
 * Return: true if completed, false if ignored.
 * Context: a thread that holds the request's hctx (dispatch, poll, timeout).
 */
bool blk_mq_complete_request(struct request *rq, blk_status_t status);

/**
 * blk_mq_complete_request_remote() - complete a request from a device thread.
 * @hctx: the queue the request was dispatched on (not read from @rq: a
 *	stale request may have been reused on another queue).
 * @rq: the request.
 * @gen: rq->gen as read in queue_rq(); a completion for an older
 *	generation (the request timed out and its tag was reused) is dropped.
 * @status: completion status.
 *
 * Pushes onto the hctx's single-producer completion ring; the ctx's thread
 * reaps it in blk_poll().
 * Return: 0, or -EAGAIN if the ring is full (cannot happen when the ring
 * holds queue_depth entries and the driver completes each request once).
 * Context: the hctx's one device thread (single producer).
 */
int blk_mq_complete_request_remote(struct blk_mq_hw_ctx *hctx,
				   struct request *rq, uint32_t gen,
				   blk_status_t status);

/**
 * blk_mq_requeue_request() - give a request back to the core to dispatch
 * again (after a reset, say).  Its tag is kept; with an elevator the
 * request keeps its scheduler tag and gives its driver tag back (it gets
 * one again at dispatch, and rq->tag is -1 until then).
 * @rq: an in-flight request.
 *
 * Context: the thread that holds the request's hctx.
 */
void blk_mq_requeue_request(struct request *rq);

/**
 * blk_mq_update_request() - end the first @nr_bytes of an in-flight request
 * successfully, and keep the rest (Linux's blk_update_request(), for a
 * partial completion: SCSI's residual, or a MEDIUM ERROR's INFORMATION
 * field).
 * @rq: an in-flight request.
 * @nr_bytes: bytes done from the request's start, a multiple of the
 *	logical block size; at most rq->data_len.
 *
 * Bios that lie wholly within @nr_bytes end with BLK_STS_OK (their
 * bi_end_io runs at the ctx's next blk_poll(), as for completions); a bio
 * only partly done stays first, and rq->bio_done says how many of its
 * bytes are done.  rq->offset moves forward and rq->data_len shrinks by
 * @nr_bytes, so that a driver that builds its command from them issues the
 * remainder: it then requeues the request (blk_mq_requeue_request()) or
 * completes it (blk_mq_complete_request(), which ends the remaining bios
 * with that status).  Drivers that use it must skip rq->bio_done bytes of
 * the first bio's data.
 * Return: bytes left in the request (0: complete it now).
 * Context: the thread that holds the request's hctx.
 */
uint32_t blk_mq_update_request(struct request *rq, uint32_t nr_bytes);

/**
 * blk_mq_kick_hw_queue() - have the core run @hctx (dispatch its requeued
 * requests and the elevator's) at the next blk_poll() on it, even when it
 * is not stopped.  What the SCSI midlayer did on every completion before
 * blk-mq (scsi_run_queue()); seed 003's experiment (--scsi_host_lock=1).
 * Context: the thread that holds @hctx.
 */
void blk_mq_kick_hw_queue(struct blk_mq_hw_ctx *hctx);

/* blk_mq_alloc_request() flags */
#define BLK_MQ_REQ_RESERVED (1u << 0)

/**
 * blk_mq_alloc_request() - allocate a request outside the bio path
 * (driver-internal or passthrough commands).
 * @ctx: the calling thread's ctx.
 * @op: enum blk_op.
 * @flags: BLK_MQ_REQ_RESERVED to take a reserved tag.
 *
 * Return: the request (tag set, no bio), or NULL when no tag is free.
 * Context: the ctx's thread.
 */
struct request *blk_mq_alloc_request(struct blk_mq_ctx *ctx, unsigned int op,
				     unsigned int flags);

/**
 * blk_mq_free_request() - release a request from blk_mq_alloc_request()
 * that was never dispatched.
 * @rq: the request.
 * Context: the ctx's thread.
 */
void blk_mq_free_request(struct request *rq);

/**
 * rq_for_each_segment() - iterate the iovecs of every bio of a request.
 */
#define rq_for_each_bio(_bio, _rq) \
	for ((_bio) = (_rq)->bio; (_bio); (_bio) = (_bio)->bi_next)

#ifdef __cplusplus
}
#endif

#endif /* BLKSTACK_BLK_MQ_H */
