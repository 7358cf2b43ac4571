// SPDX-License-Identifier: MIT
/*
 * Emulated NVMe controller, driven like hardware by a minimal host written
 * here: SQEs are built byte by byte at the offsets of Base Figure 88,
 * doorbells are rung through nvme_ctrl_write32(), CQEs are parsed from
 * their bytes (Base Figure 90).  The data lands on ram devices, which the
 * tests also read directly.  I/O tests run in thread and in inline mode.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "blkstack/nvme_ctrl.h"
#include "blkstack/blk_mq.h"
#include "blkstack/null.h"
#include "blkstack/ram.h"
#include "blkstack/uring.h"

#define PG 4096u
#define NS_BYTES (64ull << 20)

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint16_t get16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* ------------------------------------------------------------ the host */

struct hq {
	uint8_t *sq, *cq;
	uint32_t sq_size, cq_size, tail, head;
	uint8_t phase;
	uint16_t qid;
	uint16_t cid;           /* next CID: one counter per queue, per thread */
};

struct host {
	struct nvme_ctrl *ctrl;
	struct blk_dev *dev[4];
	unsigned int nr_ns;
	enum nvme_ctrl_mode mode;
	uint32_t dstrd;
	struct hq aq;
	struct hq io[4];
};

struct sqe {
	uint8_t opc, flags;
	uint32_t nsid;
	uint64_t prp1, prp2;
	uint32_t cdw[6];        /* cdw10..cdw15 */
};

struct cqe {
	uint32_t dw0, dw1;
	uint16_t sqhd, sqid, cid, sf;
};

#define SF(sct, sc) ((uint16_t)(((sct) << 8) | (sc)))
#define SFX(sf) ((sf) & 0x7ff)   /* SCT and SC, without CRD, M, DNR */
#define DNR (1u << 14)

/* Host memory: 8 KiB aligned, so that it also serves CC.MPS = 1. */
static void *pages(size_t n)
{
	size_t len = (n * PG + 8191) & ~(size_t)8191;
	void *p = aligned_alloc(8192, len);

	assert_non_null(p);
	memset(p, 0, len);
	return p;
}

/* Byte offsets of Base Figure 88. */
static void sqe_put(uint8_t *e, const struct sqe *a, uint16_t cid)
{
	unsigned int i;

	memset(e, 0, 64);
	e[0] = a->opc;
	e[1] = a->flags;
	put16(e + 2, cid);
	put32(e + 4, a->nsid);
	put64(e + 24, a->prp1);
	put64(e + 32, a->prp2);
	for (i = 0; i < 6; i++)
		put32(e + 40 + 4 * i, a->cdw[i]);
}

static uint16_t submit(struct host *h, struct hq *q, const struct sqe *a)
{
	uint16_t cid = q->cid++;

	if (q->cid == 0xffff)
		q->cid = 0;
	sqe_put(q->sq + (size_t)q->tail * 64, a, cid);
	q->tail = (q->tail + 1) % q->sq_size;
	nvme_ctrl_write32(h->ctrl, nvme_sq_tail_doorbell(q->qid, h->dstrd), q->tail);
	return cid;
}

/* Is the entry at the head new (phase tag = expected)?  Parse its bytes. */
static bool cqe_peek(struct hq *q, struct cqe *c)
{
	const uint8_t *e = q->cq + (size_t)q->head * 16;
	uint32_t dw3 = __atomic_load_n((const uint32_t *)(const void *)(e + 12),
				       __ATOMIC_ACQUIRE);

	if (((dw3 >> 16) & 1) != q->phase)
		return false;
	c->dw0 = get32(e);
	c->dw1 = get32(e + 4);
	c->sqhd = get16(e + 8);
	c->sqid = get16(e + 10);
	c->cid = (uint16_t)dw3;
	c->sf = (uint16_t)(dw3 >> 17);
	return true;
}

static void cq_ring(struct host *h, struct hq *q)
{
	nvme_ctrl_write32(h->ctrl, nvme_cq_head_doorbell(q->qid, h->dstrd), q->head);
}

static void cqe_pop(struct host *h, struct hq *q, bool ring)
{
	if (++q->head == q->cq_size) {
		q->head = 0;
		q->phase ^= 1;
	}
	if (ring)
		cq_ring(h, q);
}

/* Let time pass: inline mode needs a (same-value) CQ head doorbell. */
static void tick(struct host *h, struct hq *q)
{
	if (h->mode == NVME_CTRL_INLINE)
		cq_ring(h, q);
	else
		sched_yield();
}

static int wait_cqe_ms(struct host *h, struct hq *q, struct cqe *c, uint64_t ms)
{
	uint64_t end = now_ms() + ms;

	while (!cqe_peek(q, c)) {
		if (now_ms() > end)
			return -ETIMEDOUT;
		tick(h, q);
	}
	cqe_pop(h, q, true);
	return 0;
}

static struct cqe wait_cqe(struct host *h, struct hq *q)
{
	struct cqe c;

	assert_int_equal(wait_cqe_ms(h, q, &c, 20000), 0);
	return c;
}

static struct cqe cmd(struct host *h, struct hq *q, const struct sqe *a)
{
	uint16_t cid = submit(h, q, a);
	struct cqe c = wait_cqe(h, q);

	assert_int_equal(c.cid, cid);
	assert_int_equal(c.sqid, q->qid);
	assert_int_equal(c.sqhd, q->tail);
	return c;
}

static struct cqe admin(struct host *h, const struct sqe *a)
{
	return cmd(h, &h->aq, a);
}

static void wait_csts(struct host *h, uint32_t mask, uint32_t val)
{
	uint64_t end = now_ms() + 10000;

	while ((nvme_ctrl_read32(h->ctrl, NVME_REG_CSTS) & mask) != val) {
		assert_true(now_ms() < end);
		sched_yield();
	}
}

static uint32_t cc_value(uint32_t mps)
{
	return NVME_CC_EN | (mps << NVME_CC_MPS_SHIFT) |
		(6u << NVME_CC_IOSQES_SHIFT) | (4u << NVME_CC_IOCQES_SHIFT);
}

static void hq_alloc(struct hq *q, uint16_t qid, uint32_t sq_size, uint32_t cq_size)
{
	memset(q, 0, sizeof(*q));
	q->qid = qid;
	q->sq_size = sq_size;
	q->cq_size = cq_size;
	q->sq = pages((sq_size * 64 + PG - 1) / PG);
	q->cq = pages((cq_size * 16 + PG - 1) / PG);
	q->phase = 1;
	q->cid = 1;
}

static void hq_free(struct hq *q)
{
	free(q->sq);
	free(q->cq);
	memset(q, 0, sizeof(*q));
}

static void host_program(struct host *h, uint32_t aq_size)
{
	if (!h->aq.sq)
		hq_alloc(&h->aq, 0, aq_size, aq_size);
	h->aq.tail = h->aq.head = 0;
	h->aq.phase = 1;
	h->aq.cid = 1;
	memset(h->aq.cq, 0, (aq_size * 16 + PG - 1) / PG * PG);
	nvme_ctrl_write32(h->ctrl, NVME_REG_AQA, NVME_AQA(aq_size, aq_size));
	nvme_ctrl_write64(h->ctrl, NVME_REG_ASQ, (uint64_t)(uintptr_t)h->aq.sq);
	nvme_ctrl_write64(h->ctrl, NVME_REG_ACQ, (uint64_t)(uintptr_t)h->aq.cq);
}

static void host_enable(struct host *h, uint32_t aq_size)
{
	host_program(h, aq_size);
	nvme_ctrl_write32(h->ctrl, NVME_REG_CC, cc_value(0));
	wait_csts(h, NVME_CSTS_RDY, NVME_CSTS_RDY);
}

static void host_disable(struct host *h)
{
	unsigned int i;

	nvme_ctrl_write32(h->ctrl, NVME_REG_CC, 0);
	wait_csts(h, NVME_CSTS_RDY, 0);
	for (i = 0; i < 4; i++)
		if (h->io[i].sq)
			hq_free(&h->io[i]);
}

static struct blk_dev *ram(uint64_t bytes, uint32_t lbs, uint32_t max_sectors,
			   uint32_t max_segments)
{
	struct blk_ram_config c = { 0 };
	struct blk_dev *d;

	c.queue.capacity = bytes;
	c.queue.logical_block_size = lbs;
	c.queue.nr_hw_queues = 8;
	c.queue.queue_depth = 64;
	c.queue.max_sectors = max_sectors;
	c.queue.max_segments = max_segments;
	assert_int_equal(blk_ram_create(&c, &d), 0);
	return d;
}

/* A controller over @nr_ns ram namespaces (512-byte blocks, then 4 KiB). */
static void host_init_dev(struct host *h, enum nvme_ctrl_mode mode,
			  unsigned int nr_ns, struct nvme_ctrl_config *cfg,
			  struct blk_dev *dev0)
{
	char err[128];
	unsigned int i;

	memset(h, 0, sizeof(*h));
	h->mode = mode;
	h->nr_ns = nr_ns;
	h->dev[0] = dev0;
	for (i = 0; i < nr_ns; i++)
		if (!h->dev[i])
			h->dev[i] = ram(NS_BYTES, i ? 4096 : 512, 0, 0);
	cfg->mode = mode;
	cfg->nr_ns = nr_ns;
	cfg->ns = h->dev;
	cfg->own_ns = true;
	assert_int_equal(nvme_ctrl_create(cfg, &h->ctrl, err, sizeof(err)), 0);
	h->dstrd = nvme_ctrl_dstrd(h->ctrl);
}

static void host_init_cfg(struct host *h, enum nvme_ctrl_mode mode,
			  unsigned int nr_ns, struct nvme_ctrl_config *cfg)
{
	host_init_dev(h, mode, nr_ns, cfg, NULL);
}

static void host_init(struct host *h, enum nvme_ctrl_mode mode, unsigned int nr_ns)
{
	struct nvme_ctrl_config cfg = { 0 };

	host_init_cfg(h, mode, nr_ns, &cfg);
}

static void host_fini(struct host *h)
{
	unsigned int i;

	nvme_ctrl_destroy(h->ctrl);
	hq_free(&h->aq);
	for (i = 0; i < 4; i++)
		if (h->io[i].sq)
			hq_free(&h->io[i]);
}

static struct cqe create_cq(struct host *h, uint16_t qid, uint32_t size,
			    void *base, uint32_t flags)
{
	struct sqe a = { .opc = nvme_admin_create_cq, .prp1 = (uintptr_t)base };

	a.cdw[0] = ((size - 1) << 16) | qid;
	a.cdw[1] = flags;
	return admin(h, &a);
}

static struct cqe create_sq(struct host *h, uint16_t qid, uint32_t size,
			    void *base, uint16_t cqid, uint32_t flags)
{
	struct sqe a = { .opc = nvme_admin_create_sq, .prp1 = (uintptr_t)base };

	a.cdw[0] = ((size - 1) << 16) | qid;
	a.cdw[1] = ((uint32_t)cqid << 16) | flags;
	return admin(h, &a);
}

static struct cqe delete_q(struct host *h, uint8_t opc, uint16_t qid)
{
	struct sqe a = { .opc = opc };

	a.cdw[0] = qid;
	return admin(h, &a);
}

/* I/O queue pair @i (QID i + 1) with @sq_size / @cq_size entries. */
static struct hq *ioq(struct host *h, unsigned int i, uint32_t sq_size,
		      uint32_t cq_size)
{
	struct hq *q = &h->io[i];

	hq_alloc(q, (uint16_t)(i + 1), sq_size, cq_size);
	assert_int_equal(create_cq(h, q->qid, cq_size, q->cq, NVME_QUEUE_PHYS_CONTIG).sf, 0);
	assert_int_equal(create_sq(h, q->qid, sq_size, q->sq, q->qid, NVME_QUEUE_PHYS_CONTIG).sf, 0);
	return q;
}

static void ioq_delete(struct host *h, unsigned int i)
{
	assert_int_equal(delete_q(h, nvme_admin_delete_sq, h->io[i].qid).sf, 0);
	assert_int_equal(delete_q(h, nvme_admin_delete_cq, h->io[i].qid).sf, 0);
	hq_free(&h->io[i]);
}

/* The usual start: enabled, 32-entry admin queue, one 64-entry I/O pair. */
static struct hq *host_up(struct host *h, enum nvme_ctrl_mode mode, unsigned int nr_ns)
{
	host_init(h, mode, nr_ns);
	host_enable(h, 32);
	return ioq(h, 0, 64, 64);
}

static struct sqe rw_sqe(uint8_t opc, uint32_t nsid, uint64_t slba, uint32_t nlb,
			 uint64_t prp1, uint64_t prp2, uint32_t flags)
{
	struct sqe a = { .opc = opc, .nsid = nsid, .prp1 = prp1, .prp2 = prp2 };

	a.cdw[0] = (uint32_t)slba;
	a.cdw[1] = (uint32_t)(slba >> 32);
	a.cdw[2] = ((nlb - 1) & 0xffff) | flags;
	return a;
}

/* Read or write @nlb blocks at @slba of namespace @nsid with given PRPs. */
static struct cqe rw(struct host *h, struct hq *q, uint8_t opc, uint32_t nsid,
		     uint64_t slba, uint32_t nlb, uint64_t prp1, uint64_t prp2,
		     uint32_t flags)
{
	struct sqe a = rw_sqe(opc, nsid, slba, nlb, prp1, prp2, flags);

	return cmd(h, q, &a);
}

static int backend_done;

static void backend_end(struct blk_bio *bio)
{
	(void)bio;
	backend_done = 1;
}

/* Read the backend directly, through our own context. */
static void backend_read(struct blk_dev *dev, uint64_t off, void *buf, uint32_t len)
{
	struct blk_mq_ctx *ctx;
	struct iovec iov = { buf, len };
	struct blk_bio b;

	memset(&b, 0, sizeof(b));
	b.bi_op = BLK_OP_READ;
	b.bi_offset = off;
	b.bi_size = len;
	b.bi_vcnt = 1;
	b.bi_io_vec = &iov;
	b.bi_end_io = backend_end;
	backend_done = 0;
	assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
	assert_int_equal(blk_submit(ctx, &b), 0);
	assert_int_equal(blk_drain(ctx, 0), 0);
	assert_int_equal(backend_done, 1);
	assert_int_equal(b.bi_status, 0);
	blk_ctx_detach(ctx);
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)((i * 131 + seed * 7 + (i >> 9)) ^ (seed >> 3));
}

static enum nvme_ctrl_mode mode_of(void **state)
{
	return (enum nvme_ctrl_mode)(uintptr_t)*state;
}

/*
 * PRPs for a buffer made of @n pages (@pg[i]), starting @off bytes into the
 * first.  List pages come from @lists (each PG bytes), the first list
 * starting @list_off bytes into its page.  Base 4.1.1.
 */
static void build_prps(uint8_t **pg, unsigned int n, uint32_t off, size_t len,
		       uint8_t *lists, uint32_t list_off, uint64_t *prp1,
		       uint64_t *prp2)
{
	size_t first = PG - off < len ? PG - off : len, rem = len - first;
	unsigned int i = 1, slot, slots;
	uint8_t *list = lists + list_off;

	*prp1 = (uintptr_t)(pg[0] + off);
	*prp2 = 0;
	if (!rem)
		return;
	if (rem <= PG) {
		*prp2 = (uintptr_t)pg[1];
		return;
	}
	*prp2 = (uintptr_t)list;
	slots = (PG - list_off) / 8;
	slot = 0;
	while (rem) {
		assert_true(i < n);
		if (slot == slots - 1 && rem > PG) {
			uint8_t *next = lists + PG * (((uintptr_t)list - (uintptr_t)lists) / PG + 1);

			put64(list + slot * 8, (uintptr_t)next);
			list = next;
			slot = 0;
			slots = PG / 8;
			continue;
		}
		put64(list + slot * 8, (uintptr_t)pg[i++]);
		rem -= rem < PG ? rem : PG;
		slot++;
	}
}

/* ------------------------------------------------------------ registers */

static void test_cap_vs(void **state)
{
	struct nvme_ctrl_config cfg = { 0 };
	struct nvme_ctrl *bad;
	struct host h;
	uint64_t cap;
	char err[128];

	cfg.mqes = 1024;
	cfg.dstrd = 2;
	cfg.mpsmin = 0;
	cfg.mpsmax = 2;
	cfg.timeout_ms = 1200;
	host_init_cfg(&h, NVME_CTRL_THREAD, 1, &cfg);
	cap = nvme_ctrl_read64(h.ctrl, NVME_REG_CAP);
	assert_int_equal(cap & 0xffff, 1023);           /* MQES, 0's based */
	assert_int_equal((cap >> 16) & 1, 1);           /* CQR */
	assert_int_equal((cap >> 24) & 0xff, 3);        /* TO: 1500 ms */
	assert_int_equal((cap >> 32) & 0xf, 2);         /* DSTRD */
	assert_int_equal((cap >> 37) & 0xff, 1);        /* CSS: NVM */
	assert_int_equal((cap >> 48) & 0xf, 0);
	assert_int_equal((cap >> 52) & 0xf, 2);
	assert_int_equal(nvme_ctrl_read32(h.ctrl, NVME_REG_CAP), (uint32_t)cap);
	assert_int_equal(nvme_ctrl_read32(h.ctrl, NVME_REG_CAP + 4), (uint32_t)(cap >> 32));
	assert_int_equal(nvme_ctrl_read32(h.ctrl, NVME_REG_VS), 0x00020000);
	assert_int_equal(nvme_ctrl_dstrd(h.ctrl), 2);
	assert_int_equal(nvme_ctrl_read32(h.ctrl, NVME_REG_CSTS), 0);
	assert_int_equal(nvme_ctrl_read32(h.ctrl, NVME_REG_CC), 0);
	/* read-only registers ignore writes; INTMS / INTMC keep a mask */
	nvme_ctrl_write32(h.ctrl, NVME_REG_VS, 0x12345678);
	assert_int_equal(nvme_ctrl_read32(h.ctrl, NVME_REG_VS), 0x00020000);
	nvme_ctrl_write32(h.ctrl, NVME_REG_INTMS, 0x5);
	nvme_ctrl_write32(h.ctrl, NVME_REG_INTMC, 0x1);
	assert_int_equal(nvme_ctrl_read32(h.ctrl, NVME_REG_INTMS), 0x4);
	/* stride 16 bytes: SQ1 tail at 1000h + 2 * 16 */
	assert_int_equal(nvme_sq_tail_doorbell(1, h.dstrd), 0x1020);
	/* the byte layout used here is struct nvme_command's */
	{
		struct sqe a = { .opc = 0x81, .flags = 0x40, .nsid = 0x01020304,
				 .prp1 = 0x1112131415161718ull, .prp2 = 0x2122232425262728ull,
				 .cdw = { 10, 11, 12, 13, 14, 15 } };
		struct nvme_command nc = { .opcode = 0x81, .flags = 0x40, .cid = 0xbeef,
					   .nsid = 0x01020304, .prp1 = 0x1112131415161718ull,
					   .prp2 = 0x2122232425262728ull, .cdw10 = 10, .cdw11 = 11,
					   .cdw12 = 12, .cdw13 = 13, .cdw14 = 14, .cdw15 = 15 };
		uint8_t e[64];

		sqe_put(e, &a, 0xbeef);
		assert_memory_equal(e, &nc, 64);
	}
	host_enable(&h, 8);
	{
		struct hq *q = ioq(&h, 0, 8, 8);
		uint8_t *buf = pages(1);
		struct nvme_ctrl_stats st;

		assert_int_equal(rw(&h, q, nvme_cmd_write, 1, 0, 8, (uintptr_t)buf, 0, 0).sf, 0);
		free(buf);
		/* Create CQ, Create SQ, Write: one tail and one head write each */
		nvme_ctrl_get_stats(h.ctrl, &st);
		assert_int_equal(st.sq_doorbells, 3);
		assert_int_equal(st.cq_doorbells, 3);
		assert_int_equal(st.commands, 3);
		assert_int_equal(st.completions, 3);
		assert_int_equal(st.errors, 0);
		ioq_delete(&h, 0);
		nvme_ctrl_get_stats(h.ctrl, &st);
		assert_int_equal(st.sq_doorbells, 5);
		assert_int_equal(st.cq_doorbells, 5);
		/* between doorbells (stride 16): ignored, not even invalid */
		nvme_ctrl_write32(h.ctrl, 0x1004, 1);
		/* a queue that is gone: invalid */
		nvme_ctrl_write32(h.ctrl, nvme_sq_tail_doorbell(1, h.dstrd), 1);
		nvme_ctrl_get_stats(h.ctrl, &st);
		assert_int_equal(st.invalid_doorbells, 1);
		assert_int_equal(st.sq_doorbells, 5);
	}
	host_fini(&h);

	/* bad configurations name the field */
	memset(&cfg, 0, sizeof(cfg));
	cfg.nr_ns = 1;
	cfg.ns = h.dev;
	cfg.mqes = 1;
	assert_int_equal(nvme_ctrl_create(&cfg, &bad, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "mqes"));
	cfg.mqes = 0;
	cfg.mpsmin = 2;
	cfg.mpsmax = 1;
	assert_int_equal(nvme_ctrl_create(&cfg, &bad, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "mpsmax"));
	cfg.mpsmax = 0;
	cfg.nr_ns = 0;
	assert_int_equal(nvme_ctrl_create(&cfg, &bad, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "nr_ns"));
}

static void test_enable_disable(void **state)
{
	enum nvme_ctrl_mode mode = mode_of(state);
	struct nvme_ctrl_stats st;
	struct host h;
	struct hq *q;
	uint8_t *buf = pages(1);
	unsigned int i;

	host_init(&h, mode, 1);
	for (i = 0; i < 3; i++) {
		host_enable(&h, 16);
		assert_int_equal(nvme_ctrl_read32(h.ctrl, NVME_REG_CSTS) & NVME_CSTS_CFS, 0);
		q = ioq(&h, 0, 16, 16);
		fill(buf, PG, i);
		assert_int_equal(rw(&h, q, nvme_cmd_write, 1, 8 * i, 8, (uintptr_t)buf, 0, 0).sf, 0);
		host_disable(&h);
		/* the queues are gone after a reset: recreated from scratch */
	}
	nvme_ctrl_get_stats(h.ctrl, &st);
	assert_int_equal(st.resets, 3);
	assert_true(st.commands >= 9);

	/* ASQ / ACQ are read-only while enabled */
	host_enable(&h, 16);
	nvme_ctrl_write64(h.ctrl, NVME_REG_ASQ, 0x1000);
	assert_int_equal(nvme_ctrl_read64(h.ctrl, NVME_REG_ASQ), (uintptr_t)h.aq.sq);
	host_disable(&h);

	/* page size outside MPSMIN..MPSMAX: CFS, never ready; a reset clears */
	host_program(&h, 16);
	nvme_ctrl_write32(h.ctrl, NVME_REG_CC, cc_value(3));
	wait_csts(&h, NVME_CSTS_CFS, NVME_CSTS_CFS);
	assert_int_equal(nvme_ctrl_read32(h.ctrl, NVME_REG_CSTS) & NVME_CSTS_RDY, 0);
	nvme_ctrl_write32(h.ctrl, NVME_REG_CC, 0);
	wait_csts(&h, NVME_CSTS_CFS | NVME_CSTS_RDY, 0);
	/* an admin queue of one entry is invalid too */
	nvme_ctrl_write32(h.ctrl, NVME_REG_AQA, 0);
	nvme_ctrl_write32(h.ctrl, NVME_REG_CC, cc_value(0));
	wait_csts(&h, NVME_CSTS_CFS, NVME_CSTS_CFS);
	nvme_ctrl_write32(h.ctrl, NVME_REG_CC, 0);
	wait_csts(&h, NVME_CSTS_CFS, 0);
	host_enable(&h, 16);
	host_fini(&h);
	free(buf);
}

static void test_shutdown(void **state)
{
	enum nvme_ctrl_mode mode = mode_of(state);
	struct nvme_ctrl_stats st;
	struct host h;
	struct hq *q = host_up(&h, mode, 2);
	uint8_t *buf = pages(1), *chk = pages(1);
	uint32_t cc;

	fill(buf, PG, 9);
	assert_int_equal(rw(&h, q, nvme_cmd_write, 2, 3, 1, (uintptr_t)buf, 0, 0).sf, 0);
	ioq_delete(&h, 0);
	cc = nvme_ctrl_read32(h.ctrl, NVME_REG_CC);
	nvme_ctrl_write32(h.ctrl, NVME_REG_CC, cc | NVME_CC_SHN_NORMAL);
	wait_csts(&h, NVME_CSTS_SHST_MASK, NVME_CSTS_SHST_CMPLT);
	nvme_ctrl_get_stats(h.ctrl, &st);
	assert_int_equal(st.shutdowns, 1);
	backend_read(h.dev[1], 3 * 4096, chk, PG);
	assert_memory_equal(buf, chk, PG);
	/* a reset after shutdown brings it back */
	host_disable(&h);
	host_enable(&h, 16);
	assert_int_equal(nvme_ctrl_read32(h.ctrl, NVME_REG_CSTS) & NVME_CSTS_SHST_MASK, 0);
	q = ioq(&h, 0, 16, 16);
	assert_int_equal(rw(&h, q, nvme_cmd_read, 2, 3, 1, (uintptr_t)chk, 0, 0).sf, 0);
	assert_memory_equal(buf, chk, PG);
	/* abrupt shutdown with the queues still there */
	cc = nvme_ctrl_read32(h.ctrl, NVME_REG_CC);
	nvme_ctrl_write32(h.ctrl, NVME_REG_CC, cc | NVME_CC_SHN_ABRUPT);
	wait_csts(&h, NVME_CSTS_SHST_MASK, NVME_CSTS_SHST_CMPLT);
	host_fini(&h);
	free(buf);
	free(chk);
}

/* ------------------------------------------------------------ admin */

static void test_identify(void **state)
{
	struct nvme_ctrl_config cfg = { 0 };
	struct host h, h2;
	uint8_t *id = pages(1), *id2 = pages(1), *p;
	struct sqe a = { .opc = nvme_admin_identify };
	struct cqe c;

	cfg.serial = "SN-TEST-1";
	cfg.model = "test model";
	cfg.mdts = 5;
	cfg.aerl = 7;
	host_init_cfg(&h, NVME_CTRL_THREAD, 3, &cfg);
	host_enable(&h, 16);

	a.prp1 = (uintptr_t)id;
	a.cdw[0] = NVME_ID_CNS_CTRL;
	c = admin(&h, &a);
	assert_int_equal(c.sf, 0);
	assert_memory_equal(id + 4, "SN-TEST-1           ", 20);
	assert_memory_equal(id + 24, "test model ", 11);
	assert_int_equal(id[77], 5);                    /* MDTS */
	assert_int_equal(get32(id + 80), 0x00020000);   /* VER */
	assert_int_equal(id[111], 1);                   /* CNTRLTYPE */
	assert_int_equal(id[258], 3);                   /* ACL */
	assert_int_equal(id[259], 7);                   /* AERL */
	assert_int_equal(id[262], 63);                  /* ELPE */
	assert_int_equal(id[512], 0x66);                /* SQES */
	assert_int_equal(id[513], 0x44);                /* CQES */
	assert_int_equal(get32(id + 516), 3);           /* NN */
	assert_int_equal(get16(id + 520) & 0xd, 0xd);   /* ONCS compare, DSM, WZ */
	assert_int_equal(id[525] & 1, 1);               /* VWC: ram can flush */
	assert_int_equal(get32(id + 536), 0);           /* no SGLs */

	/* Identify Namespace 2: 4 KiB blocks */
	memset(id, 0xaa, PG);
	a.nsid = 2;
	a.cdw[0] = NVME_ID_CNS_NS;
	assert_int_equal(admin(&h, &a).sf, 0);
	assert_int_equal(get64(id + 0), NS_BYTES / 4096);   /* NSZE */
	assert_int_equal(get64(id + 8), NS_BYTES / 4096);   /* NCAP */
	assert_int_equal(id[25], 0);                    /* NLBAF */
	assert_int_equal(id[26], 0);                    /* FLBAS */
	assert_int_equal(id[128 + 2], 12);              /* LBAF0.LBADS */
	assert_int_equal(id[33] & 7, 1);                /* DLFEAT: zeroes */
	assert_int_equal(id[200], 0);                   /* reserved: zero */
	/* namespace 1: 512-byte blocks */
	a.nsid = 1;
	assert_int_equal(admin(&h, &a).sf, 0);
	assert_int_equal(get64(id), NS_BYTES / 512);
	assert_int_equal(id[128 + 2], 9);
	/* invalid NSIDs */
	a.nsid = 0;
	assert_int_equal(SFX(admin(&h, &a).sf), SF(0, NVME_SC_INVALID_NS));
	a.nsid = 4;
	assert_int_equal(SFX(admin(&h, &a).sf), SF(0, NVME_SC_INVALID_NS));

	/* active namespace list: NSIDs greater than CDW1.NSID */
	a.cdw[0] = NVME_ID_CNS_NS_ACTIVE_LIST;
	a.nsid = 0;
	assert_int_equal(admin(&h, &a).sf, 0);
	assert_int_equal(get32(id), 1);
	assert_int_equal(get32(id + 4), 2);
	assert_int_equal(get32(id + 8), 3);
	assert_int_equal(get32(id + 12), 0);
	a.nsid = 2;
	assert_int_equal(admin(&h, &a).sf, 0);
	assert_int_equal(get32(id), 3);
	assert_int_equal(get32(id + 4), 0);

	/* descriptors: EUI64, NGUID, UUID, CSI */
	a.cdw[0] = NVME_ID_CNS_NS_DESC_LIST;
	a.nsid = 2;
	assert_int_equal(admin(&h, &a).sf, 0);
	p = id;
	assert_int_equal(p[0], NVME_NIDT_EUI64);
	assert_int_equal(p[1], 8);
	p += 12;
	assert_int_equal(p[0], NVME_NIDT_NGUID);
	assert_int_equal(p[1], 16);
	p += 20;
	assert_int_equal(p[0], NVME_NIDT_UUID);
	assert_int_equal(p[1], 16);
	assert_int_equal(p[4 + 6] >> 4, 8);             /* UUID version */
	p += 20;
	assert_int_equal(p[0], NVME_NIDT_CSI);
	assert_int_equal(p[1], 1);
	assert_int_equal(p[4], 0);
	p += 5;
	assert_int_equal(p[0], 0);                      /* end of list */
	memcpy(id2, id, PG);
	/* the NGUID in Identify Namespace is the descriptor's */
	a.cdw[0] = NVME_ID_CNS_NS;
	assert_int_equal(admin(&h, &a).sf, 0);
	assert_memory_equal(id + 104, id2 + 16, 16);
	assert_memory_equal(id + 120, id2 + 4, 8);

	/* unknown CNS */
	a.cdw[0] = 0x1f;
	assert_int_equal(SFX(admin(&h, &a).sf), SF(0, NVME_SC_INVALID_FIELD));

	/* same serial, same NSID -> same identifiers; another NSID differs */
	memset(&cfg, 0, sizeof(cfg));
	cfg.serial = "SN-TEST-1";
	host_init_cfg(&h2, NVME_CTRL_INLINE, 2, &cfg);
	host_enable(&h2, 16);
	a.cdw[0] = NVME_ID_CNS_NS_DESC_LIST;
	a.nsid = 2;
	memset(id, 0, PG);
	assert_int_equal(admin(&h2, &a).sf, 0);
	assert_memory_equal(id, id2, 64);
	a.nsid = 1;
	assert_int_equal(admin(&h2, &a).sf, 0);
	assert_memory_not_equal(id + 4, id2 + 4, 8);
	host_fini(&h2);
	host_fini(&h);
	free(id);
	free(id2);
}

static void test_queue_errors(void **state)
{
	enum nvme_ctrl_mode mode = mode_of(state);
	struct nvme_ctrl_config cfg = { 0 };
	struct sqe a = { .opc = nvme_admin_set_features };
	struct host h;
	uint8_t *mem = pages(16);
	struct cqe c;

	cfg.mqes = 64;
	cfg.max_io_queues = 8;
	host_init_cfg(&h, mode, 1, &cfg);
	host_enable(&h, 16);

	/* Number of Queues: granted min(requested, 8) */
	a.cdw[0] = NVME_FEAT_NUM_QUEUES;
	a.cdw[1] = (15u << 16) | 1u;    /* 16 CQs, 2 SQs */
	c = admin(&h, &a);
	assert_int_equal(c.sf, 0);
	assert_int_equal(c.dw0, (7u << 16) | 1u);
	a.cdw[1] = 0xffff;
	assert_int_equal(SFX(admin(&h, &a).sf), SF(0, NVME_SC_INVALID_FIELD));

	/* CQ: QID 0, past the granted count */
	assert_int_equal(SFX(create_cq(&h, 0, 8, mem, 1).sf), SF(1, NVME_SC_QID_INVALID));
	assert_int_equal(SFX(create_cq(&h, 9, 8, mem, 1).sf), SF(1, NVME_SC_QID_INVALID));
	/* sizes: 1 entry, more than MQES + 1 */
	assert_int_equal(SFX(create_cq(&h, 1, 1, mem, 1).sf), SF(1, NVME_SC_QUEUE_SIZE));
	assert_int_equal(SFX(create_cq(&h, 1, 65, mem, 1).sf), SF(1, NVME_SC_QUEUE_SIZE));
	/* CAP.CQR = 1: PC = 0 is refused */
	assert_int_equal(SFX(create_cq(&h, 1, 8, mem, 0).sf), SF(0, NVME_SC_INVALID_FIELD));
	/* base not page aligned */
	assert_int_equal(SFX(create_cq(&h, 1, 8, mem + 64, 1).sf), SF(0, NVME_SC_INVALID_FIELD));
	assert_int_equal(create_cq(&h, 1, 8, mem, 1).sf, 0);
	assert_int_equal(SFX(create_cq(&h, 1, 8, mem + PG, 1).sf), SF(1, NVME_SC_QID_INVALID));

	/* SQ: CQ 0 / missing CQ -> Completion Queue Invalid */
	assert_int_equal(SFX(create_sq(&h, 1, 8, mem + 2 * PG, 0, 1).sf), SF(1, NVME_SC_CQ_INVALID));
	assert_int_equal(SFX(create_sq(&h, 1, 8, mem + 2 * PG, 2, 1).sf), SF(1, NVME_SC_CQ_INVALID));
	assert_int_equal(SFX(create_sq(&h, 3, 8, mem + 2 * PG, 1, 1).sf), SF(1, NVME_SC_QID_INVALID));
	assert_int_equal(SFX(create_sq(&h, 1, 0x10000, mem + 2 * PG, 1, 1).sf), SF(1, NVME_SC_QUEUE_SIZE));
	assert_int_equal(SFX(create_sq(&h, 1, 8, mem + 2 * PG, 1, 0).sf), SF(0, NVME_SC_INVALID_FIELD));
	assert_int_equal(create_sq(&h, 1, 8, mem + 2 * PG, 1, 1).sf, 0);
	assert_int_equal(create_sq(&h, 2, 8, mem + 3 * PG, 1, 1).sf, 0);
	assert_int_equal(SFX(create_sq(&h, 2, 8, mem + 4 * PG, 1, 1).sf), SF(1, NVME_SC_QID_INVALID));

	/* Number of Queues is fixed once I/O queues exist */
	a.cdw[1] = 0;
	assert_int_equal(SFX(admin(&h, &a).sf), SF(0, NVME_SC_CMD_SEQ_ERROR));
	/* Get Features returns what was granted */
	a.opc = nvme_admin_get_features;
	c = admin(&h, &a);
	assert_int_equal(c.sf, 0);
	assert_int_equal(c.dw0, (7u << 16) | 1u);

	/* deleting a CQ with SQs: Invalid Queue Deletion */
	assert_int_equal(SFX(delete_q(&h, nvme_admin_delete_cq, 1).sf), SF(1, NVME_SC_QUEUE_DELETION));
	assert_int_equal(SFX(delete_q(&h, nvme_admin_delete_sq, 0).sf), SF(1, NVME_SC_QID_INVALID));
	assert_int_equal(SFX(delete_q(&h, nvme_admin_delete_sq, 5).sf), SF(1, NVME_SC_QID_INVALID));
	assert_int_equal(delete_q(&h, nvme_admin_delete_sq, 1).sf, 0);
	assert_int_equal(SFX(delete_q(&h, nvme_admin_delete_sq, 1).sf), SF(1, NVME_SC_QID_INVALID));
	assert_int_equal(SFX(delete_q(&h, nvme_admin_delete_cq, 1).sf), SF(1, NVME_SC_QUEUE_DELETION));
	assert_int_equal(delete_q(&h, nvme_admin_delete_sq, 2).sf, 0);
	assert_int_equal(delete_q(&h, nvme_admin_delete_cq, 1).sf, 0);
	assert_int_equal(SFX(delete_q(&h, nvme_admin_delete_cq, 1).sf), SF(1, NVME_SC_QID_INVALID));
	assert_int_equal(SFX(delete_q(&h, nvme_admin_delete_cq, 0).sf), SF(1, NVME_SC_QID_INVALID));

	/* IOSQES other than 6: Invalid Field at creation */
	host_disable(&h);
	host_program(&h, 16);
	nvme_ctrl_write32(h.ctrl, NVME_REG_CC, NVME_CC_EN | (4u << NVME_CC_IOCQES_SHIFT));
	wait_csts(&h, NVME_CSTS_RDY, NVME_CSTS_RDY);
	assert_int_equal(create_cq(&h, 1, 8, mem, 1).sf, 0);
	assert_int_equal(SFX(create_sq(&h, 1, 8, mem + 2 * PG, 1, 1).sf), SF(0, NVME_SC_INVALID_FIELD));

	/* unknown admin opcode, FUSE set */
	a.opc = 0x7f;
	assert_int_equal(SFX(admin(&h, &a).sf), SF(0, NVME_SC_INVALID_OPCODE));
	a.opc = nvme_admin_keep_alive;
	assert_int_equal(admin(&h, &a).sf, 0);
	a.flags = 1;
	assert_int_equal(SFX(admin(&h, &a).sf), SF(0, NVME_SC_INVALID_FIELD));
	host_fini(&h);
	free(mem);
}

static void test_features(void **state)
{
	struct nvme_ctrl_config cfg = { 0 };
	struct sqe a = { 0 };
	struct host h;
	struct cqe c;

	host_init(&h, mode_of(state), 1);
	host_enable(&h, 16);
	/* VWC: present (ram can flush), on by default, switchable */
	a.opc = nvme_admin_get_features;
	a.cdw[0] = NVME_FEAT_VOLATILE_WC;
	c = admin(&h, &a);
	assert_int_equal(c.sf, 0);
	assert_int_equal(c.dw0, 1);
	a.opc = nvme_admin_set_features;
	a.cdw[1] = 0;
	assert_int_equal(admin(&h, &a).sf, 0);
	a.opc = nvme_admin_get_features;
	assert_int_equal(admin(&h, &a).dw0, 0);
	/* arbitration, stored */
	a.opc = nvme_admin_set_features;
	a.cdw[0] = NVME_FEAT_ARBITRATION;
	a.cdw[1] = 0x03020103;
	assert_int_equal(admin(&h, &a).sf, 0);
	a.opc = nvme_admin_get_features;
	assert_int_equal(admin(&h, &a).dw0, 0x03020103);
	/* default (SEL 01b) and supported capabilities (SEL 11b) */
	a.cdw[0] = NVME_FEAT_ARBITRATION | (1u << 8);
	assert_int_equal(admin(&h, &a).dw0, 0);
	a.cdw[0] = NVME_FEAT_ARBITRATION | (3u << 8);
	assert_int_equal(admin(&h, &a).dw0, 0x4);
	/* temperature threshold default */
	a.cdw[0] = NVME_FEAT_TEMP_THRESH;
	assert_int_equal(admin(&h, &a).dw0, 343);
	/* save bit: not saveable */
	a.opc = nvme_admin_set_features;
	a.cdw[0] = NVME_FEAT_ARBITRATION | (1u << 31);
	assert_int_equal(SFX(admin(&h, &a).sf), SF(1, NVME_SC_FEATURE_NOT_SAVEABLE));
	/* power state 1 does not exist */
	a.cdw[0] = NVME_FEAT_POWER_MGMT;
	a.cdw[1] = 1;
	assert_int_equal(SFX(admin(&h, &a).sf), SF(0, NVME_SC_INVALID_FIELD));
	/* unknown feature */
	a.cdw[0] = 0x7e;
	assert_int_equal(SFX(admin(&h, &a).sf), SF(0, NVME_SC_INVALID_FIELD));
	host_fini(&h);

	/* no VWC reported when configured off */
	cfg.vwc = 2;
	host_init_cfg(&h, mode_of(state), 1, &cfg);
	host_enable(&h, 16);
	a.opc = nvme_admin_set_features;
	a.cdw[0] = NVME_FEAT_VOLATILE_WC;
	a.cdw[1] = 1;
	assert_int_equal(SFX(admin(&h, &a).sf), SF(0, NVME_SC_INVALID_FIELD));
	host_fini(&h);
}

static struct cqe get_log(struct host *h, uint8_t lid, bool rae, uint32_t numd,
			  uint64_t off, void *buf)
{
	struct sqe a = { .opc = nvme_admin_get_log_page, .nsid = 0xffffffff };

	a.prp1 = (uintptr_t)buf;
	a.cdw[0] = lid | (rae ? 1u << 15 : 0) | (((numd - 1) & 0xffff) << 16);
	a.cdw[1] = (numd - 1) >> 16;
	a.cdw[2] = (uint32_t)off;
	a.cdw[3] = (uint32_t)(off >> 32);
	return admin(h, &a);
}

static void test_log_pages(void **state)
{
	struct host h;
	struct hq *q = host_up(&h, mode_of(state), 1);
	uint8_t *log = pages(2), *buf = pages(4);
	struct sqe bad = { .opc = 0x7d, .nsid = 1 };
	uint16_t cid1, cid2;
	unsigned int i;

	/* two failed commands: newest first in the Error Information log */
	cid1 = submit(&h, q, &bad);
	assert_int_equal(SFX(wait_cqe(&h, q).sf), SF(0, NVME_SC_INVALID_OPCODE));
	{
		struct sqe r = rw_sqe(nvme_cmd_read, 1, NS_BYTES / 512, 1, (uintptr_t)buf, 0, 0);

		cid2 = submit(&h, q, &r);
		assert_int_equal(SFX(wait_cqe(&h, q).sf), SF(0, NVME_SC_LBA_RANGE));
	}
	memset(log, 0xee, 2 * PG);
	assert_int_equal(get_log(&h, NVME_LOG_ERROR, true, 48, 0, log).sf, 0);
	assert_int_equal(get64(log), 2);                 /* error count */
	assert_int_equal(get16(log + 8), 1);             /* SQID */
	assert_int_equal(get16(log + 10), cid2);
	assert_int_equal(SFX(get16(log + 12) >> 1), SF(0, NVME_SC_LBA_RANGE));
	assert_int_equal(get64(log + 16), NS_BYTES / 512);  /* LBA */
	assert_int_equal(get32(log + 24), 1);            /* NSID */
	assert_int_equal(get64(log + 64), 1);
	assert_int_equal(get16(log + 64 + 10), cid1);
	assert_int_equal(get64(log + 128), 0);
	/* offset 64 and 16 dwords: the second entry only, rest untouched */
	memset(log, 0xee, 2 * PG);
	assert_int_equal(get_log(&h, NVME_LOG_ERROR, true, 16, 64, log).sf, 0);
	assert_int_equal(get64(log), 1);
	assert_int_equal(log[64], 0xee);
	/* beyond the log: zero filled */
	assert_int_equal(get_log(&h, NVME_LOG_FW_SLOT, false, 256, 0, log).sf, 0);
	assert_int_equal(log[0], 1);                     /* AFI: slot 1 */
	assert_memory_equal(log + 8, "0.1.0   ", 8);
	for (i = 512; i < 1024; i++)
		assert_int_equal(log[i], 0);
	/* offset past the end, misaligned offset, unknown log */
	assert_int_equal(SFX(get_log(&h, NVME_LOG_SMART, false, 1, 512, log).sf),
			 SF(0, NVME_SC_INVALID_FIELD));
	assert_int_equal(SFX(get_log(&h, NVME_LOG_SMART, false, 1, 2, log).sf),
			 SF(0, NVME_SC_INVALID_FIELD));
	assert_int_equal(SFX(get_log(&h, 0x70, false, 1, 0, log).sf),
			 SF(1, NVME_SC_INVALID_LOG_PAGE));

	/* SMART: 3 writes of 8 KiB, 2 reads (one a compare) */
	for (i = 0; i < 3; i++)
		assert_int_equal(rw(&h, q, nvme_cmd_write, 1, 16 * i, 16, (uintptr_t)buf,
				    (uintptr_t)buf + PG, 0).sf, 0);
	assert_int_equal(rw(&h, q, nvme_cmd_read, 1, 0, 16, (uintptr_t)buf,
			    (uintptr_t)buf + PG, 0).sf, 0);
	assert_int_equal(rw(&h, q, nvme_cmd_compare, 1, 0, 16, (uintptr_t)buf,
			    (uintptr_t)buf + PG, 0).sf, 0);
	memset(log, 0xee, PG);
	assert_int_equal(get_log(&h, NVME_LOG_SMART, false, 128, 0, log).sf, 0);
	assert_int_equal(get16(log + 1), 310);           /* temperature */
	assert_int_equal(log[3], 100);                   /* spare */
	assert_int_equal(get64(log + 32), 1);            /* 32 sectors -> 1 unit */
	assert_int_equal(get64(log + 48), 1);
	assert_int_equal(get64(log + 64), 2);            /* host read commands */
	assert_int_equal(get64(log + 80), 3);            /* host write commands */
	assert_int_equal(get64(log + 176), 5);           /* error log entries */
	host_fini(&h);
	free(log);
	free(buf);
}

/* ------------------------------------------------------------ Abort, AER */

static void test_abort(void **state)
{
	struct host h;
	struct hq *q = host_up(&h, mode_of(state), 1);
	struct nvme_ctrl_fault f = { .opcode = nvme_cmd_read, .qid = -1,
				     .delay_us = 30000000 };
	struct sqe a = { .opc = nvme_admin_abort };
	struct nvme_ctrl_stats st;
	uint8_t *buf = pages(1);
	struct sqe r = rw_sqe(nvme_cmd_read, 1, 0, 1, (uintptr_t)buf, 0, 0);
	uint16_t cid;
	struct cqe c;

	assert_int_equal(nvme_ctrl_add_fault(h.ctrl, &f), 0);
	cid = submit(&h, q, &r);
	/* let the controller fetch it */
	assert_int_equal(wait_cqe_ms(&h, q, &c, 50), -ETIMEDOUT);
	a.cdw[0] = 1u | ((uint32_t)cid << 16);
	c = admin(&h, &a);
	assert_int_equal(c.sf, 0);
	assert_int_equal(c.dw0 & 1, 0);                 /* aborted */
	c = wait_cqe(&h, q);
	assert_int_equal(c.cid, cid);
	assert_int_equal(SFX(c.sf), SF(0, NVME_SC_ABORT_REQ));
	/* a CID nobody knows: not aborted */
	a.cdw[0] = 1u | (0x7777u << 16);
	c = admin(&h, &a);
	assert_int_equal(c.sf, 0);
	assert_int_equal(c.dw0 & 1, 1);
	a.cdw[0] = 9u;
	assert_int_equal(admin(&h, &a).dw0 & 1, 1);
	nvme_ctrl_get_stats(h.ctrl, &st);
	assert_int_equal(st.aborted, 1);
	nvme_ctrl_clear_faults(h.ctrl);
	assert_int_equal(rw(&h, q, nvme_cmd_read, 1, 0, 1, (uintptr_t)buf, 0, 0).sf, 0);
	host_fini(&h);
	free(buf);
}

static void test_aer(void **state)
{
	struct host h;
	struct hq *q;
	struct sqe a = { .opc = nvme_admin_async_event };
	uint8_t *log = pages(1);
	struct nvme_ctrl_stats st;
	uint16_t cids[4];
	unsigned int i;
	struct cqe c;

	host_init(&h, mode_of(state), 1);
	host_enable(&h, 16);
	q = ioq(&h, 0, 8, 8);
	/* AERL = 3: four held, the fifth refused at once */
	for (i = 0; i < 4; i++)
		cids[i] = submit(&h, &h.aq, &a);
	c = cmd(&h, &h.aq, &a);
	assert_int_equal(SFX(c.sf), SF(1, NVME_SC_ASYNC_LIMIT));
	assert_int_equal(wait_cqe_ms(&h, &h.aq, &c, 20), -ETIMEDOUT);

	/* a doorbell of a queue that does not exist: Error event 00h */
	nvme_ctrl_write32(h.ctrl, nvme_sq_tail_doorbell(5, h.dstrd), 1);
	c = wait_cqe(&h, &h.aq);
	assert_int_equal(c.cid, cids[0]);
	assert_int_equal(c.sf, 0);
	assert_int_equal(NVME_AER_TYPE(c.dw0), 0);
	assert_int_equal(NVME_AER_INFO(c.dw0), 0x00);
	assert_int_equal(NVME_AER_LOG_PAGE(c.dw0), NVME_LOG_ERROR);
	/* a tail past the queue: masked until the Error log is read */
	nvme_ctrl_write32(h.ctrl, nvme_sq_tail_doorbell(1, h.dstrd), 8);
	assert_int_equal(wait_cqe_ms(&h, &h.aq, &c, 50), -ETIMEDOUT);
	assert_int_equal(get_log(&h, NVME_LOG_ERROR, true, 16, 0, log).sf, 0);
	assert_int_equal(wait_cqe_ms(&h, &h.aq, &c, 50), -ETIMEDOUT);
	assert_int_equal(get_log(&h, NVME_LOG_ERROR, false, 16, 0, log).sf, 0);
	c = wait_cqe(&h, &h.aq);
	assert_int_equal(c.cid, cids[1]);
	assert_int_equal(NVME_AER_INFO(c.dw0), 0x01);
	/* a CQ head that frees entries never posted */
	assert_int_equal(get_log(&h, NVME_LOG_ERROR, false, 16, 0, log).sf, 0);
	nvme_ctrl_write32(h.ctrl, nvme_cq_head_doorbell(1, h.dstrd), 3);
	c = wait_cqe(&h, &h.aq);
	assert_int_equal(c.cid, cids[2]);
	assert_int_equal(NVME_AER_INFO(c.dw0), 0x01);
	nvme_ctrl_get_stats(h.ctrl, &st);
	assert_int_equal(st.invalid_doorbells, 3);
	/* the queue still works */
	{
		uint8_t *buf = pages(1);

		assert_int_equal(rw(&h, q, nvme_cmd_read, 1, 0, 1, (uintptr_t)buf, 0, 0).sf, 0);
		free(buf);
	}
	host_fini(&h);
	free(log);
}

/* ------------------------------------------------------------ I/O */

static void test_io_errors(void **state)
{
	struct nvme_ctrl_config cfg = { 0 };
	struct host h;
	struct hq *q;
	uint8_t *buf = pages(64);
	struct sqe a;

	cfg.mdts = 2;   /* 16 KiB */
	host_init_cfg(&h, mode_of(state), 2, &cfg);
	host_enable(&h, 16);
	q = ioq(&h, 0, 16, 16);

	a = rw_sqe(0x7f, 1, 0, 1, (uintptr_t)buf, 0, 0);
	assert_int_equal(SFX(cmd(&h, q, &a).sf), SF(0, NVME_SC_INVALID_OPCODE));
	a = rw_sqe(nvme_cmd_read, 1, 0, 1, (uintptr_t)buf, 0, 0);
	a.flags = 0x1;          /* FUSE: first of a fused pair */
	assert_int_equal(SFX(cmd(&h, q, &a).sf), SF(0, NVME_SC_INVALID_FIELD));
	a.flags = 0x40;         /* PSDT: SGL */
	assert_int_equal(SFX(cmd(&h, q, &a).sf), SF(0, NVME_SC_INVALID_FIELD));
	a = rw_sqe(nvme_cmd_read, 0, 0, 1, (uintptr_t)buf, 0, 0);
	assert_int_equal(SFX(cmd(&h, q, &a).sf), SF(0, NVME_SC_INVALID_NS));
	a = rw_sqe(nvme_cmd_write, 3, 0, 1, (uintptr_t)buf, 0, 0);
	assert_int_equal(SFX(cmd(&h, q, &a).sf), SF(0, NVME_SC_INVALID_NS));
	a = rw_sqe(nvme_cmd_read, 0xffffffff, 0, 1, (uintptr_t)buf, 0, 0);
	assert_int_equal(SFX(cmd(&h, q, &a).sf), SF(0, NVME_SC_INVALID_NS));
	/* LBA range: last block fine, one past the end not */
	a = rw_sqe(nvme_cmd_read, 2, NS_BYTES / 4096 - 1, 1, (uintptr_t)buf, 0, 0);
	assert_int_equal(cmd(&h, q, &a).sf, 0);
	a = rw_sqe(nvme_cmd_read, 2, NS_BYTES / 4096 - 1, 2, (uintptr_t)buf,
		   (uintptr_t)buf + PG, 0);
	assert_int_equal(SFX(cmd(&h, q, &a).sf), SF(0, NVME_SC_LBA_RANGE));
	a = rw_sqe(nvme_cmd_read, 2, 1ull << 40, 1, (uintptr_t)buf, 0, 0);
	assert_int_equal(SFX(cmd(&h, q, &a).sf), SF(0, NVME_SC_LBA_RANGE));
	a = rw_sqe(nvme_cmd_write_zeroes, 2, NS_BYTES / 4096, 1, 0, 0, 0);
	assert_int_equal(SFX(cmd(&h, q, &a).sf), SF(0, NVME_SC_LBA_RANGE));
	/* MDTS 16 KiB: 4 pages fine, 5 not */
	a = rw_sqe(nvme_cmd_read, 2, 0, 4, (uintptr_t)buf, (uintptr_t)(buf + 8 * PG), 0);
	put64(buf + 8 * PG, (uintptr_t)buf + PG);
	put64(buf + 8 * PG + 8, (uintptr_t)buf + 2 * PG);
	put64(buf + 8 * PG + 16, (uintptr_t)buf + 3 * PG);
	assert_int_equal(cmd(&h, q, &a).sf, 0);
	a = rw_sqe(nvme_cmd_read, 2, 0, 5, (uintptr_t)buf, (uintptr_t)(buf + 8 * PG), 0);
	assert_int_equal(SFX(cmd(&h, q, &a).sf), SF(0, NVME_SC_INVALID_FIELD));
	/* flush: one namespace, all, a bad one */
	a = (struct sqe){ .opc = nvme_cmd_flush, .nsid = 2 };
	assert_int_equal(cmd(&h, q, &a).sf, 0);
	a.nsid = 0xffffffff;
	assert_int_equal(cmd(&h, q, &a).sf, 0);
	a.nsid = 7;
	assert_int_equal(SFX(cmd(&h, q, &a).sf), SF(0, NVME_SC_INVALID_NS));
	host_fini(&h);
	free(buf);
}

/*
 * Write through PRPs made of scattered pages (every other page of a pool,
 * so nothing coalesces; or adjacent pages, which do), check the backend,
 * read back through another layout.
 */
static void prp_roundtrip(struct host *h, struct hq *q, unsigned int nsid,
			  size_t len, uint32_t off, bool adjacent, uint32_t list_off,
			  uint64_t slba, uint32_t seed)
{
	unsigned int n = (unsigned int)((off + len + PG - 1) / PG), i;
	uint8_t *pool = pages(2 * n + 2), *lists = pages(n / 500 + 3);
	uint8_t *src = malloc(len), *chk = malloc(len);
	uint8_t **pg = calloc(n + 1, sizeof(*pg));
	uint32_t lbs = nsid == 1 ? 512 : 4096;
	uint64_t prp1, prp2;
	size_t done;

	assert_non_null(src);
	assert_non_null(chk);
	fill(src, len, seed);
	for (i = 0; i < n; i++)
		pg[i] = pool + (size_t)(adjacent ? i : 2 * i + 1) * PG;
	/* scatter the source into the pages */
	done = 0;
	for (i = 0; i < n; i++) {
		size_t o = i ? 0 : off, k = PG - o < len - done ? PG - o : len - done;

		memcpy(pg[i] + o, src + done, k);
		done += k;
	}
	build_prps(pg, n, off, len, lists, list_off, &prp1, &prp2);
	assert_int_equal(rw(h, q, nvme_cmd_write, nsid, slba, (uint32_t)(len / lbs),
			    prp1, prp2, 0).sf, 0);
	backend_read(h->dev[nsid - 1], slba * lbs, chk, (uint32_t)len);
	assert_memory_equal(src, chk, len);
	/* read back into the reversed page order */
	memset(pool, 0, (2 * n + 2) * (size_t)PG);
	for (i = 0; i < n / 2; i++) {
		uint8_t *t = pg[i];

		pg[i] = pg[n - 1 - i];
		pg[n - 1 - i] = t;
	}
	memset(lists, 0, (n / 500 + 3) * (size_t)PG);
	build_prps(pg, n, off, len, lists, 0, &prp1, &prp2);
	assert_int_equal(rw(h, q, nvme_cmd_read, nsid, slba, (uint32_t)(len / lbs),
			    prp1, prp2, 0).sf, 0);
	done = 0;
	for (i = 0; i < n; i++) {
		size_t o = i ? 0 : off, k = PG - o < len - done ? PG - o : len - done;

		memcpy(chk + done, pg[i] + o, k);
		done += k;
	}
	assert_memory_equal(src, chk, len);
	free(pool);
	free(lists);
	free(src);
	free(chk);
	free(pg);
}

static void test_prp(void **state)
{
	struct nvme_ctrl_config cfg = { 0 };
	struct host h;
	struct hq *q;
	static const size_t sizes[] = { 512, 4096, 8192, 12288, 65536, 1 << 20 };
	static const uint32_t offs[] = { 0, 512, 3584 };
	unsigned int s, o, seed = 1;

	cfg.mdts = 11;          /* 8 MiB: lists of more than 512 entries */
	host_init_cfg(&h, mode_of(state), 2, &cfg);
	host_enable(&h, 16);
	q = ioq(&h, 0, 32, 32);
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (o = 0; o < 3; o++) {
			prp_roundtrip(&h, q, 1, sizes[s], offs[o], false, 0, 8 * s + o, seed++);
			prp_roundtrip(&h, q, 1, sizes[s], offs[o], true, 0, 4096 + 8 * s, seed++);
		}
	/* 4 KiB blocks: 1, 2, 3 pages; a list starting mid-page */
	prp_roundtrip(&h, q, 2, 4096, 0, false, 0, 1, seed++);
	prp_roundtrip(&h, q, 2, 8192, 0, false, 0, 2, seed++);
	prp_roundtrip(&h, q, 2, 12288, 0, false, 0, 3, seed++);
	prp_roundtrip(&h, q, 2, 12288, 0, false, 4000, 3, seed++);
	/* chained lists: 513, 1024, 1500 and 2048 pages */
	prp_roundtrip(&h, q, 2, 513 * 4096, 0, false, 0, 100, seed++);
	prp_roundtrip(&h, q, 2, 1024 * 4096, 0, false, 0, 1000, seed++);
	prp_roundtrip(&h, q, 1, 1500 * 4096, 1024, false, 8, 50000, seed++);
	prp_roundtrip(&h, q, 2, 2048 * 4096, 0, false, 4088, 4000, seed++);
	host_fini(&h);
}

/* Backend limits force a transfer into several bios, split mid-page. */
static void test_prp_chunks(void **state)
{
	struct nvme_ctrl_config cfg = { 0 };
	struct host h;
	struct hq *q;

	/* 8 KiB and 4 segments per bio */
	host_init_dev(&h, mode_of(state), 1, &cfg, ram(NS_BYTES, 512, 16, 4));
	host_enable(&h, 16);
	q = ioq(&h, 0, 16, 16);
	prp_roundtrip(&h, q, 1, 65536, 512, false, 0, 7, 1);
	prp_roundtrip(&h, q, 1, 65536, 0, true, 0, 300, 2);
	prp_roundtrip(&h, q, 1, 1 << 20, 3584, false, 0, 1000, 3);
	host_fini(&h);
}

static void test_prp_offset_invalid(void **state)
{
	struct host h;
	struct hq *q = host_up(&h, mode_of(state), 1);
	uint8_t *buf = pages(8);
	struct sqe a;

	/* PRP1 not dword aligned */
	a = rw_sqe(nvme_cmd_read, 1, 0, 1, (uintptr_t)buf + 2, 0, 0);
	assert_int_equal(SFX(cmd(&h, q, &a).sf), SF(0, NVME_SC_PRP_INVALID_OFFSET));
	/* PRP2 as the second page, with an offset */
	a = rw_sqe(nvme_cmd_read, 1, 0, 16, (uintptr_t)buf, (uintptr_t)buf + PG + 512, 0);
	assert_int_equal(SFX(cmd(&h, q, &a).sf), SF(0, NVME_SC_PRP_INVALID_OFFSET));
	/* list pointer not qword aligned */
	a = rw_sqe(nvme_cmd_read, 1, 0, 24, (uintptr_t)buf, (uintptr_t)buf + 4 * PG + 4, 0);
	assert_int_equal(SFX(cmd(&h, q, &a).sf), SF(0, NVME_SC_PRP_INVALID_OFFSET));
	/* a list entry with an offset */
	put64(buf + 4 * PG, (uintptr_t)buf + PG);
	put64(buf + 4 * PG + 8, (uintptr_t)buf + 2 * PG + 8);
	a = rw_sqe(nvme_cmd_read, 1, 0, 24, (uintptr_t)buf, (uintptr_t)buf + 4 * PG, 0);
	assert_int_equal(SFX(cmd(&h, q, &a).sf), SF(0, NVME_SC_PRP_INVALID_OFFSET));
	put64(buf + 4 * PG + 8, (uintptr_t)buf + 2 * PG);
	assert_int_equal(cmd(&h, q, &a).sf, 0);
	/* Identify into an unaligned PRP1 spanning two pages is fine */
	a = (struct sqe){ .opc = nvme_admin_identify, .prp1 = (uintptr_t)buf + 5 * PG + 100,
			  .prp2 = (uintptr_t)buf + 6 * PG };
	a.cdw[0] = NVME_ID_CNS_CTRL;
	assert_int_equal(admin(&h, &a).sf, 0);
	assert_int_equal(buf[5 * PG + 100 + 516], 1);   /* NN */
	host_fini(&h);
	free(buf);
}

/* Many passes over queues of each size: phase tags, SQ head, CIDs. */
static void test_queue_wrap(void **state)
{
	static const uint32_t sizes[] = { 2, 3, 4, 16, 1024 };
	struct host h;
	uint8_t *buf = pages(1);
	unsigned int s;

	host_init(&h, mode_of(state), 1);
	host_enable(&h, 2);     /* the admin queue wraps too */
	for (s = 0; s < 5; s++) {
		uint32_t size = sizes[s], i, passes = size < 64 ? 40 : 3;
		struct hq *q = ioq(&h, 0, size, size);
		uint32_t batch = size - 1, done = 0, flips = 0;

		while (done < passes * size) {
			uint16_t cid[1024];
			uint32_t k;

			for (k = 0; k < batch; k++) {
				struct sqe a = rw_sqe(k & 1 ? nvme_cmd_read : nvme_cmd_write,
						      1, (done + k) % 64, 1, (uintptr_t)buf, 0, 0);

				cid[k] = submit(&h, q, &a);
			}
			for (k = 0; k < batch; k++) {
				struct cqe c;
				uint8_t ph = q->phase;

				c = wait_cqe(&h, q);
				assert_int_equal(c.sf, 0);
				assert_int_equal(c.sqid, q->qid);
				flips += q->phase != ph;
				/* ram completes in order here; CIDs all ours */
				for (i = 0; i < batch && cid[i] != c.cid; i++)
					;
				assert_true(i < batch);
				cid[i] = 0xffff;
				assert_true(c.sqhd < size);
			}
			done += batch;
			/* everything fetched: SQ head = our tail */
		}
		assert_true(flips >= done / size - 1);
		ioq_delete(&h, 0);
	}
	host_fini(&h);
	free(buf);
}

/* The controller never overwrites an entry the host has not released. */
static void test_cq_full(void **state)
{
	struct host h;
	struct hq *q;
	uint8_t *buf = pages(1);
	struct cqe c;
	unsigned int i, got = 0;

	host_init(&h, mode_of(state), 1);
	host_enable(&h, 16);
	q = ioq(&h, 0, 16, 4);
	for (i = 0; i < 12; i++) {
		struct sqe a = rw_sqe(nvme_cmd_read, 1, i, 1, (uintptr_t)buf, 0, 0);

		submit(&h, q, &a);
	}
	/* three entries (size - 1) appear; the fourth slot stays old */
	for (i = 0; i < 200; i++)
		tick(&h, q);
	{
		uint64_t end = now_ms() + 10000;

		while (true) {
			uint32_t n = 0, k;

			for (k = 0; k < 4; k++) {
				uint32_t dw3 = __atomic_load_n((uint32_t *)(void *)(q->cq + 16 * k + 12),
							       __ATOMIC_ACQUIRE);
				n += (dw3 >> 16) & 1;
			}
			if (n == 3)
				break;
			assert_int_equal(n < 3, 1);
			assert_true(now_ms() < end);
			tick(&h, q);
		}
	}
	for (i = 0; i < 50; i++)
		tick(&h, q);
	assert_int_equal((get32(q->cq + 48 + 12) >> 16) & 1, 0);
	/* consume without ringing, then ring once: the rest follow */
	for (i = 0; i < 3; i++) {
		assert_true(cqe_peek(q, &c));
		assert_int_equal(c.sf, 0);
		cqe_pop(&h, q, false);
		got++;
	}
	cq_ring(&h, q);
	while (got < 12) {
		c = wait_cqe(&h, q);
		assert_int_equal(c.sf, 0);
		got++;
	}
	assert_int_equal(wait_cqe_ms(&h, q, &c, 20), -ETIMEDOUT);
	host_fini(&h);
	free(buf);
}

static void check_zero(struct host *h, struct hq *q, uint32_t nsid, uint64_t slba,
		       uint32_t nlb, uint8_t *buf, bool zero)
{
	uint32_t i, n = nlb * (nsid == 1 ? 512 : 4096);

	memset(buf, 0xcc, n);
	assert_true(n <= 2 * PG);
	assert_int_equal(rw(h, q, nvme_cmd_read, nsid, slba, nlb, (uintptr_t)buf,
			    (uintptr_t)buf + PG, 0).sf, 0);
	for (i = 0; i < n; i++)
		if ((buf[i] == 0) != zero)
			fail_msg("byte %u is %u", i, buf[i]);
}

static void test_dsm_write_zeroes(void **state)
{
	struct host h;
	struct hq *q = host_up(&h, mode_of(state), 1);
	uint8_t *buf = pages(2), *rng = pages(1), *data = pages(2);
	struct sqe a;

	memset(data, 0x5a, 2 * PG);
	for (int i = 0; i < 8; i++)
		assert_int_equal(rw(&h, q, nvme_cmd_write, 1, 16 * i, 16, (uintptr_t)data,
				    (uintptr_t)data + PG, 0).sf, 0);
	/* DSM deallocate of two ranges, one empty */
	put32(rng, 0);
	put32(rng + 4, 16);
	put64(rng + 8, 16);
	put32(rng + 16 + 4, 0);
	put64(rng + 16 + 8, 0);
	put32(rng + 32 + 4, 8);
	put64(rng + 32 + 8, 64);
	a = (struct sqe){ .opc = nvme_cmd_dsm, .nsid = 1, .prp1 = (uintptr_t)rng };
	a.cdw[0] = 2;
	a.cdw[1] = NVME_DSM_AD;
	assert_int_equal(cmd(&h, q, &a).sf, 0);
	check_zero(&h, q, 1, 16, 16, buf, true);
	check_zero(&h, q, 1, 64, 8, buf, true);
	check_zero(&h, q, 1, 0, 16, buf, false);
	check_zero(&h, q, 1, 72, 8, buf, false);
	/* hints only (no AD): nothing changes */
	a.cdw[1] = 0x3;
	put64(rng + 8, 0);
	assert_int_equal(cmd(&h, q, &a).sf, 0);
	check_zero(&h, q, 1, 0, 16, buf, false);
	/* a range past the end: LBA Out of Range, nothing deallocated */
	a.cdw[1] = NVME_DSM_AD;
	put64(rng + 32 + 8, NS_BYTES / 512 - 4);
	assert_int_equal(SFX(cmd(&h, q, &a).sf), SF(0, NVME_SC_LBA_RANGE));
	check_zero(&h, q, 1, 0, 16, buf, false);
	/* Write Zeroes, with and without DEAC */
	a = rw_sqe(nvme_cmd_write_zeroes, 1, 33, 5, 0, 0, 0);
	assert_int_equal(cmd(&h, q, &a).sf, 0);
	check_zero(&h, q, 1, 33, 5, buf, true);
	check_zero(&h, q, 1, 38, 2, buf, false);
	check_zero(&h, q, 1, 32, 1, buf, false);
	a = rw_sqe(nvme_cmd_write_zeroes, 1, 96, 16, 0, 0, NVME_WZ_DEAC);
	assert_int_equal(cmd(&h, q, &a).sf, 0);
	check_zero(&h, q, 1, 96, 16, buf, true);
	host_fini(&h);
	free(buf);
	free(rng);
	free(data);
}

static void test_compare(void **state)
{
	struct host h;
	struct hq *q = host_up(&h, mode_of(state), 2);
	uint8_t *data = pages(3);

	fill(data, 3 * PG, 4);
	/* 8 KiB over two pages (4 KiB blocks) */
	assert_int_equal(rw(&h, q, nvme_cmd_write, 2, 10, 2, (uintptr_t)data,
			    (uintptr_t)data + PG, 0).sf, 0);
	assert_int_equal(rw(&h, q, nvme_cmd_compare, 2, 10, 2, (uintptr_t)data,
			    (uintptr_t)data + PG, 0).sf, 0);
	data[PG + 100] ^= 1;
	assert_int_equal(SFX(rw(&h, q, nvme_cmd_compare, 2, 10, 2, (uintptr_t)data,
				(uintptr_t)data + PG, 0).sf),
			 SF(NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILED));
	/* 4 KiB from a page offset (512-byte blocks), mismatch in page 2 */
	assert_int_equal(rw(&h, q, nvme_cmd_write, 1, 40, 8, (uintptr_t)data + 1024,
			    (uintptr_t)data + PG, 0).sf, 0);
	assert_int_equal(rw(&h, q, nvme_cmd_compare, 1, 40, 8, (uintptr_t)data + 1024,
			    (uintptr_t)data + PG, 0).sf, 0);
	data[PG + 200] ^= 1;
	assert_int_equal(SFX(rw(&h, q, nvme_cmd_compare, 1, 40, 8, (uintptr_t)data + 1024,
				(uintptr_t)data + PG, 0).sf),
			 SF(NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILED));
	/* FUA write */
	assert_int_equal(rw(&h, q, nvme_cmd_write, 2, 20, 1, (uintptr_t)data, 0,
			    NVME_RW_FUA).sf, 0);
	host_fini(&h);
	free(data);
}

static void test_faults(void **state)
{
	struct host h;
	struct hq *q = host_up(&h, mode_of(state), 1);
	uint8_t *buf = pages(1), *chk = pages(1);
	struct nvme_ctrl_fault f = { .opcode = nvme_cmd_write, .qid = -1, .slba = 100,
				     .nlb = 10, .count = 1,
				     .status = NVME_SF(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT) };
	struct nvme_ctrl_stats st;
	struct sqe a;
	struct cqe c;
	uint64_t t0;

	assert_int_equal(nvme_ctrl_add_fault(h.ctrl, &f), 0);
	memset(buf, 0x77, PG);
	/* outside the range: no match */
	assert_int_equal(rw(&h, q, nvme_cmd_write, 1, 90, 8, (uintptr_t)buf, 0, 0).sf, 0);
	/* overlapping: the status, and the write did not happen */
	assert_int_equal(SFX(rw(&h, q, nvme_cmd_write, 1, 105, 8, (uintptr_t)buf, 0, 0).sf),
			 SF(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT));
	backend_read(h.dev[0], 105 * 512, chk, 512);
	assert_int_equal(chk[0], 0);
	/* count 1: gone now */
	assert_int_equal(rw(&h, q, nvme_cmd_write, 1, 105, 8, (uintptr_t)buf, 0, 0).sf, 0);

	/* drop: executed, never completed */
	f = (struct nvme_ctrl_fault){ .opcode = nvme_cmd_write, .qid = 1, .drop = true,
				      .count = 1 };
	assert_int_equal(nvme_ctrl_add_fault(h.ctrl, &f), 0);
	memset(buf, 0x31, PG);
	a = rw_sqe(nvme_cmd_write, 1, 200, 8, (uintptr_t)buf, 0, 0);
	submit(&h, q, &a);
	assert_int_equal(wait_cqe_ms(&h, q, &c, 100), -ETIMEDOUT);
	backend_read(h.dev[0], 200 * 512, chk, PG);
	assert_int_equal(chk[0], 0x31);
	nvme_ctrl_get_stats(h.ctrl, &st);
	assert_int_equal(st.dropped, 1);
	/* the SQ head moved past it: the next command reports it */
	a = rw_sqe(nvme_cmd_read, 1, 200, 8, (uintptr_t)chk, 0, 0);
	assert_int_equal(cmd(&h, q, &a).sf, 0);

	/* delay: 30 ms added */
	f = (struct nvme_ctrl_fault){ .opcode = -1, .qid = -1, .delay_us = 30000 };
	assert_int_equal(nvme_ctrl_add_fault(h.ctrl, &f), 0);
	t0 = now_ms();
	assert_int_equal(rw(&h, q, nvme_cmd_read, 1, 0, 1, (uintptr_t)chk, 0, 0).sf, 0);
	assert_true(now_ms() - t0 >= 29);
	nvme_ctrl_clear_faults(h.ctrl);
	/* admin faults and bad rules */
	f = (struct nvme_ctrl_fault){ .admin = true, .opcode = nvme_admin_identify, .qid = -1,
				      .status = NVME_SF(0, NVME_SC_INTERNAL) };
	assert_int_equal(nvme_ctrl_add_fault(h.ctrl, &f), 0);
	a = (struct sqe){ .opc = nvme_admin_identify, .prp1 = (uintptr_t)chk };
	a.cdw[0] = 1;
	assert_int_equal(SFX(admin(&h, &a).sf), SF(0, NVME_SC_INTERNAL));
	nvme_ctrl_clear_faults(h.ctrl);
	assert_int_equal(admin(&h, &a).sf, 0);
	f.opcode = 300;
	assert_int_equal(nvme_ctrl_add_fault(h.ctrl, &f), -EINVAL);
	f = (struct nvme_ctrl_fault){ .opcode = -1, .qid = -1 };
	for (int i = 0; i < 16; i++)
		assert_int_equal(nvme_ctrl_add_fault(h.ctrl, &f), 0);
	assert_int_equal(nvme_ctrl_add_fault(h.ctrl, &f), -ENOSPC);
	nvme_ctrl_clear_faults(h.ctrl);
	host_fini(&h);
	free(buf);
	free(chk);
}

/* A reset with a command in flight: no CQE after CSTS.RDY reads 0. */
static void test_reset_inflight(void **state)
{
	struct host h;
	struct hq *q = host_up(&h, mode_of(state), 1);
	uint8_t *buf = pages(1), *cq_copy = malloc(64 * 16);
	struct nvme_ctrl_fault f = { .opcode = -1, .qid = -1, .delay_us = 20000 };
	unsigned int i;

	assert_int_equal(nvme_ctrl_add_fault(h.ctrl, &f), 0);
	for (i = 0; i < 8; i++) {
		struct sqe a = rw_sqe(nvme_cmd_write, 1, i, 1, (uintptr_t)buf, 0, 0);

		submit(&h, q, &a);
	}
	nvme_ctrl_write32(h.ctrl, NVME_REG_CC, 0);
	wait_csts(&h, NVME_CSTS_RDY, 0);
	memcpy(cq_copy, q->cq, 64 * 16);
	usleep(40000);
	assert_memory_equal(cq_copy, q->cq, 64 * 16);
	nvme_ctrl_clear_faults(h.ctrl);
	hq_free(&h.io[0]);
	host_enable(&h, 16);
	q = ioq(&h, 0, 8, 8);
	assert_int_equal(rw(&h, q, nvme_cmd_read, 1, 0, 1, (uintptr_t)buf, 0, 0).sf, 0);
	host_fini(&h);
	free(buf);
	free(cq_copy);
}

/* Several queue pairs at once, the submitters on their own threads. */
struct qthread {
	struct host *h;
	struct hq *q;
	uint32_t nsid, base;
};

static void *qthread_fn(void *arg)
{
	struct qthread *t = arg;
	uint8_t *buf = aligned_alloc(PG, 8 * PG), *chk = aligned_alloc(PG, 8 * PG);
	unsigned int i, k;
	int bad = 0;

	for (i = 0; i < 200 && !bad; i++) {
		uint64_t slba = t->base + (i % 16) * 8;
		uint16_t cids[8];
		struct cqe c;

		for (k = 0; k < 8; k++) {
			struct sqe a;

			memset(buf + k * PG, (int)(i + k + t->nsid), PG);
			a = rw_sqe(nvme_cmd_write, t->nsid, slba * 8 + k * 8, 8,
				   (uintptr_t)buf + k * PG, 0, 0);
			cids[k] = submit(t->h, t->q, &a);
		}
		for (k = 0; k < 8; k++) {
			if (wait_cqe_ms(t->h, t->q, &c, 20000) || c.sf)
				bad = 1;
		}
		(void)cids;
		for (k = 0; k < 8; k++) {
			struct sqe a = rw_sqe(nvme_cmd_read, t->nsid, slba * 8 + k * 8, 8,
					      (uintptr_t)chk + k * PG, 0, 0);

			submit(t->h, t->q, &a);
		}
		for (k = 0; k < 8; k++)
			if (wait_cqe_ms(t->h, t->q, &c, 20000) || c.sf)
				bad = 1;
		if (memcmp(buf, chk, 8 * PG))
			bad = 1;
	}
	free(buf);
	free(chk);
	return (void *)(uintptr_t)bad;
}

static void test_parallel_queues(void **state)
{
	struct host h;
	struct qthread t[3];
	pthread_t th[3];
	unsigned int i;

	host_init(&h, mode_of(state), 1);
	host_enable(&h, 16);
	for (i = 0; i < 3; i++) {
		struct hq *q = &h.io[i];

		hq_alloc(q, (uint16_t)(i + 1), 32, 32);
		assert_int_equal(create_cq(&h, q->qid, 32, q->cq, 1).sf, 0);
		assert_int_equal(create_sq(&h, q->qid, 32, q->sq, q->qid, 1).sf, 0);
		t[i] = (struct qthread){ .h = &h, .q = q, .nsid = 1, .base = i * 4096 };
	}
	/* the host's CIDs come from one counter: give each thread its own */
	for (i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&th[i], NULL, qthread_fn, &t[i]), 0);
	for (i = 0; i < 3; i++) {
		void *r;

		pthread_join(th[i], &r);
		assert_null(r);
	}
	host_fini(&h);
}

/* CC.MPS = 1: 8 KiB memory pages decide PRP boundaries and alignment. */
static void test_page_size_8k(void **state)
{
	struct nvme_ctrl_config cfg = { 0 };
	struct host h;
	struct hq *q;
	uint8_t *p = pages(8), *chk = pages(6), *lst = pages(2);
	uint8_t *p0 = p, *p1 = p + 4 * PG, *p2 = p + 2 * PG;   /* 8 KiB pages */
	uint8_t src[20480];
	struct sqe a;

	cfg.mpsmax = 1;
	host_init_cfg(&h, mode_of(state), 1, &cfg);
	host_program(&h, 16);
	nvme_ctrl_write32(h.ctrl, NVME_REG_CC, cc_value(1));
	wait_csts(&h, NVME_CSTS_RDY, NVME_CSTS_RDY);
	q = ioq(&h, 0, 16, 16);
	/* 20 KiB from offset 1024: 7 KiB, then a list of two 8 KiB pages */
	fill(src, sizeof(src), 77);
	memcpy(p0 + 1024, src, 7168);
	memcpy(p1, src + 7168, 8192);
	memcpy(p2, src + 15360, 5120);
	put64(lst, (uintptr_t)p1);
	put64(lst + 8, (uintptr_t)p2);
	assert_int_equal(rw(&h, q, nvme_cmd_write, 1, 8, 40, (uintptr_t)p0 + 1024,
			    (uintptr_t)lst, 0).sf, 0);
	backend_read(h.dev[0], 8 * 512, chk, sizeof(src));
	assert_memory_equal(src, chk, sizeof(src));
	/* 12 KiB from offset 0: one 8 KiB page, PRP2 the second page */
	assert_int_equal(rw(&h, q, nvme_cmd_read, 1, 8, 24, (uintptr_t)chk,
			    (uintptr_t)chk + 2 * PG, 0).sf, 0);
	assert_memory_equal(chk, p0 + 1024, 7168);
	/* PRP2 4 KiB aligned but not 8 KiB aligned: PRP Offset Invalid */
	a = rw_sqe(nvme_cmd_read, 1, 8, 24, (uintptr_t)chk, (uintptr_t)chk + PG, 0);
	assert_int_equal(SFX(cmd(&h, q, &a).sf), SF(0, NVME_SC_PRP_INVALID_OFFSET));
	/* a CQ base that is not 8 KiB aligned */
	assert_int_equal(SFX(create_cq(&h, 2, 8, p + PG, 1).sf), SF(0, NVME_SC_INVALID_FIELD));
	host_fini(&h);
	free(p);
	free(chk);
	free(lst);
}

/* A backend with 2 tags: the controller queues what it cannot submit. */
static void test_backend_busy(void **state)
{
	struct nvme_ctrl_config cfg = { 0 };
	struct blk_ram_config rc = { 0 };
	struct blk_dev *dev;
	struct host h;
	struct hq *q;
	uint8_t *buf = pages(48 * 2), *chk = pages(48 * 2);
	unsigned int i, round;

	rc.queue.capacity = NS_BYTES;
	rc.queue.nr_hw_queues = 4;
	rc.queue.queue_depth = 2;
	assert_int_equal(blk_ram_create(&rc, &dev), 0);
	host_init_dev(&h, mode_of(state), 1, &cfg, dev);
	host_enable(&h, 16);
	q = ioq(&h, 0, 64, 64);
	for (round = 0; round < 4; round++) {
		fill(buf, 48 * 2 * PG, round);
		for (i = 0; i < 48; i++) {
			struct sqe a = rw_sqe(nvme_cmd_write, 1, 16 * i, 16,
					      (uintptr_t)buf + 2 * i * PG,
					      (uintptr_t)buf + (2 * i + 1) * PG, 0);

			submit(&h, q, &a);
		}
		for (i = 0; i < 48; i++)
			assert_int_equal(wait_cqe(&h, q).sf, 0);
		for (i = 0; i < 48; i++) {
			struct sqe a = rw_sqe(nvme_cmd_read, 1, 16 * i, 16,
					      (uintptr_t)chk + 2 * i * PG,
					      (uintptr_t)chk + (2 * i + 1) * PG, 0);

			submit(&h, q, &a);
		}
		for (i = 0; i < 48; i++)
			assert_int_equal(wait_cqe(&h, q).sf, 0);
		assert_memory_equal(buf, chk, 48 * 2 * PG);
	}
	host_fini(&h);
	free(buf);
	free(chk);
}

/* Two SQs posting to one CQ; deleting an SQ aborts its waiting commands. */
static void test_shared_cq_delete(void **state)
{
	struct host h;
	struct hq *q, q2;
	uint8_t *buf = pages(1), *sq2 = pages(1);
	struct nvme_ctrl_fault f = { .opcode = nvme_cmd_read, .qid = 2,
				     .delay_us = 30000000 };
	struct sqe a;
	struct cqe c;
	uint16_t cid;

	host_init(&h, mode_of(state), 1);
	host_enable(&h, 16);
	q = ioq(&h, 0, 16, 16);
	assert_int_equal(create_sq(&h, 2, 8, sq2, 1, 1).sf, 0);
	memset(&q2, 0, sizeof(q2));
	q2.qid = 2;
	q2.sq = sq2;
	q2.sq_size = 8;
	q2.cid = 500;
	/* a write through SQ 2 completes on CQ 1, with SQ ID 2 */
	a = rw_sqe(nvme_cmd_write, 1, 0, 1, (uintptr_t)buf, 0, 0);
	cid = submit(&h, &q2, &a);
	c = wait_cqe(&h, q);
	assert_int_equal(c.sf, 0);
	assert_int_equal(c.sqid, 2);
	assert_int_equal(c.cid, cid);
	assert_int_equal(c.sqhd, 1);
	/* a read held by a delay, then Delete SQ 2: Aborted due to SQ Deletion */
	assert_int_equal(nvme_ctrl_add_fault(h.ctrl, &f), 0);
	a = rw_sqe(nvme_cmd_read, 1, 0, 1, (uintptr_t)buf, 0, 0);
	cid = submit(&h, &q2, &a);
	assert_int_equal(wait_cqe_ms(&h, q, &c, 30), -ETIMEDOUT);
	assert_int_equal(SFX(delete_q(&h, nvme_admin_delete_cq, 1).sf), SF(1, NVME_SC_QUEUE_DELETION));
	assert_int_equal(delete_q(&h, nvme_admin_delete_sq, 2).sf, 0);
	c = wait_cqe(&h, q);
	assert_int_equal(c.cid, cid);
	assert_int_equal(c.sqid, 2);
	assert_int_equal(SFX(c.sf), SF(0, NVME_SC_ABORT_QUEUE));
	/* SQ 1 unaffected */
	assert_int_equal(rw(&h, q, nvme_cmd_write, 1, 0, 1, (uintptr_t)buf, 0, 0).sf, 0);
	nvme_ctrl_clear_faults(h.ctrl);
	host_fini(&h);
	free(buf);
	free(sq2);
}

/* A uring backend over a file: completions arrive later, big transfers split. */
static void test_uring_backend(void **state)
{
	struct nvme_ctrl_config cfg = { 0 };
	struct blk_uring_config uc = { 0 };
	char path[] = "/tmp/nvme_ctrl_test_XXXXXX", err[256];
	struct blk_dev *dev;
	struct host h;
	struct hq *q;
	uint8_t *buf, *chk;
	unsigned int i;
	uint32_t cc;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	uc.path = path;
	uc.create_size = 16 << 20;
	uc.queue.nr_hw_queues = 4;
	if (blk_uring_create(&uc, &dev, err, sizeof(err))) {
		unlink(path);
		skip();
	}
	cfg.mdts = 9;
	host_init_dev(&h, mode_of(state), 1, &cfg, dev);
	host_enable(&h, 16);
	q = ioq(&h, 0, 64, 64);
	buf = pages(600);
	chk = pages(600);
	fill(buf, 600 * (size_t)PG, 3);
	/* 2 MiB of non-adjacent pages: 512 segments, more than uring's 128 */
	for (i = 0; i < 3; i++) {
		uint8_t *pg[513];
		uint8_t *lists = pages(4);
		uint64_t p1, p2;
		unsigned int k;

		for (k = 0; k < 512; k++)
			pg[k] = buf + (size_t)((k * 7 + i) % 512) * PG;
		build_prps(pg, 512, 0, 512 * PG, lists, 0, &p1, &p2);
		assert_int_equal(rw(&h, q, nvme_cmd_write, 1, 4096 * i, 4096, p1, p2,
				    i == 1 ? NVME_RW_FUA : 0).sf, 0);
		for (k = 0; k < 512; k++)
			pg[k] = chk + (size_t)k * PG;
		memset(lists, 0, 4 * PG);
		build_prps(pg, 512, 0, 512 * PG, lists, 0, &p1, &p2);
		assert_int_equal(rw(&h, q, nvme_cmd_read, 1, 4096 * i, 4096, p1, p2, 0).sf, 0);
		for (k = 0; k < 512; k++)
			assert_memory_equal(chk + (size_t)k * PG,
					    buf + (size_t)((k * 7 + i) % 512) * PG, PG);
		free(lists);
	}
	/* many small writes in flight, then flush and shutdown */
	for (i = 0; i < 40; i++) {
		struct sqe a = rw_sqe(nvme_cmd_write, 1, 20000 + 8 * i, 8,
				      (uintptr_t)buf + i * PG, 0, 0);

		submit(&h, q, &a);
	}
	for (i = 0; i < 40; i++)
		assert_int_equal(wait_cqe(&h, q).sf, 0);
	{
		struct sqe a = { .opc = nvme_cmd_flush, .nsid = 1 };

		assert_int_equal(cmd(&h, q, &a).sf, 0);
	}
	cc = nvme_ctrl_read32(h.ctrl, NVME_REG_CC);
	nvme_ctrl_write32(h.ctrl, NVME_REG_CC, cc | NVME_CC_SHN_NORMAL);
	wait_csts(&h, NVME_CSTS_SHST_MASK, NVME_CSTS_SHST_CMPLT);
	host_fini(&h);
	unlink(path);
	free(buf);
	free(chk);
}

/*
 * A namespace on an O_DIRECT file: PRP1 may start at any dword in its page
 * (Base 4.1.1), which O_DIRECT refuses as a buffer address.  The command is
 * valid, so it must succeed with the right data, read and write, whatever
 * the offset, one page or several.
 */
static void test_direct_backend_prp_offset(void **state)
{
	struct nvme_ctrl_config cfg = { 0 };
	struct blk_uring_config uc = { 0 };
	char path[] = "/var/tmp/nvme_ctrl_direct_XXXXXX", err[256];
	static const uint32_t offs[] = { 4, 512, 2052, 4092 };
	struct blk_dev *dev;
	struct host h;
	struct hq *q;
	uint8_t *buf, *chk, *lists, *ref;
	unsigned int i;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	uc.path = path;
	uc.create_size = 4 << 20;
	uc.direct = true;
	uc.queue.nr_hw_queues = 2;
	if (blk_uring_create(&uc, &dev, err, sizeof(err))) {
		unlink(path);
		skip();
	}
	host_init_dev(&h, mode_of(state), 1, &cfg, dev);
	host_enable(&h, 16);
	q = ioq(&h, 0, 16, 16);
	buf = pages(8);
	chk = pages(8);
	ref = pages(8);
	lists = pages(1);
	for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		uint32_t len = i & 1 ? 3 * 4096 : 4096, nlb = len / 512;
		uint64_t p1 = (uintptr_t)buf + offs[i], p2;
		uint64_t *l = (uint64_t *)(void *)lists;
		struct cqe c;

		/* the pages after PRP1's: PRP2, or a list of them */
		if (len == 4096) {
			p2 = ((uintptr_t)buf + 4096);
		} else {
			l[0] = (uintptr_t)buf + 4096;
			l[1] = (uintptr_t)buf + 8192;
			l[2] = (uintptr_t)buf + 12288;
			p2 = (uintptr_t)lists;
		}
		fill(buf + offs[i], len, 40 + i);
		memcpy(ref, buf + offs[i], len);
		c = rw(&h, q, nvme_cmd_write, 1, 64 * i, nlb, p1, p2, 0);
		assert_int_equal(c.sf, 0);
		memset(buf, 0, 8 * PG);
		c = rw(&h, q, nvme_cmd_read, 1, 64 * i, nlb, p1, p2, 0);
		assert_int_equal(c.sf, 0);
		assert_memory_equal(buf + offs[i], ref, len);
		/* and the file holds it, read back page aligned */
		backend_read(dev, 64 * i * 512ull, chk, len);
		assert_memory_equal(chk, ref, len);
		/* Compare reads into a buffer of its own: aligned too */
		{
			struct sqe a = rw_sqe(nvme_cmd_compare, 1, 64 * i, nlb, p1, p2, 0);

			assert_int_equal(cmd(&h, q, &a).sf, 0);
			buf[offs[i]] ^= 1;
			assert_int_equal(SFX(cmd(&h, q, &a).sf),
					 SF(NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILED));
		}
	}
	host_fini(&h);
	unlink(path);
	free(buf);
	free(chk);
	free(ref);
	free(lists);
}

/*
 * "flat": a test driver over one buffer, without flush, discard or write
 * zeroes, failing every request that touches byte offset bad_off with
 * BLK_STS_MEDIUM.
 */
struct flat {
	uint8_t *mem;
	uint64_t bad_off;
};

static blk_status_t flat_queue_rq(struct blk_mq_hw_ctx *hctx,
				  const struct blk_mq_queue_data *bd)
{
	struct flat *f = blk_mq_hctx_driver_data(hctx);
	struct request *rq = bd->rq;
	uint64_t off = rq->offset;
	blk_status_t st = BLK_STS_OK;
	struct blk_bio *bio;
	unsigned int i;

	if (f->bad_off >= rq->offset && f->bad_off < rq->offset + rq->data_len)
		st = BLK_STS_MEDIUM;
	else if (rq->op == BLK_OP_READ || rq->op == BLK_OP_WRITE)
		rq_for_each_bio(bio, rq)
			for (i = 0; i < bio->bi_vcnt; i++) {
				const struct iovec *v = &bio->bi_io_vec[i];

				if (rq->op == BLK_OP_READ)
					memcpy(v->iov_base, f->mem + off, v->iov_len);
				else
					memcpy(f->mem + off, v->iov_base, v->iov_len);
				off += v->iov_len;
			}
	else
		st = BLK_STS_NOTSUPP;
	blk_mq_complete_request(rq, st);
	return BLK_STS_OK;
}

static int flat_init_hctx(struct blk_mq_hw_ctx *hctx, void *data, unsigned int idx)
{
	(void)idx;
	blk_mq_hctx_set_driver_data(hctx, data);
	return 0;
}

static void flat_free(void *data)
{
	struct flat *f = data;

	free(f->mem);
	free(f);
}

static const struct blk_mq_ops flat_ops = {
	.queue_rq = flat_queue_rq,
	.init_hctx = flat_init_hctx,
	.free = flat_free,
};

static struct blk_dev *flat_create(uint64_t bytes, uint64_t bad_off)
{
	struct blk_dev_config c = { 0 };
	struct flat *f = calloc(1, sizeof(*f));
	struct blk_dev *d;

	assert_non_null(f);
	f->mem = calloc(1, bytes);
	assert_non_null(f->mem);
	memset(f->mem, 0xab, bytes);
	f->bad_off = bad_off;
	c.name = "flat";
	c.capacity = bytes;
	c.nr_hw_queues = 4;
	c.queue_depth = 16;
	c.stores_data = true;
	c.ops = &flat_ops;
	c.driver_data = f;
	assert_int_equal(blk_dev_create(&c, &d), 0);
	return d;
}

/* A backend without flush, discard and write zeroes; medium errors. */
static void test_plain_backend(void **state)
{
	struct nvme_ctrl_config cfg = { 0 };
	struct host h;
	struct hq *q;
	uint8_t *buf = pages(2), *id = pages(1), *rng = pages(1);
	struct sqe a;

	host_init_dev(&h, mode_of(state), 1, &cfg, flat_create(1 << 20, 700 * 512));
	host_enable(&h, 16);
	q = ioq(&h, 0, 16, 16);
	/* no volatile write cache, no deallocated-reads-zero promise */
	a = (struct sqe){ .opc = nvme_admin_identify, .prp1 = (uintptr_t)id };
	a.cdw[0] = NVME_ID_CNS_CTRL;
	assert_int_equal(admin(&h, &a).sf, 0);
	assert_int_equal(id[525], 0);
	a.cdw[0] = NVME_ID_CNS_NS;
	a.nsid = 1;
	assert_int_equal(admin(&h, &a).sf, 0);
	assert_int_equal(id[33], 0);
	/* Write Zeroes (and with DEAC) become writes of zeroes */
	a = rw_sqe(nvme_cmd_write_zeroes, 1, 10, 300, 0, 0, 0);
	assert_int_equal(cmd(&h, q, &a).sf, 0);
	check_zero(&h, q, 1, 10, 16, buf, true);
	check_zero(&h, q, 1, 294, 16, buf, true);
	check_zero(&h, q, 1, 310, 1, buf, false);
	check_zero(&h, q, 1, 9, 1, buf, false);
	a = rw_sqe(nvme_cmd_write_zeroes, 1, 400, 8, 0, 0, NVME_WZ_DEAC);
	assert_int_equal(cmd(&h, q, &a).sf, 0);
	check_zero(&h, q, 1, 400, 8, buf, true);
	/* DSM deallocate: advisory, the data stays */
	put32(rng + 4, 16);
	put64(rng + 8, 500);
	a = (struct sqe){ .opc = nvme_cmd_dsm, .nsid = 1, .prp1 = (uintptr_t)rng };
	a.cdw[1] = NVME_DSM_AD;
	assert_int_equal(cmd(&h, q, &a).sf, 0);
	check_zero(&h, q, 1, 500, 16, buf, false);
	/* Flush of a device without a cache: success */
	a = (struct sqe){ .opc = nvme_cmd_flush, .nsid = 0xffffffff };
	assert_int_equal(cmd(&h, q, &a).sf, 0);
	/* medium errors: Unrecovered Read Error, Write Fault */
	assert_int_equal(SFX(rw(&h, q, nvme_cmd_read, 1, 696, 8, (uintptr_t)buf, 0, 0).sf),
			 SF(NVME_SCT_MEDIA, NVME_SC_READ_ERROR));
	assert_int_equal(SFX(rw(&h, q, nvme_cmd_write, 1, 700, 1, (uintptr_t)buf, 0, 0).sf),
			 SF(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT));
	assert_int_equal(SFX(rw(&h, q, nvme_cmd_compare, 1, 699, 2, (uintptr_t)buf, 0, 0).sf),
			 SF(NVME_SCT_MEDIA, NVME_SC_READ_ERROR));
	assert_int_equal(rw(&h, q, nvme_cmd_read, 1, 701, 8, (uintptr_t)buf, 0, 0).sf, 0);
	host_fini(&h);
	free(buf);
	free(id);
	free(rng);
}

/*
 * A backend with one tag and 300 ms completions: the second command waits
 * for the tag, and Abort can take it back; the first is past recall.
 */
static void test_abort_backend_wait(void **state)
{
	struct nvme_ctrl_config cfg = { 0 };
	struct blk_null_config nc = { 0 };
	struct sqe a = { .opc = nvme_admin_abort };
	struct blk_dev *dev;
	struct host h;
	struct hq *q;
	uint8_t *buf = pages(1);
	struct sqe r = rw_sqe(nvme_cmd_read, 1, 0, 1, (uintptr_t)buf, 0, 0);
	uint16_t cid1, cid2;
	struct cqe c;

	nc.queue.capacity = NS_BYTES;
	nc.queue.nr_hw_queues = 4;
	nc.queue.queue_depth = 1;
	nc.irqmode = NULL_IRQ_TIMER;
	nc.completion_nsec = 300000000;
	assert_int_equal(blk_null_create(&nc, &dev), 0);
	host_init_dev(&h, mode_of(state), 1, &cfg, dev);
	host_enable(&h, 16);
	q = ioq(&h, 0, 16, 16);
	cid1 = submit(&h, q, &r);
	cid2 = submit(&h, q, &r);
	assert_int_equal(wait_cqe_ms(&h, q, &c, 20), -ETIMEDOUT);
	a.cdw[0] = 1u | ((uint32_t)cid2 << 16);
	assert_int_equal(admin(&h, &a).dw0 & 1, 0);
	a.cdw[0] = 1u | ((uint32_t)cid1 << 16);
	assert_int_equal(admin(&h, &a).dw0 & 1, 1);
	c = wait_cqe(&h, q);
	assert_int_equal(c.cid, cid2);
	assert_int_equal(SFX(c.sf), SF(0, NVME_SC_ABORT_REQ));
	c = wait_cqe(&h, q);
	assert_int_equal(c.cid, cid1);
	assert_int_equal(c.sf, 0);
	host_fini(&h);
	free(buf);
}

/* A reset from another thread while a submitter keeps 16 reads in flight. */
struct loader {
	struct host *h;
	struct hq *q;
	uint8_t *buf;
	_Atomic bool stop;
	_Atomic unsigned int done;
};

static void *loader_fn(void *arg)
{
	struct loader *l = arg;
	struct cqe c;
	unsigned int i;

	for (i = 0; i < 16; i++) {
		struct sqe a = rw_sqe(nvme_cmd_read, 1, 8 * i, 8, (uintptr_t)l->buf + i * PG, 0, 0);

		submit(l->h, l->q, &a);
	}
	while (!atomic_load(&l->stop)) {
		struct sqe a;

		if (wait_cqe_ms(l->h, l->q, &c, 1))
			continue;
		l->done++;
		a = rw_sqe(nvme_cmd_read, 1, 8 * (l->done % 16), 8,
			   (uintptr_t)l->buf + (l->done % 16) * PG, 0, 0);
		submit(l->h, l->q, &a);
	}
	return NULL;
}

static void test_reset_under_load(void **state)
{
	struct nvme_ctrl_config cfg = { 0 };
	struct blk_null_config nc = { 0 };
	struct blk_dev *dev;
	struct loader l;
	struct host h;
	pthread_t th;
	uint8_t *snap = malloc(64 * 16);
	unsigned int round, wait_ms;

	nc.queue.capacity = NS_BYTES;
	nc.queue.nr_hw_queues = 4;
	nc.irqmode = NULL_IRQ_TIMER;
	nc.completion_nsec = 200000;
	assert_int_equal(blk_null_create(&nc, &dev), 0);
	host_init_dev(&h, mode_of(state), 1, &cfg, dev);
	for (round = 0; round < 5; round++) {
		memset(&l, 0, sizeof(l));
		host_enable(&h, 16);
		l.h = &h;
		l.q = ioq(&h, 0, 64, 64);
		l.buf = pages(16);
		assert_int_equal(pthread_create(&th, NULL, loader_fn, &l), 0);
		/*
		 * Reset while reads complete: wait for the first one (a loaded
		 * 2-CPU box under ASan can take longer than the 20 ms this
		 * waited alone, and the test then failed on l.done > 0).
		 */
		for (wait_ms = 0; !atomic_load(&l.done) && wait_ms < 10000; wait_ms++)
			usleep(1000);
		usleep(20000);
		nvme_ctrl_write32(h.ctrl, NVME_REG_CC, 0);
		wait_csts(&h, NVME_CSTS_RDY, 0);
		/* from here on the controller writes nothing */
		memcpy(snap, l.q->cq, 64 * 16);
		usleep(5000);
		atomic_store(&l.stop, true);
		pthread_join(th, NULL);
		usleep(5000);
		assert_memory_equal(snap, l.q->cq, 64 * 16);
		assert_true(l.done > 0);
		free(l.buf);
		hq_free(&h.io[0]);
	}
	host_fini(&h);
	free(snap);
}

#define BOTH(fn) \
	cmocka_unit_test_prestate(fn, (void *)(uintptr_t)NVME_CTRL_THREAD), \
	cmocka_unit_test_prestate(fn, (void *)(uintptr_t)NVME_CTRL_INLINE)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cap_vs),
		BOTH(test_enable_disable),
		BOTH(test_shutdown),
		cmocka_unit_test(test_identify),
		BOTH(test_queue_errors),
		BOTH(test_features),
		BOTH(test_log_pages),
		BOTH(test_abort),
		BOTH(test_aer),
		BOTH(test_io_errors),
		BOTH(test_prp),
		BOTH(test_prp_chunks),
		BOTH(test_prp_offset_invalid),
		BOTH(test_queue_wrap),
		BOTH(test_cq_full),
		BOTH(test_dsm_write_zeroes),
		BOTH(test_compare),
		BOTH(test_faults),
		BOTH(test_reset_inflight),
		BOTH(test_parallel_queues),
		BOTH(test_page_size_8k),
		BOTH(test_backend_busy),
		BOTH(test_shared_cq_delete),
		BOTH(test_uring_backend),
		BOTH(test_direct_backend_prp_offset),
		BOTH(test_plain_backend),
		BOTH(test_abort_backend_wait),
		BOTH(test_reset_under_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
