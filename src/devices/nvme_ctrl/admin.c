// SPDX-License-Identifier: MIT
/*
 * Admin command set (Base 5): Identify, Create / Delete I/O SQ and CQ,
 * Get / Set Features, Get Log Page, Abort, Asynchronous Event Request,
 * Keep Alive.
 *
 * Inline mode: runs under the admin CQ's lock; an I/O queue is changed
 * under its CQ's lock taken inside (lock order admin -> I/O).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl.h"

#define SF_GEN(sc) NVME_SF(NVME_SCT_GENERIC, (sc))
#define SF_CMD(sc) NVME_SF(NVME_SCT_CMD_SPECIFIC, (sc))
#define INVALID_FIELD (SF_GEN(NVME_SC_INVALID_FIELD) | NVME_SF_DNR)

static void pad_copy(char *dst, const char *src, size_t len)
{
	size_t n = strlen(src);

	memset(dst, ' ', len);
	memcpy(dst, src, n < len ? n : len);
}

/* ------------------------------------------------------------ Identify */

static uint16_t identify_ctrl(struct nvme_ctrl *ctrl, struct nvme_id_ctrl *id)
{
	id->vid = 0x1b36;       /* a PCI vendor used for emulated devices */
	id->ssvid = 0x1af4;
	pad_copy(id->sn, ctrl->sn, sizeof(id->sn));
	pad_copy(id->mn, ctrl->mn, sizeof(id->mn));
	pad_copy(id->fr, ctrl->fr, sizeof(id->fr));
	id->rab = 6;
	id->mdts = (uint8_t)ctrl->cfg.mdts;
	/* Command Retry Delay Times for CRD 1-3 (100 ms units): 0.1, 0.5, 1 s */
	id->crdt[0] = 1;
	id->crdt[1] = 5;
	id->crdt[2] = 10;
	id->cntlid = 1;
	id->ver = NVME_VS_2_0;
	id->cntrltype = 1;      /* I/O controller */
	id->oacs = 0;
	id->acl = (uint8_t)ctrl->cfg.acl;
	id->aerl = (uint8_t)ctrl->cfg.aerl;
	id->frmw = (1u << 1) | 1u;  /* one slot, slot 1 read only */
	id->lpa = 1u << 2;      /* extended NUMD and log page offset */
	id->elpe = NVME_CTRL_ERR_LOG - 1;
	id->npss = 0;
	id->wctemp = 343;
	id->cctemp = 373;
	id->sqes = 0x66;        /* 64-byte SQEs only */
	id->cqes = 0x44;        /* 16-byte CQEs only */
	id->maxcmd = 0;
	id->nn = ctrl->nr_ns;
	id->oncs = NVME_ONCS_COMPARE | NVME_ONCS_DSM | NVME_ONCS_WRITE_ZEROES;
	id->fuses = 0;
	/* VWC bits 2:1 = 11b: Flush with NSID FFFFFFFFh is supported */
	id->vwc = ctrl->vwc_present ? (NVME_VWC_PRESENT | 0x6) : 0;
	id->sgls = 0;
	snprintf(id->subnqn, sizeof(id->subnqn), "nqn.2026-11.org.blkstack:%s",
		 ctrl->sn);
	/* power state 0: 25 W max power (centiwatts), operational */
	id->psd[0][0] = 0xc4;
	id->psd[0][1] = 0x09;
	return 0;
}

static uint16_t identify_ns(struct nvme_ctrl *ctrl, uint32_t nsid,
			    struct nvme_id_ns *id)
{
	struct nvme_ns *ns;

	if (!nsid || nsid > ctrl->nr_ns)
		return SF_GEN(NVME_SC_INVALID_NS) | NVME_SF_DNR;
	ns = &ctrl->ns[nsid - 1];
	id->nsze = id->ncap = id->nuse = ns->nsze;
	id->nlbaf = 0;
	id->flbas = 0;
	id->lbaf[0].ds = (uint8_t)ns->lba_shift;
	id->lbaf[0].ms = 0;
	/* deallocated blocks read as zeroes; Write Zeroes may deallocate */
	if (ns->info.can_discard)
		id->dlfeat = 0x1 | (1u << 3);
	memcpy(id->nguid, ns->nguid, sizeof(id->nguid));
	memcpy(id->eui64, ns->eui64, sizeof(id->eui64));
	return 0;
}

static uint16_t identify_active_list(struct nvme_ctrl *ctrl, uint32_t nsid,
				     uint32_t *list)
{
	unsigned int i, n = 0;

	if (nsid >= 0xfffffffeu)
		return SF_GEN(NVME_SC_INVALID_NS) | NVME_SF_DNR;
	for (i = nsid + 1; i <= ctrl->nr_ns && n < 1024; i++)
		list[n++] = i;
	return 0;
}

static uint16_t identify_descs(struct nvme_ctrl *ctrl, uint32_t nsid,
			       uint8_t *p)
{
	struct nvme_ns *ns;
	struct nvme_ns_id_desc d = { 0 };

	if (!nsid || nsid > ctrl->nr_ns)
		return SF_GEN(NVME_SC_INVALID_NS) | NVME_SF_DNR;
	ns = &ctrl->ns[nsid - 1];
	d.nidt = NVME_NIDT_EUI64;
	d.nidl = 8;
	memcpy(p, &d, 4);
	memcpy(p + 4, ns->eui64, 8);
	p += 12;
	d.nidt = NVME_NIDT_NGUID;
	d.nidl = 16;
	memcpy(p, &d, 4);
	memcpy(p + 4, ns->nguid, 16);
	p += 20;
	d.nidt = NVME_NIDT_UUID;
	d.nidl = 16;
	memcpy(p, &d, 4);
	memcpy(p + 4, ns->uuid, 16);
	p += 20;
	d.nidt = NVME_NIDT_CSI;
	d.nidl = 1;
	memcpy(p, &d, 4);
	p[4] = 0;               /* NVM command set */
	return 0;
}

static uint16_t admin_identify(struct nvme_ctrl *ctrl, struct nvme_cmd *c)
{
	uint8_t buf[4096] __attribute__((aligned(8)));
	uint8_t cns = c->sqe.cdw10 & 0xff;
	uint16_t st;

	memset(buf, 0, sizeof(buf));
	switch (cns) {
	case NVME_ID_CNS_NS:
		st = identify_ns(ctrl, c->sqe.nsid, (struct nvme_id_ns *)buf);
		break;
	case NVME_ID_CNS_CTRL:
		st = identify_ctrl(ctrl, (struct nvme_id_ctrl *)buf);
		break;
	case NVME_ID_CNS_NS_ACTIVE_LIST:
		st = identify_active_list(ctrl, c->sqe.nsid, (uint32_t *)buf);
		break;
	case NVME_ID_CNS_NS_DESC_LIST:
		st = identify_descs(ctrl, c->sqe.nsid, buf);
		break;
	default:
		return INVALID_FIELD;
	}
	if (st)
		return st;
	return nvme_data_to_host(ctrl, c, buf, sizeof(buf));
}

/* ------------------------------------------------------------ queues */

/* Create I/O Completion Queue (Base 5.4). */
static uint16_t admin_create_cq(struct nvme_ctrl *ctrl, struct nvme_cmd *c)
{
	uint16_t qid = c->sqe.cdw10 & 0xffff;
	uint32_t size = (c->sqe.cdw10 >> 16) + 1;
	struct nvme_cq *cq;
	int ret;

	if (!qid || qid > ctrl->ncqa + 1 || qid >= ctrl->nr_qids ||
	    atomic_load_explicit(&ctrl->cq[qid].valid_size, memory_order_relaxed))
		return SF_CMD(NVME_SC_QID_INVALID) | NVME_SF_DNR;
	if (size < 2 || size > NVME_CAP_MQES(ctrl->cap) + 1)
		return SF_CMD(NVME_SC_QUEUE_SIZE) | NVME_SF_DNR;
	/* CAP.CQR = 1: queues must be physically contiguous */
	if (!(c->sqe.cdw11 & NVME_QUEUE_PHYS_CONTIG))
		return INVALID_FIELD;
	if (ctrl->iocqes != 4)
		return INVALID_FIELD;
	if (!c->sqe.prp1 || (c->sqe.prp1 & (ctrl->page_size - 1)))
		return INVALID_FIELD;
	cq = &ctrl->cq[qid];
	nvme_cq_lock(ctrl, cq);
	ret = nvme_cq_init(ctrl, cq, qid, c->sqe.prp1, size);
	nvme_cq_unlock(ctrl, cq);
	if (ret)
		return SF_GEN(NVME_SC_INTERNAL);
	ctrl->nr_io_queues++;
	return 0;
}

/* Create I/O Submission Queue (Base 5.5). */
static uint16_t admin_create_sq(struct nvme_ctrl *ctrl, struct nvme_cmd *c)
{
	uint16_t qid = c->sqe.cdw10 & 0xffff;
	uint32_t size = (c->sqe.cdw10 >> 16) + 1;
	uint16_t cqid = c->sqe.cdw11 >> 16;
	struct nvme_cq *cq;
	int ret;

	if (!qid || qid > ctrl->nsqa + 1 || qid >= ctrl->nr_qids ||
	    atomic_load_explicit(&ctrl->sq[qid].valid_size, memory_order_relaxed))
		return SF_CMD(NVME_SC_QID_INVALID) | NVME_SF_DNR;
	if (size < 2 || size > NVME_CAP_MQES(ctrl->cap) + 1)
		return SF_CMD(NVME_SC_QUEUE_SIZE) | NVME_SF_DNR;
	if (!cqid || cqid >= ctrl->nr_qids ||
	    !atomic_load_explicit(&ctrl->cq[cqid].valid_size, memory_order_relaxed))
		return SF_CMD(NVME_SC_CQ_INVALID) | NVME_SF_DNR;
	if (!(c->sqe.cdw11 & NVME_QUEUE_PHYS_CONTIG))
		return INVALID_FIELD;
	if (ctrl->iosqes != 6)
		return INVALID_FIELD;
	if (!c->sqe.prp1 || (c->sqe.prp1 & (ctrl->page_size - 1)))
		return INVALID_FIELD;
	cq = &ctrl->cq[cqid];
	nvme_cq_lock(ctrl, cq);
	ret = nvme_sq_init(ctrl, &ctrl->sq[qid], qid, cqid, c->sqe.prp1, size);
	nvme_cq_unlock(ctrl, cq);
	if (ret)
		return SF_GEN(NVME_SC_INTERNAL);
	ctrl->nr_io_queues++;
	return 0;
}

/* Delete I/O Submission Queue (Base 5.6). */
static uint16_t admin_delete_sq(struct nvme_ctrl *ctrl, struct nvme_cmd *c)
{
	uint16_t qid = c->sqe.cdw10 & 0xffff;
	struct nvme_sq *sq;
	struct nvme_cq *cq;

	if (!qid || qid >= ctrl->nr_qids ||
	    !atomic_load_explicit(&ctrl->sq[qid].valid_size, memory_order_relaxed))
		return SF_CMD(NVME_SC_QID_INVALID) | NVME_SF_DNR;
	sq = &ctrl->sq[qid];
	cq = &ctrl->cq[sq->cqid];
	nvme_cq_lock(ctrl, cq);
	/* namespace I/O of the queue completes (and posts) first */
	nvme_cq_drain_backend(ctrl, cq, false);
	nvme_sq_teardown(ctrl, sq, false);
	nvme_cq_unlock(ctrl, cq);
	ctrl->nr_io_queues--;
	return 0;
}

/* Delete I/O Completion Queue (Base 5.7). */
static uint16_t admin_delete_cq(struct nvme_ctrl *ctrl, struct nvme_cmd *c)
{
	uint16_t qid = c->sqe.cdw10 & 0xffff;
	struct nvme_cq *cq;

	if (!qid || qid >= ctrl->nr_qids ||
	    !atomic_load_explicit(&ctrl->cq[qid].valid_size, memory_order_relaxed))
		return SF_CMD(NVME_SC_QID_INVALID) | NVME_SF_DNR;
	cq = &ctrl->cq[qid];
	if (cq->nr_sqs)
		return SF_CMD(NVME_SC_QUEUE_DELETION) | NVME_SF_DNR;
	nvme_cq_lock(ctrl, cq);
	nvme_cq_teardown(ctrl, cq);
	nvme_cq_unlock(ctrl, cq);
	ctrl->nr_io_queues--;
	return 0;
}

/* ------------------------------------------------------------ features */

/* Get / Set Features (Base 5.15, 5.27). */
static uint16_t admin_features(struct nvme_ctrl *ctrl, struct nvme_cmd *c,
			       bool set, uint32_t *res)
{
	uint8_t fid = c->sqe.cdw10 & 0xff;
	uint32_t sel = (c->sqe.cdw10 >> 8) & 0x7;
	uint32_t v = c->sqe.cdw11;
	uint32_t *slot = NULL, def = 0;

	if (set && (c->sqe.cdw10 & (1u << 31)))
		return SF_CMD(NVME_SC_FEATURE_NOT_SAVEABLE) | NVME_SF_DNR;
	switch (fid) {
	case NVME_FEAT_ARBITRATION:
		slot = &ctrl->feat_arb;
		break;
	case NVME_FEAT_POWER_MGMT:
		if (set && (v & 0x1f) > 0)     /* NPSS = 0: only PS 0 */
			return INVALID_FIELD;
		slot = &ctrl->feat_pm;
		break;
	case NVME_FEAT_TEMP_THRESH:
		def = 343;
		slot = &ctrl->feat_temp;
		break;
	case NVME_FEAT_ERR_RECOVERY:
		slot = &ctrl->feat_err;
		break;
	case NVME_FEAT_IRQ_COALESCE:
		slot = &ctrl->feat_irqc;
		break;
	case NVME_FEAT_ASYNC_EVENT:
		slot = &ctrl->feat_aec;
		break;
	case NVME_FEAT_VOLATILE_WC:
		if (!ctrl->vwc_present) {
			if (set)
				return INVALID_FIELD;
			*res = 0;
			return 0;
		}
		if (set) {
			ctrl->vwc_on = v & 1;
			return 0;
		}
		*res = sel == 1 || sel == 2 ? 1 : sel == 3 ? 0x4 : ctrl->vwc_on;
		return 0;
	case NVME_FEAT_NUM_QUEUES:
		if (set) {
			uint32_t nsqr = v & 0xffff, ncqr = v >> 16;

			if (nsqr == 0xffff || ncqr == 0xffff)
				return INVALID_FIELD;
			/* fixed once I/O queues exist (Base 5.27.1.5) */
			if (ctrl->nr_io_queues)
				return SF_GEN(NVME_SC_CMD_SEQ_ERROR) | NVME_SF_DNR;
			ctrl->nsqa = nsqr < ctrl->cfg.max_io_queues - 1 ?
				nsqr : ctrl->cfg.max_io_queues - 1;
			ctrl->ncqa = ncqr < ctrl->cfg.max_io_queues - 1 ?
				ncqr : ctrl->cfg.max_io_queues - 1;
		}
		*res = (ctrl->ncqa << 16) | ctrl->nsqa;
		return 0;
	default:
		return INVALID_FIELD;
	}
	if (set) {
		*slot = v;
		return 0;
	}
	switch (sel) {
	case 0:
		*res = *slot;
		break;
	case 1:
	case 2:         /* no saveable features: saved = default */
		*res = def;
		break;
	case 3:
		*res = 0x4;     /* changeable, not saveable, not per namespace */
		break;
	default:
		return INVALID_FIELD;
	}
	return 0;
}

/* ------------------------------------------------------------ logs */

static void put128(uint8_t *dst, uint64_t v)
{
	memset(dst, 0, 16);
	memcpy(dst, &v, sizeof(v));
}

static size_t log_error(struct nvme_ctrl *ctrl, uint8_t *buf)
{
	struct nvme_error_log *out = (struct nvme_error_log *)buf;
	uint64_t i, n;

	blk_mutex_lock(&ctrl->log_lock);
	n = ctrl->err_count < NVME_CTRL_ERR_LOG ? ctrl->err_count : NVME_CTRL_ERR_LOG;
	/* newest first */
	for (i = 0; i < n; i++)
		out[i] = ctrl->errlog[(ctrl->err_count - 1 - i) % NVME_CTRL_ERR_LOG];
	blk_mutex_unlock(&ctrl->log_lock);
	return NVME_CTRL_ERR_LOG * sizeof(struct nvme_error_log);
}

static size_t log_smart(struct nvme_ctrl *ctrl, uint8_t *buf)
{
	struct nvme_smart_log *s = (struct nvme_smart_log *)buf;
	uint16_t temp = 310;    /* kelvin */
	uint64_t v;

#define RD(f) atomic_load_explicit(&ctrl->f, memory_order_relaxed)
	memcpy(s->temperature, &temp, 2);
	s->avail_spare = 100;
	s->spare_thresh = 10;
	/* thousands of 512-byte units, rounded up (Base Figure 207) */
	v = nvme_ctr_sum(ctrl, CTR_BYTES_READ) / 512;
	put128(s->data_units_read, (v + 999) / 1000);
	v = nvme_ctr_sum(ctrl, CTR_BYTES_WRITTEN) / 512;
	put128(s->data_units_written, (v + 999) / 1000);
	put128(s->host_reads, nvme_ctr_sum(ctrl, CTR_HOST_READS));
	put128(s->host_writes, nvme_ctr_sum(ctrl, CTR_HOST_WRITES));
	put128(s->power_cycles, 1);
	put128(s->power_on_hours, (nvme_now_ns() - ctrl->power_on_ns) / 3600000000000ull);
	blk_mutex_lock(&ctrl->log_lock);
	put128(s->num_err_log_entries, ctrl->err_count);
	blk_mutex_unlock(&ctrl->log_lock);
#undef RD
	return sizeof(*s);
}

static size_t log_fw(struct nvme_ctrl *ctrl, uint8_t *buf)
{
	struct nvme_fw_slot_log *f = (struct nvme_fw_slot_log *)buf;

	f->afi = 1;
	pad_copy(f->frs[0], ctrl->fr, sizeof(f->frs[0]));
	return sizeof(*f);
}

/* Get Log Page (Base 5.16): NUMD dwords from byte offset LPO, zero-filled. */
static uint16_t admin_get_log(struct nvme_ctrl *ctrl, struct nvme_cmd *c)
{
	uint8_t lid = c->sqe.cdw10 & 0xff;
	bool rae = c->sqe.cdw10 & (1u << 15);
	uint64_t numd = ((uint64_t)(c->sqe.cdw11 & 0xffff) << 16 |
			 (c->sqe.cdw10 >> 16)) + 1;
	uint64_t off = (uint64_t)c->sqe.cdw12 | ((uint64_t)c->sqe.cdw13 << 32);
	uint64_t len = numd * 4;
	uint8_t log[4096] __attribute__((aligned(8)));
	size_t size;
	uint8_t *out;
	uint16_t st;

	memset(log, 0, sizeof(log));
	switch (lid) {
	case NVME_LOG_ERROR:
		size = log_error(ctrl, log);
		break;
	case NVME_LOG_SMART:
		size = log_smart(ctrl, log);
		break;
	case NVME_LOG_FW_SLOT:
		size = log_fw(ctrl, log);
		break;
	default:
		return SF_CMD(NVME_SC_INVALID_LOG_PAGE) | NVME_SF_DNR;
	}
	if ((off & 3) || off >= size ||
	    (ctrl->mdts_bytes && len > ctrl->mdts_bytes))
		return INVALID_FIELD;
	out = calloc(1, len);
	if (!out)
		return SF_GEN(NVME_SC_INTERNAL);
	memcpy(out, log + off, size - off < len ? size - off : len);
	st = nvme_data_to_host(ctrl, c, out, len);
	free(out);
	/* reading the Error log with RAE = 0 re-arms Error events (Base 5.2) */
	if (!st && lid == NVME_LOG_ERROR && !rae)
		ctrl->ev_err_masked = false;    /* events fire after this CQE */
	return st;
}

/* ------------------------------------------------------------ Abort */

/*
 * Abort (Base 5.1): only commands that have not started to execute can be
 * aborted here: those held by a delay fault and those waiting for a
 * backend tag.  DW0 bit 0 = 0 when the command was aborted.
 */
static uint32_t admin_abort(struct nvme_ctrl *ctrl, struct nvme_cmd *c)
{
	uint16_t sqid = c->sqe.cdw10 & 0xffff, cid = c->sqe.cdw10 >> 16;
	struct nvme_sq *sq;
	struct nvme_cq *cq;
	struct nvme_cmd *t, **pp;
	uint32_t i, res = 1;

	if (sqid >= ctrl->nr_qids)
		return 1;
	sq = &ctrl->sq[sqid];
	if (!atomic_load_explicit(&sq->valid_size, memory_order_relaxed))
		return 1;
	cq = &ctrl->cq[sq->cqid];
	if (sqid)
		nvme_cq_lock(ctrl, cq);
	for (i = 0; i < sq->nr_init; i++) {
		t = &sq->cmds[i];
		if (t->sqe.cid != cid || t == c)
			continue;
		if (t->state == CMD_DELAYED) {
			for (pp = &cq->timers; *pp && *pp != t; pp = &(*pp)->next)
				;
			if (*pp)
				*pp = t->next;
		} else if (t->state == CMD_RETRY) {
			struct nvme_bctx *b = t->bctx;
			struct nvme_cmd *prev = NULL;

			for (pp = &b->retry_head; *pp && *pp != t; pp = &(*pp)->next)
				prev = *pp;
			if (*pp)
				*pp = t->next;
			if (b->retry_tail == t)
				b->retry_tail = prev;
		} else {
			continue;
		}
		t->next = NULL;
		t->state = CMD_EXEC;
		t->drop = false;
		nvme_cmd_complete(t, SF_GEN(NVME_SC_ABORT_REQ), 0);
		res = 0;
		break;
	}
	if (sqid)
		nvme_cq_unlock(ctrl, cq);
	return res;
}

/* ------------------------------------------------------------ AER */

/*
 * Complete one outstanding Asynchronous Event Request per pending event
 * (Base 5.2).  Error events are masked from the moment one is reported
 * until the host reads the Error Information log with RAE cleared.
 * Context: admin CQ lock held (inline mode) or the controller thread.
 */
void nvme_aer_run(struct nvme_ctrl *ctrl)
{
	while (ctrl->aer_head && !ctrl->ev_err_masked) {
		uint32_t pend = atomic_load_explicit(&ctrl->ev_err_pending,
						     memory_order_acquire);
		uint32_t bit, info;
		struct nvme_cmd *c;

		if (!pend)
			return;
		/* 00h: write to invalid doorbell register, 01h: invalid value */
		bit = (pend & 1) ? 1 : 2;
		info = bit == 1 ? 0x00 : 0x01;
		atomic_fetch_and_explicit(&ctrl->ev_err_pending, ~bit,
					  memory_order_relaxed);
		ctrl->ev_err_masked = true;
		c = ctrl->aer_head;
		ctrl->aer_head = c->next;
		if (!ctrl->aer_head)
			ctrl->aer_tail = NULL;
		ctrl->aer_out--;
		c->next = NULL;
		c->state = CMD_EXEC;
		nvme_cmd_complete(c, 0, 0x0 | (info << 8) | ((uint32_t)NVME_LOG_ERROR << 16));
	}
}

static void admin_aer(struct nvme_ctrl *ctrl, struct nvme_cmd *c)
{
	if (ctrl->aer_out >= ctrl->cfg.aerl + 1) {
		nvme_cmd_complete(c, SF_CMD(NVME_SC_ASYNC_LIMIT) | NVME_SF_DNR, 0);
		return;
	}
	c->state = CMD_AER;
	c->next = NULL;
	if (ctrl->aer_tail)
		ctrl->aer_tail->next = c;
	else
		ctrl->aer_head = c;
	ctrl->aer_tail = c;
	ctrl->aer_out++;
	nvme_aer_run(ctrl);
}

/* ------------------------------------------------------------ dispatch */

void nvme_admin_exec(struct nvme_cmd *c)
{
	struct nvme_ctrl *ctrl = c->sq->ctrl;
	uint8_t opc = c->sqe.opcode;
	uint32_t res = 0;
	uint16_t st;

	if (c->sqe.flags & (NVME_CMD_FUSE_MASK | NVME_CMD_PSDT_MASK)) {
		nvme_cmd_complete(c, INVALID_FIELD, 0);
		return;
	}
	switch (c->sqe.opcode) {
	case nvme_admin_identify:
		st = admin_identify(ctrl, c);
		break;
	case nvme_admin_create_cq:
		st = admin_create_cq(ctrl, c);
		break;
	case nvme_admin_create_sq:
		st = admin_create_sq(ctrl, c);
		break;
	case nvme_admin_delete_sq:
		st = admin_delete_sq(ctrl, c);
		break;
	case nvme_admin_delete_cq:
		st = admin_delete_cq(ctrl, c);
		break;
	case nvme_admin_get_features:
		st = admin_features(ctrl, c, false, &res);
		break;
	case nvme_admin_set_features:
		st = admin_features(ctrl, c, true, &res);
		break;
	case nvme_admin_get_log_page:
		st = admin_get_log(ctrl, c);
		break;
	case nvme_admin_abort:
		res = admin_abort(ctrl, c);
		st = 0;
		break;
	case nvme_admin_async_event:
		admin_aer(ctrl, c);
		return;
	case nvme_admin_keep_alive:
		st = 0;
		break;
	default:
		st = SF_GEN(NVME_SC_INVALID_OPCODE) | NVME_SF_DNR;
		break;
	}
	nvme_cmd_complete(c, st, res);
	if (opc == nvme_admin_get_log_page)
		nvme_aer_run(ctrl);
}
