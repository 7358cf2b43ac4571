// SPDX-License-Identifier: MIT
/*
 * SCSI target core: task management (SAM-5 clause 7): ABORT TASK,
 * LOGICAL UNIT RESET, TARGET RESET, and the end of every task of a queue
 * (I_T nexus loss, an initiator's host reset).
 *
 * What a task can be when a function reaches it: ended (nothing to do),
 * dropped by SCSI_TGT_OPT_TIMEOUT (on its queue's list: ended at once,
 * TASK ABORTED), or doing media access.  Bios handed to a blk_dev cannot be
 * taken back, so a task with media access in flight is marked and waited
 * for, by polling the queue: it ends TASK ABORTED when its last bio ends.
 * Tasks of other queues (other threads) are not touched from here: a reset
 * bumps the target's epoch and the logical unit's reset_epoch, and a task
 * that started before it ends aborted on its own thread; one of another
 * nexus than the one that asked, as the control mode page's TAS bit says
 * (abort_task_set(), below: with TAS 0, without a response).  A reset
 * also releases an SPC-2 reservation and ends every nexus's prevention of
 * medium removal (lu_reset_state()).
 *
 * PERSISTENT RESERVE OUT with PREEMPT AND ABORT (SPC-4 5.9.11.5; pr.c
 * calls tgt_preempt_abort()) aborts the tasks of the preempted nexuses on
 * one logical unit the same way, per nexus: the target's epoch is bumped
 * and recorded for each of them in the unit's pa_epoch[]
 * (record_abort()); a task of such a nexus that started in an older epoch
 * ends aborted where it ends (media_put(), tgt_delay_poll()), the dropped
 * and delayed ones of the queue that preempts at once.  With the control
 * mode page's TAS bit set they end TASK ABORTED; with TAS 0 SAM-5 5.6 has
 * no response sent for them: they still end through their done, once,
 * TASK ABORTED with no_response set for the transport, and their nexus
 * gets COMMANDS CLEARED BY ANOTHER INITIATOR (2F/00).
 *
 * CLEAR TASK SET (SAM-5 7.4, scsi_tgt_clear_task_set()) is the same for
 * every nexus of the unit, the one that asks included (its own tasks end
 * TASK ABORTED, its transport answers none of them): record_abort() for
 * all 64, and the unit's reset_epoch for the tasks of nexus indexes past
 * them (abort_task_set()); then this queue's tasks of the unit end before
 * it returns.  LOGICAL UNIT RESET and TARGET RESET abort the task set the
 * same way, so that TAS decides for them too, without the 2F/00: every
 * nexus, the one that asked included, gets the reset's own unit attention
 * (29/03), as SAM-5's logical unit reset has it (and Linux's LIO since
 * 6.0; libiscsi's MultipathIO.Reset expects it on every path).
 */
#include <errno.h>

#include "tgt_int.h"

static uint64_t tmf_deadline(const struct scsi_tgt *t)
{
	uint32_t ms = t->cfg.tmf_timeout_ms ? t->cfg.tmf_timeout_ms : 10000;

	return tgt_now_ns() + (uint64_t)ms * 1000000ull;
}

void tgt_task_drop(struct scsi_tgt_queue *q, struct scsi_tgt_cmd *c)
{
	c->tstate = TGT_TASK_DROPPED;
	c->dprev = NULL;
	c->dnext = q->dropped;
	if (q->dropped)
		q->dropped->dprev = c;
	q->dropped = c;
}

static void task_undrop(struct scsi_tgt_queue *q, struct scsi_tgt_cmd *c)
{
	if (c->dprev)
		c->dprev->dnext = c->dnext;
	else
		q->dropped = c->dnext;
	if (c->dnext)
		c->dnext->dprev = c->dprev;
	c->dnext = c->dprev = NULL;
	c->tstate = TGT_TASK_IDLE;
}

void tgt_task_end_aborted(struct scsi_tgt_queue *q, struct scsi_tgt_cmd *c)
{
	/* SAM-5 5.6: TASK ABORTED, no sense, nothing moved that counts */
	c->status = SAM_STAT_TASK_ABORTED;
	c->sense_len = 0;
	c->resid = c->xfer_len;
	c->overflow = false;
	c->aborting = false;
	c->tstate = TGT_TASK_IDLE;
	atomic_fetch_add_explicit(&q->tgt->tasks_aborted, 1, memory_order_relaxed);
	tgt_cmd_end(q, c);
}

static int tmf_failed(struct scsi_tgt *t, int ret)
{
	atomic_fetch_add_explicit(&t->tmf_failed, 1, memory_order_relaxed);
	return ret;
}

int scsi_tgt_abort_task(struct scsi_tgt_queue *q, struct scsi_tgt_cmd *c)
{
	struct scsi_tgt *t = q->tgt;
	uint64_t deadline;

	if (t->cfg.tmf_fail & SCSI_TGT_TMF_FAIL_ABORT)
		return tmf_failed(t, -EIO);
	atomic_fetch_add_explicit(&t->aborts, 1, memory_order_relaxed);
	switch (c->tstate) {
	case TGT_TASK_DROPPED:
		task_undrop(q, c);
		tgt_task_end_aborted(q, c);
		return 0;
	case TGT_TASK_MEDIA:
		c->aborting = true; /* media_put() ends it aborted */
		deadline = tmf_deadline(t);
		while (c->tstate == TGT_TASK_MEDIA) {
			scsi_tgt_poll(q);
			if (c->tstate == TGT_TASK_MEDIA && tgt_now_ns() > deadline)
				return tmf_failed(t, -ETIMEDOUT);
		}
		return 0;
	default:
		/* ended, but held by the delay: answered aborted now */
		if (q->delay_head && tgt_delay_abort(q, c, 0, UINT64_MAX))
			return 0;
		return -ENOENT;
	}
}

/* End the tasks of @lun (all: UINT64_MAX) on @q; wait for their media. */
static int reset_queue_tasks(struct scsi_tgt_queue *q, uint64_t lun,
			     uint64_t deadline)
{
	struct scsi_tgt *t = q->tgt;
	struct scsi_tgt_cmd *c, *next;
	unsigned int i;

	for (c = q->dropped; c; c = next) {
		next = c->dnext;
		if (lun != UINT64_MAX && c->lun != lun)
			continue;
		task_undrop(q, c);
		if (c->lun < t->nr_luns)
			tgt_task_mark_if_preempted(&t->lus[c->lun], c);
		tgt_task_end_aborted(q, c);
	}
	for (i = 0; i < t->nr_luns; i++) {
		if (lun != UINT64_MAX && i != lun)
			continue;
		while (q->lun_busy[i]) {
			scsi_tgt_poll(q);
			if (q->lun_busy[i] && deadline && tgt_now_ns() > deadline)
				return -ETIMEDOUT;
		}
	}
	/* last: what ended meanwhile may wait out a delay (delay_ms) */
	if (q->delay_head)
		tgt_delay_abort(q, NULL, lun, UINT64_MAX);
	return 0;
}

/* Move the epoch at @p forward to @e, never back (two functions on two
 * queues may store theirs in either order). */
static void epoch_raise(_Atomic uint32_t *p, uint32_t e)
{
	uint32_t old = atomic_load_explicit(p, memory_order_relaxed);

	while ((int32_t)(e - old) > 0 &&
	       !atomic_compare_exchange_weak_explicit(p, &old, e,
						      memory_order_release,
						      memory_order_relaxed))
		;
}

/*
 * The tasks of the nexuses in @victims on @lu that started before now end
 * aborted where they end: @quiet (of @victims) without a response, and
 * @cleared (of @victims) with 2F/00 for their nexus; the other victims'
 * TASK ABORTED.  Return the new epoch.
 */
static uint32_t record_abort(struct scsi_tgt *t, struct scsi_lu *lu,
			     uint64_t victims, uint64_t quiet, uint64_t cleared)
{
	uint32_t e;
	unsigned int i;

	/*
	 * What made the function (PREEMPT AND ABORT: the registrations gone,
	 * under pr.lock) came first, then the epoch moves (seq_cst, a
	 * release): a task that reads the new epoch at its start (acquire,
	 * in submit()) sees it and the unit attention, and is not aborted;
	 * one that read an older epoch may have passed its checks before
	 * it, and is.
	 */
	e = atomic_fetch_add(&t->epoch, 1) + 1;
	atomic_fetch_or_explicit(&lu->pa_quiet, quiet & victims, memory_order_relaxed);
	atomic_fetch_and_explicit(&lu->pa_quiet, ~(victims & ~quiet), memory_order_relaxed);
	atomic_fetch_or_explicit(&lu->pa_cleared, cleared & victims, memory_order_relaxed);
	atomic_fetch_and_explicit(&lu->pa_cleared, ~(victims & ~cleared),
				  memory_order_relaxed);
	/* release: a task that sees its nexus's epoch sees the masks */
	for (i = 0; i < SCSI_TGT_MAX_NEXUS; i++)
		if (victims & (1ull << i))
			epoch_raise(&lu->pa_epoch[i], e);
	/* after the epochs and masks: a task that sees the flag sees them */
	atomic_store_explicit(&lu->pa_any, true, memory_order_release);
	return e;
}

/*
 * Every task of @lu started before now, on every queue, ends aborted
 * (those of this queue are the caller's to end: reset_queue_tasks()):
 * CLEAR TASK SET, LOGICAL UNIT RESET.  With TAS 0, those of nexuses other
 * than @nexus end without a response (SAM-5 5.6), and, where @cleared_ua
 * (CLEAR TASK SET: a reset has its own unit attention), raise COMMANDS
 * CLEARED BY ANOTHER INITIATOR for them.
 */
static void abort_task_set(struct scsi_tgt *t, struct scsi_lu *lu,
			   unsigned int nexus, bool cleared_ua)
{
	uint64_t others = nexus < SCSI_TGT_MAX_NEXUS ? ~(1ull << nexus) : UINT64_MAX;
	uint64_t quiet = atomic_load_explicit(&lu->tas, memory_order_relaxed) ?
			 0 : others;
	uint32_t e = record_abort(t, lu, UINT64_MAX, quiet, cleared_ua ? quiet : 0);

	/* nexus indexes past SCSI_TGT_MAX_NEXUS too */
	epoch_raise(&lu->reset_epoch, e);
}

/*
 * What a logical unit reset ends besides the tasks (SAM-5 6.3.3): an
 * SPC-2 reservation (persistent ones stay, SPC-4 5.9.1), and the
 * prevention of medium removal of every nexus (SPC-4 6.13).
 */
static void lu_reset_state(struct scsi_lu *lu)
{
	tgt_pr_lun_reset(lu);
	atomic_store(&lu->prevent, 0);
}

int scsi_tgt_lun_reset(struct scsi_tgt_queue *q, uint64_t lun,
		       unsigned int nexus)
{
	struct scsi_tgt *t = q->tgt;
	struct scsi_lu *lu;
	int ret;

	if (lun >= t->nr_luns)
		return -EINVAL;
	if (t->cfg.tmf_fail & SCSI_TGT_TMF_FAIL_LUN_RESET)
		return tmf_failed(t, -EIO);
	lu = &t->lus[lun];
	atomic_fetch_add_explicit(&t->lun_resets, 1, memory_order_relaxed);
	abort_task_set(t, lu, nexus, false);
	lu_reset_state(lu);
	ret = reset_queue_tasks(q, lun, tmf_deadline(t));
	tgt_ua_raise(t, lu, TGT_UA_LUN_RESET, -1);
	return ret ? tmf_failed(t, ret) : 0;
}

int scsi_tgt_target_reset(struct scsi_tgt_queue *q, unsigned int nexus)
{
	struct scsi_tgt *t = q->tgt;
	unsigned int i;
	int ret;

	if (t->cfg.tmf_fail & SCSI_TGT_TMF_FAIL_TARGET_RESET)
		return tmf_failed(t, -EIO);
	atomic_fetch_add_explicit(&t->target_resets, 1, memory_order_relaxed);
	for (i = 0; i < t->nr_luns; i++) {
		abort_task_set(t, &t->lus[i], nexus, false);
		lu_reset_state(&t->lus[i]);
	}
	ret = reset_queue_tasks(q, UINT64_MAX, tmf_deadline(t));
	for (i = 0; i < t->nr_luns; i++)
		tgt_ua_raise(t, &t->lus[i], TGT_UA_LUN_RESET, -1);
	return ret ? tmf_failed(t, ret) : 0;
}

int scsi_tgt_clear_task_set(struct scsi_tgt_queue *q, uint64_t lun,
			    unsigned int nexus)
{
	struct scsi_tgt *t = q->tgt;
	int ret;

	if (lun >= t->nr_luns)
		return -EINVAL;
	atomic_fetch_add_explicit(&t->clear_task_sets, 1, memory_order_relaxed);
	abort_task_set(t, &t->lus[lun], nexus, true);
	ret = reset_queue_tasks(q, lun, tmf_deadline(t));
	return ret ? tmf_failed(t, ret) : 0;
}

void scsi_tgt_queue_reset(struct scsi_tgt_queue *q)
{
	reset_queue_tasks(q, UINT64_MAX, 0);
}

/* ----------------------------------------------- PREEMPT AND ABORT */

void tgt_task_mark_preempted(struct scsi_lu *lu, struct scsi_tgt_cmd *c)
{
	uint64_t bit = 1ull << c->nexus; /* c->nexus < SCSI_TGT_MAX_NEXUS */

	/* SAM-5 5.6, SPC-4 7.5.8: TAS 0, aborted by another I_T nexus: no
	 * response; the initiator learns of it from the unit attention
	 * (2F/00, or a reset's own) */
	if (atomic_load_explicit(&lu->pa_quiet, memory_order_relaxed) & bit)
		c->no_response = true;
	if (atomic_load_explicit(&lu->pa_cleared, memory_order_relaxed) & bit)
		tgt_ua_raise_mask(lu, TGT_UA_CMDS_CLEARED, bit);
}

void tgt_preempt_abort(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		       uint64_t victims, bool quiet)
{
	struct scsi_tgt *t = q->tgt;
	uint64_t lun = (uint64_t)(lu - t->lus);
	struct scsi_tgt_cmd *c, *next;

	if (!victims)
		return;
	/* after the registrations went (pr.c, under pr.lock) */
	record_abort(t, lu, victims, quiet ? victims : 0, quiet ? victims : 0);

	/* this queue's dropped and delayed tasks of the victims: now */
	for (c = q->dropped; c; c = next) {
		next = c->dnext;
		if (c->lun != lun || c->nexus >= SCSI_TGT_MAX_NEXUS ||
		    !(victims & (1ull << c->nexus)))
			continue;
		task_undrop(q, c);
		tgt_task_mark_preempted(lu, c);
		tgt_task_end_aborted(q, c);
	}
	if (q->delay_head)
		tgt_delay_abort(q, NULL, lun, victims);
}
