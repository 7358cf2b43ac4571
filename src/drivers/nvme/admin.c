// SPDX-License-Identifier: MIT
/*
 * nvme host driver: controller enable/disable (Base 3.5.1, 3.5.2), the
 * admin queue and the admin commands the driver sends (Identify, Set
 * Features Number of Queues, Create I/O CQ/SQ).
 *
 * Admin commands are synchronous: one at a time under admin_lock, submitted
 * with one SQ tail doorbell and polled for on the admin CQ until the
 * admin timeout.  Several threads may need the admin queue at once (queue
 * recovery after a reset runs on each queue's owner thread), hence the
 * mutex; none of this is on the I/O fast path.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "nvme_host.h"

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Back off while waiting on the controller: spin a little, then sleep. */
static void nvme_wait_step(unsigned int *spins)
{
	if (++*spins < 64) {
		sched_yield();
		return;
	}
	struct timespec ts = { 0, 20 * 1000 };

	nanosleep(&ts, NULL);
}

/*
 * Zeroed, page-aligned memory the controller may read and write.  Large
 * regions are anonymous mappings, committed by the kernel page by page as
 * they are first touched: a 65536-entry queue costs what its used entries
 * take, not its size (256 queues x 65536 entries made a 1 MiB read take
 * 9.4 GB resident when every byte was cleared up front).
 */
#define NVME_MMAP_MIN (64u * 1024)

static size_t nvme_pages_len(size_t bytes)
{
	size_t len = (bytes + NVME_HOST_PAGE - 1) & ~(size_t)(NVME_HOST_PAGE - 1);

	return len ? len : NVME_HOST_PAGE;
}

void *nvme_alloc_pages(size_t bytes)
{
	size_t len = nvme_pages_len(bytes);
	void *p;

	if (len >= NVME_MMAP_MIN) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	p = aligned_alloc(NVME_HOST_PAGE, len);
	if (p)
		memset(p, 0, len);
	return p;
}

void nvme_free_pages(void *p, size_t bytes)
{
	size_t len = nvme_pages_len(bytes);

	if (!p)
		return;
	if (len >= NVME_MMAP_MIN)
		munmap(p, len);
	else
		free(p);
}

/* Wait for CSTS.RDY == @rdy within CAP.TO.  -EIO on CSTS.CFS. */
static int nvme_wait_ready(struct nvme_host *nh, bool rdy)
{
	uint64_t end = now_ms() + nh->timeout_ms;
	unsigned int spins = 0;

	for (;;) {
		uint32_t csts = nvme_ctrl_read32(nh->ctrl, NVME_REG_CSTS);

		if (csts == 0xffffffffu)
			return -ENODEV;
		if (rdy && (csts & NVME_CSTS_CFS))
			return -EIO;
		if (!!(csts & NVME_CSTS_RDY) == rdy)
			return 0;
		if (now_ms() > end)
			return -ETIMEDOUT;
		nvme_wait_step(&spins);
	}
}

/*
 * Base 3.5.2: clear CC.EN and wait for CSTS.RDY = 0.  After that the
 * controller writes no more CQEs or data (nvme_ctrl.h), so queue memory may
 * be reused or freed.  A controller still transitioning (EN = 0 but RDY = 1)
 * is waited for as well.
 */
int nvme_ctrl_disable(struct nvme_host *nh)
{
	uint32_t cc = nvme_ctrl_read32(nh->ctrl, NVME_REG_CC);
	uint32_t csts = nvme_ctrl_read32(nh->ctrl, NVME_REG_CSTS);

	if (!(cc & NVME_CC_EN) && !(csts & NVME_CSTS_RDY))
		return 0;
	if ((cc & NVME_CC_EN) && !(csts & NVME_CSTS_RDY) &&
	    !(csts & NVME_CSTS_CFS)) {
		/* enabling in progress: let it finish before clearing EN */
		nvme_wait_ready(nh, true);
	}
	nvme_ctrl_write32(nh->ctrl, NVME_REG_CC, cc & ~(NVME_CC_EN | NVME_CC_SHN_MASK));
	return nvme_wait_ready(nh, false);
}

/*
 * Base 3.6.1: normal shutdown - CC.SHN = 01b, wait for CSTS.SHST = 10b
 * (the controller flushes its volatile write cache), bounded by CAP.TO.
 * Only on an enabled, live controller.  Return 0 or -ETIMEDOUT.
 */
int nvme_ctrl_shutdown(struct nvme_host *nh)
{
	uint64_t end = now_ms() + nh->timeout_ms;
	uint32_t cc = nvme_ctrl_read32(nh->ctrl, NVME_REG_CC);
	unsigned int spins = 0;

	if (!(cc & NVME_CC_EN) ||
	    (nvme_ctrl_read32(nh->ctrl, NVME_REG_CSTS) & NVME_CSTS_CFS))
		return 0;
	cc = (cc & ~NVME_CC_SHN_MASK) | NVME_CC_SHN_NORMAL;
	nvme_ctrl_write32(nh->ctrl, NVME_REG_CC, cc);
	for (;;) {
		uint32_t csts = nvme_ctrl_read32(nh->ctrl, NVME_REG_CSTS);

		if ((csts & NVME_CSTS_SHST_MASK) == NVME_CSTS_SHST_CMPLT)
			return 0;
		if (now_ms() > end)
			return -ETIMEDOUT;
		nvme_wait_step(&spins);
	}
}

/*
 * Base 3.5.1 steps 1-6: disable, set up the admin queue (AQA, ASQ, ACQ),
 * write CC (MPS for 4 KiB pages, IOSQES 6, IOCQES 4, NVM command set) with
 * EN, wait for RDY.
 */
int nvme_ctrl_enable(struct nvme_host *nh, char *err, size_t errlen)
{
	struct nvme_admin_queue *aq = &nh->aq;
	uint32_t cc;
	int ret;

	ret = nvme_ctrl_disable(nh);
	if (ret) {
		snprintf(err, errlen, "nvme: disable: CSTS.RDY stayed 1 for CAP.TO (%u ms): %s",
			 nh->timeout_ms, strerror(-ret));
		return ret;
	}
	memset(aq->sq, 0, (size_t)aq->depth * sizeof(*aq->sq));
	memset(aq->cq, 0, (size_t)aq->depth * sizeof(*aq->cq));
	aq->sq_tail = 0;
	aq->cq_head = 0;
	aq->cq_phase = 1;
	nvme_ctrl_write32(nh->ctrl, NVME_REG_AQA, NVME_AQA(aq->depth, aq->depth));
	nvme_ctrl_write64(nh->ctrl, NVME_REG_ASQ, (uint64_t)(uintptr_t)aq->sq);
	nvme_ctrl_write64(nh->ctrl, NVME_REG_ACQ, (uint64_t)(uintptr_t)aq->cq);
	cc = NVME_CC_CSS_NVM | (0u << NVME_CC_MPS_SHIFT) | NVME_CC_SHN_NONE |
	     (6u << NVME_CC_IOSQES_SHIFT) | (4u << NVME_CC_IOCQES_SHIFT);
	nvme_ctrl_write32(nh->ctrl, NVME_REG_CC, cc);
	nvme_ctrl_write32(nh->ctrl, NVME_REG_CC, cc | NVME_CC_EN);
	ret = nvme_wait_ready(nh, true);
	if (ret == -EIO)
		snprintf(err, errlen, "nvme: enable: controller fatal status (CSTS.CFS)");
	else if (ret)
		snprintf(err, errlen, "nvme: enable: CSTS.RDY did not become 1 within CAP.TO (%u ms)",
			 nh->timeout_ms);
	return ret;
}

/*
 * Submit one admin command and poll the admin CQ for its completion.
 * Completions for other CIDs (none are expected: one command at a time,
 * no AERs) are consumed and ignored.  Return 0 with *@sf the status field
 * (0 success), -ETIMEDOUT, or -ENODEV when the controller is dead.
 */
int nvme_admin_cmd_locked(struct nvme_host *nh, struct nvme_command *cmd,
			  uint32_t *result, uint16_t *sf)
{
	struct nvme_admin_queue *aq = &nh->aq;
	uint32_t sqdb = nvme_sq_tail_doorbell(0, nh->dstrd);
	uint32_t cqdb = nvme_cq_head_doorbell(0, nh->dstrd);
	uint64_t end = now_ms() + nh->cfg.admin_timeout_ms;
	unsigned int spins = 0;
	uint16_t cid = aq->next_cid++;

	cmd->cid = cid;
	aq->sq[aq->sq_tail] = *cmd;
	if (++aq->sq_tail == aq->depth)
		aq->sq_tail = 0;
	nvme_ctrl_write32(nh->ctrl, sqdb, aq->sq_tail);
	for (;;) {
		struct nvme_completion *cqe = &aq->cq[aq->cq_head];
		uint32_t dw3 = nvme_cqe_dw3(cqe);
		uint16_t st = (uint16_t)(dw3 >> 16);

		if ((st & NVME_CQE_PHASE) == aq->cq_phase) {
			bool mine = (uint16_t)dw3 == cid;
			uint32_t res = cqe->result;

			if (++aq->cq_head == aq->depth) {
				aq->cq_head = 0;
				aq->cq_phase ^= 1;
			}
			nvme_ctrl_write32(nh->ctrl, cqdb, aq->cq_head);
			if (mine) {
				if (result)
					*result = res;
				*sf = nvme_cqe_sf(st) & 0x7ff; /* SCT and SC */
				return 0;
			}
			continue;
		}
		if (now_ms() > end)
			return -ETIMEDOUT;
		if (nvme_ctrl_read32(nh->ctrl, NVME_REG_CSTS) & NVME_CSTS_CFS)
			return -ENODEV;
		/* inline controllers make progress on this write (nvme_ctrl.h) */
		nvme_ctrl_write32(nh->ctrl, cqdb, aq->cq_head);
		nvme_wait_step(&spins);
	}
}

int nvme_admin_cmd(struct nvme_host *nh, struct nvme_command *cmd,
		   uint32_t *result, uint16_t *sf)
{
	int ret;

	blk_mutex_lock(&nh->admin_lock);
	ret = nvme_admin_cmd_locked(nh, cmd, result, sf);
	blk_mutex_unlock(&nh->admin_lock);
	return ret;
}

/* Run an admin command; on failure name @what and the status in @err. */
static int nvme_admin_checked(struct nvme_host *nh, struct nvme_command *cmd,
			      uint32_t *result, const char *what, char *err,
			      size_t errlen)
{
	uint16_t sf = 0;
	int ret = nvme_admin_cmd_locked(nh, cmd, result, &sf);

	if (ret) {
		snprintf(err, errlen, "nvme: %s: %s", what,
			 ret == -ETIMEDOUT ? "admin command timed out" :
					     "controller fatal status");
		return ret == -ETIMEDOUT ? -ETIMEDOUT : -EIO;
	}
	if (sf) {
		snprintf(err, errlen,
			 "nvme: %s failed: status SCT %u SC 0x%02x", what,
			 NVME_SF_SCT(sf), NVME_SF_SC(sf));
		return -EIO;
	}
	return 0;
}

/* Base 5.27.1.7: Number of Queues; *@got = min(SQs, CQs) allocated. */
int nvme_set_queue_count(struct nvme_host *nh, uint32_t want, uint32_t *got,
			 char *err, size_t errlen)
{
	struct nvme_command c = { 0 };
	uint32_t res = 0, nsqa, ncqa;
	int ret;

	c.opcode = nvme_admin_set_features;
	c.cdw10 = NVME_FEAT_NUM_QUEUES;
	c.cdw11 = (want - 1) | ((want - 1) << 16);
	ret = nvme_admin_checked(nh, &c, &res, "Set Features Number of Queues",
				 err, errlen);
	if (ret)
		return ret;
	nsqa = (res & 0xffff) + 1;
	ncqa = (res >> 16) + 1;
	*got = want;
	if (nsqa < *got)
		*got = nsqa;
	if (ncqa < *got)
		*got = ncqa;
	return 0;
}

/* Base 5.4 and 5.5: one CQ and its SQ, same qid, physically contiguous. */
int nvme_create_io_queue_locked(struct nvme_host *nh, struct nvme_queue *q,
				char *err, size_t errlen)
{
	struct nvme_command c = { 0 };
	int ret;

	c.opcode = nvme_admin_create_cq;
	c.prp1 = (uint64_t)(uintptr_t)q->cq;
	c.cdw10 = ((uint32_t)(q->depth - 1) << 16) | q->qid;
	c.cdw11 = NVME_QUEUE_PHYS_CONTIG; /* polled: no interrupts */
	ret = nvme_admin_checked(nh, &c, NULL, "Create I/O Completion Queue",
				 err, errlen);
	if (ret)
		return ret;
	memset(&c, 0, sizeof(c));
	c.opcode = nvme_admin_create_sq;
	c.prp1 = (uint64_t)(uintptr_t)q->sq;
	c.cdw10 = ((uint32_t)(q->depth - 1) << 16) | q->qid;
	c.cdw11 = ((uint32_t)q->qid << 16) | NVME_QUEUE_PHYS_CONTIG;
	return nvme_admin_checked(nh, &c, NULL, "Create I/O Submission Queue",
				  err, errlen);
}

/*
 * Identify Controller (MDTS, VWC, ONCS, ACL), the active namespace list,
 * Identify Namespace (NSZE, FLBAS -> LBA format).  Fills nh.
 */
int nvme_identify(struct nvme_host *nh, char *err, size_t errlen)
{
	struct nvme_id_ctrl *id = nvme_alloc_pages(sizeof(*id));
	struct nvme_id_ns *ns = nvme_alloc_pages(sizeof(*ns));
	uint32_t *list = nvme_alloc_pages(NVME_HOST_PAGE);
	struct nvme_command c = { 0 };
	uint64_t mdts_bytes = 0;
	uint32_t nsid = 0, i, ds;
	struct nvme_lbaf *lbaf;
	int ret = -ENOMEM;

	if (!id || !ns || !list) {
		snprintf(err, errlen, "nvme: out of memory for Identify");
		goto out;
	}
	c.opcode = nvme_admin_identify;
	c.prp1 = (uint64_t)(uintptr_t)id;
	c.cdw10 = NVME_ID_CNS_CTRL;
	ret = nvme_admin_checked(nh, &c, NULL, "Identify Controller", err, errlen);
	if (ret)
		goto out;
	if (id->mdts)
		mdts_bytes = (uint64_t)NVME_HOST_PAGE
			     << (NVME_CAP_MPSMIN(nh->cap) + id->mdts);
	nh->vwc = id->vwc & NVME_VWC_PRESENT;
	nh->oncs = id->oncs;
	nh->acl = id->acl;
	memcpy(nh->crdt, id->crdt, sizeof(nh->crdt));

	memset(&c, 0, sizeof(c));
	c.opcode = nvme_admin_identify;
	c.prp1 = (uint64_t)(uintptr_t)list;
	c.cdw10 = NVME_ID_CNS_NS_ACTIVE_LIST;
	ret = nvme_admin_checked(nh, &c, NULL, "Identify active namespace list",
				 err, errlen);
	if (ret)
		goto out;
	for (i = 0; i < NVME_HOST_PAGE / 4 && list[i]; i++) {
		if (!nh->cfg.nsid || list[i] == nh->cfg.nsid) {
			nsid = list[i];
			break;
		}
	}
	if (!nsid) {
		if (nh->cfg.nsid)
			snprintf(err, errlen, "nvme: namespace %u is not active",
				 nh->cfg.nsid);
		else
			snprintf(err, errlen, "nvme: the controller has no active namespace");
		ret = -ENODEV;
		goto out;
	}
	memset(&c, 0, sizeof(c));
	c.opcode = nvme_admin_identify;
	c.nsid = nsid;
	c.prp1 = (uint64_t)(uintptr_t)ns;
	c.cdw10 = NVME_ID_CNS_NS;
	ret = nvme_admin_checked(nh, &c, NULL, "Identify Namespace", err, errlen);
	if (ret)
		goto out;
	lbaf = &ns->lbaf[NVME_FLBAS_INDEX(ns->flbas)];
	ds = lbaf->ds;
	if (ds < 9 || ds > 16 || lbaf->ms || !ns->nsze) {
		snprintf(err, errlen,
			 "nvme: namespace %u: unsupported format (LBA data size 2^%u, metadata %u, NSZE %llu)",
			 nsid, ds, lbaf->ms, (unsigned long long)ns->nsze);
		ret = -ENODEV;
		goto out;
	}
	nh->nsid = nsid;
	nh->lba_shift = ds;
	nh->nsze = ns->nsze;
	/* largest transfer: MDTS, 65536 blocks of NLB, 2 GiB of the core */
	nh->max_bytes = 1u << 31;
	if ((65536ull << ds) < nh->max_bytes)
		nh->max_bytes = (uint32_t)(65536ull << ds);
	if (mdts_bytes && mdts_bytes < nh->max_bytes)
		nh->max_bytes = (uint32_t)mdts_bytes;
	ret = 0;
out:
	nvme_free_pages(id, sizeof(*id));
	nvme_free_pages(ns, sizeof(*ns));
	nvme_free_pages(list, NVME_HOST_PAGE);
	return ret;
}
