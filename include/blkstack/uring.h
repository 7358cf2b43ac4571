/* SPDX-License-Identifier: MIT */
/*
 * uring driver: a regular file or a block device, through io_uring
 * (liburing), one ring per hardware queue.
 */
#ifndef BLKSTACK_URING_H
#define BLKSTACK_URING_H

#include <stddef.h>

#include "blk_mq.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * enum blk_uring_taskrun - how the kernel delivers completions that need
 * the submitting task's context (io_uring "task work": block-device and
 * O_DIRECT completions, io-wq results).
 * @BLK_URING_TASKRUN_COOP: IORING_SETUP_COOP_TASKRUN | TASKRUN_FLAG: the
 *	kernel sets IORING_SQ_TASKRUN instead of interrupting the task; poll()
 *	enters the kernel when it sees the flag.  The default: a spinning
 *	thread is not interrupted by an IPI per completion (4x faster reads
 *	from tmpfs, docs/uring.md).
 * @BLK_URING_TASKRUN_DEFER: IORING_SETUP_SINGLE_ISSUER | DEFER_TASKRUN:
 *	completions run only when the thread asks (GETEVENTS).  The ring is
 *	created disabled and enabled by the first thread that uses it, which
 *	must then be its only user: not with shared queues, nor for serve,
 *	whose connections come and go on different threads.
 * @BLK_URING_TASKRUN_SIGNAL: neither: the kernel's default (TWA_SIGNAL).
 */
enum blk_uring_taskrun {
	BLK_URING_TASKRUN_COOP = 0,
	BLK_URING_TASKRUN_DEFER = 1,
	BLK_URING_TASKRUN_SIGNAL = 2,
};

/**
 * enum blk_uring_inline - when the driver issues requests itself, with
 * preadv2/pwritev2 in queue_rq, instead of through the ring.
 * @BLK_URING_INLINE_AUTO: for files io_uring cannot issue without an io-wq
 *	worker (no RWF_NOWAIT: tmpfs), while the calls stay short (one call
 *	in 16 timed; half of a window of 16 over 20 us sends the queue back
 *	to the ring, and inline is tried again after 1 s).
 * @BLK_URING_INLINE_NEVER: always the ring.
 * @BLK_URING_INLINE_ALWAYS: always inline, whatever the calls cost.
 */
enum blk_uring_inline {
	BLK_URING_INLINE_AUTO = 0,
	BLK_URING_INLINE_NEVER = 1,
	BLK_URING_INLINE_ALWAYS = 2,
};

/**
 * enum blk_uring_engine - what performs the I/O.
 * @BLK_URING_ENGINE_AUTO: io_uring; when io_uring_setup is refused (EPERM:
 *	the sysctl kernel.io_uring_disabled or a seccomp filter; ENOSYS: a
 *	kernel without io_uring or a seccomp filter) the thread pool, with one
 *	line on stderr (once per process) naming the cause.
 * @BLK_URING_ENGINE_IO_URING: io_uring only; a refused ring is an error.
 * @BLK_URING_ENGINE_POOL: the thread pool: per hardware queue, worker
 *	threads doing preadv2/pwritev2, fdatasync, fallocate and the block
 *	device ioctls synchronously (docs/uring.md).
 */
enum blk_uring_engine {
	BLK_URING_ENGINE_AUTO = 0,
	BLK_URING_ENGINE_IO_URING = 1,
	BLK_URING_ENGINE_POOL = 2,
};

/*
 * pool_threads: the default (0) and the largest value accepted.  16: on a
 * disk at QD32, 16 workers reach the ring's IOPS (0.96x) where 8 reach
 * 0.76x, and workers beyond what the load needs stay asleep
 * (docs/uring.md, "When io_uring is refused").
 */
#define BLK_URING_POOL_THREADS_DEFAULT 16
#define BLK_URING_POOL_THREADS_MAX 256

/**
 * struct blk_uring_config - a uring device.
 * @queue: queue limits and tag set.  capacity is ignored: it is the size
 *	of the file or block device.  logical_block_size: for a block device
 *	the larger of this and the device's (BLKSSZGET); for a file this value
 *	(0: 512), raised to the file system's O_DIRECT alignment with @direct.
 *	name, ops, cmd_size and driver_data are set by the driver.
 * @path: a regular file or a block device.
 * @create_empty: with @create_size, a missing (or empty) file is not
 *	sized: it is created empty and the device's capacity is @create_size
 *	all the same; writes make the file grow, and a read past its end
 *	fails as any read that reaches the end of the file (fio's
 *	create_on_open=1, which creates files when it opens them for I/O).
 * @create_size: bytes; a missing file is created with this size, an empty
 *	existing file is extended to it; 0: the file must exist and be
 *	non-empty.  An existing non-empty file keeps its size.
 * @direct: open with O_DIRECT.
 * @register_files: register the file with each ring (IOSQE_FIXED_FILE);
 *	falls back to the plain descriptor when the kernel refuses.
 * @fixed_buffers: accept blk_ctx_register_buffer() and use READ_FIXED /
 *	WRITE_FIXED for buffers inside the region; falls back when refused
 *	(RLIMIT_MEMLOCK on older kernels).
 * @taskrun: enum blk_uring_taskrun.
 * @inline_mode: enum blk_uring_inline.
 * @sqpoll: IORING_SETUP_SQPOLL: a kernel thread per ring polls the
 *	submission queue (idle after 2 ms), so submitting needs no system
 *	call while it is awake; it takes a CPU of its own.
 * @engine: enum blk_uring_engine (0: auto).  @register_files,
 *	@fixed_buffers, @taskrun and @sqpoll apply to io_uring only.
 * @pool_threads: worker threads per hardware queue of the thread pool,
 *	1..BLK_URING_POOL_THREADS_MAX (0: BLK_URING_POOL_THREADS_DEFAULT);
 *	never more than the queue depth, as more could not all be busy.
 *	Each worker has one I/O in the kernel at a time, so this is the
 *	queue depth the file or device sees.
 * @force_async: every @force_async-th read or write is submitted with
 *	IOSQE_ASYNC: handed to an io-wq worker without a non-blocking try
 *	first (fio's io_uring force_async); 0: never.
 * @iowq_max_workers: at most this many io-wq workers per kind (bounded:
 *	regular files and block devices; unbounded) for each submitting
 *	thread, set with IORING_REGISTER_IOWQ_MAX_WORKERS when the thread
 *	first submits to a ring (io-wq belongs to the thread, not the ring;
 *	Linux 5.15); 0: the kernel's default (4 per CPU, bounded).
 */
struct blk_uring_config {
	struct blk_dev_config queue;
	const char *path;
	uint64_t create_size;
	bool create_empty;
	bool direct;
	bool register_files;
	bool fixed_buffers;
	uint8_t taskrun;
	uint8_t inline_mode;
	bool sqpoll;
	uint8_t engine;
	uint32_t pool_threads;
	uint32_t force_async;
	uint32_t iowq_max_workers;
};

/**
 * blk_uring_create() - open @cfg->path and set up one io_uring (or one
 * thread pool) per queue.
 * @cfg: configuration; copied.
 * @dev: set on success.
 * @err: receives a message naming the file, the cause and what to do.
 * @errlen: size of @err.
 *
 * Operations: READ/WRITE as read/write (or readv/writev for several
 * segments; READ_FIXED/WRITE_FIXED inside a registered buffer), FUA as
 * RWF_DSYNC, FLUSH as fdatasync (IORING_OP_FSYNC, IORING_FSYNC_DATASYNC),
 * DISCARD as a hole punch on files and BLKDISCARD on block devices,
 * WRITE_ZEROES as FALLOC_FL_ZERO_RANGE on files (a hole punch where the
 * file system lacks it) and BLKZEROOUT on block devices.  Short transfers
 * are resubmitted for the remainder, -EAGAIN is retried, and a read that
 * reaches the end of the file fails with BLK_STS_IOERR.  The thread pool
 * (@cfg->engine) does the same operations with preadv2/pwritev2 (FUA:
 * RWF_DSYNC), fdatasync, fallocate and the ioctls, with the same results.
 *
 * Return: 0; -ENOENT (missing file and no @create_size); -EACCES or -EPERM
 * (permission); -EINVAL (not a file or block device, O_DIRECT refused by
 * the file system, bad limits, @engine or @pool_threads out of range);
 * -ENOSYS or -EPERM from io_uring_setup (io_uring disabled by sysctl or
 * seccomp) with BLK_URING_ENGINE_IO_URING only; -ENOMEM (memlock limit,
 * or no memory); -EAGAIN (a pool thread could not be started); other
 * -errno from open, fstat or ioctl.
 * Context: any thread.
 */
int blk_uring_create(const struct blk_uring_config *cfg, struct blk_dev **dev,
		     char *err, size_t errlen);

/**
 * struct blk_uring_stats - how a uring device issued its requests.
 * @ring_rqs: requests issued through the ring (resubmissions not counted).
 * @inline_rqs: requests issued inline (enum blk_uring_inline).
 * @pool_rqs: requests the thread-pool engine ran.
 * @inline_given_up: times a queue gave inline issue up as too slow.
 * @cancels: IORING_OP_ASYNC_CANCELs sent for requests that timed out
 *	twice (a cancelled one completes with BLK_STS_TIMEOUT).
 * @cancels_hit: of those, cancels the kernel carried out (the request was
 *	still waiting for an io-wq worker, or polled): its result 0.
 * @cancels_running: cancels refused because the request was inside a
 *	system call in a worker (-EALREADY): it ends when the kernel ends it.
 * @cancels_missed: cancels that found no request (-ENOENT): it had
 *	completed, or a worker had taken it in a batch (io-wq takes every
 *	queued write to one file at once, and those can no longer be found).
 * @cancelled: requests that ended with -ECANCELED, so BLK_STS_TIMEOUT.
 * @nowait: the file takes RWF_NOWAIT (io_uring issues its I/O without a
 *	worker); false for tmpfs on Linux 6.18.
 * @setup_flags: IORING_SETUP_* flags the rings were created with (0 where
 *	the kernel refused the requested ones, or on the pool).
 * @pool: the thread-pool engine runs the device (uring_engine=pool, or
 *	io_uring refused); the ring and inline counters are then 0.
 */
struct blk_uring_stats {
	uint64_t ring_rqs;
	uint64_t inline_rqs;
	uint64_t pool_rqs;
	uint64_t inline_given_up;
	uint64_t cancels;
	uint64_t cancels_hit;
	uint64_t cancels_running;
	uint64_t cancels_missed;
	uint64_t cancelled;
	bool nowait;
	uint32_t setup_flags;
	bool pool;
};

/**
 * blk_uring_get_stats() - sum the counters over the device's queues.
 * @dev: a device from blk_uring_create().
 * @st: filled in.
 * Context: any thread, with no I/O in flight (the counters are plain).
 */
void blk_uring_get_stats(struct blk_dev *dev, struct blk_uring_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* BLKSTACK_URING_H */
