/* SPDX-License-Identifier: MIT */
/*
 * blkstack block API: the one interface every consumer (bench, exports)
 * uses to reach a block device.
 *
 * Model: Linux blk-mq.  A consumer opens a device (blk_dev), attaches one
 * software context (blk_mq_ctx) per submitting thread, submits bios through
 * it and reaps completions with blk_poll() on the same thread.  Each ctx is
 * mapped to one hardware queue (hctx) of the device.
 *
 * Units: offsets and lengths are in bytes and must be multiples of the
 * device's logical block size; times are in nanoseconds unless named
 * otherwise.
 *
 * This header compiles on its own and from C++.
 */
#ifndef BLKSTACK_BLK_H
#define BLKSTACK_BLK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "hist.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * typedef blk_status_t - I/O completion status, the kernel's BLK_STS_* set.
 *
 * BLK_STS_OK is the only zero value.  BLK_STS_RESOURCE is returned by a
 * driver's queue_rq() to ask the core to requeue the request and run the
 * queue again after a completion; consumers never see it.
 */
typedef uint8_t blk_status_t;

enum {
	BLK_STS_OK = 0,
	BLK_STS_NOTSUPP,    /* operation not supported by the device */
	BLK_STS_TIMEOUT,    /* request timed out and the driver gave up */
	BLK_STS_NOSPC,      /* out of space (thin provisioning) */
	BLK_STS_TRANSPORT,  /* link or transport failure */
	BLK_STS_TARGET,     /* target rejected the request */
	BLK_STS_MEDIUM,     /* unrecovered medium error */
	BLK_STS_PROTECTION, /* protection information check failed */
	BLK_STS_RESOURCE,   /* driver busy: requeue (never seen by a consumer) */
	BLK_STS_IOERR,      /* generic I/O error */
	BLK_STS_AGAIN,      /* would block */
	BLK_STS_INVAL,      /* invalid request (range, alignment) */
	BLK_STS_MAX,
};

/**
 * blk_status_to_errno() - map a status to a negative errno.
 * @status: completion status.
 *
 * Return: 0 for BLK_STS_OK, otherwise -EOPNOTSUPP, -ETIMEDOUT, -ENOSPC,
 * -ENOLINK, -EREMOTEIO, -ENODATA, -EILSEQ, -EBUSY, -EIO, -EAGAIN or -EINVAL.
 * Context: any.
 */
int blk_status_to_errno(blk_status_t status);

/**
 * blk_status_str() - name of a status ("OK", "IOERR", "TIMEOUT", ...).
 * @status: completion status.
 *
 * Return: a static string; "UNKNOWN" for values out of range.
 * Context: any.
 */
const char *blk_status_str(blk_status_t status);

/*
 * Operations.  As in the kernel, bit 0 set means data flows to the device,
 * so op_is_write() is (op & 1).
 */
enum blk_op {
	BLK_OP_READ = 0,
	BLK_OP_WRITE = 1,
	BLK_OP_FLUSH = 2,
	BLK_OP_DISCARD = 3,
	BLK_OP_WRITE_ZEROES = 5,
	BLK_OP_MAX = 6,
};

/* bio flags (bi_flags) */
#define BLK_BIO_FUA (1u << 0) /* write through: durable on completion */

/*
 * I/O priorities, Linux's (include/uapi/linux/ioprio.h): a 16-bit value,
 * the class in bits 13-15, the level (0 highest .. 7 lowest) in bits 0-2.
 * 0 (class NONE) means "no priority of its own": the kernel then uses the
 * submitting task's.
 */
#define IOPRIO_CLASS_SHIFT 13
#define IOPRIO_CLASS_NONE 0
#define IOPRIO_CLASS_RT 1   /* real time: served first */
#define IOPRIO_CLASS_BE 2   /* best effort: the default class */
#define IOPRIO_CLASS_IDLE 3 /* only when nothing else waits */
#define IOPRIO_NR_LEVELS 8
#define IOPRIO_PRIO_VALUE(class, level) \
	((uint16_t)(((class) << IOPRIO_CLASS_SHIFT) | ((level) & 7)))
#define IOPRIO_PRIO_CLASS(ioprio) ((unsigned int)(ioprio) >> IOPRIO_CLASS_SHIFT)
#define IOPRIO_PRIO_LEVEL(ioprio) ((unsigned int)(ioprio) & 7)

/**
 * struct blk_bio - one I/O as the consumer submits it.
 * @bi_next: owned by the core while the bio is in flight (request chain).
 * @bi_offset: start on the device, in bytes.
 * @bi_size: length in bytes; 0 for BLK_OP_FLUSH.
 * @bi_op: enum blk_op.
 * @bi_flags: BLK_BIO_* flags.
 * @bi_status: set by the core before @bi_end_io is called.
 * @bi_vcnt: number of entries in @bi_io_vec (READ and WRITE only).
 * @bi_ioprio: I/O priority, IOPRIO_PRIO_VALUE(class, level); 0: none.
 *	Requests take it from their first bio; bios of different priorities
 *	never merge (Linux's blk_rq_merge_ok()).  The uring driver passes it
 *	to the kernel in the SQE; the other drivers and the elevators carry
 *	it without acting on it (docs/design/block-core.md).
 * @bi_native_status: set by the core with @bi_status: the device's own
 *	status when the request failed, 0 on success.  NVMe: the status field
 *	(SCT << 8 | SC, blkstack/nvme_spec.h NVME_SF_*).  Protocol exports map
 *	it back to their peers.
 * @bi_io_vec: data buffers; their lengths must add up to @bi_size.  The
 *	array and buffers must stay valid until @bi_end_io.
 * @bi_end_io: completion callback, called exactly once, on the thread that
 *	owns the ctx the bio was submitted on, from blk_poll().  It may submit
 *	new bios on the same ctx.
 * @bi_private: consumer's cookie.
 *
 * The consumer owns the memory; the core never allocates per bio.
 */
struct blk_bio {
	struct blk_bio *bi_next;
	uint64_t bi_offset;
	uint32_t bi_size;
	uint8_t bi_op;
	uint8_t bi_flags;
	blk_status_t bi_status;
	uint16_t bi_vcnt;
	uint16_t bi_ioprio;
	uint32_t bi_native_status;
	const struct iovec *bi_io_vec;
	void (*bi_end_io)(struct blk_bio *bio);
	void *bi_private;
};

struct blk_dev;
struct blk_mq_ctx;

/* I/O scheduler selection (blk_dev_set_elevator). */
enum blk_elevator {
	BLK_ELV_NONE = 0,
	BLK_ELV_MQ_DEADLINE = 1,
};

/**
 * struct blk_dev_info - what a consumer needs to know about a device.
 * @name: driver name ("null", "ram").
 * @capacity: size in bytes.
 * @logical_block_size: in bytes, power of two, 512..65536.
 * @max_sectors: largest request the core builds, in 512-byte sectors.
 * @max_segments: largest number of iovec entries in one request.
 * @max_discard_sectors: largest DISCARD bio, 512-byte sectors; 0: no limit.
 * @max_write_zeroes_sectors: largest WRITE_ZEROES bio, 512-byte sectors;
 *	0: no limit.  The core does not split bios: a consumer that may send
 *	larger READ/WRITE bios than @max_sectors, or larger DISCARD/WRITE_ZEROES
 *	bios than these, splits them itself (a driver may fail them with
 *	BLK_STS_INVAL).
 * @nr_hw_queues: hardware queues.
 * @queue_depth: driver tags per hardware queue (or in all, if shared).
 * @can_flush: BLK_OP_FLUSH and BLK_BIO_FUA are meaningful.
 * @can_discard: BLK_OP_DISCARD supported.
 * @can_write_zeroes: BLK_OP_WRITE_ZEROES supported.
 * @stores_data: reads return what was written (ram, memory_backed null).
 */
struct blk_dev_info {
	const char *name;
	uint64_t capacity;
	uint32_t logical_block_size;
	uint32_t max_sectors;
	uint32_t max_segments;
	uint32_t max_discard_sectors;
	uint32_t max_write_zeroes_sectors;
	uint32_t nr_hw_queues;
	uint32_t queue_depth;
	bool can_flush;
	bool can_discard;
	bool can_write_zeroes;
	bool stores_data;
};

/**
 * blk_dev_get_info() - describe a device.
 * @dev: the device.
 * @info: filled in.
 *
 * Context: any thread.
 */
void blk_dev_get_info(const struct blk_dev *dev, struct blk_dev_info *info);

/**
 * blk_dev_close() - drain and free a device and its driver.
 * @dev: device; all ctxs must have been detached.  NULL is a no-op.
 *
 * Context: any thread, no I/O in flight.
 */
void blk_dev_close(struct blk_dev *dev);

/**
 * blk_dev_set_elevator() - select the I/O scheduler ("none", "mq-deadline").
 * @dev: the device.
 * @elv: BLK_ELV_NONE or BLK_ELV_MQ_DEADLINE.
 *
 * Like writing /sys/block/X/queue/scheduler.
 * Return: 0, -EBUSY if a ctx is attached, -ENOMEM, -EINVAL for an unknown
 * @elv.
 * Context: any thread, before blk_ctx_attach().
 */
int blk_dev_set_elevator(struct blk_dev *dev, enum blk_elevator elv);

/**
 * blk_elevator_parse() - parse a scheduler name.
 * @name: "none" or "mq-deadline".
 * @elv: set on success.
 *
 * Return: 0 or -EINVAL.
 * Context: any.
 */
int blk_elevator_parse(const char *name, enum blk_elevator *elv);

/**
 * blk_dev_poll_idle() - poll the hardware queues no ctx is attached to.
 * @dev: the device.
 *
 * A queue without a consumer thread is never polled, and a driver with
 * timers of its own (the iscsi LLD's keep-alive pings, answers to the
 * target's) needs that to keep its connection: a server calls this now
 * and then (the NBD server's accept loop, every 100 ms).  The driver's
 * poll op runs with no request in flight; nothing completes.  Queues with
 * a ctx are their thread's to poll.
 *
 * Context: any thread; takes the lock blk_ctx_attach() and
 * blk_ctx_detach() take, so a ctx is not attached to a queue while this
 * polls it.
 */
void blk_dev_poll_idle(struct blk_dev *dev);

/**
 * blk_ctx_attach() - give the calling consumer thread a software context.
 * @dev: the device.
 * @ctx: set on success.
 *
 * The ctx is mapped to the least used hardware queue.  A queue used by one
 * ctx runs without locks or atomic read-modify-writes; once a second ctx is
 * attached to it (more submitting threads than nr_hw_queues, allowed only if
 * the device was created with shared_hctx), that queue takes a mutex on
 * submit and poll.  The ctx must then be used by one thread at a time.
 *
 * Return: 0, -EBUSY when every hardware queue already has a ctx and the
 * device does not allow sharing, -ENOMEM.
 * Context: any thread; not concurrently with blk_ctx_detach().
 */
int blk_ctx_attach(struct blk_dev *dev, struct blk_mq_ctx **ctx);

/**
 * blk_ctx_detach() - drain and free a context.
 * @ctx: the ctx; blk_poll() is called until nothing is in flight.
 *
 * Context: the ctx's thread.
 */
void blk_ctx_detach(struct blk_mq_ctx *ctx);

/**
 * blk_submit() - submit one bio.
 * @ctx: the calling thread's ctx.
 * @bio: filled in by the caller (see struct blk_bio).
 *
 * Inside a plug (blk_start_plug()) the bio may be merged into the previous
 * request and is dispatched at blk_finish_plug() or when the plug holds 32
 * requests; otherwise it is dispatched at once.
 *
 * Return: 0 when accepted (bi_end_io will be called exactly once);
 * -EINVAL when offset or size is not a multiple of the logical block size,
 * the iovecs do not add up to bi_size, the op is unknown or a data op has
 * no iovec; -ERANGE when the range ends past the capacity; -EOPNOTSUPP when
 * the device lacks the op (see struct blk_dev_info); -EAGAIN when no tag is
 * free (the plug has been flushed: call blk_poll() and retry).  On error
 * bi_end_io is not called.
 * Context: the ctx's thread.
 */
int blk_submit(struct blk_mq_ctx *ctx, struct blk_bio *bio);

/**
 * blk_start_plug() - start batching this thread's submissions.
 * @ctx: the calling thread's ctx.
 *
 * Context: the ctx's thread.  Plugs do not nest.
 */
void blk_start_plug(struct blk_mq_ctx *ctx);

/**
 * blk_finish_plug() - dispatch the plugged requests: one queue_rq() per
 * request, then one commit_rqs() for the batch.
 * @ctx: the calling thread's ctx.
 *
 * Context: the ctx's thread.
 */
void blk_finish_plug(struct blk_mq_ctx *ctx);

/**
 * blk_poll() - reap completions for this ctx and call their bi_end_io.
 * @ctx: the calling thread's ctx.
 *
 * Reaps inline completions, completions handed back by device threads
 * through the hardware queue's completion ring, and polls the driver.
 * Also runs the timeout check (at most every timeout/4, by a coarse clock)
 * and re-runs queues stopped by BLK_STS_RESOURCE.  Never blocks.
 *
 * Return: number of bios completed (>= 0).
 * Context: the ctx's thread.
 */
int blk_poll(struct blk_mq_ctx *ctx);

/**
 * enum blk_wait_mode - how blk_wait() waits for a completion when none is
 * ready (struct blk_dev_config's @wait_mode).
 * @BLK_WAIT_ADAPTIVE: spin while spinning buys completions, otherwise
 *	sleep in the driver; decided per queue from what it observes
 *	(docs/uring.md, "Waiting for completions").
 * @BLK_WAIT_SPIN: poll until a completion arrives, up to spin_max_ns,
 *	then sleep.
 * @BLK_WAIT_SLEEP: sleep in the driver at once (io_uring_enter with
 *	GETEVENTS for uring).
 */
enum blk_wait_mode {
	BLK_WAIT_ADAPTIVE = 0,
	BLK_WAIT_SPIN = 1,
	BLK_WAIT_SLEEP = 2,
};

/**
 * blk_wait() - reap completions, waiting for at least one when none is
 * ready.
 * @ctx: the calling thread's ctx.
 * @timeout_ns: the longest wait, ns; 0: no limit.
 *
 * blk_poll(), then, when nothing completed and bios are in flight, wait:
 * spin on the device (blk_poll() in a loop) or sleep in the driver
 * (struct blk_mq_ops' wait), as the device's wait mode says.  Drivers
 * without a wait op, and shared hardware queues, are always spun on.  A
 * sleep never outlasts the next request timeout check, so timeouts fire
 * as with blk_poll().  For a consumer with nothing else to do until a
 * completion; one that also watches sockets polls instead.
 *
 * Return: bios completed (>= 0); 0 when @timeout_ns passed or nothing was
 * in flight.
 * Context: the ctx's thread.
 */
int blk_wait(struct blk_mq_ctx *ctx, uint64_t timeout_ns);

/**
 * struct blk_wait_stats - what blk_wait() did on one ctx.
 * @spins: waits that spun (some then slept when the spin ran out).
 * @sleeps: waits that slept in the driver.
 * @probes: adaptive probes judged (a spin/sleep A/B every 256 ms).
 * @chose_spin: of those, probes after which spinning was chosen.
 * @contended: probes or epochs in which the spinning thread was
 *	preempted for more than 10 % of its spin time.
 * @last_gain: spinning's completion rate over sleeping's in the last
 *	probe (0: none yet).
 */
struct blk_wait_stats {
	uint64_t spins;
	uint64_t sleeps;
	uint64_t probes;
	uint64_t chose_spin;
	uint64_t contended;
	double last_gain;
};

/**
 * blk_ctx_get_wait_stats() - read a ctx's blk_wait() counters.
 * @ctx: the ctx.
 * @st: filled in.
 *
 * Context: the ctx's thread.
 */
void blk_ctx_get_wait_stats(const struct blk_mq_ctx *ctx,
			    struct blk_wait_stats *st);

/**
 * blk_ctx_register_buffer() - tell the driver where this ctx's I/O buffers
 * live, so that it can map them once (io_uring fixed buffers) instead of
 * per I/O.
 * @ctx: the calling thread's ctx.
 * @addr: start of the buffer region.
 * @len: its length in bytes.
 *
 * Optional: bios with buffers outside the region still work.
 * Return: 0 when the driver registered it; -EOPNOTSUPP when the driver has
 * nothing to register or the hardware queue is shared; -EINVAL for an empty
 * region; the driver's -errno when registration was refused (the driver
 * then works without it).
 * Context: the ctx's thread, nothing in flight.
 */
int blk_ctx_register_buffer(struct blk_mq_ctx *ctx, void *addr, size_t len);

/**
 * blk_ctx_inflight() - bios submitted on @ctx and not yet completed.
 * @ctx: the ctx.
 *
 * Context: the ctx's thread.
 */
unsigned int blk_ctx_inflight(const struct blk_mq_ctx *ctx);

/**
 * blk_drain() - poll until nothing submitted on @ctx is in flight.
 * @ctx: the calling thread's ctx.
 *
 * Return: 0, or -ETIMEDOUT after @timeout_ns (0 means wait forever).
 * Context: the ctx's thread.
 */
int blk_drain(struct blk_mq_ctx *ctx, uint64_t timeout_ns);

/* Extent flags (blk_dev_block_status()); NBD's base:allocation bits. */
#define BLK_EXTENT_HOLE (1u << 0) /* not allocated in the backing store */
#define BLK_EXTENT_ZERO (1u << 1) /* reads return zeroes */

/* blk_dev_block_status() flags */
#define BLK_STATUS_NOWAIT (1u << 0) /* only what is known in memory, no system call */

/**
 * struct blk_extent - one run of a device's allocation map.
 * @length: bytes, > 0.
 * @flags: BLK_EXTENT_* flags; 0 means allocated data (or unknown).
 */
struct blk_extent {
	uint64_t length;
	uint32_t flags;
};

/**
 * blk_dev_block_status() - the device's allocation map for a byte range,
 * as consecutive extents (like SEEK_DATA/SEEK_HOLE or NBD's
 * base:allocation).
 * @dev: the device.
 * @offset: start, in bytes (any byte offset below the capacity).
 * @len: bytes of interest, > 0; @offset + @len must not pass the capacity.
 * @ext: array of @nr_ext extents, filled from @offset on.
 * @nr_ext: entries in @ext, >= 1.
 * @flags: BLK_STATUS_NOWAIT: answer only from memory (ram, null); a
 *	driver that would need system calls (uring's lseek, which on tmpfs
 *	scans the page cache up to the next hole: measured 600 us per 4 KiB
 *	read on a 64 MiB file) returns -EAGAIN instead.  For callers on a fast
 *	path, such as the NBD server splitting reads into holes and data.
 *
 * Extents are consecutive from @offset; adjacent extents have different
 * flags.  Their lengths add up to @len, or to less when @nr_ext ran out
 * (the caller asks again from where they end).  A driver without the
 * block_status op reports one extent of data (flags 0) for the whole
 * range: "allocated" is always a safe answer.  Drivers: ram and
 * memory_backed null from their page bitmap (4 KiB granularity), uring
 * from SEEK_DATA/SEEK_HOLE on files (block devices are all data), null
 * without memory_backed all data (its reads do not return zeroes).
 * The answer is a snapshot: writes in flight may change it.
 *
 * Return: number of extents filled (1..@nr_ext); -EINVAL for @len 0,
 * @nr_ext 0 or an unknown flag; -ERANGE when the range passes the
 * capacity; -EAGAIN for BLK_STATUS_NOWAIT when the driver cannot answer
 * from memory; a driver's -errno (-EIO, say, when lseek fails).
 * Context: any thread; does not use a ctx and may be called while I/O
 * runs.  May sleep (uring: lseek system calls).
 */
int blk_dev_block_status(struct blk_dev *dev, uint64_t offset, uint64_t len,
			 struct blk_extent *ext, unsigned int nr_ext,
			 unsigned int flags);

/*
 * Statistics, in the shape of /proc/diskstats (Documentation/admin-guide/
 * iostats.rst): one group per direction.
 */
enum blk_stat_dir {
	BLK_STAT_READ = 0,
	BLK_STAT_WRITE,
	BLK_STAT_DISCARD,
	BLK_STAT_FLUSH,
	BLK_STAT_NR_DIRS,
};

/**
 * struct blk_disk_stats - counters summed over all ctxs of a device.
 * @ios: completed requests per direction.
 * @sectors: 512-byte sectors transferred per direction.
 * @merges: bios merged into another request, per direction.
 * @ticks_ms: sum of request latencies per direction, in ms (iostats only).
 * @in_flight: requests dispatched and not completed, per READ/WRITE.
 * @io_ticks_ms: time with at least one request in flight, in ms.
 * @requeues: requests requeued after BLK_STS_RESOURCE or by the driver.
 * @timeouts: requests whose deadline passed.
 * @queue_runs: dispatch runs of the hardware queues.
 * @errors: requests completed with a status other than OK.
 */
struct blk_disk_stats {
	uint64_t ios[BLK_STAT_NR_DIRS];
	uint64_t sectors[BLK_STAT_NR_DIRS];
	uint64_t merges[BLK_STAT_NR_DIRS];
	uint64_t ticks_ms[BLK_STAT_NR_DIRS];
	uint64_t in_flight[2];
	uint64_t io_ticks_ms;
	uint64_t requeues;
	uint64_t timeouts;
	uint64_t queue_runs;
	uint64_t errors;
};

/**
 * blk_dev_get_stats() - read a device's counters.
 * @dev: the device.
 * @st: filled in.
 *
 * Counters are read with relaxed loads while I/O runs: each value is one
 * that was current, not a snapshot across counters.
 * Context: any thread.
 */
void blk_dev_get_stats(const struct blk_dev *dev, struct blk_disk_stats *st);

/**
 * blk_dev_format_diskstats() - one /proc/diskstats line for the device.
 * @dev: the device.
 * @name: disk name to print.
 * @buf: output buffer.
 * @len: size of @buf in bytes.
 *
 * Return: characters that would have been written (as snprintf).
 * Context: any thread.
 */
int blk_dev_format_diskstats(const struct blk_dev *dev, const char *name,
			     char *buf, size_t len);

/* Latency histogram of completed requests, in ns, per READ/WRITE. */
/**
 * blk_dev_get_lat_hist() - merge the per-ctx request latency histograms.
 * @dev: the device.
 * @dir: BLK_STAT_READ or BLK_STAT_WRITE.
 * @out: histogram to add into (see blkstack/hist.h).
 *
 * Latency is request allocation to completion, in ns; recorded only when
 * the device's iostats is on.
 * Context: any thread; exact only when no I/O runs.
 */
void blk_dev_get_lat_hist(const struct blk_dev *dev, enum blk_stat_dir dir,
			  struct blk_hist *out);

/*
 * Stage timers (docs/stages.md): named timestamps along a request's path,
 * taken when the device was opened with stage timers on (stage_timers=1)
 * in a build with them (cmake -DBLK_STAGE_TIMERS=ON, the default).
 */
enum blk_stage {
	BLK_STAGE_SUBMIT = 0,   /* blk_submit() made the request */
	BLK_STAGE_FLUSH,        /* the plug (or the lone request) goes to dispatch */
	BLK_STAGE_DISPATCH,     /* the driver's queue_rq() is entered */
	BLK_STAGE_DEVICE,       /* driver: the device has the command */
	BLK_STAGE_DEVICE_DONE,  /* driver: the device completed it */
	BLK_STAGE_COMPLETE,     /* the core has the completion (done list) */
	BLK_STAGE_END_IO,       /* blk_poll() ends it: bi_end_io next */
	BLK_STAGE_NR,
};

/* Intervals: interval i runs from stage i to stage i + 1. */
#define BLK_STAGE_NR_INTERVALS (BLK_STAGE_NR - 1)

/* Seed 000's window for --stage_windows, ns. */
#define BLK_STAGE_WINDOW_NS 100000000ull

/**
 * blk_stage_name() - a stage's name ("submit", "flush", "dispatch",
 * "device", "device_done", "complete", "end_io").
 * @stage: enum blk_stage.
 *
 * Return: a static string; "?" out of range.
 * Context: any.
 */
const char *blk_stage_name(unsigned int stage);

/**
 * blk_stage_window_parse() - parse "STAGE_A:STAGE_B".
 * @spec: the text.
 * @from: set to STAGE_A's enum blk_stage.
 * @to: set to STAGE_B's; later on the path than @from.
 * @why: on error, what is wrong and what is allowed (NUL-terminated).
 * @whylen: bytes at @why.
 *
 * Return: 0; -EINVAL for an unknown stage, a missing ':' or @to not after
 * @from.
 * Context: any.
 */
int blk_stage_window_parse(const char *spec, uint8_t *from, uint8_t *to,
			   char *why, size_t whylen);

/**
 * struct blk_stage_window - one window of a stage-to-stage interval.
 * @start_ns: CLOCK_MONOTONIC time of the window's first sample, ns.
 * @cum_ns: the sum of the intervals that ended in the window, ns.
 * @count: intervals that ended in the window.
 */
struct blk_stage_window {
	uint64_t start_ns;
	uint64_t cum_ns;
	uint64_t count;
};

/**
 * struct blk_stage_stats - what the stage timers measured.
 * @interval: interval i (stage i to stage i + 1), ns per request; counted
 *	only for requests that went through both stages.
 * @has_window: a window interval was configured (@win_from, @win_to).
 * @win_from, @win_to: its stages (enum blk_stage).
 * @window_ns: window length, ns (BLK_STAGE_WINDOW_NS in the core).
 * @win_start_ns, @win_cum_ns, @win_count: the window being filled.
 * @windows: closed windows, in time order (malloc'ed; @nr_windows).
 * @nr_windows, @cap_windows: entries used and allocated.
 *
 * Written by one thread; blk_stage_stats_merge() to add several.
 */
struct blk_stage_stats {
	struct blk_hist interval[BLK_STAGE_NR_INTERVALS];
	bool has_window;
	uint8_t win_from, win_to;
	uint64_t window_ns;
	uint64_t win_start_ns, win_cum_ns, win_count;
	struct blk_stage_window *windows;
	size_t nr_windows, cap_windows;
};

/**
 * blk_stage_stats_init() - empty @st; a window interval when @win_to >
 * @win_from, of @window_ns ns each.
 * Context: the owning thread.
 */
void blk_stage_stats_init(struct blk_stage_stats *st, uint8_t win_from,
			  uint8_t win_to, uint64_t window_ns);

/**
 * blk_stage_stats_free() - free @st's windows (not @st itself).
 * Context: the owning thread.
 */
void blk_stage_stats_free(struct blk_stage_stats *st);

/**
 * blk_stage_account() - add one request's stamps.
 * @st: the statistics.
 * @ts: BLK_STAGE_NR CLOCK_MONOTONIC times, ns; 0: the stage was not
 *	stamped.  An interval whose end is before its start counts as 0.
 *
 * Return: 0; -ENOMEM when a closed window could not be kept (it is lost,
 * the rest is counted).
 * Context: the owning thread.
 */
int blk_stage_account(struct blk_stage_stats *st, const uint64_t *ts);

/**
 * blk_stage_stats_merge() - add @src into @dst: histograms, and @src's
 * closed windows appended to @dst's (with its window settings when @dst
 * has none).
 *
 * Return: 0; -ENOMEM (the windows are then not all copied).
 * Context: the thread owning @dst; @src is not written.
 */
int blk_stage_stats_merge(struct blk_stage_stats *dst,
			  const struct blk_stage_stats *src);

/**
 * blk_ctx_get_stage_stats() - add a ctx's stage statistics into @out
 * (blk_stage_stats_merge()).
 * @ctx: the ctx.
 * @out: initialised by the caller.
 *
 * Return: 0; -ENODATA when the device has no stage timers on; -ENOMEM.
 * Context: the ctx's thread.
 */
int blk_ctx_get_stage_stats(const struct blk_mq_ctx *ctx,
			    struct blk_stage_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* BLKSTACK_BLK_H */
