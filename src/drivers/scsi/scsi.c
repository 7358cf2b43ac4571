// SPDX-License-Identifier: MIT
/*
 * SCSI disk driver (blkstack/scsi.h): sd's role (the probe at attach, CDBs
 * from requests), the midlayer's completion decision (scsi_decide()),
 * partial completion, error handling (abort, LUN reset, target reset, host
 * reset), host and device blocking and budget tokens, over an LLD
 * (blkstack/scsi_host.h: the loopback one by default, loopback.c).  No
 * host lock: each hardware queue has an LLD queue of its own;
 * --scsi_host_lock=1 puts seed 003's back for the experiment.  Design:
 * docs/scsi.md.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blkstack/lock.h"
#include "blkstack/blk_mq.h"
#include "blkstack/scsi.h"
#include "blkstack/scsi_host.h"
#include "blkstack/scsi_tgt.h"

/*
 * bench/scsi-likely.sh builds the completion path with and without the
 * branch hints (seed 000's patch): -DBLK_SCSI_HINTS=OFF.
 */
#ifdef BLK_SCSI_NO_HINTS
#define likely(x) (x)
#define unlikely(x) (x)
#else
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

/* Linux's defaults (scsi_host.h, scsi_device.h): dispatch attempts a
 * blocked host or device refuses before it is tried again. */
#define SCSI_MAX_HOST_BLOCKED 7
#define SCSI_MAX_DEVICE_BLOCKED 3

#define SCSI_X_BUDGET    0x1
#define SCSI_X_HOST_LOCK 0x2
#define SCSI_X_STAGE     0x4
#define BLOCKED_HOST_ONE (1u << 16)

/* What Linux waits before it sends again a command its device was busy
 * for (SCSI_QUEUE_DELAY): NOT READY and UNIT ATTENTION retries here. */
#define SCSI_RETRY_DELAY_NS 3000000ull

/* Seed 000's window. */
#define STAGE_WINDOW_NS 100000000ull

struct scsi_hq;

struct scsi_disk {
	const struct scsi_host_template *hostt;
	void *hostdata;
	uint32_t priv_size;     /* the LLD's cmd_size, 16-byte multiple */
	uint32_t lld_depth;     /* commands an LLD queue may hold */
	struct scsi_hq **hq;    /* each hardware queue's, for the counters */
	unsigned int nr_hq;
	uint32_t lbs;
	uint8_t lbs_shift;      /* lbs == 1 << lbs_shift */
	uint64_t nr_blocks;
	/* the disk's limits (VPD 0xb0), logical blocks per command: a larger
	 * request is sent in parts (sd and the block layer's split) */
	uint32_t max_rw_blocks, max_unmap_blocks, max_ws_blocks;
	uint32_t max_retries;
	uint32_t queue_depth;   /* budget tokens; 0: none */
	uint8_t extras;         /* SCSI_X_*: one test on the fast path */
	bool use_16_for_rw;     /* more blocks than READ (10) addresses */
	struct blk_scsi_info info; /* what the probe read */
	/* sdev->use_10_for_rw: cleared when the disk refuses READ/WRITE (10)
	 * (then 6-byte CDBs where they fit); read relaxed per command */
	_Atomic bool use_10_for_rw;
	uint64_t rq_timeout_ns; /* the block device's request timeout */
	/*
	 * host_blocked << 16 | device_blocked: read by every dispatch and
	 * completion (one load), written when a host busy, BUSY or TASK SET
	 * FULL blocks the host or the device (rare): a line of its own
	 */
	_Atomic uint32_t blocked __attribute__((aligned(64)));
	_Atomic uint32_t budget_used __attribute__((aligned(64)));
	struct blk_spinlock host_lock __attribute__((aligned(64)));
};

struct scsi_hq {
	struct scsi_disk *sd;
	void *lq;               /* the LLD's queue */
	unsigned int idx;
	uint64_t win_start, win_ns, win_count; /* stage timer window */
	struct blk_scsi_stats st; /* this queue's; written by its thread */
	struct scsi_pdu *delayed_head, *delayed_tail; /* due in order */
};

/*
 * Per request (cmd_size): the fields of error paths, splits and UNMAP's
 * parameter list, then the sense buffer (scsi_cmd_sense()) and the
 * command (one line, its CDB inside); behind it the LLD's private area
 * (scsi_cmd_priv()) and last the data as one iovec array over all its bios
 * (pdu_iov()).  A READ or WRITE that ends GOOD touches only the command's
 * line of all this (its flags are cmd.ml_flags, the request is
 * blk_mq_rq_from_pdu(), its LBA rq->offset): callgrind's cache model, the
 * line of per-command fields this area had in front was one D1 write miss
 * per I/O.
 */
struct scsi_pdu {
	struct scsi_pdu *dnext; /* on the queue's delayed list */
	uint64_t due_ns;        /* ... sent again from then on */
	uint32_t nr_gen;        /* rq->gen when the NOT READY clock started */
	uint32_t busy_gen;      /* rq->gen when the host first refused it */
	uint64_t nr_start_ns;   /* ... its start */
	uint64_t busy_start_ns; /* ... then */
	uint32_t cmd_bytes;     /* bytes this command covers: with SCMD_SPLIT */
	uint8_t param[24];
	uint8_t sense[SCSI_CMD_SENSE_ROOM] __attribute__((aligned(64)));
	struct scsi_cmnd cmd __attribute__((aligned(64))); /* last: the LLD's area follows it */
};

/* scsi_cmnd.ml_flags */
#define SCMD_BUDGET    0x01 /* holds a budget token */
#define SCMD_SPLIT     0x02 /* this command is the request's first part */
#define SCMD_IN_SUBMIT 0x04 /* done() inside queuecommand() */
#define SCMD_RETRY_NOW 0x08 /* ... and it wants the command sent again */
#define SCMD_TIMED_OUT 0x10 /* error handling ended it */
#define SCMD_DELAYED   0x20 /* on the queue's delayed list */

static inline struct scsi_pdu *cmd_to_pdu(struct scsi_cmnd *c)
{
	return (struct scsi_pdu *)((char *)c - offsetof(struct scsi_pdu, cmd));
}

static inline struct request *pdu_rq(struct scsi_pdu *pdu)
{
	return blk_mq_rq_from_pdu(pdu);
}

static inline struct iovec *pdu_iov(const struct scsi_disk *sd,
				    struct scsi_pdu *pdu)
{
	return (struct iovec *)((char *)scsi_cmd_priv(&pdu->cmd) + sd->priv_size);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------ host lock */

static void host_lock(struct scsi_hq *hq)
{
	struct scsi_disk *sd = hq->sd;

	hq->st.host_lock++;
	if (blk_spin_trylock(&sd->host_lock)) {
		uint64_t t0 = now_ns();

		hq->st.host_lock_contended++;
		blk_spin_lock_contended(&sd->host_lock);
		hq->st.host_lock_wait_ns += now_ns() - t0;
	}
}

static void host_unlock(struct scsi_hq *hq)
{
	blk_spin_unlock(&hq->sd->host_lock);
}

/* ------------------------------------------------- blocking, budget */

/* SCSI_MLQUEUE_HOST_BUSY: the host takes nothing for a while */
static void block_host(struct scsi_disk *sd)
{
	atomic_store_explicit(&sd->blocked, SCSI_MAX_HOST_BLOCKED * BLOCKED_HOST_ONE |
			      (atomic_load_explicit(&sd->blocked, memory_order_relaxed) &
			       0xffffu), memory_order_relaxed);
}

/* BUSY, TASK SET FULL: the device takes nothing for a while */
static void block_device(struct scsi_disk *sd)
{
	atomic_store_explicit(&sd->blocked, SCSI_MAX_DEVICE_BLOCKED |
			      (atomic_load_explicit(&sd->blocked, memory_order_relaxed) &
			       ~0xffffu), memory_order_relaxed);
}

/* Give back the budget token @pdu holds, if any. */
static inline void budget_put(struct scsi_disk *sd, struct scsi_pdu *pdu)
{
	if (pdu->cmd.ml_flags & SCMD_BUDGET) {
		pdu->cmd.ml_flags &= (uint8_t)~SCMD_BUDGET;
		atomic_fetch_sub_explicit(&sd->budget_used, 1, memory_order_release);
	}
}

/* ------------------------------------------------- completion decision */

enum scsi_disposition scsi_decide(uint8_t status, const struct scsi_sense *s,
				  uint32_t retries, uint32_t max_retries,
				  blk_status_t *blk)
{
	bool may_retry = retries < max_retries;

	*blk = BLK_STS_IOERR;
	switch (status) {
	case SAM_STAT_GOOD:
	case SAM_STAT_CONDITION_MET:
		*blk = BLK_STS_OK;
		return SCSI_DONE;
	case SAM_STAT_BUSY:
	case SAM_STAT_TASK_SET_FULL:
		return may_retry ? SCSI_RETRY : SCSI_DONE;
	case SAM_STAT_TASK_ABORTED:
		*blk = BLK_STS_TIMEOUT;
		return may_retry ? SCSI_RETRY : SCSI_DONE;
	case SAM_STAT_CHECK_CONDITION:
		break;
	default:
		return SCSI_DONE;
	}
	if (!s)
		return SCSI_DONE;
	switch (s->key) {
	case SK_NO_SENSE:
	case SK_RECOVERED_ERROR:
		*blk = BLK_STS_OK;
		return SCSI_DONE;
	case SK_UNIT_ATTENTION:
	case SK_NOT_READY:
		return may_retry ? SCSI_RETRY : SCSI_DONE;
	case SK_ABORTED_COMMAND:
		if (s->asc_ascq == ASC_COMMAND_TIMEOUT)
			*blk = BLK_STS_TIMEOUT;
		return may_retry ? SCSI_RETRY : SCSI_DONE;
	case SK_MEDIUM_ERROR:
		*blk = BLK_STS_MEDIUM;
		return SCSI_DONE;
	case SK_DATA_PROTECT:
		*blk = s->asc_ascq == ASC_SPACE_ALLOC_FAILED_WP ? BLK_STS_NOSPC :
								  BLK_STS_TARGET;
		return SCSI_DONE;
	case SK_ILLEGAL_REQUEST:
		*blk = BLK_STS_TARGET;
		return SCSI_DONE;
	default:
		return SCSI_DONE;
	}
}

/* Send @rq again SCSI_RETRY_DELAY_NS from now: it waits on the queue's
 * delayed list (queue_rq() answers OK for it), scsi_poll() requeues it. */
static void scsi_requeue_delayed(struct scsi_hq *hq, struct scsi_pdu *pdu)
{
	pdu->cmd.ml_flags |= SCMD_DELAYED;
	pdu->due_ns = now_ns() + SCSI_RETRY_DELAY_NS;
	pdu->dnext = NULL;
	if (hq->delayed_tail)
		hq->delayed_tail->dnext = pdu;
	else
		hq->delayed_head = pdu;
	hq->delayed_tail = pdu;
	hq->st.delayed_retries++;
}

static void __attribute__((noinline)) scsi_delayed_poll(struct scsi_hq *hq)
{
	uint64_t now = now_ns();
	struct scsi_pdu *p;

	while ((p = hq->delayed_head) && p->due_ns <= now) {
		hq->delayed_head = p->dnext;
		if (!hq->delayed_head)
			hq->delayed_tail = NULL;
		p->cmd.ml_flags &= (uint8_t)~SCMD_DELAYED;
		blk_mq_requeue_request(pdu_rq(p));
	}
}

/*
 * A request the host or the device keeps refusing (host busy, no tag,
 * blocked) never starts, so its request timeout never runs: true once it
 * has been refused for (max_retries + 1) request timeouts since the first
 * time, as sd bounds a command's life; it then fails BLK_STS_TIMEOUT.
 */
static bool __attribute__((noinline))
refused_too_long(struct scsi_hq *hq, struct scsi_pdu *pdu, struct request *rq)
{
	struct scsi_disk *sd = hq->sd;
	uint64_t now = now_ns();

	if (pdu->busy_gen != rq->gen || !pdu->busy_start_ns) {
		pdu->busy_gen = rq->gen;
		pdu->busy_start_ns = now;
		return false;
	}
	if (now - pdu->busy_start_ns < (uint64_t)(sd->max_retries + 1) * sd->rq_timeout_ns)
		return false;
	hq->st.refused_too_long++;
	return true;
}

/* Send @rq again: now, from queue_rq (it answers RESOURCE), or requeued. */
static void scsi_requeue(struct scsi_pdu *pdu, struct request *rq)
{
	if (pdu->cmd.ml_flags & SCMD_IN_SUBMIT)
		pdu->cmd.ml_flags |= SCMD_RETRY_NOW;
	else
		blk_mq_requeue_request(rq);
}

#ifdef BLK_STAGE_TIMERS
static void stage_end(struct scsi_hq *hq, uint64_t t0)
{
	uint64_t t1 = now_ns();

	hq->st.stage_count++;
	hq->st.stage_ns += t1 - t0;
	hq->win_count++;
	hq->win_ns += t1 - t0;
	if (!hq->win_start)
		hq->win_start = t1;
	if (t1 - hq->win_start >= STAGE_WINDOW_NS) {
		/* seed 000's print_timings line, per hardware queue */
		fprintf(stderr,
			"scsi_io_completion[q%u]: print_timings: cum_time=%llu ns, count=%llu, avg=%llu ns\n",
			hq->idx, (unsigned long long)hq->win_ns,
			(unsigned long long)hq->win_count,
			(unsigned long long)(hq->win_ns / hq->win_count));
		hq->win_start = t1;
		hq->win_ns = hq->win_count = 0;
	}
}
#endif

/*
 * The slow half of the completion: everything but "GOOD, all of it".
 * Return true when it ended or requeued the request itself.
 */
static bool __attribute__((noinline))
scsi_done_slow(struct scsi_hq *hq, struct scsi_pdu *pdu, struct request *rq,
	       blk_status_t *stp)
{
	struct scsi_cmnd *c = &pdu->cmd;
	struct scsi_disk *sd = hq->sd;
	struct scsi_sense s, *sp = NULL;
	uint32_t good = 0;
	blk_status_t st;
	/* this attempt's (blk_mq_update_request() moves it after this) */
	uint64_t lba = rq->offset >> sd->lbs_shift;

	/* the LLD could not deliver it: host busy (requeued, the host
	 * blocked a while) or an error (failed) */
	if (c->host_status == SCSI_HOST_BUSY && refused_too_long(hq, pdu, rq)) {
		*stp = BLK_STS_TIMEOUT;
		rq->native_status = 0;
		return false;
	}
	if (c->host_status == SCSI_HOST_BUSY) {
		hq->st.busy++;
		block_host(sd);
		scsi_requeue(pdu, rq);
		return true;
	}
	if (c->host_status != SCSI_HOST_OK) {
		*stp = BLK_STS_IOERR;
		rq->native_status = 0;
		return false;
	}
	if (c->status == SAM_STAT_CHECK_CONDITION) {
		hq->st.check_conditions++;
		if (!scsi_parse_sense(scsi_cmd_sense(c), c->sense_len, &s)) {
			sp = &s;
			hq->st.sense_keys[s.key & 0x0f]++;
		}
	}
	if (c->status == SAM_STAT_TASK_ABORTED)
		hq->st.tasks_aborted++;
	/*
	 * The disk does not take READ/WRITE (10) (INVALID COMMAND OPERATION
	 * CODE or INVALID FIELD IN CDB): sd clears use_10_for_rw and prepares
	 * the command again, as (6) where it fits; not a retry.
	 */
	if (sp && sp->key == SK_ILLEGAL_REQUEST &&
	    (sp->asc_ascq >> 8 == 0x20 || sp->asc_ascq >> 8 == 0x24) &&
	    (c->cdb[0] == READ_10 || c->cdb[0] == WRITE_10) &&
	    atomic_exchange(&sd->use_10_for_rw, false)) {
		hq->st.cdb_fallbacks++;
		scsi_requeue(pdu, rq);
		return true;
	}
	if (c->status == SAM_STAT_BUSY || c->status == SAM_STAT_TASK_SET_FULL)
		block_device(sd);
	/*
	 * NOT READY, becoming ready (04/01): sent again every 3 ms without a
	 * count, for (max_retries + 1) request timeouts from the first time,
	 * as Linux's ACTION_DELAYED_RETRY with its wait_for bound
	 */
	if (sp && sp->key == SK_NOT_READY && sp->asc_ascq == 0x0401) {
		uint64_t now = now_ns();

		if (pdu->nr_gen != rq->gen || !pdu->nr_start_ns) {
			pdu->nr_gen = rq->gen;
			pdu->nr_start_ns = now;
		}
		if (now - pdu->nr_start_ns <
		    (uint64_t)(sd->max_retries + 1) * sd->rq_timeout_ns) {
			scsi_requeue_delayed(hq, pdu);
			return true;
		}
	}
	if (scsi_decide(c->status, sp, rq->retries, sd->max_retries, &st) ==
	    SCSI_RETRY) {
		rq->retries++;
		hq->st.retries++;
		/* NOT READY and UNIT ATTENTION: after a delay, the rest now */
		if (sp && (sp->key == SK_NOT_READY || sp->key == SK_UNIT_ATTENTION))
			scsi_requeue_delayed(hq, pdu);
		else
			scsi_requeue(pdu, rq);
		return true;
	}
	if (st == BLK_STS_TIMEOUT && c->status == SAM_STAT_TASK_ABORTED &&
	    !(c->ml_flags & SCMD_TIMED_OUT))
		st = BLK_STS_IOERR; /* aborted by a reset, not for time */
	/* a request past the disk's limit went in parts: the rest next */
	if ((c->ml_flags & SCMD_SPLIT) && st == BLK_STS_OK && rq->op > BLK_OP_WRITE) {
		hq->st.split++;
		blk_mq_update_request(rq, pdu->cmd_bytes);
		scsi_requeue(pdu, rq);
		return true;
	}
	if (c->dir == SCSI_DIR_NONE || rq->op > BLK_OP_WRITE) {
		*stp = st;
		goto out;
	}
	/*
	 * Partial completion (scsi_io_completion()'s good_bytes): what was
	 * moved before a MEDIUM ERROR's INFORMATION LBA, or all but the
	 * residual of a GOOD command, ends; the rest is sent again (GOOD)
	 * or fails (the error).
	 */
	if (st == BLK_STS_OK && !c->overflow) {
		good = c->xfer_len - c->resid;
	} else if (st == BLK_STS_MEDIUM && sp && sp->info_valid &&
		   sp->info > lba && sp->info - lba < rq->data_len / sd->lbs) {
		good = (uint32_t)(sp->info - lba) * sd->lbs;
	}
	good -= good % sd->lbs;
	if (st == BLK_STS_OK && good < rq->data_len) {
		if (c->overflow) {
			*stp = BLK_STS_IOERR;
			goto out;
		}
		if (good) {
			if ((c->ml_flags & SCMD_SPLIT) && good == pdu->cmd_bytes)
				hq->st.split++;
			else
				hq->st.partial++;
			blk_mq_update_request(rq, good);
		} else if (rq->retries++ < sd->max_retries) {
			hq->st.retries++; /* no progress: counts as a retry */
		} else {
			*stp = BLK_STS_IOERR;
			goto out;
		}
		scsi_requeue(pdu, rq);
		return true;
	}
	if (st != BLK_STS_OK && good) {
		hq->st.partial++;
		blk_mq_update_request(rq, good);
	}
	*stp = st;
out:
	if (*stp != BLK_STS_OK)
		rq->native_status = (uint32_t)c->status << 24 |
				    (sp ? (uint32_t)sp->key << 16 | sp->asc_ascq : 0);
	return false;
}

static void scsi_done(struct scsi_cmnd *c)
{
	struct scsi_pdu *pdu = cmd_to_pdu(c);
	struct request *rq = pdu_rq(pdu);
	struct scsi_hq *hq = blk_mq_hctx_driver_data(rq->mq_hctx);
	struct scsi_disk *sd = hq->sd;
	blk_status_t st = BLK_STS_OK;
	uint64_t t0 = 0;
	bool locked = false;

	blk_mq_stage(rq, BLK_STAGE_DEVICE_DONE);
#ifdef BLK_STAGE_TIMERS
	if (unlikely(sd->extras & SCSI_X_STAGE))
		t0 = now_ns();
#endif
	if (unlikely(sd->extras & SCSI_X_HOST_LOCK) && !(c->ml_flags & SCMD_IN_SUBMIT)) {
		host_lock(hq);
		locked = true;
	}
	if (unlikely(c->ml_flags & SCMD_BUDGET))
		budget_put(sd, pdu);
	/* a command ended: the host and the device may take more
	 * (scsi_finish_command()'s reset of the blocked counts) */
	if (unlikely(atomic_load_explicit(&sd->blocked, memory_order_relaxed)))
		atomic_store_explicit(&sd->blocked, 0, memory_order_relaxed);
	if (unlikely(c->status != SAM_STAT_GOOD || c->resid || c->host_status ||
		     (c->ml_flags & SCMD_SPLIT)) &&
	    scsi_done_slow(hq, pdu, rq, &st))
		goto out;
#ifdef BLK_STAGE_TIMERS
	if (unlikely(t0))
		stage_end(hq, t0);
#endif
	blk_mq_complete_request(rq, st);
out:
	if (unlikely(locked)) {
		/* the pre-blk-mq midlayer ran the queue on every completion */
		hq->st.queue_kicks++;
		blk_mq_kick_hw_queue(rq->mq_hctx);
		host_unlock(hq);
	}
	(void)t0;
}

/* --------------------------------------------------- error handling */

/*
 * The request's deadline passed (scsi_times_out(), then the error handler's
 * ladder, scsi_eh_ready_devs()): ABORT TASK; if the target rejects it, a
 * LOGICAL UNIT RESET; then a TARGET RESET; then a host reset, which for
 * the loopback LLD is the end of every task of its target queue and never
 * fails.  Each step that works ends the command through scsi_done() with
 * TASK ABORTED (and every other command the step ended), which retries it
 * while max_retries allows, else fails it with BLK_STS_TIMEOUT: each
 * command ends exactly once.
 */
static enum blk_eh_timer_return scsi_timeout(struct request *rq)
{
	struct scsi_pdu *pdu = blk_mq_rq_to_pdu(rq);
	struct scsi_hq *hq = blk_mq_hctx_driver_data(rq->mq_hctx);

	const struct scsi_host_template *t = hq->sd->hostt;

	hq->st.timeouts++;
	pdu->cmd.ml_flags |= SCMD_TIMED_OUT;
	if (!t->eh_abort_handler(hq->lq, &pdu->cmd)) {
		hq->st.aborts++;
		return BLK_EH_DONE;
	}
	hq->st.aborts_failed++;
	if (!t->eh_device_reset_handler(hq->lq, pdu->cmd.lun)) {
		hq->st.lun_resets++;
		return BLK_EH_DONE;
	}
	hq->st.lun_resets_failed++;
	if (!t->eh_target_reset_handler(hq->lq)) {
		hq->st.target_resets++;
		return BLK_EH_DONE;
	}
	hq->st.target_resets_failed++;
	hq->st.host_resets++;
	t->eh_host_reset_handler(hq->lq);
	return BLK_EH_DONE;
}

/* ------------------------------------------------------------- sd role */

/*
 * READ/WRITE CDB as sd_setup_read_write_cmnd() picks it: (16) for a disk
 * past 2^32 blocks or a request (10) cannot address; (6) only once the
 * disk refused (10) (use_10_for_rw cleared) and where it fits: a 21-bit
 * LBA, 1..256 blocks (0 means 256, SBC-3 5.8/5.33), no FUA bit; else (10).
 */
static void cdb_rw(struct scsi_disk *sd, uint8_t *cdb, bool write,
		   uint64_t lba, uint32_t nb, bool fua, uint8_t *len)
{
	memset(cdb, 0, 16);
	if (unlikely(!atomic_load_explicit(&sd->use_10_for_rw, memory_order_relaxed)) &&
	    lba <= 0x1fffff && nb <= 256 && !fua) {
		cdb[0] = write ? WRITE_6 : READ_6;
		cdb[1] = (uint8_t)(lba >> 16);
		cdb[2] = (uint8_t)(lba >> 8);
		cdb[3] = (uint8_t)lba;
		cdb[4] = (uint8_t)nb; /* 256 -> 0 */
		*len = 6;
		return;
	}
	if (likely(!sd->use_16_for_rw) && lba <= 0xffffffffull && nb <= 0xffff) {
		cdb[0] = write ? WRITE_10 : READ_10;
		scsi_put_be32(cdb + 2, (uint32_t)lba);
		scsi_put_be16(cdb + 7, (uint16_t)nb);
		*len = 10;
	} else {
		cdb[0] = write ? WRITE_16 : READ_16;
		scsi_put_be64(cdb + 2, lba);
		scsi_put_be32(cdb + 10, nb);
		*len = 16;
	}
	if (fua)
		cdb[1] |= 0x08;
}

/* The data of a request a partial completion left: rq->bio_done bytes of
 * its first bio are done already. */
static unsigned int __attribute__((noinline))
iov_remainder(struct request *rq, struct iovec *iov)
{
	uint32_t skip = rq->bio_done;
	unsigned int n = 0, i;
	struct blk_bio *bio;

	rq_for_each_bio(bio, rq)
		for (i = 0; i < bio->bi_vcnt; i++) {
			struct iovec v = bio->bi_io_vec[i];

			if (skip >= v.iov_len) {
				skip -= (uint32_t)v.iov_len;
				continue;
			}
			v.iov_base = (char *)v.iov_base + skip;
			v.iov_len -= skip;
			skip = 0;
			iov[n++] = v;
		}
	return n;
}

/* Dispatch refused while the host or the device is blocked, or out of
 * budget; true: refuse this one (BLK_STS_RESOURCE). */
static bool __attribute__((noinline))
scsi_blocked(struct scsi_hq *hq)
{
	struct scsi_disk *sd = hq->sd;
	uint32_t v;

	/* one count down per refused dispatch: the host's first */
	v = atomic_load_explicit(&sd->blocked, memory_order_relaxed);
	while (v) {
		uint32_t n = v >= BLOCKED_HOST_ONE ? v - BLOCKED_HOST_ONE : v - 1;

		if (atomic_compare_exchange_weak(&sd->blocked, &v, n)) {
			hq->st.blocked++;
			return true;
		}
	}
	return false;
}

static blk_status_t scsi_queue_rq(struct blk_mq_hw_ctx *hctx,
				  const struct blk_mq_queue_data *bd)
{
	struct scsi_hq *hq = blk_mq_hctx_driver_data(hctx);
	struct scsi_disk *sd = hq->sd;
	struct request *rq = bd->rq;
	struct scsi_pdu *pdu = blk_mq_rq_to_pdu(rq);
	struct scsi_cmnd *c = &pdu->cmd;
	struct iovec *iov = pdu_iov(sd, pdu);
	uint64_t lba = rq->offset >> sd->lbs_shift;
	uint32_t nb = rq->data_len >> sd->lbs_shift;
	unsigned int n = 0, i;
	struct blk_bio *bio;
	int ret;

	if (unlikely(atomic_load_explicit(&sd->blocked, memory_order_relaxed)) &&
	    scsi_blocked(hq))
		return refused_too_long(hq, pdu, rq) ? BLK_STS_TIMEOUT : BLK_STS_RESOURCE;
	/* budget tokens (scsi_mq_get_budget()): the LUN's queue depth */
	c->ml_flags = 0;
	if (unlikely(sd->extras & SCSI_X_BUDGET)) {
		if (atomic_fetch_add_explicit(&sd->budget_used, 1,
					      memory_order_acquire) >= sd->queue_depth) {
			atomic_fetch_sub_explicit(&sd->budget_used, 1,
						  memory_order_release);
			hq->st.budget_busy++;
			return BLK_STS_RESOURCE;
		}
		c->ml_flags = SCMD_BUDGET;
	}
	/* only the inputs: the LLD sets every result (no memset of the
	 * 252-byte sense buffer per I/O) */
	c->lun = 0;
	c->done = scsi_done;
	c->dir = SCSI_DIR_NONE;
	c->iov = NULL;
	c->iovcnt = 0;
	c->xfer_len = 0;
	switch (rq->op) {
	case BLK_OP_READ:
	case BLK_OP_WRITE:
		if (unlikely(nb > sd->max_rw_blocks)) {
			nb = sd->max_rw_blocks;
			c->ml_flags |= SCMD_SPLIT;
			pdu->cmd_bytes = nb << sd->lbs_shift;
		}
		cdb_rw(sd, c->cdb, rq->op == BLK_OP_WRITE, lba, nb,
		       rq->cmd_flags & BLK_BIO_FUA, &c->cdb_len);
		hq->st.rw_cdb[c->cdb_len >> 3]++; /* 6: 0, 10: 1, 16: 2 */
		if (likely(rq->bio == rq->biotail && !rq->bio_done)) {
			/* one bio: its own iovecs, no copy (and the
			 * array's cache line untouched) */
			c->iov = rq->bio->bi_io_vec;
			n = rq->bio->bi_vcnt;
		} else {
			if (likely(!rq->bio_done)) {
				rq_for_each_bio(bio, rq)
					for (i = 0; i < bio->bi_vcnt; i++)
						iov[n++] = bio->bi_io_vec[i];
			} else {
				n = iov_remainder(rq, iov);
			}
			c->iov = iov;
		}
		c->iovcnt = n;
		c->xfer_len = nb << sd->lbs_shift; /* of the iovecs, the first part */
		c->dir = rq->op == BLK_OP_WRITE ? SCSI_DIR_TO_DEVICE :
						  SCSI_DIR_FROM_DEVICE;
		break;
	case BLK_OP_FLUSH:
		memset(c->cdb, 0, 10);
		c->cdb[0] = SYNCHRONIZE_CACHE_10;
		c->cdb_len = 10;
		break;
	case BLK_OP_DISCARD:
		if (nb > sd->max_unmap_blocks) {
			nb = sd->max_unmap_blocks;
			c->ml_flags |= SCMD_SPLIT;
			pdu->cmd_bytes = nb << sd->lbs_shift;
		}
		/* UNMAP, one block descriptor (SBC-3 5.28) */
		memset(c->cdb, 0, 10);
		c->cdb[0] = UNMAP;
		scsi_put_be16(c->cdb + 7, 24);
		memset(pdu->param, 0, sizeof(pdu->param));
		scsi_put_be16(pdu->param, 22);
		scsi_put_be16(pdu->param + 2, 16);
		scsi_put_be64(pdu->param + 8, lba);
		scsi_put_be32(pdu->param + 16, nb);
		c->cdb_len = 10;
		iov[0].iov_base = pdu->param;
		iov[0].iov_len = sizeof(pdu->param);
		c->iov = iov;
		c->iovcnt = 1;
		c->xfer_len = sizeof(pdu->param);
		c->dir = SCSI_DIR_TO_DEVICE;
		break;
	case BLK_OP_WRITE_ZEROES:
		if (nb > sd->max_ws_blocks) {
			nb = sd->max_ws_blocks;
			c->ml_flags |= SCMD_SPLIT;
			pdu->cmd_bytes = nb << sd->lbs_shift;
		}
		/* WRITE SAME (16) with NDOB: zeros, no data (SBC-3 5.42) */
		memset(c->cdb, 0, 16);
		c->cdb[0] = WRITE_SAME_16;
		c->cdb[1] = 0x01;
		scsi_put_be64(c->cdb + 2, lba);
		scsi_put_be32(c->cdb + 10, nb);
		c->cdb_len = 16;
		break;
	default:
		budget_put(sd, pdu);
		return BLK_STS_NOTSUPP;
	}
	switch (rq->op) {
	case BLK_OP_READ: hq->st.reads++; break;
	case BLK_OP_WRITE: hq->st.writes++; break;
	case BLK_OP_FLUSH: hq->st.flushes++; break;
	case BLK_OP_DISCARD: hq->st.unmaps++; break;
	default: hq->st.write_sames++; break;
	}
	c->ml_flags |= SCMD_IN_SUBMIT;
	blk_mq_stage(rq, BLK_STAGE_DEVICE);
	if (unlikely(sd->extras & SCSI_X_HOST_LOCK)) {
		host_lock(hq); /* scsi_dispatch_cmd() held it over queuecommand */
		ret = sd->hostt->queuecommand(hq->lq, c);
		host_unlock(hq);
	} else {
		ret = sd->hostt->queuecommand(hq->lq, c);
	}
	c->ml_flags &= (uint8_t)~SCMD_IN_SUBMIT;
	if (unlikely(ret == -EAGAIN || ret == -EBUSY)) {
		hq->st.busy++;
		if (ret == -EBUSY)
			block_host(sd);
		budget_put(sd, pdu);
		return refused_too_long(hq, pdu, rq) ? BLK_STS_TIMEOUT : BLK_STS_RESOURCE;
	}
	/* a retry decided inline: the core requeues it (at once), or it
	 * waits on the delayed list (in flight for the core) */
	if (unlikely(c->ml_flags & SCMD_RETRY_NOW))
		return BLK_STS_RESOURCE;
	if (unlikely(ret))
		return BLK_STS_IOERR;
	return BLK_STS_OK;
}

static int scsi_poll(struct blk_mq_hw_ctx *hctx)
{
	struct scsi_hq *hq = blk_mq_hctx_driver_data(hctx);

	if (unlikely(hq->delayed_head))
		scsi_delayed_poll(hq);
	return hq->sd->hostt->poll(hq->lq);
}

/*
 * The queue's thread has nothing to do but wait: in the LLD (a socket),
 * unless a delayed retry falls due first (the core then polls).
 */
static int scsi_wait(struct blk_mq_hw_ctx *hctx, uint64_t timeout_ns)
{
	struct scsi_hq *hq = blk_mq_hctx_driver_data(hctx);

	if (hq->delayed_head)
		return -EAGAIN;
	return hq->sd->hostt->wait(hq->lq, timeout_ns);
}

/* The end of a dispatch batch: the LLD's doorbell (scsi_commit_rqs()). */
static void scsi_commit_rqs(struct blk_mq_hw_ctx *hctx)
{
	struct scsi_hq *hq = blk_mq_hctx_driver_data(hctx);

	if (hq->sd->hostt->commit_rqs)
		hq->sd->hostt->commit_rqs(hq->lq);
}

static int scsi_init_hctx(struct blk_mq_hw_ctx *hctx, void *data,
			  unsigned int idx)
{
	struct scsi_hq *hq = calloc(1, sizeof(*hq));
	int ret;

	if (!hq)
		return -ENOMEM;
	hq->sd = data;
	hq->idx = idx;
	ret = hq->sd->hostt->init_queue(hq->sd->hostdata, idx, hq->sd->lld_depth,
					&hq->lq);
	if (ret) {
		free(hq);
		return ret;
	}
	blk_mq_hctx_set_driver_data(hctx, hq);
	hq->sd->hq[idx] = hq;
	if (idx + 1 > hq->sd->nr_hq)
		hq->sd->nr_hq = idx + 1;
	return 0;
}

static void scsi_exit_hctx(struct blk_mq_hw_ctx *hctx, unsigned int idx)
{
	struct scsi_hq *hq = blk_mq_hctx_driver_data(hctx);

	if (!hq)
		return;
	hq->sd->hq[idx] = NULL;
	hq->sd->hostt->exit_queue(hq->lq);
	free(hq);
	blk_mq_hctx_set_driver_data(hctx, NULL);
}

static void scsi_free(void *data)
{
	struct scsi_disk *sd = data;

	sd->hostt->destroy(sd->hostdata); /* the loopback closes the lower device */
	blk_spin_destroy(&sd->host_lock);
	free(sd->hq);
	free(sd);
}

static const struct blk_mq_ops scsi_mq_ops = {
	.queue_rq = scsi_queue_rq,
	.commit_rqs = scsi_commit_rqs,
	.poll = scsi_poll,
	.timeout = scsi_timeout,
	.init_hctx = scsi_init_hctx,
	.exit_hctx = scsi_exit_hctx,
	.free = scsi_free,
};

/* ... for an LLD that can sleep (the iscsi LLD): the core sleeps in
 * scsi_wait() rather than polling (the loopback's queues keep no wait op:
 * the core's spin is what they had) */
static const struct blk_mq_ops scsi_mq_ops_wait = {
	.queue_rq = scsi_queue_rq,
	.commit_rqs = scsi_commit_rqs,
	.poll = scsi_poll,
	.wait = scsi_wait,
	.timeout = scsi_timeout,
	.init_hctx = scsi_init_hctx,
	.exit_hctx = scsi_exit_hctx,
	.free = scsi_free,
};

/* ------------------------------------------------------------- probe */

/* A probe command and, behind it, the LLD's area (scsi_cmd_priv()). */
struct probe_cmd {
	bool ended;
	uint8_t sense[SCSI_CMD_SENSE_ROOM] __attribute__((aligned(16))); /* scsi_cmd_sense() */
	struct scsi_cmnd cmd;
};
_Static_assert(offsetof(struct probe_cmd, cmd) ==
	       offsetof(struct probe_cmd, sense) + SCSI_CMD_SENSE_ROOM,
	       "the sense buffer right in front of the command");

struct probe {
	const struct scsi_host_template *hostt;
	void *q;                /* the LLD's probe queue */
	struct probe_cmd *pc;
	uint64_t wait_ns;
};

static void probe_done(struct scsi_cmnd *c)
{
	((struct probe_cmd *)((char *)c - offsetof(struct probe_cmd, cmd)))->ended = true;
}

#define PROBE_READY_NS (100ull * 1000000000) /* sd_spinup_disk()'s ~100 s */
#define PROBE_RETRIES 5 /* sd's SD_MAX_RETRIES for a probe command */

/*
 * One probe command, to its end; GOOD after at most a few unit attentions.
 * NOT READY, BECOMING READY (04/01) and busy are waited out for up to
 * PROBE_READY_NS; a command not answered in wait_ns is ended by the LLD's
 * host reset (so that nothing refers to it any more) and is -ETIMEDOUT.
 */
static int probe(struct probe *p, const uint8_t *cdb, uint8_t len, void *buf,
		 uint32_t xfer)
{
	struct iovec iov = { .iov_base = buf, .iov_len = xfer };
	uint64_t ready_by = now_ns() + PROBE_READY_NS;
	struct scsi_cmnd *c = &p->pc->cmd;
	struct timespec ms = { 0, 1000000 };
	int tries = 0, retries = 0;

	for (;;) {
		uint64_t end_by;
		int ret;

		p->pc->ended = false;
		c->lun = 0;
		memcpy(c->cdb, cdb, len);
		c->cdb_len = len;
		c->iov = &iov;
		c->iovcnt = buf ? 1 : 0;
		c->xfer_len = xfer;
		c->dir = buf ? SCSI_DIR_FROM_DEVICE : SCSI_DIR_NONE;
		c->done = probe_done;
		c->status = SAM_STAT_GOOD;
		c->sense_len = 0;
		while ((ret = p->hostt->queuecommand(p->q, c)) == -EAGAIN ||
		       ret == -EBUSY) {
			if (ret == -EBUSY && now_ns() > ready_by)
				return -EBUSY;
			p->hostt->poll(p->q);
		}
		if (ret)
			return ret;
		end_by = now_ns() + p->wait_ns;
		while (!p->pc->ended) {
			p->hostt->poll(p->q);
			if (!p->pc->ended && now_ns() > end_by) {
				/* no answer: the LLD's host reset ends it, then
				 * it is sent again, as sd's probe retries */
				p->hostt->eh_host_reset_handler(p->q);
				while (!p->pc->ended)
					p->hostt->poll(p->q);
				if (++retries <= PROBE_RETRIES)
					goto again;
				return -ETIMEDOUT;
			}
		}
		if (c->host_status == SCSI_HOST_BUSY && now_ns() < ready_by)
			goto again;
		if (c->host_status != SCSI_HOST_OK)
			return -EIO;
		if (c->status == SAM_STAT_GOOD)
			return 0;
		/* busy, task set full, aborted: sent again a few times (sd's
		 * probe commands retry as I/O does) */
		if ((c->status == SAM_STAT_BUSY || c->status == SAM_STAT_TASK_SET_FULL ||
		     c->status == SAM_STAT_TASK_ABORTED) && ++retries <= PROBE_RETRIES)
			goto again;
		{
			struct scsi_sense s;

			if (c->status != SAM_STAT_CHECK_CONDITION ||
			    scsi_parse_sense(scsi_cmd_sense(c), c->sense_len, &s))
				return -EIO;
			/* a unit attention is expected once after power on */
			if (s.key == SK_UNIT_ATTENTION && ++tries < 4)
				continue;
			if (s.key == SK_ABORTED_COMMAND && ++retries <= PROBE_RETRIES)
				goto again;
			/* spinning up (tur_ms_to_ready): wait, as sd does */
			if (s.key == SK_NOT_READY && s.asc_ascq == 0x0401 &&
			    now_ns() < ready_by)
				goto again;
			return -EIO;
		}
again:
		nanosleep(&ms, NULL);
	}
}

/* An ASCII field from the disk: trailing spaces off, anything but
 * printable ASCII made '?' (it is outside input). */
static void rtrim(char *s)
{
	size_t n = strlen(s), i;

	while (n && s[n - 1] == ' ')
		s[--n] = 0;
	for (i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			s[i] = '?';
}

static int probe_vpd_ids(struct probe *p, struct scsi_disk *sd)
{
	uint8_t cdb[6] = { INQUIRY, 1, 0, 0, 255, 0 };
	uint8_t list[255], pg[255];
	unsigned int n, i, k;
	int ret;

	memset(list, 0, sizeof(list));
	if ((ret = probe(p, cdb, 6, list, sizeof(list))))
		return ret;
	n = scsi_get_be16(list + 2);
	if (n > sizeof(list) - 4)
		n = sizeof(list) - 4;
	for (i = 0; i < n; i++) {
		uint8_t page = list[4 + i];
		unsigned int len;

		if (page != 0x80 && page != 0x83 && page != 0xb1)
			continue;
		cdb[2] = page;
		memset(pg, 0, sizeof(pg));
		if ((ret = probe(p, cdb, 6, pg, sizeof(pg))))
			return ret;
		len = scsi_get_be16(pg + 2);
		if (len > sizeof(pg) - 4)
			len = sizeof(pg) - 4;
		if (page == 0x80) {
			snprintf(sd->info.serial, sizeof(sd->info.serial), "%.*s",
				 (int)(len < sizeof(sd->info.serial) - 1 ?
				       len : sizeof(sd->info.serial) - 1),
				 (const char *)pg + 4);
			rtrim(sd->info.serial);
		} else if (page == 0xb1) {
			sd->info.rotation_rate = scsi_get_be16(pg + 4);
		} else {
			/* the first NAA designator of the unit (association 0) */
			for (k = 4; k + 4 <= len + 4; k += 4u + pg[k + 3]) {
				unsigned int dl = pg[k + 3], j;

				if ((pg[k + 1] & 0x0f) != 3 || (pg[k + 1] & 0x30) ||
				    k + 4 + dl > len + 4 || dl > 16)
					continue;
				for (j = 0; j < dl; j++)
					snprintf(sd->info.naa + 2 * j, 3, "%02x", pg[k + 4 + j]);
				break;
			}
		}
	}
	return 0;
}

static const char *probe_sense(int ret, struct scsi_cmnd *c, char *buf,
			       size_t len)
{
	struct scsi_sense s;

	if (ret == -ETIMEDOUT || ret == -EBUSY)
		snprintf(buf, len, "%s", ret == -EBUSY ? "busy (host busy) for 100 s" :
			 "no answer (the command timed out)");
	else if (c->host_status != SCSI_HOST_OK)
		snprintf(buf, len, "not delivered (host status %u)", c->host_status);
	else if (c->status == SAM_STAT_CHECK_CONDITION &&
	    !scsi_parse_sense(scsi_cmd_sense(c), c->sense_len, &s))
		snprintf(buf, len, "CHECK CONDITION, sense key 0x%x, ASC/ASCQ %02x/%02x",
			 s.key, s.asc_ascq >> 8, s.asc_ascq & 0xff);
	else
		snprintf(buf, len, "status 0x%02x", c->status);
	return buf;
}

int blk_scsi_create(const struct blk_scsi_config *cfg, struct blk_dev **dev,
		    char *err, size_t errlen)
{
	static const uint8_t tur[6] = { TEST_UNIT_READY };
	static const uint8_t inq[6] = { INQUIRY, 0, 0, 0, 96, 0 };
	static const uint8_t vpd_b0[6] = { INQUIRY, 1, 0xb0, 0, 64, 0 };
	static const uint8_t vpd_b2[6] = { INQUIRY, 1, 0xb2, 0, 8, 0 };
	static const uint8_t rc16[16] = { SERVICE_ACTION_IN_16, SAI_READ_CAPACITY_16,
					  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0 };
	static const uint8_t ms[6] = { MODE_SENSE_6, 0x08, 0x08, 0, 32, 0 };
	static const uint8_t rc10[10] = { READ_CAPACITY_10 };
	/* SELECT REPORT 0, allocation length 256: LUN 0 and 31 others */
	static const uint8_t rl[12] = { REPORT_LUNS, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0 };
	uint8_t cap10[8], lunlist[256];
	struct scsi_tgt_config tc = { 0 };
	uint64_t wait_ns;
	struct blk_dev_config qc = *cfg->queue;
	struct blk_dev *lower = cfg->lower;
	struct probe p = { 0 };
	bool stores_data = true;
	struct scsi_disk *sd;
	uint8_t b[96], b0[64], b2[8], cap[32], mode[32];
	uint32_t max_xfer, max_unmap, max_ws;
	char what[128];
	int ret;

#ifndef BLK_STAGE_TIMERS
	if (cfg->stage_timers) {
		snprintf(err, errlen, "scsi_stage_timers=1: this build has no stage timers (cmake -DBLK_STAGE_TIMERS=ON)");
		blk_dev_close(lower);
		return -EINVAL;
	}
#endif
	sd = calloc(1, sizeof(*sd));
	if (!sd) {
		blk_dev_close(lower);
		return -ENOMEM;
	}
	sd->max_retries = cfg->max_retries;
	sd->queue_depth = cfg->queue_depth;
	sd->rq_timeout_ns = (uint64_t)(cfg->queue->rq_timeout_ms ? cfg->queue->rq_timeout_ms :
								  30000) * 1000000;
	atomic_init(&sd->use_10_for_rw, !cfg->no_10_for_rw);
	/* what one LLD queue may hold: with shared tags, all of them */
	sd->lld_depth = (cfg->queue->queue_depth ? cfg->queue->queue_depth : 64) *
			(cfg->queue->nr_hw_queues ? cfg->queue->nr_hw_queues : 1);
	sd->extras = (cfg->queue_depth ? SCSI_X_BUDGET : 0) |
		     (cfg->host_lock ? SCSI_X_HOST_LOCK : 0) |
		     (cfg->stage_timers ? SCSI_X_STAGE : 0);
	blk_spin_init(&sd->host_lock, "&scsi_disk->host_lock");
	if (cfg->hostt) {
		sd->hostt = cfg->hostt;
		sd->hostdata = cfg->hostdata;
	} else {
		/* the loopback LLD over @lower, the target as configured */
		struct scsi_loopback_config lc = {
			.lower = lower, .tgt = &tc, .thread = cfg->lld_thread,
		};
		struct blk_dev_info li;

		if (cfg->tgt) {
			tc = *cfg->tgt;
		} else {
			tc.every_nth = cfg->every_nth;
			tc.opts = cfg->opts;
		}
		/* the disk's task management faults (scsi_tmf_fail=) */
		if (cfg->tmf_fail)
			tc.tmf_fail = cfg->tmf_fail;
		if (cfg->tmf_timeout_ms)
			tc.tmf_timeout_ms = cfg->tmf_timeout_ms;
		/* LBPRZ: what it unmaps reads as zeros, so it keeps what it is
		 * written (the loopback's disk is the target core's) */
		blk_dev_get_info(lower, &li);
		stores_data = li.stores_data;
		ret = scsi_loopback_create(&lc, &sd->hostt, &sd->hostdata, err,
					   errlen); /* closes @lower on failure */
		if (ret) {
			blk_spin_destroy(&sd->host_lock);
			free(sd);
			return ret;
		}
	}
	sd->priv_size = (sd->hostt->cmd_size + 15u) & ~15u;
	/* a probe command's answer: the request timeout, and the longest
	 * completion delay the target has */
	wait_ns = (uint64_t)(qc.rq_timeout_ms ? qc.rq_timeout_ms : 30000) * 1000000 +
		  SCSI_TGT_MAX_DELAY_NS;
	p.hostt = sd->hostt;
	p.wait_ns = wait_ns;
	p.pc = aligned_alloc(16, sizeof(*p.pc) + sd->priv_size);
	if (!p.pc) {
		ret = -ENOMEM;
		goto fail;
	}
	memset(p.pc, 0, sizeof(*p.pc) + sd->priv_size);
	ret = sd->hostt->init_queue(sd->hostdata, UINT32_MAX, 1, &p.q);
	if (ret) {
		p.q = NULL;
		snprintf(err, errlen, "scsi: %s: cannot set up a queue: %s",
			 sd->hostt->name, strerror(-ret));
		goto fail;
	}
	/* sd_probe()'s order: ready, what it is, its limits, its size, its cache */
	if ((ret = probe(&p, tur, 6, NULL, 0)) ||
	    (ret = probe(&p, inq, 6, b, sizeof(b)))) {
		snprintf(err, errlen, "scsi: %s: %s", tur[0] == p.pc->cmd.cdb[0] ?
			 "TEST UNIT READY" : "INQUIRY",
			 probe_sense(ret, &p.pc->cmd, what, sizeof(what)));
		goto fail;
	}
	if ((b[0] & 0x1f) != 0x00) {
		snprintf(err, errlen, "scsi: LUN 0 is not a direct-access device (type 0x%02x)",
			 b[0] & 0x1f);
		ret = -ENODEV;
		goto fail;
	}
	/* standard INQUIRY data: T10 vendor, product, revision (SPC-4 6.6.2) */
	snprintf(sd->info.vendor, sizeof(sd->info.vendor), "%.8s", (const char *)b + 8);
	snprintf(sd->info.product, sizeof(sd->info.product), "%.16s", (const char *)b + 16);
	snprintf(sd->info.revision, sizeof(sd->info.revision), "%.4s", (const char *)b + 32);
	rtrim(sd->info.vendor);
	rtrim(sd->info.product);
	rtrim(sd->info.revision);
	/* the VPD pages the disk lists (0x00), as scsi_get_vpd_page() asks:
	 * serial number (0x80), device identification (0x83: the NAA name,
	 * sd's wwid), block device characteristics (0xb1) */
	ret = probe_vpd_ids(&p, sd);
	if (ret) {
		snprintf(err, errlen, "scsi: probe command 0x%02x (VPD): %s", p.pc->cmd.cdb[0],
			 probe_sense(ret, &p.pc->cmd, what, sizeof(what)));
		goto fail;
	}
	/*
	 * Then REPORT LUNS (scsi_scan's), the limits (VPD 0xb0) and
	 * provisioning (0xb2), READ CAPACITY (10) and, when the disk is
	 * past 2^32 blocks or reports provisioning, (16) (sd_read_capacity():
	 * LBPME and LBPRZ are only there), then the caching page.
	 */
	memset(b2, 0, sizeof(b2));
	if ((ret = probe(&p, rl, 12, lunlist, sizeof(lunlist))) ||
	    (ret = probe(&p, vpd_b0, 6, b0, sizeof(b0))) ||
	    (ret = probe(&p, vpd_b2, 6, b2, sizeof(b2))) ||
	    (ret = probe(&p, rc10, 10, cap10, sizeof(cap10)))) {
		snprintf(err, errlen, "scsi: probe command 0x%02x: %s", p.pc->cmd.cdb[0],
			 probe_sense(ret, &p.pc->cmd, what, sizeof(what)));
		goto fail;
	}
	sd->info.nr_luns = scsi_get_be32(lunlist) / 8;
	if (scsi_get_be32(cap10) == 0xffffffff || (b2[5] & 0xe0)) {
		ret = probe(&p, rc16, 16, cap, sizeof(cap));
	} else {
		memset(cap, 0, sizeof(cap));
		scsi_put_be64(cap, scsi_get_be32(cap10));
		memcpy(cap + 8, cap10 + 4, 4);
	}
	if (ret || (ret = probe(&p, ms, 6, mode, sizeof(mode)))) {
		snprintf(err, errlen, "scsi: probe command 0x%02x: %s", p.pc->cmd.cdb[0],
			 probe_sense(ret, &p.pc->cmd, what, sizeof(what)));
		goto fail;
	}
	sd->info.write_protected = mode[2] & 0x80;
	sd->hostt->exit_queue(p.q);
	p.q = NULL;
	free(p.pc);
	p.pc = NULL;
	sd->lbs = scsi_get_be32(cap + 8);
	if (sd->lbs < 512 || sd->lbs > 65536 || (sd->lbs & (sd->lbs - 1))) {
		snprintf(err, errlen, "scsi: the disk reports %u-byte blocks: a power of two 512..65536 is needed",
			 sd->lbs);
		ret = -EINVAL;
		goto fail;
	}
	sd->lbs_shift = (uint8_t)__builtin_ctz(sd->lbs);
	sd->nr_blocks = scsi_get_be64(cap) + 1;
	sd->use_16_for_rw = sd->nr_blocks > 0xffffffffull;
	max_xfer = scsi_get_be32(b0 + 8);
	max_unmap = scsi_get_be32(b0 + 20);
	max_ws = (uint32_t)scsi_get_be64(b0 + 36);
	/* 0: no limit reported (SBC-3 6.6.4) */
	sd->max_rw_blocks = max_xfer ? max_xfer : UINT32_MAX;
	sd->max_unmap_blocks = max_unmap ? max_unmap : UINT32_MAX;
	sd->max_ws_blocks = max_ws ? max_ws : UINT32_MAX;
	qc.name = "scsi";
	qc.capacity = sd->nr_blocks * sd->lbs;
	qc.logical_block_size = sd->lbs;
	if (max_xfer) {
		uint64_t s = (uint64_t)max_xfer * sd->lbs / 512;

		if (!qc.max_sectors || qc.max_sectors > s)
			qc.max_sectors = (uint32_t)(s > 65536 ? 65536 : s);
	}
	/* LBPME and LBPU: UNMAP; LBPWS: WRITE SAME (16) */
	qc.can_discard = (cap[14] & 0x80) && (b2[5] & 0x80) && max_unmap;
	qc.max_discard_sectors = (uint32_t)((uint64_t)max_unmap * sd->lbs / 512 >
					    0xffffffffu ? 0xffffffffu :
					    (uint64_t)max_unmap * sd->lbs / 512);
	qc.can_write_zeroes = (b2[5] & 0x40) && max_ws;
	qc.max_write_zeroes_sectors = (uint32_t)((uint64_t)max_ws * sd->lbs / 512 >
						 0xffffffffu ? 0xffffffffu :
						 (uint64_t)max_ws * sd->lbs / 512);
	/* WCE: the caching page follows the 4-byte header (DBD: no block
	 * descriptor; regression: reading past one never saw WCE, so the disk
	 * took no flush and no FUA) */
	qc.can_flush = mode[4 + 2] & 0x04;
	/* LBPRZ: what it unmaps reads as zeros, so it keeps what it is
	 * written (the loopback's disk is the target core's) */
	qc.stores_data = stores_data;
	if (!qc.max_segments)
		qc.max_segments = 128;
	_Static_assert(offsetof(struct scsi_pdu, cmd) + sizeof(struct scsi_cmnd) ==
		       sizeof(struct scsi_pdu), "the LLD's area follows the command");
	_Static_assert(offsetof(struct scsi_pdu, cmd) ==
		       offsetof(struct scsi_pdu, sense) + SCSI_CMD_SENSE_ROOM &&
		       SCSI_CMD_SENSE_ROOM >= SCSI_SENSE_MAX,
		       "the sense buffer right in front of the command (scsi_cmd_sense())");
	qc.cmd_size = (uint32_t)(sizeof(struct scsi_pdu) + sd->priv_size +
				 qc.max_segments * sizeof(struct iovec));
	qc.ops = sd->hostt->wait ? &scsi_mq_ops_wait : &scsi_mq_ops;
	qc.driver_data = sd;
	sd->hq = calloc(qc.nr_hw_queues ? qc.nr_hw_queues : 1, sizeof(*sd->hq));
	if (!sd->hq) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = blk_dev_create(&qc, dev);
	if (ret) {
		snprintf(err, errlen, "scsi: cannot create the block device: %s",
			 strerror(-ret));
		goto fail;
	}
	return 0;
fail:
	if (p.q)
		sd->hostt->exit_queue(p.q);
	free(p.pc);
	sd->hostt->destroy(sd->hostdata);
	blk_spin_destroy(&sd->host_lock);
	free(sd->hq);
	free(sd);
	return ret;
}

void blk_scsi_get_info(struct blk_dev *dev, struct blk_scsi_info *info)
{
	const struct scsi_disk *sd = blk_dev_driver_data(dev);

	*info = sd->info;
}

void blk_scsi_get_stats(struct blk_dev *dev, struct blk_scsi_stats *st)
{
	struct scsi_disk *sd = blk_dev_driver_data(dev);
	unsigned int i, k;

	_Static_assert(sizeof(*st) % sizeof(uint64_t) == 0,
		       "blk_scsi_stats: uint64_t counters only");
	memset(st, 0, sizeof(*st));
	for (i = 0; i < sd->nr_hq; i++) {
		const uint64_t *q = (const uint64_t *)&sd->hq[i]->st;

		for (k = 0; k < sizeof(*st) / sizeof(uint64_t); k++)
			((uint64_t *)st)[k] += q[k];
	}
	if (sd->hostt->get_stats)
		sd->hostt->get_stats(sd->hostdata, st);
}
