/* SPDX-License-Identifier: MIT */
/*
 * nvme host driver internals, shared by nvme.c (fast path), admin.c
 * (bring-up and admin commands) and reset.c (timeout and reset).  Not part
 * of the public API; docs/nvme.md describes the design.
 */
#ifndef BLKSTACK_DRIVERS_NVME_HOST_H
#define BLKSTACK_DRIVERS_NVME_HOST_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "blkstack/lock.h"
#include "blkstack/nvme.h"

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define NVME_HOST_PAGE_SHIFT 12
#define NVME_HOST_PAGE 4096u
#define NVME_PRPS_PER_PAGE 512u

/* empty polls in a row with commands outstanding before a sched_yield() */
#define NVME_EMPTY_POLLS_YIELD 64

/* blk_nvme_rq_status() of a request the controller never answered */
#define NVME_HOST_NO_STATUS 0xffffu
/*
 * rq->native_status of a request the host failed itself (controller dead):
 * Path Related Status, Command Aborted By Host (Base 2.0, Figure 100).
 */
#define NVME_HOST_ABORTED_SF NVME_SF(NVME_SCT_PATH, 0x71)

/*
 * Controller state word (nvme_host.state): generation << 2 | flags.  A
 * queue remembers the word it was created under; any difference sends its
 * owner to the slow path (nvme_queue_recover()).
 */
#define NVME_ST_RESETTING 1u
#define NVME_ST_DEAD 2u
#define NVME_ST_GEN_ONE 4u

/*
 * A controller reset this many times in a row with no command completing
 * successfully in between is given up as dead: its requests fail.  Each
 * reset also uses one retry of every request it requeues, so requests
 * fail first (after max_retries + 1 resets); this bounds a controller
 * that keeps timing out everything.
 */
#define NVME_MAX_RESETS_NO_PROGRESS 8

/*
 * CQE DW3 (CID, phase, status field) with one acquire load: the controller
 * publishes an entry with a release store of the same 32 bits, after the
 * other dwords and the data (nvme_ctrl's cq_write()).  Loading the 16-bit
 * status half alone would not pair with it (C11: another object), which
 * ThreadSanitizer reported as races on the CQE fields and on Identify data.
 */
static inline uint32_t nvme_cqe_dw3(const struct nvme_completion *cqe)
{
	return __atomic_load_n((const uint32_t *)((uintptr_t)cqe + 12),
			       __ATOMIC_ACQUIRE);
}

/* Counters written by a queue's owner, read by anyone: no RMW. */
#define NV_STAT_ADD(p, v) \
	__atomic_store_n((p), __atomic_load_n((p), __ATOMIC_RELAXED) + (v), \
			 __ATOMIC_RELAXED)
#define NV_STAT_READ(p) __atomic_load_n((p), __ATOMIC_RELAXED)

struct nvme_host;

/* Per-queue counters (see struct blk_nvme_stats). */
struct nvme_queue_stats {
	uint64_t sq_doorbells;
	uint64_t cq_doorbells;
	uint64_t cqes;
	uint64_t prp_lists;
	uint64_t bounced;
	uint64_t timeouts;
	uint64_t requeued;
	uint64_t errors;
	uint64_t retried;
	uint64_t failed_retries;
};

/*
 * One I/O SQ/CQ pair, owned by the thread that holds its hctx.  The first
 * two cache lines hold what queue_rq() and poll() read per I/O; the rest
 * (from nh) is per-tag state, counters and the slow path.
 */
struct nvme_queue {
	struct nvme_command *sq;
	struct nvme_completion *cq;
	struct request **rqs;           /* cid -> request in flight, or NULL */
	struct nvme_ctrl *ctrl;
	const _Atomic uint32_t *state;  /* &nvme_host.state */
	uint32_t gen_word;              /* nvme_host.state at creation */
	uint32_t max_bytes;             /* nvme_host.max_bytes */
	uint32_t nsid;
	uint32_t sq_db;                 /* doorbell register offsets */
	uint32_t cq_db;
	uint32_t sq_tail;
	uint32_t sq_head;               /* last SQHD the controller reported */
	uint32_t cq_head;
	uint32_t depth;                 /* entries in the SQ and the CQ */
	uint32_t unrung;                /* SQEs written since the last doorbell */
	uint8_t cq_phase;
	uint8_t sqe_init;               /* enum blk_nvme_sqe_init */
	uint8_t lba_shift;
	uint8_t has_vwc;
	uint16_t qid;

	/* per-tag resources, counters, slow path */
	struct nvme_host *nh __attribute__((aligned(64)));
	uint32_t inflight;              /* commands given to the controller */
	uint32_t nr_tags;
	uint64_t *prp_pages;            /* nr_tags * prp_pages_per_tag pages */
	void **bounce;                  /* per tag, allocated on first use */
	bool warned_cid;
	uint32_t empty_polls;           /* in a row, with commands outstanding */
	struct request *retry_head;     /* waiting out a Command Retry Delay */
	struct request *retry_tail;
	struct nvme_queue_stats st;
} __attribute__((aligned(64)));

/* Per-request driver data (cmd_size). */
struct nvme_iod {
	struct nvme_dsm_range dsm;      /* DSM's one range: 16-byte aligned */
	uint16_t status;                /* NVMe status field, NVME_HOST_NO_STATUS */
	uint8_t bounced;                /* data went through the bounce buffer */
	struct request *retry_next;     /* nvme_queue.retry_head list */
	uint64_t retry_at_ns;           /* send again at (CLOCK_MONOTONIC) */
};

/* Admin queue: used under nvme_host.admin_lock only. */
struct nvme_admin_queue {
	struct nvme_command *sq;
	struct nvme_completion *cq;
	uint16_t depth;
	uint16_t sq_tail;
	uint16_t cq_head;
	uint8_t cq_phase;
	uint16_t next_cid;
};

struct nvme_host {
	struct blk_nvme_config cfg;
	struct nvme_ctrl *ctrl;
	_Atomic uint32_t state;         /* generation << 2 | NVME_ST_* */
	uint32_t dstrd;
	uint64_t cap;
	uint32_t timeout_ms;            /* CAP.TO in ms */
	uint32_t nsid;
	uint32_t lba_shift;
	uint64_t nsze;
	uint32_t max_bytes;             /* largest transfer: min(MDTS, NLB, max_sectors) */
	uint32_t prp_pages_per_tag;
	uint32_t nr_io_queues;
	uint32_t io_depth;              /* entries per I/O queue */
	uint32_t nr_tags;
	bool vwc;
	uint16_t oncs;
	uint8_t acl;
	uint16_t crdt[3];               /* Command Retry Delay Times, 100 ms */
	uint32_t max_retries;           /* cfg.max_retries */
	/* resets since a command last completed successfully (any queue) */
	_Atomic uint32_t resets_no_progress;

	struct blk_mutex admin_lock;    /* admin queue, resets, queue creation */
	struct nvme_admin_queue aq;

	struct nvme_queue *queues;      /* nr_io_queues, qid = index + 1 */
	struct blk_dev *dev;

	_Atomic uint64_t aborts;
	_Atomic uint64_t abort_ok;
	_Atomic uint64_t resets;
};

/* admin.c */
void *nvme_alloc_pages(size_t bytes);
void nvme_free_pages(void *p, size_t bytes);
int nvme_admin_cmd_locked(struct nvme_host *nh, struct nvme_command *cmd,
			  uint32_t *result, uint16_t *sf);
int nvme_admin_cmd(struct nvme_host *nh, struct nvme_command *cmd,
		   uint32_t *result, uint16_t *sf);
int nvme_ctrl_disable(struct nvme_host *nh);
int nvme_ctrl_shutdown(struct nvme_host *nh);
int nvme_ctrl_enable(struct nvme_host *nh, char *err, size_t errlen);
int nvme_set_queue_count(struct nvme_host *nh, uint32_t want, uint32_t *got,
			 char *err, size_t errlen);
int nvme_create_io_queue_locked(struct nvme_host *nh, struct nvme_queue *q,
				char *err, size_t errlen);
int nvme_identify(struct nvme_host *nh, char *err, size_t errlen);

/* reset.c */
int nvme_reset_ctrl(struct nvme_host *nh, uint32_t seen_state);
bool nvme_queue_recover(struct nvme_queue *q);
enum blk_eh_timer_return nvme_timeout(struct request *rq);

/* nvme.c */
int nvme_reap_cq(struct nvme_queue *q);
void nvme_fail_rq(struct nvme_queue *q, struct request *rq, blk_status_t st);
bool nvme_retry_rq(struct nvme_queue *q, struct request *rq, uint16_t sf);
void nvme_fail_retries(struct nvme_queue *q);

#endif /* BLKSTACK_DRIVERS_NVME_HOST_H */
