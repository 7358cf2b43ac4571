/* SPDX-License-Identifier: MIT */
/*
 * Emulated NVMe controller: internal state shared by the files of
 * src/devices/nvme_ctrl/ (regs.c registers and controller state machine,
 * queue.c SQ fetch and CQ posting, admin.c admin commands, io.c NVM
 * commands, prp.c PRP walking, fault.c fault rules, error log and stats).
 *
 * Locking (see docs/nvme-ctrl.md):
 *  - thread mode: everything below is owned by the controller thread; the
 *    host touches only the atomic register and doorbell words.
 *  - inline mode: a queue's state is owned by whoever holds its CQ's mutex
 *    (cq->lock); SQs are processed under the mutex of the CQ they post to.
 *    Lock order: ctrl->cc_lock -> admin CQ lock -> I/O CQ lock -> fault_lock.
 *    Queue structures are allocated for every possible QID at create time
 *    and never freed before destroy, so a doorbell write racing a queue
 *    deletion locks a valid mutex and then finds the queue gone.
 */
#ifndef BLKSTACK_NVME_CTRL_INTERNAL_H
#define BLKSTACK_NVME_CTRL_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "blkstack/lock.h"
#include "blkstack/blk.h"
#include "blkstack/nvme_ctrl.h"
#include "blkstack/nvme_spec.h"

#define NVME_CTRL_NR_FAULTS 16
#define NVME_CTRL_ERR_LOG 64      /* Error Information entries kept (ELPE + 1) */
#define NVME_CTRL_FETCH_BATCH 32  /* SQEs fetched from one SQ per round */

struct nvme_ctrl;
struct nvme_sq;
struct nvme_cq;
struct nvme_cmd;

/*
 * Counters of the commands posting to one CQ, kept in the CQ: one writer
 * at a time (the controller thread, or the holder of the CQ lock), so a
 * relaxed load and store, no locked instruction and no cache line shared
 * between CQs.  Folded into ctrl->ctr_base when the CQ goes.
 */
enum nvme_ctr {
	CTR_COMMANDS,
	CTR_COMPLETIONS,
	CTR_ERRORS,
	CTR_DROPPED,
	CTR_ABORTED,
	CTR_HOST_READS,         /* SMART: Read and Compare commands */
	CTR_HOST_WRITES,
	CTR_BYTES_READ,
	CTR_BYTES_WRITTEN,
	CTR_NR,
};

/* A command's state (struct nvme_cmd.state). */
enum nvme_cmd_state {
	CMD_FREE = 0,
	CMD_EXEC,       /* being executed, or waiting on its backend bio */
	CMD_DELAYED,    /* waiting for a delay fault's deadline: abortable */
	CMD_RETRY,      /* waiting for a backend tag (-EAGAIN): abortable */
	CMD_AER,        /* Asynchronous Event Request held until an event */
	CMD_POSTWAIT,   /* done; waiting for a free CQ slot */
};

/* A namespace's backend context: one blk ctx plus the bios waiting for a tag. */
struct nvme_bctx {
	struct blk_mq_ctx *ctx;
	struct nvme_cmd *retry_head, *retry_tail;
	bool plugged;
	bool polling;           /* inside blk_poll / blk_drain: no new plug */
};

/* Continuation run when a command's backend bio completes successfully. */
typedef void (*nvme_cont_fn)(struct nvme_cmd *c);

/**
 * struct nvme_cmd - one fetched command (a slot of its SQ's array).
 * Slots are sized to the SQ: the controller stops fetching from an SQ whose
 * slots are all busy (back-pressure; the host cannot tell).
 */
struct nvme_cmd {
	struct nvme_sq *sq;
	struct nvme_cmd *next;          /* free, timer, retry or CQ wait list */
	struct nvme_command sqe;        /* copy of the SQE */
	uint8_t state;
	bool drop;                      /* drop fault: never post */
	uint16_t status;                /* status field, NVME_SF layout */
	uint32_t result;                /* CQE DW0 */
	uint32_t nsidx;                 /* namespace index (nsid - 1) */
	uint64_t deadline_ns;           /* CMD_DELAYED */
	uint16_t fault_status;          /* injected status, applied after delay */

	/* I/O */
	struct nvme_bctx *bctx;
	struct blk_bio bio;
	nvme_cont_fn cont;
	struct iovec *iov;              /* host data, coalesced; grows on demand */
	uint32_t iov_cap, iov_cnt;
	uint32_t cur;                   /* next iov to transfer */
	size_t split_rest;              /* bytes of iov[cur] held back by a split */
	uint64_t off;                   /* next backend byte offset */
	uint64_t left;                  /* bytes (or ranges) left */
	uint64_t total;                 /* bytes of the data transfer */
	uint8_t op;                     /* backend op of the chunks */
	uint8_t bflags;                 /* BLK_BIO_* of the chunks */
	bool bounce;                    /* READ/WRITE through buf (unaligned PRP1) */
	uint32_t step;                  /* DSM range / flush namespace index */
	void *buf;                      /* Compare / DSM / zeroes bounce buffer */
	size_t buf_len;
	struct iovec biov[1];           /* single-buffer chunk iovec */
};

struct nvme_sq {
	struct nvme_ctrl *ctrl;
	_Atomic uint32_t valid_size;    /* 0: no queue; else entries (doorbell checks) */
	uint16_t qid;
	uint16_t cqid;
	uint32_t size;
	const volatile struct nvme_command *base;
	uint32_t head;                  /* next entry the controller fetches */
	uint32_t tail;                  /* last valid tail doorbell value */
	struct nvme_cmd *cmds;          /* @size slots */
	uint32_t nr_init;               /* slots used at least once (the rest: zero) */
	struct nvme_cmd *free;
	uint32_t busy;
	struct nvme_sq *cq_next;        /* SQs posting to the same CQ */
	_Atomic uint64_t db_writes;     /* valid tail doorbell writes */
};

struct nvme_cq {
	struct nvme_ctrl *ctrl;
	struct blk_mutex lock;          /* inline mode: owner of the queue state */
	_Atomic uint32_t valid_size;
	uint16_t qid;
	uint32_t size;
	volatile struct nvme_completion *base;
	uint32_t tail;                  /* next entry the controller writes */
	uint32_t head;                  /* last valid head doorbell value */
	uint32_t db_seen;               /* thread mode: last doorbell value seen */
	uint16_t phase;
	uint32_t nr_sqs;
	struct nvme_sq *sqs;            /* SQs posting here */
	struct nvme_cmd *wait_head, *wait_tail;  /* done, CQ full */
	struct nvme_cmd *timers;        /* CMD_DELAYED commands */
	struct nvme_bctx *bctx;         /* inline mode: per namespace, lazily */
	_Atomic uint64_t db_writes;     /* valid head doorbell writes */
	_Atomic uint64_t ctr[CTR_NR];
};

struct nvme_ns {
	struct blk_dev *dev;
	struct blk_dev_info info;
	uint32_t lba_shift;
	uint64_t nsze;                  /* logical blocks */
	uint64_t max_chunk;             /* bytes per backend bio */
	uint32_t max_segs;              /* iovecs per backend bio */
	uint8_t eui64[8];
	uint8_t nguid[16];
	uint8_t uuid[16];
};

struct nvme_ctrl_fault_rule {
	struct nvme_ctrl_fault f;
	bool used;
};

struct nvme_ctrl {
	struct nvme_ctrl_config cfg;
	bool inline_mode;
	struct nvme_ns ns[NVME_CTRL_MAX_NS];
	unsigned int nr_ns;
	char sn[21], mn[41], fr[9];

	/* registers */
	uint64_t cap;
	_Atomic uint32_t cc;
	_Atomic uint32_t csts;
	_Atomic uint32_t aqa;
	_Atomic uint32_t intms;
	_Atomic uint64_t asq, acq;
	_Atomic uint32_t *db;           /* thread mode: 2 per QID */
	uint32_t nr_qids;               /* max_io_queues + 1 */

	/* state latched at enable */
	_Atomic bool enabled;           /* CSTS.RDY = 1 (controller view) */
	_Atomic bool resetting;         /* reset in progress: no CQE is posted */
	_Atomic bool shut_down;         /* shutdown processed: fetch nothing */
	uint32_t max_qid;               /* highest QID created since enable */
	uint32_t cc_cur;                /* last CC the state machine acted on */
	uint32_t page_shift;
	uint64_t page_size;
	uint64_t mdts_bytes;            /* 0: no limit */
	uint32_t nsqa, ncqa;            /* granted, 0's based */
	uint32_t nr_io_queues;          /* I/O SQs + CQs existing */

	struct nvme_sq *sq;             /* [nr_qids] */
	struct nvme_cq *cq;             /* [nr_qids] */

	/* features */
	uint32_t feat_arb, feat_pm, feat_temp, feat_err, feat_irqc, feat_aec;
	bool vwc_present;
	_Atomic bool vwc_on;            /* read by I/O on other threads (inline) */
	uint32_t iosqes, iocqes;        /* CC fields latched at enable */

	/* asynchronous events */
	_Atomic uint32_t ev_err_pending;   /* bit 0: invalid register, bit 1: value */
	bool ev_err_masked;             /* Error events masked until log read */
	uint32_t aer_out;               /* outstanding AERs */
	struct nvme_cmd *aer_head, *aer_tail;

	/* error log (Base 5.16.1.2) */
	struct nvme_error_log errlog[NVME_CTRL_ERR_LOG];
	uint64_t err_count;
	struct blk_mutex log_lock;

	/* counters of deleted CQs; SMART's power-on time */
	_Atomic uint64_t ctr_base[CTR_NR];
	uint64_t power_on_ns;

	/* faults */
	struct blk_mutex fault_lock;
	_Atomic uint32_t nr_faults;
	struct nvme_ctrl_fault_rule faults[NVME_CTRL_NR_FAULTS];

	/* thread mode */
	pthread_t thread;
	bool thread_started;
	_Atomic bool stop;
	struct nvme_bctx *tbctx;        /* per namespace, owned by the thread */

	/* inline mode */
	struct blk_mutex cc_lock;

	/* counters (struct nvme_ctrl_stats) */
	_Atomic uint64_t st_sq_db, st_cq_db, st_resets, st_shutdowns,
		st_invalid_db;
};

/*
 * Counters written by the controller side.  Thread mode has one writer (the
 * controller thread): a relaxed load and store, no locked instruction on
 * the fast path.  Inline mode has one writer per CQ: a relaxed fetch-add.
 */
static inline void ctr_add(const struct nvme_ctrl *ctrl, _Atomic uint64_t *c,
			   uint64_t n)
{
	if (ctrl->inline_mode)
		atomic_fetch_add_explicit(c, n, memory_order_relaxed);
	else
		atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
				      memory_order_relaxed);
}

#define STAT_INC(ctrl, f) ctr_add((ctrl), &(ctrl)->f, 1)

static inline void cq_ctr(struct nvme_cq *cq, enum nvme_ctr i, uint64_t n)
{
	atomic_store_explicit(&cq->ctr[i],
			      atomic_load_explicit(&cq->ctr[i], memory_order_relaxed) + n,
			      memory_order_relaxed);
}

uint64_t nvme_ctr_sum(const struct nvme_ctrl *ctrl, enum nvme_ctr i);

/*
 * A doorbell counter of one queue: written by the queue's owner thread
 * only (nvme_ctrl.h), so a relaxed load and store; no shared cache line
 * between host threads.
 */
static inline void db_count(_Atomic uint64_t *c)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* regs.c */
uint64_t nvme_now_ns(void);

/* queue.c */
int nvme_cq_init(struct nvme_ctrl *ctrl, struct nvme_cq *cq, uint16_t qid,
		 uint64_t base, uint32_t size);
int nvme_sq_init(struct nvme_ctrl *ctrl, struct nvme_sq *sq, uint16_t qid,
		 uint16_t cqid, uint64_t base, uint32_t size);
void nvme_sq_teardown(struct nvme_ctrl *ctrl, struct nvme_sq *sq, bool silent);
void nvme_cq_teardown(struct nvme_ctrl *ctrl, struct nvme_cq *cq);
void nvme_cq_lock(struct nvme_ctrl *ctrl, struct nvme_cq *cq);
void nvme_cq_unlock(struct nvme_ctrl *ctrl, struct nvme_cq *cq);
unsigned int nvme_sq_fetch(struct nvme_ctrl *ctrl, struct nvme_sq *sq,
			   unsigned int budget);
void nvme_cq_run(struct nvme_ctrl *ctrl, struct nvme_cq *cq);
unsigned int nvme_cq_post_waiting(struct nvme_ctrl *ctrl, struct nvme_cq *cq);
bool nvme_cq_head_update(struct nvme_ctrl *ctrl, struct nvme_cq *cq,
			 uint32_t head);
bool nvme_sq_tail_update(struct nvme_ctrl *ctrl, struct nvme_sq *sq,
			 uint32_t tail);
void nvme_cmd_complete(struct nvme_cmd *c, uint16_t status, uint32_t result);
void nvme_cmd_free(struct nvme_cmd *c);
struct nvme_cq *nvme_cmd_cq(struct nvme_cmd *c);
void nvme_timers_run(struct nvme_ctrl *ctrl, struct nvme_cq *cq, uint64_t now);
uint64_t nvme_timers_next(struct nvme_cq *cq);
void nvme_cq_drain_backend(struct nvme_ctrl *ctrl, struct nvme_cq *cq,
			   bool silent);
void nvme_exec(struct nvme_cmd *c);

/* prp.c */
uint16_t nvme_prp_map(struct nvme_ctrl *ctrl, struct nvme_cmd *c,
		      uint64_t prp1, uint64_t prp2, uint64_t len);
void nvme_iov_copy_to(const struct iovec *iov, uint32_t cnt, const void *src,
		      size_t len);
void nvme_iov_copy_from(void *dst, const struct iovec *iov, uint32_t cnt,
			size_t len);
uint16_t nvme_data_to_host(struct nvme_ctrl *ctrl, struct nvme_cmd *c,
			   const void *src, size_t len);
uint16_t nvme_data_from_host(struct nvme_ctrl *ctrl, struct nvme_cmd *c,
			     void *dst, size_t len);

/* admin.c */
void nvme_admin_exec(struct nvme_cmd *c);
void nvme_aer_run(struct nvme_ctrl *ctrl);
void nvme_aer_flush(struct nvme_ctrl *ctrl);

/* io.c */
void nvme_io_exec(struct nvme_cmd *c);
struct nvme_bctx *nvme_bctx_get(struct nvme_ctrl *ctrl, struct nvme_cq *cq,
				uint32_t nsidx);
void nvme_bctx_retry(struct nvme_bctx *b);
void nvme_io_flush_all(struct nvme_ctrl *ctrl);
void nvme_bctx_finish_plugs(struct nvme_ctrl *ctrl, struct nvme_cq *cq);
unsigned int nvme_bctx_poll(struct nvme_ctrl *ctrl, struct nvme_cq *cq);

/* fault.c */
bool nvme_fault_match(struct nvme_ctrl *ctrl, bool admin,
		      const struct nvme_command *sqe, uint16_t qid,
		      struct nvme_ctrl_fault *act);
void nvme_errlog_add(struct nvme_ctrl *ctrl, const struct nvme_cmd *c,
		     uint16_t status);

#endif /* BLKSTACK_NVME_CTRL_INTERNAL_H */
