// SPDX-License-Identifier: MIT
/*
 * Submission and completion queues: fetching SQEs (Base 3.3.1), posting
 * CQEs with phase tags (Base 4.6), the CQ full condition (Base 3.3.1.2: the
 * controller never overwrites an entry the host has not released through
 * the CQ head doorbell), command slots, delayed commands, queue teardown.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl.h"

void nvme_cq_lock(struct nvme_ctrl *ctrl, struct nvme_cq *cq)
{
	if (ctrl->inline_mode)
		blk_mutex_lock(&cq->lock);
}

void nvme_cq_unlock(struct nvme_ctrl *ctrl, struct nvme_cq *cq)
{
	if (ctrl->inline_mode)
		blk_mutex_unlock(&cq->lock);
}

struct nvme_cq *nvme_cmd_cq(struct nvme_cmd *c)
{
	return &c->sq->ctrl->cq[c->sq->cqid];
}

int nvme_cq_init(struct nvme_ctrl *ctrl, struct nvme_cq *cq, uint16_t qid,
		 uint64_t base, uint32_t size)
{
	cq->qid = qid;
	cq->size = size;
	cq->base = (volatile struct nvme_completion *)(uintptr_t)base;
	cq->tail = 0;
	cq->head = 0;
	cq->phase = 1;          /* Base 4.6: the first pass posts P = 1 */
	cq->nr_sqs = 0;
	cq->sqs = NULL;
	cq->wait_head = cq->wait_tail = NULL;
	cq->timers = NULL;
	cq->db_seen = 0;
	if (qid > ctrl->max_qid)
		ctrl->max_qid = qid;
	if (ctrl->inline_mode && qid && !cq->bctx) {
		cq->bctx = calloc(ctrl->nr_ns, sizeof(*cq->bctx));
		if (!cq->bctx)
			return -ENOMEM;
	}
	/* publish last: write32() checks doorbells against it without a lock */
	atomic_store_explicit(&cq->valid_size, size, memory_order_release);
	if (!ctrl->inline_mode)
		atomic_store_explicit(&ctrl->db[2 * qid + 1], 0, memory_order_relaxed);
	return 0;
}

int nvme_sq_init(struct nvme_ctrl *ctrl, struct nvme_sq *sq, uint16_t qid,
		 uint16_t cqid, uint64_t base, uint32_t size)
{
	struct nvme_cq *cq = &ctrl->cq[cqid];

	sq->cmds = calloc(size, sizeof(*sq->cmds));
	if (!sq->cmds)
		return -ENOMEM;
	sq->qid = qid;
	sq->cqid = cqid;
	sq->size = size;
	sq->base = (const volatile struct nvme_command *)(uintptr_t)base;
	sq->head = sq->tail = 0;
	sq->busy = 0;
	sq->free = NULL;
	/*
	 * Slots are set up as the queue first needs them (nvme_sq_fetch()):
	 * calloc()'s large blocks are fresh zero pages, committed when first
	 * touched, so an SQ of 65536 entries used a few at a time costs what
	 * it uses (256 such queues took 4 GB resident when every slot was
	 * linked up front).
	 */
	sq->nr_init = 0;
	if (qid > ctrl->max_qid)
		ctrl->max_qid = qid;
	sq->cq_next = cq->sqs;
	cq->sqs = sq;
	cq->nr_sqs++;
	if (!ctrl->inline_mode)
		atomic_store_explicit(&ctrl->db[2 * qid], 0, memory_order_relaxed);
	atomic_store_explicit(&sq->valid_size, size, memory_order_release);
	return 0;
}

void nvme_cmd_free(struct nvme_cmd *c)
{
	struct nvme_sq *sq = c->sq;

	if (c->buf) {
		free(c->buf);
		c->buf = NULL;
		c->buf_len = 0;
	}
	c->state = CMD_FREE;
	c->next = sq->free;
	sq->free = c;
	sq->busy--;
}

static inline bool cq_full(const struct nvme_cq *cq)
{
	uint32_t t = cq->tail + 1;

	if (t == cq->size)
		t = 0;
	return t == cq->head;
}

/*
 * Write one CQE: every field first, then DW3 (CID and status with the phase
 * tag) with a release store, so that a host that sees the new phase also
 * sees the rest of the entry (Base 4.6: the host detects new entries by P).
 */
static void cq_write(struct nvme_ctrl *ctrl, struct nvme_cq *cq,
		     struct nvme_cmd *c)
{
	volatile struct nvme_completion *e = &cq->base[cq->tail];
	uint32_t dw3 = (uint32_t)c->sqe.cid |
		((uint32_t)(((uint32_t)c->status << 1) | cq->phase) << 16);

	e->result = c->result;
	e->dw1 = 0;
	e->sq_head = (uint16_t)c->sq->head;
	e->sq_id = c->sq->qid;
	__atomic_store_n((uint32_t *)((uintptr_t)e + 12), dw3, __ATOMIC_RELEASE);
	if (++cq->tail == cq->size) {
		cq->tail = 0;
		cq->phase ^= 1;
	}
	cq_ctr(cq, CTR_COMPLETIONS, 1);
}

void nvme_cmd_complete(struct nvme_cmd *c, uint16_t status, uint32_t result)
{
	struct nvme_ctrl *ctrl = c->sq->ctrl;
	struct nvme_cq *cq = nvme_cmd_cq(c);

	if (atomic_load_explicit(&ctrl->resetting, memory_order_relaxed)) {
		/* controller reset: in-flight commands end without a CQE */
		nvme_cmd_free(c);
		return;
	}
	if (status) {
		cq_ctr(cq, CTR_ERRORS, 1);
		if (NVME_SF_SC(status) == NVME_SC_ABORT_REQ &&
		    NVME_SF_SCT(status) == NVME_SCT_GENERIC)
			cq_ctr(cq, CTR_ABORTED, 1);
		nvme_errlog_add(ctrl, c, status);
	}
	if (c->drop) {
		cq_ctr(cq, CTR_DROPPED, 1);
		nvme_cmd_free(c);
		return;
	}
	c->status = status;
	c->result = result;
	if (cq->wait_head || cq_full(cq)) {
		/* keep CQE order among waiters: no overtaking of older ones */
		c->state = CMD_POSTWAIT;
		c->next = NULL;
		if (cq->wait_tail)
			cq->wait_tail->next = c;
		else
			cq->wait_head = c;
		cq->wait_tail = c;
		return;
	}
	cq_write(ctrl, cq, c);
	nvme_cmd_free(c);
}

unsigned int nvme_cq_post_waiting(struct nvme_ctrl *ctrl, struct nvme_cq *cq)
{
	unsigned int n = 0;

	while (cq->wait_head && !cq_full(cq)) {
		struct nvme_cmd *c = cq->wait_head;

		cq->wait_head = c->next;
		if (!cq->wait_head)
			cq->wait_tail = NULL;
		cq_write(ctrl, cq, c);
		nvme_cmd_free(c);
		n++;
	}
	return n;
}

/*
 * A new CQ head (Base 3.1.3.26): it may release only entries the controller
 * posted; anything else is an Invalid Doorbell Write Value.
 */
bool nvme_cq_head_update(struct nvme_ctrl *ctrl, struct nvme_cq *cq,
			 uint32_t head)
{
	uint32_t posted = (cq->tail + cq->size - cq->head) % cq->size;
	uint32_t adv = (head + cq->size - cq->head) % cq->size;

	if (head >= cq->size || adv > posted)
		return false;
	cq->head = head;
	nvme_cq_post_waiting(ctrl, cq);
	return true;
}

bool nvme_sq_tail_update(struct nvme_ctrl *ctrl, struct nvme_sq *sq,
			 uint32_t tail)
{
	if (tail >= sq->size)
		return false;
	sq->tail = tail;
	return true;
}

/* Delayed commands: run those whose deadline passed. */
void nvme_timers_run(struct nvme_ctrl *ctrl, struct nvme_cq *cq, uint64_t now)
{
	struct nvme_cmd **pp = &cq->timers, *due = NULL, **dt = &due, *c;

	while ((c = *pp)) {
		if (c->deadline_ns <= now) {
			*pp = c->next;
			c->next = NULL;
			*dt = c;
			dt = &c->next;
		} else {
			pp = &c->next;
		}
	}
	while ((c = due)) {
		due = c->next;
		c->next = NULL;
		c->state = CMD_EXEC;
		nvme_exec(c);
	}
}

uint64_t nvme_timers_next(struct nvme_cq *cq)
{
	uint64_t t = UINT64_MAX;
	struct nvme_cmd *c;

	for (c = cq->timers; c; c = c->next)
		if (c->deadline_ns < t)
			t = c->deadline_ns;
	return t;
}

/* Execute a fetched command whose delay (if any) has passed. */
void nvme_exec(struct nvme_cmd *c)
{
	if (c->fault_status) {
		nvme_cmd_complete(c, c->fault_status, 0);
		return;
	}
	if (c->sq->qid == 0)
		nvme_admin_exec(c);
	else
		nvme_io_exec(c);
}

/*
 * Fetch up to @budget commands from @sq (Base 3.3.1.1) and start them.
 * Fetching stops early when every slot of the SQ is busy.
 */
unsigned int nvme_sq_fetch(struct nvme_ctrl *ctrl, struct nvme_sq *sq,
			   unsigned int budget)
{
	unsigned int n = 0;

	while (n < budget && sq->head != sq->tail &&
	       (sq->free || sq->nr_init < sq->size) &&
	       ctrl->enabled && !ctrl->shut_down &&
	       atomic_load_explicit(&sq->valid_size, memory_order_relaxed)) {
		struct nvme_cmd *c = sq->free;
		struct nvme_ctrl_fault act;

		if (!c) {
			/* a slot never used yet */
			c = &sq->cmds[sq->nr_init++];
			c->sq = sq;
		} else {
			sq->free = c->next;
		}
		sq->busy++;
		memcpy(&c->sqe, (const void *)&sq->base[sq->head], sizeof(c->sqe));
		if (++sq->head == sq->size)
			sq->head = 0;
		n++;
		cq_ctr(&ctrl->cq[sq->cqid], CTR_COMMANDS, 1);
		c->next = NULL;
		c->state = CMD_EXEC;
		c->drop = false;
		c->fault_status = 0;
		c->status = 0;
		c->result = 0;
		c->bctx = NULL;
		c->bounce = false;
		if (atomic_load_explicit(&ctrl->nr_faults, memory_order_relaxed) &&
		    nvme_fault_match(ctrl, sq->qid == 0, &c->sqe, sq->qid, &act)) {
			c->drop = act.drop;
			c->fault_status = act.status;
			if (act.delay_us) {
				struct nvme_cq *cq = nvme_cmd_cq(c);

				c->deadline_ns = nvme_now_ns() +
					(uint64_t)act.delay_us * 1000;
				c->state = CMD_DELAYED;
				c->next = cq->timers;
				cq->timers = c;
				continue;
			}
		}
		nvme_exec(c);
	}
	return n;
}

/*
 * One processing round of a CQ and its SQs (inline mode: under cq->lock):
 * due timers, fetch, dispatch the plugged bios, reap backend completions
 * (which post CQEs), until nothing moves.
 */
void nvme_cq_run(struct nvme_ctrl *ctrl, struct nvme_cq *cq)
{
	unsigned int round;

	if (!cq->qid)
		nvme_aer_run(ctrl);
	if (cq->timers)
		nvme_timers_run(ctrl, cq, nvme_now_ns());
	for (round = 0; round < 64; round++) {
		unsigned int n = 0;
		struct nvme_sq *sq;

		for (sq = cq->sqs; sq; sq = sq->cq_next)
			n += nvme_sq_fetch(ctrl, sq, NVME_CTRL_FETCH_BATCH);
		nvme_bctx_finish_plugs(ctrl, cq);
		n += nvme_bctx_poll(ctrl, cq);
		n += nvme_cq_post_waiting(ctrl, cq);
		if (!n)
			break;
	}
}

/* Remove the commands of @sq from a singly linked list. */
static struct nvme_cmd *list_take_sq(struct nvme_cmd **head,
				     struct nvme_cmd **tail,
				     const struct nvme_sq *sq)
{
	struct nvme_cmd **pp = head, *c, *out = NULL, *last = NULL;

	while ((c = *pp)) {
		if (c->sq == sq) {
			*pp = c->next;
			c->next = out;
			out = c;
		} else {
			last = c;
			pp = &c->next;
		}
	}
	if (tail)
		*tail = last;
	return out;
}

/*
 * Delete an SQ (Base 5.6) or tear it down in a reset.  Namespace I/O in
 * flight is drained first (caller), then delayed commands end with Command
 * Aborted due to SQ Deletion (silently in a reset), completions still
 * waiting for CQ room are discarded with the queue.
 * Context: the SQ's CQ lock held (inline mode).
 */
void nvme_sq_teardown(struct nvme_ctrl *ctrl, struct nvme_sq *sq, bool silent)
{
	struct nvme_cq *cq = &ctrl->cq[sq->cqid];
	struct nvme_sq **pp;
	struct nvme_cmd *c, *n;
	uint32_t i;

	if (!atomic_load_explicit(&sq->valid_size, memory_order_relaxed))
		return;
	c = list_take_sq(&cq->timers, NULL, sq);
	for (; c; c = n) {
		n = c->next;
		c->state = CMD_EXEC;
		if (silent)
			nvme_cmd_free(c);
		else
			nvme_cmd_complete(c, NVME_SF(NVME_SCT_GENERIC, NVME_SC_ABORT_QUEUE), 0);
	}
	c = list_take_sq(&cq->wait_head, &cq->wait_tail, sq);
	for (; c; c = n) {
		n = c->next;
		nvme_cmd_free(c);
	}
	atomic_store_explicit(&sq->valid_size, 0, memory_order_release);
	atomic_fetch_add_explicit(&ctrl->st_sq_db,
				  atomic_exchange(&sq->db_writes, 0), memory_order_relaxed);
	for (pp = &cq->sqs; *pp; pp = &(*pp)->cq_next) {
		if (*pp == sq) {
			*pp = sq->cq_next;
			break;
		}
	}
	cq->nr_sqs--;
	for (i = 0; i < sq->nr_init; i++) {
		free(sq->cmds[i].iov);
		free(sq->cmds[i].buf);
	}
	free(sq->cmds);
	sq->cmds = NULL;
	sq->free = NULL;
	sq->size = 0;
	sq->busy = 0;
}

/*
 * Delete a CQ (Base 5.7) or tear it down in a reset: its SQs are gone
 * already; drop what still waits and release the backend contexts so that
 * their hardware queues can serve the next CQ.
 * Context: the CQ lock held (inline mode).
 */
void nvme_cq_teardown(struct nvme_ctrl *ctrl, struct nvme_cq *cq)
{
	unsigned int i;

	if (!atomic_load_explicit(&cq->valid_size, memory_order_relaxed))
		return;
	atomic_store_explicit(&cq->valid_size, 0, memory_order_release);
	atomic_fetch_add_explicit(&ctrl->st_cq_db,
				  atomic_exchange(&cq->db_writes, 0), memory_order_relaxed);
	for (i = 0; i < CTR_NR; i++)
		atomic_fetch_add_explicit(&ctrl->ctr_base[i],
					  atomic_exchange(&cq->ctr[i], 0),
					  memory_order_relaxed);
	if (cq->bctx) {
		for (i = 0; i < ctrl->nr_ns; i++) {
			if (cq->bctx[i].ctx) {
				blk_ctx_detach(cq->bctx[i].ctx);
				cq->bctx[i].ctx = NULL;
			}
			cq->bctx[i].retry_head = cq->bctx[i].retry_tail = NULL;
			cq->bctx[i].plugged = false;
		}
	}
	cq->wait_head = cq->wait_tail = NULL;
	cq->timers = NULL;
	cq->size = 0;
}
