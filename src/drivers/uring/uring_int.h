/* SPDX-License-Identifier: MIT */
/*
 * uring driver internals shared by its files: uring.c (the device, the
 * file, and the io_uring engine), sync_io.c (one request done with plain
 * system calls, and the errno mapping both engines use), pool.c (the
 * thread-pool engine).
 */
#ifndef BLKSTACK_URING_INT_H
#define BLKSTACK_URING_INT_H

#include <liburing.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "blkstack/uring.h"

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

struct uring_dev;

struct uring_queue {
	struct uring_dev *ud;
	struct io_uring ring;
	bool ring_ok;
	bool fixed_file;        /* the file is registered as index 0 */
	bool disabled;          /* DEFER_TASKRUN: enabled by its first user */
	bool defer;             /* completions only at GETEVENTS */
	char *fixed_base;       /* registered buffer, or NULL */
	size_t fixed_len;
	unsigned int unsubmitted; /* SQEs filled since the last submit */
	unsigned int submit_group; /* submit once this many are filled */
	unsigned int inflight;  /* SQEs submitted, CQE not yet reaped */
	/* inline issue (see uring_inline_*() in uring.c) */
	bool inline_on;         /* issue requests with preadv2 & co in queue_rq */
	unsigned int inline_n;  /* requests issued inline, for sampling */
	unsigned int inline_samples; /* calls timed in this window */
	unsigned int inline_slow_samples; /* of which slow */
	uint64_t inline_retry_ns; /* ring mode: try inline again after this */
	uint64_t inline_slow;   /* times inline was given up as too slow */
	uint64_t inline_rqs;    /* requests issued inline */
	uint64_t ring_rqs;      /* requests issued through the ring */
	uint64_t pool_rqs;      /* requests handed to the pool (pool engine) */
	uint64_t cancels;       /* ASYNC_CANCELs sent for late requests */
	uint64_t cancels_hit, cancels_running, cancels_missed; /* their results */
	uint64_t cancelled;     /* requests ended with -ECANCELED */
	uint32_t async_n;       /* reads and writes since the last IOSQE_ASYNC */
	bool iowq_pending;      /* set the io-wq limit at the first submission */
	uint32_t setup_flags;   /* IORING_SETUP_* in effect */
};

struct uring_dev {
	struct blk_uring_config cfg;
	char path[4096];
	int fd;
	bool is_bdev;
	bool zero_range_ok;     /* FALLOC_FL_ZERO_RANGE works on this file */
	bool warned_einval;     /* set once, atomically (any thread) */
	bool nowait;            /* the file takes RWF_NOWAIT: io_uring can issue
				 * I/O without an io-wq worker (FMODE_NOWAIT) */
	bool pool;              /* the thread-pool engine runs it */
	bool created;           /* blk_uring_create() created the file */
	int iowq_err;           /* IORING_REGISTER_IOWQ_MAX_WORKERS refused */
	uint32_t lbs;
	struct uring_queue *queues;
	unsigned int nr_queues;
};

/* Per-request driver data (cmd_size), sized for max_segments iovecs. */
struct uring_cmd {
	uint32_t done;          /* bytes transferred so far */
	uint8_t punch;          /* write zeroes fell back to a hole punch */
	uint16_t nr_iov;
	uint32_t gen;           /* pool: rq->gen when queue_rq() took it */
	struct request *next;   /* pool: submission list */
	struct iovec iov[];
};

/* Collect the request's iovecs into cmd->iov, skipping the first @skip bytes. */
static inline unsigned int uring_build_iov(struct request *rq,
					   struct uring_cmd *cmd, uint32_t skip)
{
	unsigned int n = 0, i;
	struct blk_bio *bio;

	rq_for_each_bio(bio, rq) {
		for (i = 0; i < bio->bi_vcnt; i++) {
			const struct iovec *v = &bio->bi_io_vec[i];

			if (skip >= v->iov_len) {
				skip -= (uint32_t)v->iov_len;
				continue;
			}
			cmd->iov[n].iov_base = (char *)v->iov_base + skip;
			cmd->iov[n].iov_len = v->iov_len - skip;
			skip = 0;
			n++;
		}
	}
	cmd->nr_iov = (uint16_t)n;
	return n;
}

/* sync_io.c */

/**
 * uring_sync_rq() - perform @rq with blocking system calls, to the end.
 * @ud: the device (its fd, is_bdev; zero_range_ok is updated atomically).
 * @rq: a READ, WRITE, FLUSH, DISCARD or WRITE_ZEROES request.
 *
 * READ/WRITE: preadv2/pwritev2 over all the request's bios (FUA:
 * RWF_DSYNC), looping over short transfers; FLUSH: fdatasync; DISCARD:
 * a hole punch (files) or BLKDISCARD (block devices); WRITE_ZEROES:
 * FALLOC_FL_ZERO_RANGE, a hole punch where the file system lacks it, or
 * BLKZEROOUT.  EINTR and EAGAIN are retried.  Uses the request's struct
 * uring_cmd iovec array as scratch (cmd->done, punch, gen and next are
 * left alone); no engine state.
 *
 * Return: BLK_STS_OK; BLK_STS_IOERR for a read that reaches the end of
 * the file (never zeros, except on a create_empty file: uring_eof());
 * otherwise uring_errno_status() of the error.
 * Context: any thread, blocking; concurrently with other requests.
 */
blk_status_t uring_sync_rq(struct uring_dev *ud, struct request *rq);

/**
 * uring_eof() - a read of @rq met the end of the file after @done bytes.
 * On a create_empty file (fio's create_on_open) the rest of the device
 * is what was not written yet: its bytes are zeros, as a hole's.
 * Return: BLK_STS_OK with the buffers' rest zeroed on a create_empty
 * file; BLK_STS_IOERR otherwise.  Uses cmd's iovec array as scratch.
 * Context: the request's completion, any thread.
 */
blk_status_t uring_eof(struct uring_dev *ud, struct request *rq, uint32_t done);

/**
 * uring_errno_status() - the blk_status_t of a failed system call or CQE.
 * @ud: the device (for the one-time O_DIRECT EINVAL explanation).
 * @rq: the request that failed.
 * @err: a negative errno.
 *
 * Return: NOSPC for ENOSPC/EDQUOT, NOTSUPP for EOPNOTSUPP, INVAL for
 * EINVAL (printing, once per device with direct=1, what O_DIRECT needs),
 * IOERR for anything else.
 * Context: any thread.
 */
blk_status_t uring_errno_status(struct uring_dev *ud, struct request *rq,
				int err);

/**
 * uring_bdev_zero() - DISCARD (BLKDISCARD) or WRITE_ZEROES (BLKZEROOUT)
 * on a block device, synchronously.
 * Return: OK, NOTSUPP (EOPNOTSUPP) or IOERR.  Context: any thread.
 */
blk_status_t uring_bdev_zero(struct uring_dev *ud, struct request *rq);

/* pool.c: the thread-pool engine's blk_mq_ops (table in uring.c) */
blk_status_t uring_pool_queue_rq(struct blk_mq_hw_ctx *hctx,
				 const struct blk_mq_queue_data *bd);
void uring_pool_commit_rqs(struct blk_mq_hw_ctx *hctx);
int uring_pool_poll(struct blk_mq_hw_ctx *hctx);
int uring_pool_wait(struct blk_mq_hw_ctx *hctx, uint64_t timeout_ns);
int uring_pool_init_hctx(struct blk_mq_hw_ctx *hctx, void *data,
			 unsigned int idx);
void uring_pool_exit_hctx(struct blk_mq_hw_ctx *hctx, unsigned int idx);

/**
 * uring_refused_cause() - why io_uring_setup was refused, in words.
 * @err: -EPERM or -ENOSYS from io_uring_setup.
 * @sysctl_disabled: kernel.io_uring_disabled (0, 1, 2), or -1 when the
 *	kernel has no such sysctl (before 6.6).
 * @seccomp: the process runs under a seccomp filter (/proc/self/status
 *	Seccomp: 2).
 * Return: a static string such as "kernel.io_uring_disabled=2" or "a
 * seccomp filter".  Context: any.
 */
const char *uring_refused_cause(int err, int sysctl_disabled, bool seccomp);

/**
 * uring_refused_notice() - print, once per process, the line saying that
 * io_uring was refused (with uring_refused_cause() of this process) and
 * that @path uses the thread pool.  Context: any thread.
 */
void uring_refused_notice(const char *path, int err);

#endif /* BLKSTACK_URING_INT_H */
