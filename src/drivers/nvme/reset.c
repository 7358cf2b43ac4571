// SPDX-License-Identifier: MIT
/*
 * nvme host driver: request timeout (Abort, then controller reset) and the
 * reset itself.  Design and the alternatives rejected: docs/nvme.md,
 * "Timeouts and resets".
 *
 * The controller state word nh->state is generation << 2 | flags.  A reset
 * (under admin_lock) sets RESETTING, disables the controller (after
 * CSTS.RDY = 0 it writes no more CQEs or data), re-enables it with the admin
 * queue, sets the number of queues again and publishes generation + 1.  It
 * recreates no I/O queue: every queue belongs to the thread that holds its
 * hctx, and that thread, at its next queue_rq() or poll(), sees its queue's
 * gen_word differ from nh->state and runs nvme_queue_recover(): reap the
 * CQEs the controller posted before it stopped, requeue every other request
 * it had in flight, reset its ring indexes, zero its CQ, create its CQ/SQ
 * pair again.  Each request is therefore completed (once, by poll) or
 * requeued (once, by its owner) - never both, never by another thread.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nvme_host.h"

/*
 * Reset the controller unless another thread already did since
 * @seen_state was read.  Queues are not recreated here.  Return 0, or
 * -errno (the controller is then marked dead: its requests fail).
 */
int nvme_reset_ctrl(struct nvme_host *nh, uint32_t seen_state)
{
	uint32_t st, got = 0;
	char err[256];
	int ret;

	blk_mutex_lock(&nh->admin_lock);
	st = atomic_load_explicit(&nh->state, memory_order_relaxed);
	if (st & NVME_ST_DEAD) {
		blk_mutex_unlock(&nh->admin_lock);
		return -ENODEV;
	}
	if ((st & ~3u) != (seen_state & ~3u)) {
		/* someone reset it after the caller looked: nothing to do */
		blk_mutex_unlock(&nh->admin_lock);
		return 0;
	}
	if (atomic_fetch_add_explicit(&nh->resets_no_progress, 1,
				      memory_order_relaxed) >=
	    NVME_MAX_RESETS_NO_PROGRESS) {
		fprintf(stderr,
			"blkstack: nvme: %u resets in a row and no command completed between them: the controller is dead, its requests fail\n",
			NVME_MAX_RESETS_NO_PROGRESS);
		nvme_ctrl_disable(nh);
		atomic_store_explicit(&nh->state, (st & ~3u) + NVME_ST_GEN_ONE +
					NVME_ST_DEAD, memory_order_release);
		blk_mutex_unlock(&nh->admin_lock);
		return -ENODEV;
	}
	atomic_store_explicit(&nh->state, st | NVME_ST_RESETTING,
			      memory_order_release);
	atomic_fetch_add_explicit(&nh->resets, 1, memory_order_relaxed);
	ret = nvme_ctrl_enable(nh, err, sizeof(err));
	if (!ret)
		ret = nvme_set_queue_count(nh, nh->nr_io_queues, &got, err,
					   sizeof(err));
	if (!ret && got < nh->nr_io_queues) {
		snprintf(err, sizeof(err),
			 "nvme: reset: the controller now grants %u I/O queues, %u were in use",
			 got, nh->nr_io_queues);
		ret = -EIO;
	}
	if (ret) {
		fprintf(stderr, "blkstack: %s; the controller is dead, its requests fail\n",
			err);
		nvme_ctrl_disable(nh);
		atomic_store_explicit(&nh->state, (st & ~3u) + NVME_ST_GEN_ONE +
					NVME_ST_DEAD, memory_order_release);
		blk_mutex_unlock(&nh->admin_lock);
		return ret;
	}
	atomic_store_explicit(&nh->state, (st & ~3u) + NVME_ST_GEN_ONE,
			      memory_order_release);
	blk_mutex_unlock(&nh->admin_lock);
	return 0;
}

/*
 * The owner's half of a reset (see the file comment).  Returns true when
 * the queue is usable again, false while a reset is in progress or the
 * controller is dead (its requests have then been failed).
 */
bool nvme_queue_recover(struct nvme_queue *q)
{
	struct nvme_host *nh = q->nh;
	uint32_t st = atomic_load_explicit(&nh->state, memory_order_acquire);
	unsigned int tag, tries;
	char err[256];
	int ret = 0;

	if (st & NVME_ST_DEAD) {
		/* nothing will complete: fail what this queue had in flight */
		for (tag = 0; tag < q->nr_tags; tag++) {
			struct request *rq = q->rqs[tag];

			if (rq) {
				q->rqs[tag] = NULL;
				nvme_fail_rq(q, rq, BLK_STS_IOERR);
			}
		}
		q->inflight = 0;
		nvme_fail_retries(q);
		return false;
	}
	if (st == q->gen_word)
		return true;
	if (st & NVME_ST_RESETTING)
		return false;
	/*
	 * The controller stopped at least once since this queue was created:
	 * the CQ is stable.  Entries posted before it stopped are real
	 * completions (data moved): complete them.  The rest is requeued.
	 */
	nvme_reap_cq(q);
	for (tag = 0; tag < q->nr_tags; tag++) {
		struct request *rq = q->rqs[tag];

		if (!rq)
			continue;
		q->rqs[tag] = NULL;
		/*
		 * Sent again, as Linux retries a command the reset cancelled,
		 * while it has retries left: a controller that loses every
		 * completion fails each request after max_retries resets.
		 */
		if (rq->retries >= nh->max_retries) {
			NV_STAT_ADD(&q->st.failed_retries, 1);
			/* the controller kept losing it: a timeout */
			nvme_fail_rq(q, rq, BLK_STS_TIMEOUT);
			continue;
		}
		rq->retries++;
		NV_STAT_ADD(&q->st.requeued, 1);
		blk_mq_requeue_request(rq);
	}
	q->inflight = 0;
	q->sq_tail = q->sq_head = q->cq_head = 0;
	q->unrung = 0;
	q->cq_phase = 1;
	memset(q->cq, 0, (size_t)q->depth * sizeof(*q->cq));
	for (tries = 0; tries < 2; tries++) {
		blk_mutex_lock(&nh->admin_lock);
		st = atomic_load_explicit(&nh->state, memory_order_acquire);
		if (st & (NVME_ST_DEAD | NVME_ST_RESETTING)) {
			blk_mutex_unlock(&nh->admin_lock);
			return false;
		}
		ret = nvme_create_io_queue_locked(nh, q, err, sizeof(err));
		blk_mutex_unlock(&nh->admin_lock);
		if (!ret) {
			q->gen_word = st;
			return true;
		}
		fprintf(stderr, "blkstack: %s (queue %u after a reset)\n", err, q->qid);
		/* the admin queue or the controller is wedged: reset again */
		nvme_reset_ctrl(nh, st);
	}
	return false;
}

/* Base 5.1: Abort.  True when the controller aborted the command. */
static bool nvme_abort(struct nvme_queue *q, struct request *rq, int *ret)
{
	struct nvme_host *nh = q->nh;
	struct nvme_command c = { 0 };
	uint32_t res = 1;
	uint16_t sf = 0;

	c.opcode = nvme_admin_abort;
	c.cdw10 = ((uint32_t)(uint16_t)rq->tag << 16) | q->qid;
	atomic_fetch_add_explicit(&nh->aborts, 1, memory_order_relaxed);
	*ret = nvme_admin_cmd(nh, &c, &res, &sf);
	if (*ret || sf)
		return false;
	/* DW0 bit 0: 0 = the command was aborted, 1 = it was not */
	if (res & 1)
		return false;
	atomic_fetch_add_explicit(&nh->abort_ok, 1, memory_order_relaxed);
	return true;
}

/*
 * blk_mq_ops.timeout, on the queue owner's thread.  First expiry: Abort;
 * an aborted command completes through the CQ (Command Abort Requested)
 * and poll() fails it.  Abort refused or failed, or a second expiry: reset
 * the controller and recover this queue, which requeues @rq.
 */
enum blk_eh_timer_return nvme_timeout(struct request *rq)
{
	struct nvme_queue *q = blk_mq_hctx_driver_data(rq->mq_hctx);
	struct nvme_host *nh = q->nh;
	uint32_t st = atomic_load_explicit(&nh->state, memory_order_acquire);
	int ret = 0;

	NV_STAT_ADD(&q->st.timeouts, 1);
	if (st != q->gen_word) {
		/* a reset is under way or done: recovery requeues @rq */
		if (!nvme_queue_recover(q) && (st & NVME_ST_RESETTING))
			return BLK_EH_RESET_TIMER;
		return BLK_EH_DONE;
	}
	/* the completion may be sitting in the CQ unreaped */
	if (nvme_reap_cq(q) && rq->state != MQ_RQ_IN_FLIGHT)
		return BLK_EH_DONE;
	if ((unsigned int)rq->tag >= q->nr_tags || q->rqs[rq->tag] != rq)
		return BLK_EH_RESET_TIMER;   /* not at the controller */
	if (rq->timeouts == 1 && nvme_abort(q, rq, &ret))
		return BLK_EH_DONE;
	fprintf(stderr,
		"blkstack: nvme: queue %u CID %d timed out%s; resetting the controller\n",
		q->qid, rq->tag,
		rq->timeouts > 1 ? " again after Abort" :
		ret ? " and Abort timed out" : ", Abort did not abort it");
	nvme_reset_ctrl(nh, st);
	nvme_queue_recover(q);
	return BLK_EH_DONE;
}

int blk_nvme_reset(struct blk_dev *dev)
{
	struct nvme_host *nh = blk_dev_driver_data(dev);

	return nvme_reset_ctrl(nh, atomic_load_explicit(&nh->state,
							memory_order_acquire));
}
