// SPDX-License-Identifier: MIT
/*
 * Controller registers (Base 3.1.3), the enable / reset / shutdown state
 * machine (Base 3.5, 3.6, 3.7) and the two ways of running: a polling
 * controller thread, or inline on the register writer's thread.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blkstack/version.h"
#include "ctrl.h"

uint64_t nvme_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* ------------------------------------------------------ state machine */

static void set_csts(struct nvme_ctrl *ctrl, uint32_t v)
{
	atomic_store_explicit(&ctrl->csts, v, memory_order_release);
}

static void fatal(struct nvme_ctrl *ctrl)
{
	/* CSTS.CFS: the host sees it while waiting for RDY and resets */
	set_csts(ctrl, atomic_load(&ctrl->csts) | NVME_CSTS_CFS);
}

/*
 * CC.EN 0 -> 1 (Base 3.5.1): check the configuration the host wrote and
 * bring up the admin queue.  An unsupported configuration (page size
 * outside MPSMIN..MPSMAX, a command set or arbitration mechanism CAP does
 * not offer, admin queue sizes below 2 entries, queue bases that are not
 * page aligned) sets CSTS.CFS and leaves RDY clear: a controller cannot
 * run that way, and CFS is what a host checks while waiting for RDY.
 */
static void ctrl_enable(struct nvme_ctrl *ctrl, uint32_t cc)
{
	uint32_t mps = (cc & NVME_CC_MPS_MASK) >> NVME_CC_MPS_SHIFT;
	uint32_t aqa = atomic_load(&ctrl->aqa);
	uint32_t asqs = NVME_AQA_ASQS(aqa) + 1, acqs = NVME_AQA_ACQS(aqa) + 1;
	uint64_t asq = atomic_load(&ctrl->asq), acq = atomic_load(&ctrl->acq);
	uint64_t ps;
	struct nvme_cq *acq_q = &ctrl->cq[0];
	int ret;

	if (mps < ctrl->cfg.mpsmin || mps > ctrl->cfg.mpsmax ||
	    (cc & NVME_CC_CSS_MASK) != NVME_CC_CSS_NVM ||
	    (cc & NVME_CC_AMS_MASK) != 0 || asqs < 2 || acqs < 2) {
		fatal(ctrl);
		return;
	}
	ps = 4096ull << mps;
	if (!asq || !acq || (asq & (ps - 1)) || (acq & (ps - 1))) {
		fatal(ctrl);
		return;
	}
	ctrl->page_shift = 12 + mps;
	/* checked when I/O queues are created (Base 3.1.3.5) */
	ctrl->iosqes = (cc & NVME_CC_IOSQES_MASK) >> NVME_CC_IOSQES_SHIFT;
	ctrl->iocqes = (cc & NVME_CC_IOCQES_MASK) >> NVME_CC_IOCQES_SHIFT;
	ctrl->page_size = ps;
	ctrl->mdts_bytes = (4096ull << ctrl->cfg.mpsmin) << ctrl->cfg.mdts;
	ctrl->nsqa = ctrl->ncqa = ctrl->cfg.max_io_queues - 1;
	ctrl->nr_io_queues = 0;
	ctrl->max_qid = 0;
	ctrl->feat_arb = ctrl->feat_pm = ctrl->feat_err = 0;
	ctrl->feat_irqc = ctrl->feat_aec = 0;
	ctrl->feat_temp = 343;
	ctrl->vwc_on = ctrl->vwc_present;
	ctrl->ev_err_masked = false;
	atomic_store(&ctrl->ev_err_pending, 0);
	ctrl->aer_head = ctrl->aer_tail = NULL;
	ctrl->aer_out = 0;
	nvme_cq_lock(ctrl, acq_q);
	ret = nvme_cq_init(ctrl, acq_q, 0, acq, acqs);
	if (!ret)
		ret = nvme_sq_init(ctrl, &ctrl->sq[0], 0, 0, asq, asqs);
	if (ret)
		nvme_cq_teardown(ctrl, acq_q);
	nvme_cq_unlock(ctrl, acq_q);
	if (ret) {
		fatal(ctrl);
		return;
	}
	atomic_store(&ctrl->shut_down, false);
	atomic_store(&ctrl->enabled, true);
	set_csts(ctrl, NVME_CSTS_RDY);
}

/*
 * CC.EN 1 -> 0, a Controller Reset (Base 3.7.2): stop fetching, let the
 * namespace I/O in flight finish without posting CQEs, delete every I/O
 * queue, reset the admin queue, and only then clear CSTS.RDY: once the
 * host reads RDY = 0 the controller writes no host memory.
 */
static void ctrl_reset(struct nvme_ctrl *ctrl)
{
	struct nvme_cq *acq_q = &ctrl->cq[0];
	uint32_t q;

	atomic_store(&ctrl->resetting, true);
	atomic_store(&ctrl->enabled, false);
	nvme_cq_lock(ctrl, acq_q);
	if (!ctrl->inline_mode)
		nvme_cq_drain_backend(ctrl, acq_q, true);
	for (q = 1; q < ctrl->nr_qids; q++) {
		struct nvme_cq *cq = &ctrl->cq[q];

		nvme_cq_lock(ctrl, cq);
		if (atomic_load_explicit(&cq->valid_size, memory_order_relaxed)) {
			if (ctrl->inline_mode)
				nvme_cq_drain_backend(ctrl, cq, true);
			while (cq->sqs)
				nvme_sq_teardown(ctrl, cq->sqs, true);
			nvme_cq_teardown(ctrl, cq);
		}
		nvme_cq_unlock(ctrl, cq);
	}
	nvme_sq_teardown(ctrl, &ctrl->sq[0], true);
	nvme_cq_teardown(ctrl, acq_q);
	ctrl->aer_head = ctrl->aer_tail = NULL;
	ctrl->aer_out = 0;
	ctrl->nr_io_queues = 0;
	ctrl->max_qid = 0;
	atomic_store(&ctrl->ev_err_pending, 0);
	ctrl->ev_err_masked = false;
	atomic_store(&ctrl->shut_down, false);
	nvme_cq_unlock(ctrl, acq_q);
	atomic_store(&ctrl->resetting, false);
	set_csts(ctrl, 0);
}

/*
 * CC.SHN (Base 3.6.2): stop fetching, let namespace I/O in flight complete
 * (posting its CQEs), flush every namespace's backend, then report
 * SHST = complete.  An abrupt shutdown is handled the same way: doing what
 * a normal one does is allowed and loses nothing.
 */
static void ctrl_shutdown(struct nvme_ctrl *ctrl)
{
	uint32_t q;

	set_csts(ctrl, (atomic_load(&ctrl->csts) & ~NVME_CSTS_SHST_MASK) |
		 NVME_CSTS_SHST_OCCUR);
	atomic_store(&ctrl->shut_down, true);
	if (!ctrl->inline_mode) {
		nvme_cq_drain_backend(ctrl, &ctrl->cq[0], false);
	} else {
		for (q = 1; q < ctrl->nr_qids; q++) {
			struct nvme_cq *cq = &ctrl->cq[q];

			nvme_cq_lock(ctrl, cq);
			if (atomic_load_explicit(&cq->valid_size, memory_order_relaxed))
				nvme_cq_drain_backend(ctrl, cq, false);
			nvme_cq_unlock(ctrl, cq);
		}
	}
	nvme_io_flush_all(ctrl);
	STAT_INC(ctrl, st_shutdowns);
	set_csts(ctrl, (atomic_load(&ctrl->csts) & ~NVME_CSTS_SHST_MASK) |
		 NVME_CSTS_SHST_CMPLT);
}

/* Act on a new CC value (thread: the controller thread; inline: cc_lock). */
static void cc_process(struct nvme_ctrl *ctrl, uint32_t cc)
{
	uint32_t old = ctrl->cc_cur;
	uint32_t shn = cc & NVME_CC_SHN_MASK;

	ctrl->cc_cur = cc;
	if ((old & NVME_CC_EN) && !(cc & NVME_CC_EN)) {
		ctrl_reset(ctrl);
		STAT_INC(ctrl, st_resets);
	} else if (!(old & NVME_CC_EN) && (cc & NVME_CC_EN))
		ctrl_enable(ctrl, cc);
	if (shn && shn != (old & NVME_CC_SHN_MASK))
		ctrl_shutdown(ctrl);
}

/* ------------------------------------------------------ doorbells */

static void invalid_doorbell(struct nvme_ctrl *ctrl, uint32_t bit)
{
	struct nvme_cq *acq_q = &ctrl->cq[0];

	/* host threads and the controller thread: a real fetch-add */
	atomic_fetch_add_explicit(&ctrl->st_invalid_db, 1, memory_order_relaxed);
	if (!atomic_load(&ctrl->enabled))
		return;
	atomic_fetch_or_explicit(&ctrl->ev_err_pending, bit, memory_order_release);
	if (!ctrl->inline_mode)
		return;         /* the controller thread reports it */
	blk_mutex_lock(&acq_q->lock);
	if (atomic_load_explicit(&acq_q->valid_size, memory_order_relaxed)) {
		nvme_aer_run(ctrl);
		nvme_cq_post_waiting(ctrl, acq_q);
	}
	blk_mutex_unlock(&acq_q->lock);
}

/* Inline mode: the SQ tail doorbell fetches and runs the new commands. */
static void inline_sq_doorbell(struct nvme_ctrl *ctrl, struct nvme_sq *sq,
			       uint32_t tail)
{
	uint16_t cqid = __atomic_load_n(&sq->cqid, __ATOMIC_RELAXED);
	struct nvme_cq *cq = &ctrl->cq[cqid];

	blk_mutex_lock(&cq->lock);
	/* the queue may have been deleted (or moved) since the check */
	if (atomic_load_explicit(&sq->valid_size, memory_order_relaxed) &&
	    sq->cqid == cqid &&
	    atomic_load_explicit(&cq->valid_size, memory_order_relaxed) &&
	    nvme_sq_tail_update(ctrl, sq, tail))
		nvme_cq_run(ctrl, cq);
	blk_mutex_unlock(&cq->lock);
}

/*
 * Inline mode: the CQ head doorbell releases CQ slots, reaps backend
 * completions and posts what waited; an unchanged value just lets time
 * pass for the controller.
 */
static void inline_cq_doorbell(struct nvme_ctrl *ctrl, struct nvme_cq *cq,
			       uint32_t head)
{
	bool bad = false;

	blk_mutex_lock(&cq->lock);
	if (atomic_load_explicit(&cq->valid_size, memory_order_relaxed)) {
		if (head != cq->head && !nvme_cq_head_update(ctrl, cq, head))
			bad = true;
		nvme_cq_run(ctrl, cq);
	}
	blk_mutex_unlock(&cq->lock);
	if (bad)
		invalid_doorbell(ctrl, 2);
}

/*
 * A doorbell write to a queue of @valid_size entries (0: no such queue) is
 * valid when the queue exists and @val indexes one of its entries; an
 * invalid one is ignored and reported (Base 3.1.3.25).
 */
static bool doorbell_valid(struct nvme_ctrl *ctrl, _Atomic uint32_t *valid_size,
			   uint32_t val)
{
	uint32_t size = atomic_load_explicit(valid_size, memory_order_acquire);

	if (!size) {
		invalid_doorbell(ctrl, 1);
		return false;
	}
	if (val >= size) {
		invalid_doorbell(ctrl, 2);
		return false;
	}
	return true;
}

static void doorbell_write(struct nvme_ctrl *ctrl, uint32_t off, uint32_t val)
{
	uint32_t stride = 4u << ctrl->cfg.dstrd, rel = off - NVME_REG_DBS;
	uint32_t idx = rel / stride, qid = idx / 2;

	if (rel % stride)
		return;         /* between doorbells: reserved */
	if (qid >= ctrl->nr_qids) {
		invalid_doorbell(ctrl, 1);
		return;
	}
	if (!(idx & 1)) {
		struct nvme_sq *sq = &ctrl->sq[qid];

		if (!doorbell_valid(ctrl, &sq->valid_size, val))
			return;
		db_count(&sq->db_writes);
		if (ctrl->inline_mode) {
			inline_sq_doorbell(ctrl, sq, val);
			return;
		}
	} else {
		struct nvme_cq *cq = &ctrl->cq[qid];

		if (!doorbell_valid(ctrl, &cq->valid_size, val))
			return;
		db_count(&cq->db_writes);
		if (ctrl->inline_mode) {
			inline_cq_doorbell(ctrl, cq, val);
			return;
		}
	}
	/* thread mode: the controller thread polls the value */
	atomic_store_explicit(&ctrl->db[idx], val, memory_order_release);
}

/* ------------------------------------------------------ register access */

uint32_t nvme_ctrl_read32(struct nvme_ctrl *ctrl, uint32_t off)
{
	switch (off) {
	case NVME_REG_CAP:
		return (uint32_t)ctrl->cap;
	case NVME_REG_CAP + 4:
		return (uint32_t)(ctrl->cap >> 32);
	case NVME_REG_VS:
		return NVME_VS_2_0;
	case NVME_REG_INTMS:
	case NVME_REG_INTMC:
		return atomic_load(&ctrl->intms);
	case NVME_REG_CC:
		return atomic_load(&ctrl->cc);
	case NVME_REG_CSTS:
		return atomic_load_explicit(&ctrl->csts, memory_order_acquire);
	case NVME_REG_AQA:
		return atomic_load(&ctrl->aqa);
	case NVME_REG_ASQ:
		return (uint32_t)atomic_load(&ctrl->asq);
	case NVME_REG_ASQ + 4:
		return (uint32_t)(atomic_load(&ctrl->asq) >> 32);
	case NVME_REG_ACQ:
		return (uint32_t)atomic_load(&ctrl->acq);
	case NVME_REG_ACQ + 4:
		return (uint32_t)(atomic_load(&ctrl->acq) >> 32);
	default:
		return 0;       /* NSSR, reserved, doorbells */
	}
}

uint64_t nvme_ctrl_read64(struct nvme_ctrl *ctrl, uint32_t off)
{
	switch (off) {
	case NVME_REG_CAP:
		return ctrl->cap;
	case NVME_REG_ASQ:
		return atomic_load(&ctrl->asq);
	case NVME_REG_ACQ:
		return atomic_load(&ctrl->acq);
	default:
		return (uint64_t)nvme_ctrl_read32(ctrl, off) |
			((uint64_t)nvme_ctrl_read32(ctrl, off + 4) << 32);
	}
}

static void write_cc(struct nvme_ctrl *ctrl, uint32_t val)
{
	if (!ctrl->inline_mode) {
		/* the controller thread acts on it */
		atomic_store_explicit(&ctrl->cc, val, memory_order_release);
		return;
	}
	blk_mutex_lock(&ctrl->cc_lock);
	atomic_store(&ctrl->cc, val);
	cc_process(ctrl, val);
	blk_mutex_unlock(&ctrl->cc_lock);
}

/* ASQ and ACQ are read only while the controller is enabled (Base 3.1.3.9). */
static void write_base(struct nvme_ctrl *ctrl, _Atomic uint64_t *reg,
		       uint64_t val, uint64_t mask)
{
	uint64_t old;

	if (atomic_load(&ctrl->cc) & NVME_CC_EN)
		return;
	old = atomic_load(reg);
	atomic_store(reg, ((old & ~mask) | (val & mask)) & ~0xfffull);
}

void nvme_ctrl_write32(struct nvme_ctrl *ctrl, uint32_t off, uint32_t val)
{
	if (off >= NVME_REG_DBS) {
		doorbell_write(ctrl, off, val);
		return;
	}
	switch (off) {
	case NVME_REG_INTMS:
		atomic_fetch_or(&ctrl->intms, val);
		break;
	case NVME_REG_INTMC:
		atomic_fetch_and(&ctrl->intms, ~val);
		break;
	case NVME_REG_CC:
		write_cc(ctrl, val);
		break;
	case NVME_REG_AQA:
		atomic_store(&ctrl->aqa, val & 0x0fff0fffu);
		break;
	case NVME_REG_ASQ:
		write_base(ctrl, &ctrl->asq, val, 0xffffffffull);
		break;
	case NVME_REG_ASQ + 4:
		write_base(ctrl, &ctrl->asq, (uint64_t)val << 32, ~0xffffffffull);
		break;
	case NVME_REG_ACQ:
		write_base(ctrl, &ctrl->acq, val, 0xffffffffull);
		break;
	case NVME_REG_ACQ + 4:
		write_base(ctrl, &ctrl->acq, (uint64_t)val << 32, ~0xffffffffull);
		break;
	default:
		break;          /* read only, NSSR (CAP.NSSRS = 0), reserved */
	}
}

void nvme_ctrl_write64(struct nvme_ctrl *ctrl, uint32_t off, uint64_t val)
{
	switch (off) {
	case NVME_REG_ASQ:
		write_base(ctrl, &ctrl->asq, val, ~0ull);
		break;
	case NVME_REG_ACQ:
		write_base(ctrl, &ctrl->acq, val, ~0ull);
		break;
	default:
		nvme_ctrl_write32(ctrl, off, (uint32_t)val);
		nvme_ctrl_write32(ctrl, off + 4, (uint32_t)(val >> 32));
		break;
	}
}

uint32_t nvme_ctrl_dstrd(const struct nvme_ctrl *ctrl)
{
	return ctrl->cfg.dstrd;
}

/* ------------------------------------------------------ controller thread */

/* One pass over the doorbells and queues; returns work done. */
static unsigned int thread_round(struct nvme_ctrl *ctrl)
{
	uint32_t q, top = ctrl->max_qid;
	unsigned int n = 0;
	uint64_t now = 0;

	for (q = 0; q <= top; q++) {
		struct nvme_sq *sq = &ctrl->sq[q];
		struct nvme_cq *cq = &ctrl->cq[q];
		uint32_t v;

		if (atomic_load_explicit(&cq->valid_size, memory_order_relaxed)) {
			v = atomic_load_explicit(&ctrl->db[2 * q + 1],
						 memory_order_acquire);
			if (v != cq->db_seen) {
				cq->db_seen = v;
				n++;
				if (v != cq->head && !nvme_cq_head_update(ctrl, cq, v))
					invalid_doorbell(ctrl, 2);
			}
			if (cq->timers) {
				if (!now)
					now = nvme_now_ns();
				nvme_timers_run(ctrl, cq, now);
			}
		}
		if (atomic_load_explicit(&sq->valid_size, memory_order_relaxed)) {
			/* acquire: the SQEs the host wrote before the doorbell */
			v = atomic_load_explicit(&ctrl->db[2 * q],
						 memory_order_acquire);
			if (v != sq->tail)
				nvme_sq_tail_update(ctrl, sq, v);
			n += nvme_sq_fetch(ctrl, sq, NVME_CTRL_FETCH_BATCH);
		}
	}
	nvme_bctx_finish_plugs(ctrl, NULL);
	n += nvme_bctx_poll(ctrl, NULL);
	for (q = 0; q <= top; q++) {
		struct nvme_cq *cq = &ctrl->cq[q];

		if (cq->wait_head)
			n += nvme_cq_post_waiting(ctrl, cq);
	}
	if (atomic_load_explicit(&ctrl->ev_err_pending, memory_order_relaxed))
		nvme_aer_run(ctrl);
	return n;
}

/* Nothing but delayed commands or nothing at all: how long may we sleep? */
static bool has_inflight(struct nvme_ctrl *ctrl)
{
	unsigned int i;

	for (i = 0; i < ctrl->nr_ns; i++)
		if (ctrl->tbctx[i].ctx && blk_ctx_inflight(ctrl->tbctx[i].ctx))
			return true;
	return false;
}

/*
 * Poll CC and the doorbells.  Idle, it spins for 50 us, then yields the
 * core until 1 ms (a host that submits again at once sees no wake-up
 * latency, and a host thread waiting for the same core gets it), then
 * sleeps 30 us at a time so that an idle controller does not hold a core.
 * With namespace I/O in flight it never sleeps.
 */
static void *ctrl_thread(void *arg)
{
	struct nvme_ctrl *ctrl = arg;
	uint64_t idle_since = 0;

	while (!atomic_load_explicit(&ctrl->stop, memory_order_acquire)) {
		uint32_t cc = atomic_load_explicit(&ctrl->cc, memory_order_acquire);
		unsigned int n = 0;
		uint64_t now;

		if (cc != ctrl->cc_cur) {
			cc_process(ctrl, cc);
			n++;
		}
		if (atomic_load_explicit(&ctrl->enabled, memory_order_relaxed))
			n += thread_round(ctrl);
		if (n) {
			idle_since = 0;
			continue;
		}
		now = nvme_now_ns();
		if (!idle_since)
			idle_since = now;
		if (now - idle_since < 50000) {
			cpu_relax();
		} else if (now - idle_since < 1000000 || has_inflight(ctrl)) {
			/* let a host thread that shares our core run */
			sched_yield();
		} else {
			struct timespec ts = { 0, 30000 };

			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

/* ------------------------------------------------------ create / destroy */

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--) {
		h ^= *b++;
		h *= 0x100000001b3ull;
	}
	return h;
}

/* EUI64, NGUID and UUID of a namespace: a hash of serial and NSID. */
static void ns_ids(struct nvme_ctrl *ctrl, struct nvme_ns *ns, uint32_t nsid)
{
	uint64_t h[4];
	unsigned int i;

	for (i = 0; i < 4; i++) {
		uint64_t s = 0xcbf29ce484222325ull ^ (i * 0x9e3779b97f4a7c15ull);

		s = fnv1a(s, ctrl->sn, strlen(ctrl->sn));
		h[i] = fnv1a(s, &nsid, sizeof(nsid));
	}
	memcpy(ns->eui64, &h[0], 8);
	memcpy(ns->nguid, &h[1], 16);
	memcpy(ns->uuid, &h[2], 16);
	ns->uuid[6] = (uint8_t)((ns->uuid[6] & 0x0f) | 0x80);  /* version 8 */
	ns->uuid[8] = (uint8_t)((ns->uuid[8] & 0x3f) | 0x80);  /* variant 10b */
}

static int cfg_err(char *err, size_t errlen, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
	return -EINVAL;
}

static int check_config(struct nvme_ctrl_config *c, char *err, size_t errlen)
{
	unsigned int i;

	if (c->mode != NVME_CTRL_THREAD && c->mode != NVME_CTRL_INLINE)
		return cfg_err(err, errlen, "mode: allowed NVME_CTRL_THREAD or NVME_CTRL_INLINE");
	if (c->nr_ns < 1 || c->nr_ns > NVME_CTRL_MAX_NS || !c->ns)
		return cfg_err(err, errlen, "nr_ns: allowed 1..32, with an ns array");
	for (i = 0; i < c->nr_ns; i++)
		if (!c->ns[i])
			return cfg_err(err, errlen, "ns: every entry must be a device");
	if (!c->mqes)
		c->mqes = 4096;
	if (c->mqes < 2 || c->mqes > 65536)
		return cfg_err(err, errlen, "mqes: allowed 2..65536");
	if (!c->max_io_queues)
		c->max_io_queues = 64;
	if (c->max_io_queues > NVME_CTRL_MAX_IO_QUEUES)
		return cfg_err(err, errlen, "max_io_queues: allowed 1..256");
	if (c->dstrd > 8)
		return cfg_err(err, errlen, "dstrd: allowed 0..8");
	if (c->mpsmin > 4)
		return cfg_err(err, errlen, "mpsmin: allowed 0..4");
	if (!c->mpsmax)
		c->mpsmax = c->mpsmin;
	if (c->mpsmax > 4 || c->mpsmax < c->mpsmin)
		return cfg_err(err, errlen, "mpsmax: allowed mpsmin..4");
	if (!c->timeout_ms)
		c->timeout_ms = 2000;
	if (c->timeout_ms < 500 || c->timeout_ms > 127500)
		return cfg_err(err, errlen, "timeout_ms: allowed 500..127500");
	if (!c->mdts)
		c->mdts = 8;
	if (c->mdts > 15)
		return cfg_err(err, errlen, "mdts: allowed 0..15");
	if (c->vwc < -1 || c->vwc > 2)
		return cfg_err(err, errlen, "vwc: allowed -1, 0 (default), 1 (on), 2 (off)");
	if (!c->acl)
		c->acl = 3;
	if (c->acl > 255)
		return cfg_err(err, errlen, "acl: allowed 0..255");
	if (!c->aerl)
		c->aerl = 3;
	if (c->aerl > 255)
		return cfg_err(err, errlen, "aerl: allowed 0..255");
	if (c->serial && strlen(c->serial) > 20)
		return cfg_err(err, errlen, "serial: at most 20 characters");
	if (c->model && strlen(c->model) > 40)
		return cfg_err(err, errlen, "model: at most 40 characters");
	if (c->firmware && strlen(c->firmware) > 8)
		return cfg_err(err, errlen, "firmware: at most 8 characters");
	return 0;
}

int nvme_ctrl_create(const struct nvme_ctrl_config *cfg,
		     struct nvme_ctrl **out, char *err, size_t errlen)
{
	struct nvme_ctrl *ctrl;
	unsigned int i;
	bool any_flush = false;
	int ret;

	if (!cfg || !out)
		return cfg_err(err, errlen, "cfg and ctrl are required");
	ctrl = calloc(1, sizeof(*ctrl));
	if (!ctrl)
		return -ENOMEM;
	ctrl->cfg = *cfg;
	ret = check_config(&ctrl->cfg, err, errlen);
	if (ret)
		goto fail_free;
	ctrl->inline_mode = ctrl->cfg.mode == NVME_CTRL_INLINE;
	ctrl->nr_ns = ctrl->cfg.nr_ns;
	snprintf(ctrl->sn, sizeof(ctrl->sn), "%s", cfg->serial ? cfg->serial : "BLKSTACK0001");
	snprintf(ctrl->mn, sizeof(ctrl->mn), "%s", cfg->model ? cfg->model : "blkstack emulated NVMe");
	snprintf(ctrl->fr, sizeof(ctrl->fr), "%s", cfg->firmware ? cfg->firmware : BLKSTACK_VERSION);
	ctrl->cfg.ns = NULL;    /* the array is copied into ctrl->ns */
	ctrl->cfg.serial = ctrl->cfg.model = ctrl->cfg.firmware = NULL;
	for (i = 0; i < ctrl->nr_ns; i++) {
		struct nvme_ns *ns = &ctrl->ns[i];
		uint64_t chunk;

		ns->dev = cfg->ns[i];
		blk_dev_get_info(ns->dev, &ns->info);
		ns->lba_shift = (uint32_t)__builtin_ctz(ns->info.logical_block_size);
		ns->nsze = ns->info.capacity >> ns->lba_shift;
		if (!ns->nsze) {
			ret = cfg_err(err, errlen, "ns: a device smaller than one block");
			goto fail_free;
		}
		chunk = (uint64_t)ns->info.max_sectors << 9;
		if (chunk > (1ull << 30))
			chunk = 1ull << 30;
		chunk &= ~((uint64_t)ns->info.logical_block_size - 1);
		if (!chunk)
			chunk = ns->info.logical_block_size;
		ns->max_chunk = chunk;
		ns->max_segs = ns->info.max_segments ? ns->info.max_segments : 1;
		if (ns->max_segs > 65535)
			ns->max_segs = 65535;
		ns_ids(ctrl, ns, i + 1);
		any_flush |= ns->info.can_flush;
	}
	ctrl->vwc_present = ctrl->cfg.vwc == 1 ? true :
		ctrl->cfg.vwc == 2 ? false : any_flush;
	ctrl->cap = (uint64_t)(ctrl->cfg.mqes - 1) |
		(1ull << 16) |                                  /* CQR */
		((uint64_t)((ctrl->cfg.timeout_ms + 499) / 500) << 24) |
		((uint64_t)ctrl->cfg.dstrd << 32) |
		((uint64_t)NVME_CAP_CSS_NVM << 37) |
		((uint64_t)ctrl->cfg.mpsmin << 48) |
		((uint64_t)ctrl->cfg.mpsmax << 52);
	ctrl->nr_qids = ctrl->cfg.max_io_queues + 1;
	ctrl->sq = calloc(ctrl->nr_qids, sizeof(*ctrl->sq));
	ctrl->cq = calloc(ctrl->nr_qids, sizeof(*ctrl->cq));
	ctrl->db = calloc(2 * ctrl->nr_qids, sizeof(*ctrl->db));
	if (!ctrl->sq || !ctrl->cq || !ctrl->db) {
		ret = -ENOMEM;
		goto fail_arrays;
	}
	for (i = 0; i < ctrl->nr_qids; i++) {
		ctrl->sq[i].ctrl = ctrl;
		ctrl->cq[i].ctrl = ctrl;
		blk_mutex_init(&ctrl->cq[i].lock, "&nvme_ctrl->cq.lock", -1);
	}
	blk_mutex_init(&ctrl->cc_lock, "&nvme_ctrl->cc_lock", -1);
	blk_mutex_init(&ctrl->fault_lock, "&nvme_ctrl->fault_lock", -1);
	blk_mutex_init(&ctrl->log_lock, "&nvme_ctrl->log_lock", -1);
	ctrl->power_on_ns = nvme_now_ns();
	if (!ctrl->inline_mode) {
		/* attached here so that a busy device fails create, not I/O */
		ctrl->tbctx = calloc(ctrl->nr_ns, sizeof(*ctrl->tbctx));
		if (!ctrl->tbctx) {
			ret = -ENOMEM;
			goto fail_locks;
		}
		for (i = 0; i < ctrl->nr_ns; i++) {
			ret = blk_ctx_attach(ctrl->ns[i].dev, &ctrl->tbctx[i].ctx);
			if (ret) {
				snprintf(err, errlen, "ns[%u]: cannot attach a context (%s)",
					 i, strerror(-ret));
				goto fail_ctx;
			}
		}
		ret = -pthread_create(&ctrl->thread, NULL, ctrl_thread, ctrl);
		if (ret) {
			snprintf(err, errlen, "pthread_create: %s", strerror(-ret));
			goto fail_ctx;
		}
		ctrl->thread_started = true;
	}
	/* own_ns: the devices are closed by destroy; copy the pointers */
	*out = ctrl;
	return 0;

fail_ctx:
	for (i = 0; i < ctrl->nr_ns; i++)
		if (ctrl->tbctx[i].ctx)
			blk_ctx_detach(ctrl->tbctx[i].ctx);
	free(ctrl->tbctx);
fail_locks:
	for (i = 0; i < ctrl->nr_qids; i++)
		blk_mutex_destroy(&ctrl->cq[i].lock);
	blk_mutex_destroy(&ctrl->cc_lock);
	blk_mutex_destroy(&ctrl->fault_lock);
	blk_mutex_destroy(&ctrl->log_lock);
fail_arrays:
	free(ctrl->sq);
	free(ctrl->cq);
	free((void *)ctrl->db);
fail_free:
	free(ctrl);
	return ret;
}

void nvme_ctrl_destroy(struct nvme_ctrl *ctrl)
{
	unsigned int i;

	if (!ctrl)
		return;
	if (ctrl->thread_started) {
		atomic_store(&ctrl->stop, true);
		pthread_join(ctrl->thread, NULL);
	}
	/* power off: a reset without CQEs; the thread is gone, so no races */
	blk_mutex_lock(&ctrl->cc_lock);
	ctrl_reset(ctrl);
	blk_mutex_unlock(&ctrl->cc_lock);
	for (i = 0; i < ctrl->nr_qids; i++) {
		free(ctrl->cq[i].bctx);
		blk_mutex_destroy(&ctrl->cq[i].lock);
	}
	if (ctrl->tbctx) {
		for (i = 0; i < ctrl->nr_ns; i++)
			if (ctrl->tbctx[i].ctx)
				blk_ctx_detach(ctrl->tbctx[i].ctx);
		free(ctrl->tbctx);
	}
	if (ctrl->cfg.own_ns)
		for (i = 0; i < ctrl->nr_ns; i++)
			blk_dev_close(ctrl->ns[i].dev);
	blk_mutex_destroy(&ctrl->cc_lock);
	blk_mutex_destroy(&ctrl->fault_lock);
	blk_mutex_destroy(&ctrl->log_lock);
	free(ctrl->sq);
	free(ctrl->cq);
	free((void *)ctrl->db);
	free(ctrl);
}
