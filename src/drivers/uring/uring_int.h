/* SPDX-License-Identifier: MIT */
/*
 * uring driver internals shared by its files: uring.c (the device, the
 * file, and the io_uring engine).
 */
#ifndef BLKSTACK_URING_INT_H
#define BLKSTACK_URING_INT_H

#include <liburing.h>
#include <stdbool.h>
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
	uint32_t setup_flags;   /* IORING_SETUP_* in effect */
};

struct uring_dev {
	struct blk_uring_config cfg;
	char path[4096];
	int fd;
	bool is_bdev;
	bool zero_range_ok;     /* FALLOC_FL_ZERO_RANGE works on this file */
	bool warned_einval;
	bool nowait;            /* the file takes RWF_NOWAIT: io_uring can issue
				 * I/O without an io-wq worker (FMODE_NOWAIT) */
	uint32_t lbs;
	struct uring_queue *queues;
	unsigned int nr_queues;
};

/* Per-request driver data (cmd_size), sized for max_segments iovecs. */
struct uring_cmd {
	uint32_t done;          /* bytes transferred so far */
	uint8_t punch;          /* write zeroes fell back to a hole punch */
	uint16_t nr_iov;
	struct iovec iov[];
};

/**
 * uring_sync_rq() - perform @rq with synchronous system calls (preadv2,
 * pwritev2, fdatasync, fallocate, ioctl) on the calling thread.
 * Return: the request's completion status.
 * Context: any thread; no queue state is touched.
 */
blk_status_t uring_sync_rq(struct uring_dev *ud, struct request *rq);

#endif /* BLKSTACK_URING_INT_H */
