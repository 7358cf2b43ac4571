// SPDX-License-Identifier: MIT
/*
 * Fault injection rules, the Error Information log (Base 5.16.1.2) and the
 * controller counters.
 */
#include <errno.h>
#include <string.h>

#include "ctrl.h"

/* Rules are kept packed in order: faults[0 .. nr_faults - 1]. */
int nvme_ctrl_add_fault(struct nvme_ctrl *ctrl, const struct nvme_ctrl_fault *f)
{
	uint32_t n;
	int ret = -ENOSPC;

	if (!ctrl || !f || f->opcode < -1 || f->opcode > 0xff ||
	    f->qid < -1 || f->qid > 0xffff ||
	    (f->admin && f->qid > 0) || (!f->admin && f->qid == 0) ||
	    (f->nlb && f->slba + f->nlb < f->slba) ||
	    (f->status & ~(0x7fffu)))
		return -EINVAL;
	blk_mutex_lock(&ctrl->fault_lock);
	n = atomic_load_explicit(&ctrl->nr_faults, memory_order_relaxed);
	if (n < NVME_CTRL_NR_FAULTS) {
		ctrl->faults[n].f = *f;
		ctrl->faults[n].used = true;
		atomic_store_explicit(&ctrl->nr_faults, n + 1, memory_order_release);
		ret = 0;
	}
	blk_mutex_unlock(&ctrl->fault_lock);
	return ret;
}

void nvme_ctrl_clear_faults(struct nvme_ctrl *ctrl)
{
	blk_mutex_lock(&ctrl->fault_lock);
	memset(ctrl->faults, 0, sizeof(ctrl->faults));
	atomic_store_explicit(&ctrl->nr_faults, 0, memory_order_release);
	blk_mutex_unlock(&ctrl->fault_lock);
}

/* The LBA range an I/O command touches, or false for none (Flush, DSM). */
static bool cmd_range(const struct nvme_command *sqe, uint64_t *slba,
		      uint64_t *nlb)
{
	switch (sqe->opcode) {
	case nvme_cmd_read:
	case nvme_cmd_write:
	case nvme_cmd_compare:
	case nvme_cmd_write_zeroes:
		*slba = (uint64_t)sqe->cdw10 | ((uint64_t)sqe->cdw11 << 32);
		*nlb = (sqe->cdw12 & NVME_RW_NLB_MASK) + 1;
		return true;
	default:
		return false;
	}
}

/*
 * First rule matching the command acts; a rule with a count is removed
 * after that many matches.  Called only when a rule exists.
 */
bool nvme_fault_match(struct nvme_ctrl *ctrl, bool admin,
		      const struct nvme_command *sqe, uint16_t qid,
		      struct nvme_ctrl_fault *act)
{
	uint32_t i, n;
	bool hit = false;

	blk_mutex_lock(&ctrl->fault_lock);
	n = atomic_load_explicit(&ctrl->nr_faults, memory_order_relaxed);
	for (i = 0; i < n && !hit; i++) {
		struct nvme_ctrl_fault_rule *r = &ctrl->faults[i];
		uint64_t slba, nlb;

		if (!r->used || r->f.admin != admin)
			continue;
		if (r->f.opcode >= 0 && r->f.opcode != sqe->opcode)
			continue;
		if (r->f.qid >= 0 && r->f.qid != qid)
			continue;
		if (r->f.nsid && r->f.nsid != sqe->nsid)
			continue;
		if (!admin && r->f.nlb) {
			if (!cmd_range(sqe, &slba, &nlb))
				continue;
			if (slba >= r->f.slba + r->f.nlb || slba + nlb <= r->f.slba)
				continue;
		}
		*act = r->f;
		hit = true;
		if (r->f.count && --r->f.count == 0) {
			memmove(r, r + 1, (n - i - 1) * sizeof(*r));
			atomic_store_explicit(&ctrl->nr_faults, n - 1,
					      memory_order_release);
		}
	}
	blk_mutex_unlock(&ctrl->fault_lock);
	return hit;
}

/*
 * Record a failed command in the Error Information log: a ring of
 * NVME_CTRL_ERR_LOG entries, each with a unique, increasing Error Count.
 */
void nvme_errlog_add(struct nvme_ctrl *ctrl, const struct nvme_cmd *c,
		     uint16_t status)
{
	struct nvme_error_log *e;

	blk_mutex_lock(&ctrl->log_lock);
	e = &ctrl->errlog[ctrl->err_count % NVME_CTRL_ERR_LOG];
	memset(e, 0, sizeof(*e));
	e->error_count = ++ctrl->err_count;
	e->sqid = c->sq->qid;
	e->cid = c->sqe.cid;
	e->status_field = (uint16_t)(status << 1);
	e->param_error_location = 0xffff;   /* not reported */
	e->nsid = c->sqe.nsid;
	if (c->sq->qid) {
		switch (c->sqe.opcode) {
		case nvme_cmd_read:
		case nvme_cmd_write:
		case nvme_cmd_compare:
		case nvme_cmd_write_zeroes:
			e->lba = (uint64_t)c->sqe.cdw10 | ((uint64_t)c->sqe.cdw11 << 32);
			break;
		default:
			break;
		}
	}
	e->log_page_version = 1;
	blk_mutex_unlock(&ctrl->log_lock);
}

/* A counter: deleted CQs' totals plus the live CQs'. */
uint64_t nvme_ctr_sum(const struct nvme_ctrl *ctrl, enum nvme_ctr i)
{
	uint64_t v = atomic_load_explicit(&ctrl->ctr_base[i], memory_order_relaxed);
	uint32_t q;

	for (q = 0; q < ctrl->nr_qids; q++)
		v += atomic_load_explicit(&ctrl->cq[q].ctr[i], memory_order_relaxed);
	return v;
}

void nvme_ctrl_get_stats(const struct nvme_ctrl *ctrl,
			 struct nvme_ctrl_stats *st)
{
	struct nvme_ctrl *c = (struct nvme_ctrl *)ctrl;

#define RD(f) atomic_load_explicit(&c->f, memory_order_relaxed)
	st->commands = nvme_ctr_sum(ctrl, CTR_COMMANDS);
	st->completions = nvme_ctr_sum(ctrl, CTR_COMPLETIONS);
	st->sq_doorbells = RD(st_sq_db);
	st->cq_doorbells = RD(st_cq_db);
	/* plus the live per-queue counters (folded in when a queue goes) */
	for (uint32_t q = 0; q < c->nr_qids; q++) {
		st->sq_doorbells += RD(sq[q].db_writes);
		st->cq_doorbells += RD(cq[q].db_writes);
	}
	st->errors = nvme_ctr_sum(ctrl, CTR_ERRORS);
	st->dropped = nvme_ctr_sum(ctrl, CTR_DROPPED);
	st->aborted = nvme_ctr_sum(ctrl, CTR_ABORTED);
	st->resets = RD(st_resets);
	st->shutdowns = RD(st_shutdowns);
	st->invalid_doorbells = RD(st_invalid_db);
#undef RD
}
