// SPDX-License-Identifier: MIT
/*
 * uring driver - see blkstack/uring.h.
 *
 * One io_uring per hardware queue.  queue_rq() fills SQEs, commit_rqs()
 * submits the batch with one io_uring_submit() (one io_uring_enter()),
 * poll() reaps CQEs on the ctx's thread and completes requests inline
 * (blk_mq_complete_request()), so completions need no ring back to the core.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <liburing.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "uring_int.h"


static struct io_uring_sqe *uring_get_sqe(struct uring_queue *q)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);

	if (unlikely(!sqe)) {
		/* SQ full: push what is there and try once more */
		io_uring_submit(&q->ring);
		q->unsubmitted = 0;
		sqe = io_uring_get_sqe(&q->ring);
	}
	return sqe;
}

static inline void uring_set_file(struct uring_queue *q,
				  struct io_uring_sqe *sqe)
{
	if (q->fixed_file) {
		sqe->fd = 0;
		sqe->flags |= IOSQE_FIXED_FILE;
	}
}

/* Queue the (rest of a) READ or WRITE. */
static int uring_prep_rw(struct uring_queue *q, struct request *rq,
			 struct uring_cmd *cmd)
{
	struct uring_dev *ud = q->ud;
	struct io_uring_sqe *sqe = uring_get_sqe(q);
	uint64_t off = rq->offset + cmd->done;
	bool wr = rq->op == BLK_OP_WRITE;
	unsigned int n;

	if (!sqe)
		return -EBUSY;
	n = uring_build_iov(rq, cmd, cmd->done);
	if (n == 1) {
		char *buf = cmd->iov[0].iov_base;
		unsigned int len = (unsigned int)cmd->iov[0].iov_len;

		if (q->fixed_base && (size_t)(buf - q->fixed_base) < q->fixed_len &&
		    (size_t)(buf - q->fixed_base) + len <= q->fixed_len) {
			if (wr)
				io_uring_prep_write_fixed(sqe, ud->fd, buf, len, off, 0);
			else
				io_uring_prep_read_fixed(sqe, ud->fd, buf, len, off, 0);
		} else if (wr) {
			io_uring_prep_write(sqe, ud->fd, buf, len, off);
		} else {
			io_uring_prep_read(sqe, ud->fd, buf, len, off);
		}
	} else if (wr) {
		io_uring_prep_writev(sqe, ud->fd, cmd->iov, n, off);
	} else {
		io_uring_prep_readv(sqe, ud->fd, cmd->iov, n, off);
	}
	if (wr && (rq->cmd_flags & BLK_BIO_FUA))
		sqe->rw_flags = RWF_DSYNC; /* FUA: durable when it completes */
	/*
	 * The request's I/O priority, as Linux's aio and io_uring take it per
	 * I/O (0: the task's own).  The kernel checks it: an unknown class is
	 * -EINVAL, class RT needs CAP_SYS_ADMIN (-EPERM).
	 */
	sqe->ioprio = blk_rq_ioprio(rq);
	uring_set_file(q, sqe);
	if (unlikely(ud->cfg.force_async) &&
	    ++q->async_n >= ud->cfg.force_async) {
		q->async_n = 0;
		sqe->flags |= IOSQE_ASYNC;
	}
	io_uring_sqe_set_data(sqe, rq);
	q->unsubmitted++;
	q->inflight++;
	if (unlikely(q->unsubmitted >= q->submit_group)) {
		io_uring_submit(&q->ring);
		q->unsubmitted = 0;
	}
	return 0;
}

static int uring_prep_zero(struct uring_queue *q, struct request *rq,
			   struct uring_cmd *cmd)
{
	struct io_uring_sqe *sqe = uring_get_sqe(q);
	int mode;

	if (!sqe)
		return -EBUSY;
	if (rq->op == BLK_OP_DISCARD || cmd->punch || !q->ud->zero_range_ok)
		mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
	else
		mode = FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE;
	io_uring_prep_fallocate(sqe, q->ud->fd, mode, rq->offset, rq->data_len);
	uring_set_file(q, sqe);
	io_uring_sqe_set_data(sqe, rq);
	q->unsubmitted++;
	q->inflight++;
	return 0;
}

/*
 * DEFER_TASKRUN rings are created disabled: the first thread to use one
 * enables it and becomes its only submitter (SINGLE_ISSUER).
 */
/*
 * io-wq belongs to the thread that submits, not to the ring: the limit set
 * at ring setup reached only the creating thread (and threads whose first
 * ring this is), so the first thread to submit sets it for itself too.
 */
static void uring_iowq_limit(struct uring_queue *q)
{
	unsigned int vals[2] = { q->ud->cfg.iowq_max_workers,
				 q->ud->cfg.iowq_max_workers };

	q->iowq_pending = false;
	io_uring_register_iowq_max_workers(&q->ring, vals);
}

static void uring_enable(struct uring_queue *q)
{
	struct uring_dev *ud = q->ud;
	unsigned int entries = q->ring.sq.ring_entries;
	int err;

	q->disabled = false;
	/* liburing 2.3 has no io_uring_enable_rings(): the register call */
	if (!syscall(__NR_io_uring_register, q->ring.ring_fd,
		     IORING_REGISTER_ENABLE_RINGS, NULL, 0))
		return;
	/*
	 * Refused (a seccomp filter on io_uring_register): a ring that stays
	 * disabled fails every submission, so start over with a plain one.
	 */
	err = errno;
	io_uring_queue_exit(&q->ring);
	q->fixed_file = false;
	q->defer = false;
	q->setup_flags = 0;
	q->ring_ok = io_uring_queue_init(entries, &q->ring, 0) == 0;
	fprintf(stderr, "blkstack: uring: %s: enabling the DEFER_TASKRUN ring: %s; using a plain ring%s\n",
		ud->path, strerror(err), q->ring_ok ? "" : " failed too");
	if (q->ring_ok && ud->cfg.register_files &&
	    io_uring_register_files(&q->ring, &ud->fd, 1) == 0)
		q->fixed_file = true;
	if (!q->ring_ok)
		q->inline_on = true; /* the system calls still work */
}

/*
 * Inline issue.  A file whose file system lacks FMODE_NOWAIT (tmpfs on
 * this kernel: preadv2 with RWF_NOWAIT says EOPNOTSUPP) cannot be read or
 * written by io_uring without handing every request to an io-wq worker
 * thread and taking the result back: ~2 us of CPU and two context
 * switches per I/O on the project's 2-vCPU VM, for what is a 0.7 us copy
 * (docs/uring.md: 4 KiB random reads of a /dev/shm file, 1 job, ring
 * 0.9 M IOPS, inline 1.3 M; 4 jobs on 2 CPUs, ring 1.0 M, inline 2.6 M).
 * For such files the driver makes the system call itself, in queue_rq,
 * while the calls stay short.  A file whose calls get slow (a network or
 * FUSE file system, swapped-out tmpfs pages) would serialise its queue
 * behind each call: it goes back to the ring, where io-wq runs requests in
 * parallel, and is tried inline again a second later.
 */
#define URING_DEV_SUBMIT_GROUP 8u
#define URING_INLINE_SAMPLE 16            /* time one call in 16 */
#define URING_INLINE_WINDOW 16            /* judge 16 samples at a time */
/*
 * A sample is slow past 20 us plus 2 us per 4 KiB it moved: a merged
 * 128 KiB read or a write that makes tmpfs allocate its pages is longer
 * without the file being slow (the flat 20 us gave inline up on new tmpfs
 * files and on 64 KiB-1 MiB sequential reads; a slow file takes 100 us+
 * per call whatever its size).
 */
#define URING_INLINE_SLOW_NS 20000ull
#define URING_INLINE_SLOW_NS_PER_4K 2000ull
#define URING_INLINE_RETRY_NS 1000000000ull

static uint64_t uring_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Half the samples of a window slow: the file is slow.  A single long
 * sample is more often this thread being preempted than the file; a
 * slow file is slow every time.
 */
static void uring_inline_sampled(struct uring_queue *q, uint64_t ns,
				 uint32_t bytes, uint64_t now)
{
	q->inline_samples++;
	if (ns > URING_INLINE_SLOW_NS + (bytes >> 12) * URING_INLINE_SLOW_NS_PER_4K)
		q->inline_slow_samples++;
	if (q->inline_samples < URING_INLINE_WINDOW)
		return;
	if (q->inline_slow_samples * 2 >= URING_INLINE_WINDOW && q->ring_ok) {
		q->inline_on = false;
		q->inline_retry_ns = now + URING_INLINE_RETRY_NS;
		q->inline_slow++;
	}
	q->inline_samples = 0;
	q->inline_slow_samples = 0;
}

static blk_status_t uring_queue_inline(struct uring_queue *q,
				       struct request *rq)
{
	blk_status_t st;

	blk_mq_stage(rq, BLK_STAGE_DEVICE);
	if (q->inline_n++ % URING_INLINE_SAMPLE == 0 &&
	    q->ud->cfg.inline_mode == BLK_URING_INLINE_AUTO && q->ring_ok) {
		uint64_t t0 = uring_now_ns(), t1;

		st = uring_sync_rq(q->ud, rq);
		t1 = uring_now_ns();
		uring_inline_sampled(q, t1 - t0, rq->data_len, t1);
	} else {
		st = uring_sync_rq(q->ud, rq);
	}
	q->inline_rqs++;
	blk_mq_stage(rq, BLK_STAGE_DEVICE_DONE);
	blk_mq_complete_request(rq, st);
	return BLK_STS_OK;
}

/* Ring mode after inline was given up: is it time to try again? */
static bool uring_inline_retry(struct uring_queue *q)
{
	uint64_t now;

	if (++q->inline_n % 256)
		return false;
	now = uring_now_ns();
	if (now < q->inline_retry_ns)
		return false;
	q->inline_retry_ns = 0;
	q->inline_samples = 0;
	q->inline_slow_samples = 0;
	q->inline_on = true;
	return true;
}

static blk_status_t uring_queue_rq(struct blk_mq_hw_ctx *hctx,
				   const struct blk_mq_queue_data *bd)
{
	struct uring_queue *q = blk_mq_hctx_driver_data(hctx);
	struct request *rq = bd->rq;
	struct uring_cmd *cmd = blk_mq_rq_to_pdu(rq);
	struct io_uring_sqe *sqe;
	int ret;

	if (q->inline_on ||
	    (unlikely(q->inline_retry_ns) && uring_inline_retry(q)))
		return uring_queue_inline(q, rq);
	if (unlikely(q->disabled))
		uring_enable(q);
	if (unlikely(q->iowq_pending))
		uring_iowq_limit(q);
	q->ring_rqs++;
	cmd->done = 0;
	cmd->punch = 0;
	switch (rq->op) {
	case BLK_OP_READ:
	case BLK_OP_WRITE:
		ret = uring_prep_rw(q, rq, cmd);
		break;
	case BLK_OP_FLUSH:
		sqe = uring_get_sqe(q);
		if (!sqe)
			return BLK_STS_RESOURCE;
		io_uring_prep_fsync(sqe, q->ud->fd, IORING_FSYNC_DATASYNC);
		uring_set_file(q, sqe);
		io_uring_sqe_set_data(sqe, rq);
		q->unsubmitted++;
		q->inflight++;
		ret = 0;
		break;
	case BLK_OP_DISCARD:
	case BLK_OP_WRITE_ZEROES:
		if (q->ud->is_bdev) {
			blk_mq_complete_request(rq, uring_bdev_zero(q->ud, rq));
			return BLK_STS_OK;
		}
		ret = uring_prep_zero(q, rq, cmd);
		break;
	default:
		return BLK_STS_NOTSUPP;
	}
	if (ret)
		return BLK_STS_RESOURCE;
	/* the SQE is the kernel's at the batch's io_uring_submit() */
	blk_mq_stage(rq, BLK_STAGE_DEVICE);
	return BLK_STS_OK;
}

/* The doorbell: one io_uring_enter() for the batch. */
static void uring_commit_rqs(struct blk_mq_hw_ctx *hctx)
{
	struct uring_queue *q = blk_mq_hctx_driver_data(hctx);

	if (q->unsubmitted) {
		io_uring_submit(&q->ring);
		q->unsubmitted = 0;
	}
}

/* One CQE: finish, resubmit the remainder, or retry. */
static void uring_complete(struct uring_queue *q, struct request *rq, int res)
{
	struct uring_cmd *cmd = blk_mq_rq_to_pdu(rq);
	struct uring_dev *ud = q->ud;

	if (unlikely(res == -EAGAIN || res == -EINTR)) {
		res = rq->op <= BLK_OP_WRITE ? uring_prep_rw(q, rq, cmd) :
		      rq->op == BLK_OP_FLUSH ? -EAGAIN : uring_prep_zero(q, rq, cmd);
		if (res == 0)
			return;
		if (rq->op == BLK_OP_FLUSH) {
			/* rare: a flush that must be retried, done inline */
			res = fdatasync(ud->fd) ? -errno : 0;
		} else {
			res = -EBUSY;
		}
	}
	if (unlikely(res == -EOPNOTSUPP && rq->op == BLK_OP_WRITE_ZEROES &&
		     !cmd->punch)) {
		/* no ZERO_RANGE on this file system (tmpfs): punch instead */
		ud->zero_range_ok = false;
		cmd->punch = 1;
		if (uring_prep_zero(q, rq, cmd) == 0)
			return;
	}
	if (unlikely(res < 0)) {
		blk_mq_complete_request(rq, uring_errno_status(ud, rq, res));
		return;
	}
	if (rq->op <= BLK_OP_WRITE) {
		if (unlikely(res == 0)) {
			/* end of file inside the device: an error, not zeros */
			blk_mq_complete_request(rq, uring_eof(ud, rq, cmd->done));
			return;
		}
		cmd->done += (uint32_t)res;
		if (unlikely(cmd->done < rq->data_len)) {
			/* short transfer: resubmit the rest */
			if (uring_prep_rw(q, rq, cmd) == 0)
				return;
			blk_mq_complete_request(rq, BLK_STS_IOERR);
			return;
		}
	}
	blk_mq_complete_request(rq, BLK_STS_OK);
}

/*
 * Completions that need this task's context (task work: io-wq results,
 * block-device and O_DIRECT completions) are run when the task enters the
 * kernel.  With COOP_TASKRUN the kernel raises IORING_SQ_TASKRUN instead
 * of interrupting us; with DEFER_TASKRUN they wait for GETEVENTS.
 */
static inline bool uring_needs_enter(struct uring_queue *q)
{
	if (q->defer)
		return q->inflight != 0;
	return IO_URING_READ_ONCE(*q->ring.sq.kflags) &
	       (IORING_SQ_TASKRUN | IORING_SQ_CQ_OVERFLOW);
}

static int uring_poll(struct blk_mq_hw_ctx *hctx)
{
	struct uring_queue *q = blk_mq_hctx_driver_data(hctx);
	struct io_uring_cqe *cqe;
	unsigned int head, n = 0, seen = 0;

	if (unlikely(!q->ring_ok))
		return 0; /* inline only: see uring_enable() */
	if (!io_uring_cq_ready(&q->ring) && uring_needs_enter(q))
		io_uring_get_events(&q->ring);
	io_uring_for_each_cqe(&q->ring, head, cqe) {
		struct request *rq = io_uring_cqe_get_data(cqe);

		q->inflight--;
		seen++;
		if (unlikely(!rq)) {
			/* an ASYNC_CANCEL's own result (uring_timeout()) */
			if (cqe->res == 0)
				q->cancels_hit++;
			else if (cqe->res == -EALREADY)
				q->cancels_running++;
			else
				q->cancels_missed++;
			continue;
		}
		if (unlikely(cqe->res == -ECANCELED))
			q->cancelled++;
		blk_mq_stage(rq, BLK_STAGE_DEVICE_DONE);
		uring_complete(q, rq, cqe->res);
		n++;
	}
	if (seen)
		io_uring_cq_advance(&q->ring, seen);
	/* resubmissions from uring_complete() */
	if (q->unsubmitted) {
		io_uring_submit(&q->ring);
		q->unsubmitted = 0;
	}
	return (int)n;
}

/*
 * Sleep in io_uring_enter() until a CQE is posted: GETEVENTS with
 * min_complete 1 and a timeout (IORING_ENTER_EXT_ARG), submitting what
 * is queued on the way in.  Task work runs inside, so io-wq and O_DIRECT
 * completions are posted while we sleep, and the CPU is left to io-wq.
 */
static int uring_wait(struct blk_mq_hw_ctx *hctx, uint64_t timeout_ns)
{
	struct uring_queue *q = blk_mq_hctx_driver_data(hctx);
	struct __kernel_timespec ts = {
		.tv_sec = (long long)(timeout_ns / 1000000000ull),
		.tv_nsec = (long long)(timeout_ns % 1000000000ull),
	};
	struct io_uring_cqe *cqe;
	int ret;

	if (unlikely(!q->ring_ok))
		return -EOPNOTSUPP;
	if (io_uring_cq_ready(&q->ring))
		return 0;
	if (!q->inflight && !q->unsubmitted)
		return -ETIME; /* nothing could ever wake us */
	ret = io_uring_submit_and_wait_timeout(&q->ring, &cqe, 1, &ts, NULL);
	q->unsubmitted = 0;
	if (ret == -ETIME || ret == -EINTR)
		return ret;
	return ret < 0 && ret != -EAGAIN && ret != -EBUSY ? ret : 0;
}

/*
 * A request's deadline passed.  The kernel owns the I/O and completes it
 * through the CQ, so the first time the timer is only reset (a slow disk
 * is not a lost request).  From the second time on, it is cancelled
 * (IORING_OP_ASYNC_CANCEL): one still waiting for an io-wq worker, or
 * polled, ends with -ECANCELED, which completes it with BLK_STS_TIMEOUT.
 * One already inside a system call (a hung NFS server, a blocked FUSE
 * daemon) cannot be taken back and ends when the kernel ends it; the stop
 * deadlines of bench and serve bound the process then.  The cancel's own
 * CQE carries no request (user data 0) and is only counted.
 */
#define URING_CANCEL_AFTER_TIMEOUTS 2

static enum blk_eh_timer_return uring_timeout(struct request *rq)
{
	struct uring_queue *q = blk_mq_hctx_driver_data(rq->mq_hctx);
	struct io_uring_sqe *sqe;

	if (rq->timeouts < URING_CANCEL_AFTER_TIMEOUTS || !q->ring_ok)
		return BLK_EH_RESET_TIMER;
	sqe = uring_get_sqe(q);
	if (!sqe)
		return BLK_EH_RESET_TIMER;
	io_uring_prep_cancel(sqe, rq, 0);
	io_uring_sqe_set_data(sqe, NULL);
	q->inflight++;
	q->unsubmitted++;
	q->cancels++;
	io_uring_submit(&q->ring);
	q->unsubmitted = 0;
	return BLK_EH_RESET_TIMER;
}

static int uring_register_buffer(struct blk_mq_hw_ctx *hctx, void *addr,
				 size_t len)
{
	struct uring_queue *q = blk_mq_hctx_driver_data(hctx);
	struct iovec iov = { .iov_base = addr, .iov_len = len };
	int ret;

	if (unlikely(q->disabled))
		uring_enable(q);
	if (unlikely(q->iowq_pending))
		uring_iowq_limit(q);
	if (!q->ud->cfg.fixed_buffers)
		return -EOPNOTSUPP;
	if (q->fixed_base) {
		io_uring_unregister_buffers(&q->ring);
		q->fixed_base = NULL;
		q->fixed_len = 0;
	}
	ret = io_uring_register_buffers(&q->ring, &iov, 1);
	if (ret)
		return ret; /* RLIMIT_MEMLOCK and the like: plain reads then */
	q->fixed_base = addr;
	q->fixed_len = len;
	return 0;
}

static const char *uring_setup_hint(int err)
{
	switch (err) {
	case -EPERM:
		return "io_uring is not allowed here: check the sysctl "
		       "kernel.io_uring_disabled (0 allows it) and any seccomp "
		       "filter (containers often block io_uring_setup)";
	case -ENOSYS:
		return "this kernel or a seccomp filter does not provide "
		       "io_uring_setup (Linux 5.1 or later is needed)";
	case -ENOMEM:
		return "the ring could not be allocated: on kernels before 5.12 "
		       "rings count against RLIMIT_MEMLOCK; raise it (ulimit -l) "
		       "or lower hw_queue_depth";
	default:
		return "io_uring_queue_init failed";
	}
}

/* Ring setup flags for the configured task-run mode and SQPOLL. */
static unsigned int uring_setup_flags(const struct blk_uring_config *c)
{
	unsigned int f = 0;

	switch (c->taskrun) {
	case BLK_URING_TASKRUN_COOP:
		f = IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
		break;
	case BLK_URING_TASKRUN_DEFER:
		f = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
		    IORING_SETUP_R_DISABLED;
		break;
	default:
		break;
	}
	if (c->sqpoll) {
		/* DEFER_TASKRUN needs the submitter to be the task: not SQPOLL */
		f &= ~(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
		       IORING_SETUP_R_DISABLED);
		f |= IORING_SETUP_SQPOLL;
	}
	return f;
}

static int uring_init_hctx(struct blk_mq_hw_ctx *hctx, void *data,
			   unsigned int idx)
{
	struct uring_dev *ud = data;
	struct uring_queue *q = &ud->queues[idx];
	struct io_uring_params p;
	unsigned int entries = 1;
	int ret;

	q->ud = ud;
	blk_mq_hctx_set_driver_data(hctx, q);
	while (entries < ud->cfg.queue.queue_depth && entries < 4096)
		entries <<= 1;
	memset(&p, 0, sizeof(p));
	p.flags = uring_setup_flags(&ud->cfg);
	if (p.flags & IORING_SETUP_SQPOLL)
		p.sq_thread_idle = 2; /* ms */
	ret = io_uring_queue_init_params(entries, &q->ring, &p);
	if (ret == -EINVAL && p.flags) {
		/* a kernel older than the flags (COOP 5.19, DEFER 6.1): plain */
		memset(&p, 0, sizeof(p));
		ret = io_uring_queue_init_params(entries, &q->ring, &p);
	}
	if (ret)
		return ret;
	q->ring_ok = true;
	q->setup_flags = p.flags;
	/*
	 * A device behind the file (O_DIRECT, a block device) gets its SQEs
	 * in groups of URING_DEV_SUBMIT_GROUP rather than a whole plug in one
	 * io_uring_enter(): the kernel plugs what one call submits and kicks
	 * the device once for all of it, and a disk fed 32 requests at a
	 * time idles between the bursts (4 KiB O_DIRECT random writes at
	 * QD32 on this project's virtio disk: 98k IOPS with whole plugs,
	 * 130k one at a time, 133k in eights at less CPU per I/O).  Page
	 * cache I/O completes inside the call: one call per plug is cheapest.
	 */
	q->submit_group = ud->cfg.direct || ud->is_bdev ? URING_DEV_SUBMIT_GROUP :
							   UINT_MAX;
	q->disabled = p.flags & IORING_SETUP_R_DISABLED;
	q->inline_on = ud->cfg.inline_mode == BLK_URING_INLINE_ALWAYS ||
		       (ud->cfg.inline_mode == BLK_URING_INLINE_AUTO && !ud->nowait);
	q->defer = p.flags & IORING_SETUP_DEFER_TASKRUN;
	if (ud->cfg.register_files &&
	    io_uring_register_files(&q->ring, &ud->fd, 1) == 0)
		q->fixed_file = true;
	if (ud->cfg.iowq_max_workers) {
		/* here for the check (and for threads whose first ring this
		 * is); the submitting thread sets it again (uring_iowq_limit()) */
		unsigned int vals[2] = { ud->cfg.iowq_max_workers,
					 ud->cfg.iowq_max_workers };

		ret = io_uring_register_iowq_max_workers(&q->ring, vals);
		if (ret) {
			ud->iowq_err = ret;
			return ret;
		}
		q->iowq_pending = true;
	}
	return 0;
}

static void uring_exit_hctx(struct blk_mq_hw_ctx *hctx, unsigned int idx)
{
	struct uring_queue *q = blk_mq_hctx_driver_data(hctx);

	if (q->ring_ok)
		io_uring_queue_exit(&q->ring);
	q->ring_ok = false;
}

static void uring_free(void *data)
{
	struct uring_dev *ud = data;

	if (ud->fd >= 0)
		close(ud->fd);
	free(ud->queues);
	free(ud);
}

/*
 * Files: SEEK_DATA / SEEK_HOLE (lseek moves the shared file position, which
 * no I/O uses: every SQE carries its offset).  Holes read as zeroes.  A
 * file system without hole support reports everything as data, which is
 * what lseek answers there too.  Block devices: all data.
 */
static int uring_block_status(void *data, uint64_t offset, uint64_t len,
			      struct blk_extent *ext, unsigned int nr_ext,
			      unsigned int flags)
{
	struct uring_dev *ud = data;
	uint64_t end = offset + len;
	unsigned int n = 0;

	if (!ud->is_bdev && (flags & BLK_STATUS_NOWAIT))
		return -EAGAIN;
	if (ud->is_bdev) {
		ext[0].length = len;
		ext[0].flags = 0;
		return 1;
	}
	while (offset < end && n < nr_ext) {
		off_t d = lseek(ud->fd, (off_t)offset, SEEK_DATA);
		uint64_t next;

		if (d < 0 && errno != ENXIO)
			return n ? (int)n : -errno;
		if (d < 0 || (uint64_t)d > offset) {
			/* a hole up to the next data, or to the end */
			next = d < 0 || (uint64_t)d > end ? end : (uint64_t)d;
			ext[n].flags = BLK_EXTENT_HOLE | BLK_EXTENT_ZERO;
		} else {
			off_t h = lseek(ud->fd, (off_t)offset, SEEK_HOLE);

			if (h < 0)
				return n ? (int)n : -errno;
			next = (uint64_t)h > end ? end : (uint64_t)h;
			if (next <= offset)
				next = end; /* cannot happen; never loop */
			ext[n].flags = 0;
		}
		ext[n].length = next - offset;
		offset = next;
		n++;
	}
	return (int)n;
}

static const struct blk_mq_ops uring_mq_ops = {
	.block_status = uring_block_status,
	.queue_rq = uring_queue_rq,
	.commit_rqs = uring_commit_rqs,
	.poll = uring_poll,
	.wait = uring_wait,
	.timeout = uring_timeout,
	.register_buffer = uring_register_buffer,
	.init_hctx = uring_init_hctx,
	.exit_hctx = uring_exit_hctx,
	.free = uring_free,
};

/* The thread-pool engine (pool.c): the same file, no ring. */
static const struct blk_mq_ops uring_pool_mq_ops = {
	.block_status = uring_block_status,
	.queue_rq = uring_pool_queue_rq,
	.commit_rqs = uring_pool_commit_rqs,
	.poll = uring_pool_poll,
	.wait = uring_pool_wait,
	.timeout = uring_timeout, /* a worker owns the I/O: keep waiting */
	.init_hctx = uring_pool_init_hctx,
	.exit_hctx = uring_pool_exit_hctx,
	.free = uring_free,
};

/* O_DIRECT alignment the file system asks for (statx STATX_DIOALIGN). */
static uint32_t uring_dio_align(int fd)
{
#ifdef STATX_DIOALIGN
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
	    (stx.stx_mask & STATX_DIOALIGN) && stx.stx_dio_offset_align)
		return stx.stx_dio_offset_align;
#endif
	return 0;
}

/*
 * Can the kernel do I/O on this file without blocking (FMODE_NOWAIT)?
 * io_uring issues such I/O inline at submission and hands the rest to
 * io-wq workers.  A one-block RWF_NOWAIT read answers: EOPNOTSUPP means
 * no; EAGAIN (not cached) still means yes.
 */
static bool uring_probe_nowait(int fd, uint32_t lbs)
{
	struct iovec iov;
	void *buf;
	ssize_t r;

	if (posix_memalign(&buf, 4096, lbs))
		return true;
	iov.iov_base = buf;
	iov.iov_len = lbs;
	r = preadv2(fd, &iov, 1, 0, RWF_NOWAIT);
	free(buf);
	return r >= 0 || errno != EOPNOTSUPP;
}

/* Open (or create) the file; fills ud->fd, capacity and lbs. */
static int uring_open(struct uring_dev *ud, uint64_t *capacity, char *err,
		      size_t errlen)
{
	const struct blk_uring_config *c = &ud->cfg;
	int flags = O_RDWR | O_CLOEXEC | (c->direct ? O_DIRECT : 0);
	struct stat st;
	uint32_t lbs = c->queue.logical_block_size ? c->queue.logical_block_size : 512;
	int ret;

	if (!stat(ud->path, &st) && S_ISDIR(st.st_mode)) {
		snprintf(err, errlen,
			 "filename=%s: a directory; dev=uring takes a regular file (created with size= when missing) or a block device",
			 ud->path);
		return -EISDIR;
	}
	if (stat(ud->path, &st) && errno == ENOENT) {
		if (!c->create_size) {
			snprintf(err, errlen,
				 "filename=%s: no such file; give size= to create it", ud->path);
			return -ENOENT;
		}
		flags |= O_CREAT | O_EXCL;
	}
	ud->fd = open(ud->path, flags, 0644);
	ud->created = ud->fd >= 0 && (flags & O_CREAT);
	if (ud->fd < 0 && errno == EINVAL && c->direct) {
		snprintf(err, errlen,
			 "filename=%s: the file system refuses O_DIRECT (direct=1); use direct=0 "
			 "or a file on another file system", ud->path);
		return -EINVAL;
	}
	if (ud->fd < 0) {
		ret = -errno;
		if (ret == -EACCES || ret == -EPERM || ret == -EROFS)
			snprintf(err, errlen,
				 "filename=%s: %s opening it for reading and writing; run as a "
				 "user who may write it, or choose another file",
				 ud->path, strerror(-ret));
		else
			snprintf(err, errlen, "filename=%s: cannot open: %s", ud->path,
				 strerror(-ret));
		return ret;
	}
	if (fstat(ud->fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "filename=%s: fstat: %s", ud->path, strerror(-ret));
		return ret;
	}
	if (S_ISBLK(st.st_mode)) {
		uint64_t bytes = 0;
		int ssz = 0;

		if (ioctl(ud->fd, BLKGETSIZE64, &bytes) ||
		    ioctl(ud->fd, BLKSSZGET, &ssz)) {
			ret = -errno;
			snprintf(err, errlen, "filename=%s: cannot read the device's size: %s",
				 ud->path, strerror(-ret));
			return ret;
		}
		ud->is_bdev = true;
		if ((uint32_t)ssz > lbs)
			lbs = (uint32_t)ssz;
		*capacity = bytes;
	} else if (S_ISREG(st.st_mode)) {
		if (st.st_size == 0 && c->create_size && c->create_empty) {
			/* fio's create_on_open: writes make the file grow */
			st.st_size = (off_t)c->create_size;
		} else if (st.st_size == 0 && c->create_size) {
			if (ftruncate(ud->fd, (off_t)c->create_size)) {
				ret = -errno;
				snprintf(err, errlen, "filename=%s: cannot size it to %llu bytes: %s",
					 ud->path, (unsigned long long)c->create_size,
					 strerror(-ret));
				return ret;
			}
			st.st_size = (off_t)c->create_size;
		}
		if (c->direct) {
			uint32_t a = uring_dio_align(ud->fd);

			if (a > lbs)
				lbs = a;
		}
		*capacity = (uint64_t)st.st_size;
		ud->zero_range_ok = true;
	} else {
		snprintf(err, errlen, "filename=%s: neither a regular file nor a block device",
			 ud->path);
		return -EINVAL;
	}
	*capacity -= *capacity % lbs;
	if (!*capacity) {
		snprintf(err, errlen,
			 "filename=%s: empty (smaller than one %u-byte block); give size= to "
			 "size a new file", ud->path, lbs);
		return -EINVAL;
	}
	ud->lbs = lbs;
	ud->nowait = uring_probe_nowait(ud->fd, lbs);
	return 0;
}

int blk_uring_create(const struct blk_uring_config *cfg, struct blk_dev **dev,
		     char *err, size_t errlen)
{
	struct blk_dev_config qc = cfg->queue;
	struct uring_dev *ud;
	uint64_t capacity = 0;
	int ret;

	if (!cfg->path || !cfg->path[0]) {
		snprintf(err, errlen, "dev=uring needs filename=PATH");
		return -EINVAL;
	}
	if (cfg->taskrun == BLK_URING_TASKRUN_DEFER && cfg->queue.shared_hctx &&
	    cfg->engine != BLK_URING_ENGINE_POOL) {
		snprintf(err, errlen,
			 "uring_taskrun=defer: a DEFER_TASKRUN ring takes one submitting thread, and more threads than hardware queues would share them; give nr_hw_queues= at least the number of jobs, or uring_taskrun=coop");
		return -EINVAL;
	}
	if (cfg->engine > BLK_URING_ENGINE_POOL) {
		snprintf(err, errlen,
			 "uring_engine=%u: allowed auto (0), io_uring (1), pool (2)",
			 cfg->engine);
		return -EINVAL;
	}
	if (cfg->pool_threads > BLK_URING_POOL_THREADS_MAX) {
		snprintf(err, errlen, "pool_threads=%u: allowed 1..%u (0: %u)",
			 cfg->pool_threads, BLK_URING_POOL_THREADS_MAX,
			 BLK_URING_POOL_THREADS_DEFAULT);
		return -EINVAL;
	}
	ud = calloc(1, sizeof(*ud));
	if (!ud)
		return -ENOMEM;
	ud->fd = -1;
	ud->cfg = *cfg;
	snprintf(ud->path, sizeof(ud->path), "%s", cfg->path);
	ud->cfg.path = ud->path;
	ret = uring_open(ud, &capacity, err, errlen);
	if (ret)
		goto fail;
	ud->nr_queues = qc.nr_hw_queues ? qc.nr_hw_queues : 1;
	ud->queues = calloc(ud->nr_queues, sizeof(*ud->queues));
	if (!ud->queues) {
		ret = -ENOMEM;
		goto fail;
	}
	if (!qc.queue_depth)
		qc.queue_depth = 64;
	if (!qc.max_segments)
		qc.max_segments = 128;
	ud->cfg.queue.queue_depth = qc.queue_depth;
	qc.name = "uring";
	qc.capacity = capacity;
	qc.logical_block_size = ud->lbs;
	qc.ops = cfg->engine == BLK_URING_ENGINE_POOL ? &uring_pool_mq_ops :
							 &uring_mq_ops;
	qc.driver_data = ud;
	qc.cmd_size = (uint32_t)(sizeof(struct uring_cmd) +
				 qc.max_segments * sizeof(struct iovec));
	qc.can_flush = true;
	qc.can_discard = true;
	qc.can_write_zeroes = true;
	qc.stores_data = true;
	if (qc.max_sectors && qc.max_sectors < (ud->lbs >> 9))
		qc.max_sectors = ud->lbs >> 9;
	ret = blk_dev_create(&qc, dev);
	if ((ret == -EPERM || ret == -ENOSYS) &&
	    cfg->engine == BLK_URING_ENGINE_AUTO) {
		/* io_uring_setup refused: the thread pool, saying why */
		uring_refused_notice(ud->path, ret);
		qc.ops = &uring_pool_mq_ops;
		ret = blk_dev_create(&qc, dev);
	}
	if (qc.ops == &uring_pool_mq_ops && ret) {
		snprintf(err, errlen,
			 "filename=%s: cannot set up the device (thread pool): %s",
			 ud->path, strerror(-ret));
		goto fail;
	}
	if (ret && ud->iowq_err) {
		snprintf(err, errlen,
			 "uring_iowq_max_workers=%u: IORING_REGISTER_IOWQ_MAX_WORKERS refused: %s (Linux 5.15 or later is needed; 0 keeps the kernel's default)",
			 cfg->iowq_max_workers, strerror(-ud->iowq_err));
		goto fail_queues;
	}
	if (ret == -EPERM || ret == -ENOSYS || ret == -ENOMEM) {
		snprintf(err, errlen, "filename=%s: io_uring: %s: %s", ud->path,
			 strerror(-ret), uring_setup_hint(ret));
		goto fail_queues;
	}
	if (ret) {
		snprintf(err, errlen, "filename=%s: cannot set up the device: %s", ud->path,
			 strerror(-ret));
		goto fail_queues;
	}
	ud->pool = qc.ops == &uring_pool_mq_ops;
	return 0;
fail_queues:
	/* blk_dev_create() ran exit_hctx for the rings it set up */
	for (unsigned int i = 0; i < ud->nr_queues; i++)
		if (ud->queues[i].ring_ok)
			io_uring_queue_exit(&ud->queues[i].ring);
fail:
	/* a file this call created is not left behind, empty, by a failure */
	if (ud->created)
		unlink(ud->path);
	uring_free(ud);
	return ret;
}

void blk_uring_get_stats(struct blk_dev *dev, struct blk_uring_stats *st)
{
	struct uring_dev *ud = blk_dev_driver_data(dev);
	unsigned int i;

	memset(st, 0, sizeof(*st));
	st->nowait = ud->nowait;
	st->pool = ud->pool;
	for (i = 0; i < ud->nr_queues; i++) {
		const struct uring_queue *q = &ud->queues[i];

		st->ring_rqs += q->ring_rqs;
		st->pool_rqs += q->pool_rqs;
		st->inline_rqs += q->inline_rqs;
		st->inline_given_up += q->inline_slow;
		st->cancels += q->cancels;
		st->cancels_hit += q->cancels_hit;
		st->cancels_running += q->cancels_running;
		st->cancels_missed += q->cancels_missed;
		st->cancelled += q->cancelled;
	}
	st->setup_flags = ud->nr_queues ? ud->queues[0].setup_flags : 0;
}
