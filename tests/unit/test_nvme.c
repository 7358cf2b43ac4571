// SPDX-License-Identifier: MIT
/*
 * nvme host driver through the real emulated controller (no mocks), in
 * both controller modes: bring-up and Identify, round trips of every op,
 * PRPs of 1..1024+ pages with and without a first-page offset (lists and
 * chained lists), multi-segment requests, the bounce path, queue wrap and
 * phase flips at queue sizes 2..1024, status mapping and native status via
 * fault injection, a dropped completion (Abort, then reset), and resets
 * under load at QD128 where every bio completes exactly once and the data
 * is verified.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "blkstack/nvme.h"
#include "blkstack/ram.h"

static const enum nvme_ctrl_mode modes[2] = { NVME_CTRL_THREAD, NVME_CTRL_INLINE };

struct setup {
	enum nvme_ctrl_mode mode;
	uint64_t capacity;          /* bytes (0: 64 MiB) */
	uint32_t lbs;               /* namespace block size (0: 512) */
	uint32_t queues;            /* I/O queue pairs (0: 1) */
	uint32_t entries;           /* I/O queue entries (0: 256) */
	uint32_t mqes;              /* controller CAP.MQES+1 (0: default) */
	uint32_t mdts;              /* 0: controller default */
	uint32_t max_sectors;       /* host (0: default) */
	uint32_t rq_timeout_ms;
	uint32_t admin_timeout_ms;
	enum blk_nvme_sqe_init sqe_init;
	bool shared_hctx;
	uint32_t max_retries;       /* 0: the driver's default (5) */
};

static struct blk_dev *make_dev(const struct setup *s, int expect, char *err,
				size_t errlen)
{
	struct blk_ram_config rc = { 0 };
	struct nvme_ctrl_config cc = { 0 };
	struct blk_nvme_config hc = { 0 };
	struct nvme_ctrl *ctrl = NULL;
	struct blk_dev *ns = NULL, *dev = NULL;
	uint32_t queues = s->queues ? s->queues : 1;
	uint32_t entries = s->entries ? s->entries : 256;
	char e[512] = "";
	int ret;

	rc.queue.capacity = s->capacity ? s->capacity : 64ull << 20;
	rc.queue.logical_block_size = s->lbs ? s->lbs : 512;
	rc.queue.nr_hw_queues = queues;
	rc.queue.shared_hctx = false; /* one hctx per CQ: enough (nvme_ctrl.h) */
	rc.queue.queue_depth = entries;
	rc.queue.max_sectors = 1u << 16;
	assert_int_equal(blk_ram_create(&rc, &ns), 0);
	cc.mode = s->mode;
	cc.nr_ns = 1;
	cc.ns = &ns;
	cc.own_ns = true;
	cc.mqes = s->mqes;
	cc.max_io_queues = queues;
	cc.mdts = s->mdts;
	ret = nvme_ctrl_create(&cc, &ctrl, e, sizeof(e));
	if (ret)
		fail_msg("nvme_ctrl_create: %d %s", ret, e);
	hc.ctrl = ctrl;
	hc.max_retries = s->max_retries;
	hc.own_ctrl = true;
	hc.io_queue_entries = entries;
	hc.sqe_init = s->sqe_init;
	hc.admin_timeout_ms = s->admin_timeout_ms;
	hc.queue.nr_hw_queues = queues;
	hc.queue.max_sectors = s->max_sectors;
	hc.queue.max_segments = 1024;
	hc.queue.rq_timeout_ms = s->rq_timeout_ms;
	hc.queue.shared_hctx = s->shared_hctx;
	ret = blk_nvme_create(&hc, &dev, err ? err : e, err ? errlen : sizeof(e));
	if (ret != expect)
		fail_msg("blk_nvme_create: %d, expected %d (%s)", ret, expect,
			 err ? err : e);
	if (ret) {
		nvme_ctrl_destroy(ctrl);
		return NULL;
	}
	assert_ptr_equal(blk_nvme_ctrl(dev), ctrl);
	return dev;
}

static unsigned int nr_done;
static blk_status_t last_status;
static uint32_t last_native;

static void end_io(struct blk_bio *bio)
{
	nr_done++;
	last_status = bio->bi_status;
	last_native = bio->bi_native_status;
}

/* One bio, waited for. */
static blk_status_t io(struct blk_mq_ctx *ctx, unsigned int op, uint64_t off,
		       struct iovec *iov, unsigned int cnt, uint32_t len,
		       uint8_t flags)
{
	struct blk_bio b;
	int ret;

	memset(&b, 0, sizeof(b));
	b.bi_op = (uint8_t)op;
	b.bi_flags = flags;
	b.bi_offset = off;
	b.bi_size = len;
	b.bi_vcnt = (uint16_t)cnt;
	b.bi_io_vec = iov;
	b.bi_end_io = end_io;
	nr_done = 0;
	while ((ret = blk_submit(ctx, &b)) == -EAGAIN)
		blk_poll(ctx);
	assert_int_equal(ret, 0);
	assert_int_equal(blk_drain(ctx, 20000000000ull), 0);
	assert_int_equal(nr_done, 1);
	return last_status;
}

static void fill(void *p, size_t len, uint32_t seed)
{
	uint32_t *w = p;
	size_t i;

	for (i = 0; i < len / 4; i++)
		w[i] = seed * 2654435761u + (uint32_t)i;
}

/* ------------------------------------------------------------ bring-up */

static void test_bringup_identify(void **state)
{
	for (int m = 0; m < 2; m++) {
		struct setup s = { .mode = modes[m], .capacity = 32ull << 20,
				   .lbs = 4096, .queues = 3, .mdts = 5 };
		struct blk_dev_info info;
		struct blk_nvme_stats st;
		struct blk_dev *dev = make_dev(&s, 0, NULL, 0);

		blk_dev_get_info(dev, &info);
		assert_string_equal(info.name, "nvme");
		assert_int_equal(info.capacity, 32ull << 20);
		assert_int_equal(info.logical_block_size, 4096);
		assert_int_equal(info.nr_hw_queues, 3);
		assert_int_equal(info.queue_depth, 255);   /* entries - 1 */
		/* MDTS 5: 32 pages of 4 KiB = 128 KiB = 256 sectors */
		assert_int_equal(info.max_sectors, 256);
		assert_true(info.can_flush);      /* ram namespace: VWC */
		assert_true(info.can_discard);    /* ONCS DSM */
		assert_true(info.can_write_zeroes);
		assert_true(info.stores_data);
		blk_nvme_get_stats(dev, &st);
		assert_int_equal(st.resets, 0);
		assert_int_equal(st.sq_doorbells, 0);
		blk_dev_close(dev);
	}
}

static void test_setup_errors(void **state)
{
	struct setup s = { .mode = NVME_CTRL_INLINE, .mqes = 64, .entries = 128 };
	struct blk_nvme_config hc = { 0 };
	struct blk_dev *dev = NULL;
	char err[512] = "";

	/* more entries than CAP.MQES + 1 */
	assert_null(make_dev(&s, -EINVAL, err, sizeof(err)));
	assert_non_null(strstr(err, "io_queue_entries=128"));
	assert_non_null(strstr(err, "2..64"));
	s.entries = 1;
	assert_null(make_dev(&s, -EINVAL, err, sizeof(err)));
	assert_non_null(strstr(err, "io_queue_entries=1"));
	/* no controller */
	assert_int_equal(blk_nvme_create(&hc, &dev, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "ctrl"));
}

/* ---------------------------------------------------------- round trips */

static void test_roundtrip_ops(void **state)
{
	static char w[65536] __attribute__((aligned(4096)));
	static char r[65536] __attribute__((aligned(4096)));
	static const char zero[8192];

	for (int m = 0; m < 2; m++) {
		for (int si = 0; si < 2; si++) {
			struct setup s = { .mode = modes[m],
					   .sqe_init = (enum blk_nvme_sqe_init)si };
			struct blk_dev *dev = make_dev(&s, 0, NULL, 0);
			struct blk_nvme_stats st;
			struct blk_mq_ctx *ctx;
			struct iovec iov = { w, sizeof(w) };

			assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
			fill(w, sizeof(w), 7 + m);
			assert_int_equal(io(ctx, BLK_OP_WRITE, 1 << 20, &iov, 1, sizeof(w), 0),
					 BLK_STS_OK);
			iov.iov_base = r;
			memset(r, 0, sizeof(r));
			assert_int_equal(io(ctx, BLK_OP_READ, 1 << 20, &iov, 1, sizeof(r), 0),
					 BLK_STS_OK);
			assert_memory_equal(w, r, sizeof(w));
			/* FUA write and flush */
			iov.iov_base = w;
			iov.iov_len = 4096;
			assert_int_equal(io(ctx, BLK_OP_WRITE, 0, &iov, 1, 4096, BLK_BIO_FUA),
					 BLK_STS_OK);
			assert_int_equal(io(ctx, BLK_OP_FLUSH, 0, NULL, 0, 0, 0), BLK_STS_OK);
			/* write zeroes over 8 KiB in the middle of the 64 KiB */
			assert_int_equal(io(ctx, BLK_OP_WRITE_ZEROES, (1 << 20) + 8192, NULL, 0,
					    8192, 0), BLK_STS_OK);
			iov.iov_base = r;
			iov.iov_len = sizeof(r);
			assert_int_equal(io(ctx, BLK_OP_READ, 1 << 20, &iov, 1, sizeof(r), 0),
					 BLK_STS_OK);
			assert_memory_equal(r, w, 8192);
			assert_memory_equal(r + 8192, zero, 8192);
			assert_memory_equal(r + 16384, w + 16384, sizeof(r) - 16384);
			/* discard (deallocate): the range reads as zeros on ram */
			assert_int_equal(io(ctx, BLK_OP_DISCARD, 1 << 20, NULL, 0, 8192, 0),
					 BLK_STS_OK);
			iov.iov_len = 8192;
			assert_int_equal(io(ctx, BLK_OP_READ, 1 << 20, &iov, 1, 8192, 0),
					 BLK_STS_OK);
			assert_memory_equal(r, zero, 8192);
			blk_nvme_get_stats(dev, &st);
			assert_true(st.sq_doorbells >= 8);
			assert_true(st.cqes >= 8);
			assert_int_equal(st.errors, 0);
			blk_ctx_detach(ctx);
			blk_dev_close(dev);
		}
	}
}

/* -------------------------------------------------------------- PRPs */

/*
 * Transfers of @pages pages at byte offset @off into a page-aligned
 * buffer: 1 and 2 pages need no list, 3+ a PRP list, > 513 a chained one.
 */
static void prp_case(struct blk_dev *dev, struct blk_mq_ctx *ctx, char *w,
		     char *r, unsigned int pages, unsigned int off)
{
	struct blk_nvme_stats a, b;
	uint32_t len = pages * 4096;
	struct iovec iov = { w + off, len };

	blk_nvme_get_stats(dev, &a);
	fill(w + off, len, pages * 31 + off);
	assert_int_equal(io(ctx, BLK_OP_WRITE, 4096ull * pages, &iov, 1, len, 0), BLK_STS_OK);
	memset(r + off, 0, len);
	iov.iov_base = r + off;
	assert_int_equal(io(ctx, BLK_OP_READ, 4096ull * pages, &iov, 1, len, 0), BLK_STS_OK);
	if (memcmp(w + off, r + off, len))
		fail_msg("PRP transfer of %u pages at offset %u: data differ", pages, off);
	blk_nvme_get_stats(dev, &b);
	/* entries: pages (+1 with an offset); a list when more than 2 */
	assert_int_equal(b.prp_lists - a.prp_lists,
			 (pages + (off ? 1 : 0)) > 2 ? 2 : 0);
	assert_int_equal(b.bounced, a.bounced);
}

static void test_prp_sizes(void **state)
{
	static const unsigned int pages[] = { 1, 2, 3, 4, 17, 511, 512, 513, 600, 1023 };
	static const unsigned int offs[] = { 0, 512, 4 };
	size_t blen = 1024 * 4096 + 8192;
	char *w = aligned_alloc(4096, blen), *r = aligned_alloc(4096, blen);

	assert_non_null(w);
	assert_non_null(r);
	for (int m = 0; m < 2; m++) {
		/* MDTS 10: 4 MiB, 1024 pages, 8192 sectors */
		struct setup s = { .mode = modes[m], .mdts = 10, .max_sectors = 8192 };
		struct blk_dev *dev = make_dev(&s, 0, NULL, 0);
		struct blk_dev_info info;
		struct blk_mq_ctx *ctx;

		blk_dev_get_info(dev, &info);
		assert_int_equal(info.max_sectors, 8192);
		assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
		for (size_t p = 0; p < sizeof(pages) / sizeof(pages[0]); p++)
			for (size_t o = 0; o < 3; o++)
				prp_case(dev, ctx, w, r, pages[p], offs[o]);
		/* the largest transfer: 1024 pages, 1023 list entries over 3 pages */
		prp_case(dev, ctx, w, r, 1024, 0);
		blk_ctx_detach(ctx);
		blk_dev_close(dev);
	}
	free(w);
	free(r);
}

/* Several segments that keep the PRP rules: no bounce. */
static void test_prp_multi_segment(void **state)
{
	char *w = aligned_alloc(4096, 65536), *r = aligned_alloc(4096, 65536);
	char *r2 = aligned_alloc(4096, 65536);

	for (int m = 0; m < 2; m++) {
		struct setup s = { .mode = modes[m] };
		struct blk_dev *dev = make_dev(&s, 0, NULL, 0);
		struct blk_nvme_stats a, b;
		struct blk_mq_ctx *ctx;
		struct iovec iov[3];
		struct blk_bio bio[2];

		assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
		fill(w, 65536, 99);
		/* first segment ends on a page, middle whole pages, last partial */
		iov[0] = (struct iovec){ w + 3584, 512 };
		iov[1] = (struct iovec){ w + 8192, 8192 };
		iov[2] = (struct iovec){ w + 20480, 1024 };
		blk_nvme_get_stats(dev, &a);
		assert_int_equal(io(ctx, BLK_OP_WRITE, 0, iov, 3, 9728, 0), BLK_STS_OK);
		memset(r, 0, 65536);
		iov[0].iov_base = r;
		iov[0].iov_len = 9728;
		assert_int_equal(io(ctx, BLK_OP_READ, 0, iov, 1, 9728, 0), BLK_STS_OK);
		assert_memory_equal(r, w + 3584, 512);
		assert_memory_equal(r + 512, w + 8192, 8192);
		assert_memory_equal(r + 8704, w + 20480, 1024);
		blk_nvme_get_stats(dev, &b);
		assert_int_equal(b.bounced, a.bounced);

		/* two bios merged in a plug: one request, two segments */
		memset(bio, 0, sizeof(bio));
		iov[0] = (struct iovec){ r2, 8192 };
		iov[1] = (struct iovec){ r2 + 16384, 8192 };
		memset(r2, 0, 65536);
		for (int i = 0; i < 2; i++) {
			bio[i].bi_op = BLK_OP_READ;
			bio[i].bi_offset = 8192u * i;
			bio[i].bi_size = 8192;
			bio[i].bi_vcnt = 1;
			bio[i].bi_io_vec = &iov[i];
			bio[i].bi_end_io = end_io;
		}
		nr_done = 0;
		blk_start_plug(ctx);
		assert_int_equal(blk_submit(ctx, &bio[0]), 0);
		assert_int_equal(blk_submit(ctx, &bio[1]), 0);
		blk_finish_plug(ctx);
		assert_int_equal(blk_drain(ctx, 10000000000ull), 0);
		assert_int_equal(nr_done, 2);
		assert_int_equal(bio[0].bi_status, BLK_STS_OK);
		assert_int_equal(bio[1].bi_status, BLK_STS_OK);
		assert_memory_equal(r2, r, 8192);
		assert_memory_equal(r2 + 16384, r + 8192, 1536);
		blk_ctx_detach(ctx);
		blk_dev_close(dev);
	}
	free(w);
	free(r);
	free(r2);
}

/* Segments that break the PRP rules go through the bounce buffer. */
static void test_bounce(void **state)
{
	char *w = aligned_alloc(4096, 65536), *r = aligned_alloc(4096, 65536);
	char *chk = aligned_alloc(4096, 65536);

	for (int m = 0; m < 2; m++) {
		struct setup s = { .mode = modes[m] };
		struct blk_dev *dev = make_dev(&s, 0, NULL, 0);
		struct blk_nvme_stats a, b;
		struct blk_mq_ctx *ctx;
		struct iovec iov[3];

		assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
		fill(w, 65536, 5);
		/* a middle segment neither starting nor ending on a page */
		iov[0] = (struct iovec){ w, 512 };
		iov[1] = (struct iovec){ w + 1000, 1024 };
		iov[2] = (struct iovec){ w + 8192, 512 };
		blk_nvme_get_stats(dev, &a);
		assert_int_equal(io(ctx, BLK_OP_WRITE, 65536, iov, 3, 2048, 0), BLK_STS_OK);
		blk_nvme_get_stats(dev, &b);
		assert_int_equal(b.bounced - a.bounced, 1);
		/* read back contiguous (no bounce) and check what landed */
		iov[0] = (struct iovec){ chk, 2048 };
		assert_int_equal(io(ctx, BLK_OP_READ, 65536, iov, 1, 2048, 0), BLK_STS_OK);
		assert_memory_equal(chk, w, 512);
		assert_memory_equal(chk + 512, w + 1000, 1024);
		assert_memory_equal(chk + 1536, w + 8192, 512);
		/* bounced read: scatter back into the odd segments */
		memset(r, 0, 65536);
		iov[0] = (struct iovec){ r + 100, 1024 };   /* not page aligned end */
		iov[1] = (struct iovec){ r + 4096, 1024 };
		blk_nvme_get_stats(dev, &a);
		assert_int_equal(io(ctx, BLK_OP_READ, 65536, iov, 2, 2048, 0), BLK_STS_OK);
		blk_nvme_get_stats(dev, &b);
		assert_int_equal(b.bounced - a.bounced, 1);
		assert_memory_equal(r + 100, chk, 1024);
		assert_memory_equal(r + 4096, chk + 1024, 1024);
		/* a start that is not dword aligned */
		iov[0] = (struct iovec){ r + 4097, 2048 };
		assert_int_equal(io(ctx, BLK_OP_READ, 65536, iov, 1, 2048, 0), BLK_STS_OK);
		blk_nvme_get_stats(dev, &b);
		assert_int_equal(b.bounced - a.bounced, 2);
		assert_memory_equal(r + 4097, chk, 2048);
		blk_ctx_detach(ctx);
		blk_dev_close(dev);
	}
	free(w);
	free(r);
	free(chk);
}

/* ---------------------------------------------------- queue wrap, phase */

struct wrap_io {
	struct blk_bio bio;
	struct iovec iov;
	char *buf;
	unsigned int ends;
};

static unsigned int wrap_done;

static void wrap_end_io(struct blk_bio *bio)
{
	struct wrap_io *w = bio->bi_private;

	w->ends++;
	wrap_done++;
	assert_int_equal(bio->bi_status, BLK_STS_OK);
}

/* @total writes then reads of distinct 4 KiB blocks at full queue depth. */
static void wrap_run(enum nvme_ctrl_mode mode, uint32_t entries,
		     unsigned int total)
{
	struct setup s = { .mode = mode, .entries = entries,
			   .capacity = 4096ull * total };
	struct blk_dev *dev = make_dev(&s, 0, NULL, 0);
	unsigned int qd = entries - 1, pass, i;
	struct wrap_io *ios = calloc(qd, sizeof(*ios));
	struct blk_dev_info info;
	struct blk_nvme_stats st;
	struct blk_mq_ctx *ctx;

	blk_dev_get_info(dev, &info);
	assert_int_equal(info.queue_depth, qd);
	assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
	for (i = 0; i < qd; i++)
		ios[i].buf = aligned_alloc(4096, 4096);
	for (pass = 0; pass < 2; pass++) {
		unsigned int next = 0, slot;

		wrap_done = 0;
		while (wrap_done < total) {
			for (slot = 0; slot < qd && next < total; slot++) {
				struct wrap_io *w = &ios[slot];

				if (w->bio.bi_end_io && w->ends == 0)
					continue;      /* still in flight */
				if (pass == 1 && w->bio.bi_end_io) {
					/* check the read that just ended */
					uint32_t blk = (uint32_t)(w->bio.bi_offset / 4096);

					if (((uint32_t *)w->buf)[0] != blk * 2654435761u)
						fail_msg("size %u: block %u read back wrong", entries, blk);
				}
				memset(&w->bio, 0, sizeof(w->bio));
				w->ends = 0;
				w->iov = (struct iovec){ w->buf, 4096 };
				if (pass == 0)
					fill(w->buf, 4096, next);
				w->bio.bi_op = pass == 0 ? BLK_OP_WRITE : BLK_OP_READ;
				w->bio.bi_offset = 4096ull * next;
				w->bio.bi_size = 4096;
				w->bio.bi_vcnt = 1;
				w->bio.bi_io_vec = &w->iov;
				w->bio.bi_end_io = wrap_end_io;
				w->bio.bi_private = w;
				if (blk_submit(ctx, &w->bio) == -EAGAIN) {
					w->bio.bi_end_io = NULL;
					break;
				}
				next++;
			}
			blk_poll(ctx);
		}
		assert_int_equal(blk_drain(ctx, 20000000000ull), 0);
		for (i = 0; i < qd; i++) {
			if (!ios[i].bio.bi_end_io)
				continue;
			assert_int_equal(ios[i].ends, 1);
			if (pass == 1) {
				uint32_t blk = (uint32_t)(ios[i].bio.bi_offset / 4096);

				assert_int_equal(((uint32_t *)ios[i].buf)[0], blk * 2654435761u);
			}
			ios[i].bio.bi_end_io = NULL;
		}
	}
	blk_nvme_get_stats(dev, &st);
	/* every I/O posted a CQE; the CQ wrapped total*2/entries times */
	assert_int_equal(st.cqes, 2ull * total);
	assert_int_equal(st.errors, 0);
	assert_true(st.cq_doorbells <= st.cqes);
	blk_ctx_detach(ctx);
	blk_dev_close(dev);
	for (i = 0; i < qd; i++)
		free(ios[i].buf);
	free(ios);
}

static void test_queue_wrap(void **state)
{
	static const uint32_t sizes[] = { 2, 3, 4, 8, 64, 1024 };

	for (int m = 0; m < 2; m++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			wrap_run(modes[m], sizes[i], sizes[i] < 64 ? 2000 : 6000);
}

/* -------------------------------------------------------- status, faults */

static void test_status_map(void **state)
{
	assert_int_equal(blk_nvme_status_to_blk(0), BLK_STS_OK);
	assert_int_equal(blk_nvme_status_to_blk(NVME_SF(0, NVME_SC_INVALID_OPCODE)),
			 BLK_STS_NOTSUPP);
	assert_int_equal(blk_nvme_status_to_blk(NVME_SF(0, NVME_SC_INVALID_FIELD)),
			 BLK_STS_INVAL);
	assert_int_equal(blk_nvme_status_to_blk(NVME_SF(0, NVME_SC_LBA_RANGE)),
			 BLK_STS_INVAL);
	assert_int_equal(blk_nvme_status_to_blk(NVME_SF(0, NVME_SC_CAP_EXCEEDED)),
			 BLK_STS_NOSPC);
	/* as Linux: not EAGAIN (issue 11: it reached applications as such) */
	assert_int_equal(blk_nvme_status_to_blk(NVME_SF(0, NVME_SC_NS_NOT_READY)),
			 BLK_STS_TARGET);
	assert_int_equal(blk_nvme_status_to_blk(NVME_SF(0, NVME_SC_ABORT_REQ)),
			 BLK_STS_IOERR);
	assert_int_equal(blk_nvme_status_to_blk(NVME_SF(0, NVME_SC_INTERNAL) | NVME_SF_DNR),
			 BLK_STS_IOERR);
	assert_int_equal(blk_nvme_status_to_blk(NVME_SF(1, NVME_SC_READ_ONLY)),
			 BLK_STS_TARGET);
	assert_int_equal(blk_nvme_status_to_blk(NVME_SF(2, NVME_SC_READ_ERROR)),
			 BLK_STS_MEDIUM);
	assert_int_equal(blk_nvme_status_to_blk(NVME_SF(2, NVME_SC_WRITE_FAULT)),
			 BLK_STS_MEDIUM);
	assert_int_equal(blk_nvme_status_to_blk(NVME_SF(2, NVME_SC_COMPARE_FAILED)),
			 BLK_STS_MEDIUM);
	assert_int_equal(blk_nvme_status_to_blk(NVME_SF(2, NVME_SC_GUARD_CHECK)),
			 BLK_STS_PROTECTION);
	assert_int_equal(blk_nvme_status_to_blk(NVME_SF(2, NVME_SC_REFTAG_CHECK)),
			 BLK_STS_PROTECTION);
	assert_int_equal(blk_nvme_status_to_blk(NVME_SF(3, 0x00)), BLK_STS_TRANSPORT);
	assert_int_equal(blk_nvme_status_to_blk(NVME_SF(7, 0x10)), BLK_STS_IOERR);
}

static void test_fault_status(void **state)
{
	static char buf[4096] __attribute__((aligned(4096)));
	static const struct {
		uint16_t sf;
		blk_status_t st;
		uint8_t op;
	} cases[] = {
		{ NVME_SF(NVME_SCT_MEDIA, NVME_SC_READ_ERROR), BLK_STS_MEDIUM, BLK_OP_READ },
		{ NVME_SF(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT) | NVME_SF_DNR,
		  BLK_STS_MEDIUM, BLK_OP_WRITE },
		{ NVME_SF(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD), BLK_STS_INVAL, BLK_OP_READ },
		{ NVME_SF(NVME_SCT_CMD_SPECIFIC, NVME_SC_READ_ONLY), BLK_STS_TARGET,
		  BLK_OP_WRITE },
		{ NVME_SF(NVME_SCT_MEDIA, NVME_SC_GUARD_CHECK), BLK_STS_PROTECTION,
		  BLK_OP_READ },
		{ NVME_SF(NVME_SCT_PATH, 0x00), BLK_STS_TRANSPORT, BLK_OP_READ },
	};

	for (int m = 0; m < 2; m++) {
		/* no retries: each status comes back as it was posted */
		struct setup s = { .mode = modes[m],
				   .max_retries = BLK_NVME_RETRIES_NONE };
		struct blk_dev *dev = make_dev(&s, 0, NULL, 0);
		struct nvme_ctrl *ctrl = blk_nvme_ctrl(dev);
		struct blk_nvme_stats st;
		struct blk_mq_ctx *ctx;
		struct iovec iov = { buf, 4096 };

		assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			struct nvme_ctrl_fault f = {
				.opcode = cases[i].op == BLK_OP_READ ? nvme_cmd_read :
								       nvme_cmd_write,
				.qid = -1, .slba = 800, .nlb = 8,
				.status = cases[i].sf, .count = 1,
			};

			assert_int_equal(nvme_ctrl_add_fault(ctrl, &f), 0);
			/* a neighbour outside the range is not hit */
			assert_int_equal(io(ctx, cases[i].op, 4096ull * 50, &iov, 1, 4096, 0),
					 BLK_STS_OK);
			assert_int_equal(last_native, 0);
			assert_int_equal(io(ctx, cases[i].op, 512ull * 800, &iov, 1, 4096, 0),
					 cases[i].st);
			assert_int_equal(last_native, cases[i].sf);
			/* count = 1: the rule is gone */
			assert_int_equal(io(ctx, cases[i].op, 512ull * 800, &iov, 1, 4096, 0),
					 BLK_STS_OK);
		}
		blk_nvme_get_stats(dev, &st);
		assert_int_equal(st.errors, sizeof(cases) / sizeof(cases[0]));
		blk_ctx_detach(ctx);
		blk_dev_close(dev);
	}
}

/* A dropped completion: the timeout sends Abort, the controller cannot
 * abort a finished command, the driver resets and requeues; the bio ends
 * once, successfully, with the data. */
static void test_timeout_dropped_completion(void **state)
{
	static char w[8192] __attribute__((aligned(4096)));
	static char r[8192] __attribute__((aligned(4096)));

	for (int m = 0; m < 2; m++) {
		struct setup s = { .mode = modes[m], .rq_timeout_ms = 100, .queues = 2 };
		struct blk_dev *dev = make_dev(&s, 0, NULL, 0);
		struct nvme_ctrl *ctrl = blk_nvme_ctrl(dev);
		struct nvme_ctrl_fault f = { .opcode = nvme_cmd_read, .qid = -1,
					     .drop = true, .count = 1 };
		struct blk_nvme_stats st;
		struct nvme_ctrl_stats cs;
		struct blk_mq_ctx *ctx;
		struct iovec iov = { w, sizeof(w) };

		assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
		fill(w, sizeof(w), 42);
		assert_int_equal(io(ctx, BLK_OP_WRITE, 0, &iov, 1, sizeof(w), 0), BLK_STS_OK);
		assert_int_equal(nvme_ctrl_add_fault(ctrl, &f), 0);
		iov.iov_base = r;
		assert_int_equal(io(ctx, BLK_OP_READ, 0, &iov, 1, sizeof(r), 0), BLK_STS_OK);
		assert_memory_equal(w, r, sizeof(w));
		blk_nvme_get_stats(dev, &st);
		nvme_ctrl_get_stats(ctrl, &cs);
		assert_int_equal(cs.dropped, 1);
		assert_true(st.timeouts >= 1);
		assert_int_equal(st.aborts, 1);
		assert_int_equal(st.abort_ok, 0);
		assert_int_equal(st.resets, 1);
		assert_int_equal(st.requeued, 1);
		assert_true(cs.resets >= 1);
		/* the queues work after the reset, both of them */
		memset(r, 0, sizeof(r));
		assert_int_equal(io(ctx, BLK_OP_READ, 0, &iov, 1, sizeof(r), 0), BLK_STS_OK);
		assert_memory_equal(w, r, sizeof(w));
		blk_ctx_detach(ctx);
		blk_dev_close(dev);
	}
}

/* A command held by a delay fault is still abortable: the timeout's Abort
 * succeeds, the command completes through its CQ with Command Abort
 * Requested, and the bio fails once with that native status; no reset. */
static void test_timeout_abort_succeeds(void **state)
{
	static char r[4096] __attribute__((aligned(4096)));

	for (int m = 0; m < 2; m++) {
		/* no retries: Command Abort Requested (DNR clear) comes back */
		struct setup s = { .mode = modes[m], .rq_timeout_ms = 100,
				   .max_retries = BLK_NVME_RETRIES_NONE };
		struct blk_dev *dev = make_dev(&s, 0, NULL, 0);
		struct nvme_ctrl *ctrl = blk_nvme_ctrl(dev);
		struct nvme_ctrl_fault f = { .opcode = nvme_cmd_read, .qid = -1,
					     .delay_us = 30 * 1000 * 1000, .count = 1 };
		struct blk_nvme_stats st;
		struct blk_mq_ctx *ctx;
		struct iovec iov = { r, sizeof(r) };

		assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
		assert_int_equal(nvme_ctrl_add_fault(ctrl, &f), 0);
		assert_int_equal(io(ctx, BLK_OP_READ, 0, &iov, 1, sizeof(r), 0), BLK_STS_IOERR);
		assert_int_equal(last_native, NVME_SF(NVME_SCT_GENERIC, NVME_SC_ABORT_REQ));
		blk_nvme_get_stats(dev, &st);
		assert_int_equal(st.aborts, 1);
		assert_int_equal(st.abort_ok, 1);
		assert_int_equal(st.resets, 0);
		assert_int_equal(st.requeued, 0);
		assert_int_equal(st.errors, 1);
		/* the queue goes on */
		assert_int_equal(io(ctx, BLK_OP_READ, 0, &iov, 1, sizeof(r), 0), BLK_STS_OK);
		blk_ctx_detach(ctx);
		blk_dev_close(dev);
	}
}

/*
 * A reset whose Set Features never completes (admin drop fault): the reset
 * fails with -ETIMEDOUT, the controller is dead, and I/O fails at once with
 * IOERR and Command Aborted By Host as native status - it does not hang.
 * A second reset says -ENODEV.
 */
static void test_failed_reset_kills_controller(void **state)
{
	static char r[4096] __attribute__((aligned(4096)));

	for (int m = 0; m < 2; m++) {
		struct setup s = { .mode = modes[m], .admin_timeout_ms = 200 };
		struct blk_dev *dev = make_dev(&s, 0, NULL, 0);
		struct nvme_ctrl_fault f = { .admin = true,
					     .opcode = nvme_admin_set_features,
					     .qid = -1, .drop = true };
		struct blk_nvme_stats st;
		struct blk_mq_ctx *ctx;
		struct iovec iov = { r, sizeof(r) };

		assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
		assert_int_equal(io(ctx, BLK_OP_READ, 0, &iov, 1, sizeof(r), 0), BLK_STS_OK);
		assert_int_equal(nvme_ctrl_add_fault(blk_nvme_ctrl(dev), &f), 0);
		assert_int_equal(blk_nvme_reset(dev), -ETIMEDOUT);
		assert_int_equal(io(ctx, BLK_OP_READ, 0, &iov, 1, sizeof(r), 0), BLK_STS_IOERR);
		assert_int_equal(last_native, NVME_SF(NVME_SCT_PATH, 0x71));
		assert_int_equal(blk_nvme_reset(dev), -ENODEV);
		blk_nvme_get_stats(dev, &st);
		assert_int_equal(st.resets, 1);
		nvme_ctrl_clear_faults(blk_nvme_ctrl(dev));
		blk_ctx_detach(ctx);
		blk_dev_close(dev);
	}
}

/*
 * A borrowed controller (own_ctrl = 0): closing the device shuts it down
 * normally (CC.SHN, one completed shutdown) and leaves it disabled, alive,
 * for a second host to bring up again.
 */
static void test_borrowed_ctrl_shutdown(void **state)
{
	for (int m = 0; m < 2; m++) {
		struct blk_ram_config rc = { 0 };
		struct nvme_ctrl_config cc = { 0 };
		struct blk_nvme_config hc = { 0 };
		struct nvme_ctrl_stats cs;
		struct nvme_ctrl *ctrl;
		struct blk_dev *ns, *dev;
		char err[256];

		rc.queue.capacity = 8 << 20;
		assert_int_equal(blk_ram_create(&rc, &ns), 0);
		cc.mode = modes[m];
		cc.nr_ns = 1;
		cc.ns = &ns;
		cc.own_ns = true;
		assert_int_equal(nvme_ctrl_create(&cc, &ctrl, err, sizeof(err)), 0);
		hc.ctrl = ctrl;
		for (int k = 0; k < 2; k++) {
			assert_int_equal(blk_nvme_create(&hc, &dev, err, sizeof(err)), 0);
			blk_dev_close(dev);
			nvme_ctrl_get_stats(ctrl, &cs);
			assert_int_equal(cs.shutdowns, k + 1);
			assert_int_equal(nvme_ctrl_read32(ctrl, NVME_REG_CSTS) & NVME_CSTS_RDY, 0);
		}
		nvme_ctrl_destroy(ctrl);
	}
}

/* Back-to-back resets with nothing in flight, then I/O on every queue. */
static void test_idle_resets(void **state)
{
	static char w[4096] __attribute__((aligned(4096)));
	static char r[4096] __attribute__((aligned(4096)));

	for (int m = 0; m < 2; m++) {
		struct setup s = { .mode = modes[m], .queues = 2 };
		struct blk_dev *dev = make_dev(&s, 0, NULL, 0);
		struct blk_mq_ctx *ctx[2];
		struct blk_nvme_stats st;
		struct iovec iov = { w, sizeof(w) };

		assert_int_equal(blk_ctx_attach(dev, &ctx[0]), 0);
		assert_int_equal(blk_ctx_attach(dev, &ctx[1]), 0);
		for (int k = 0; k < 5; k++)
			assert_int_equal(blk_nvme_reset(dev), 0);
		for (int c = 0; c < 2; c++) {
			fill(w, sizeof(w), 77 + c);
			iov.iov_base = w;
			assert_int_equal(io(ctx[c], BLK_OP_WRITE, 8192u * c, &iov, 1, 4096, 0),
					 BLK_STS_OK);
			iov.iov_base = r;
			assert_int_equal(io(ctx[c], BLK_OP_READ, 8192u * c, &iov, 1, 4096, 0),
					 BLK_STS_OK);
			assert_memory_equal(w, r, sizeof(r));
		}
		blk_nvme_get_stats(dev, &st);
		assert_int_equal(st.resets, 5);
		assert_int_equal(st.requeued, 0);
		blk_ctx_detach(ctx[0]);
		blk_ctx_detach(ctx[1]);
		blk_dev_close(dev);
	}
}

/*
 * A reset with mq-deadline and one driver tag: request A holds the tag at
 * the controller (delayed), B waits on the dispatch list without one.  The
 * reset requeues A; had A kept its driver tag behind B, B could never get
 * one and nothing would move again (regression: the bench hung at
 * --nvme-qd=2 --elevator=mq-deadline with timeouts resetting).
 */
static void test_reset_requeue_frees_driver_tag(void **state)
{
	for (int m = 0; m < 2; m++) {
		struct setup s = { .mode = modes[m], .entries = 2 };
		struct blk_dev *dev = make_dev(&s, 0, NULL, 0);
		struct nvme_ctrl_fault f = { .opcode = -1, .qid = -1,
					     .delay_us = 10000000, .count = 1 };
		struct nvme_ctrl_stats cs;
		struct blk_mq_ctx *ctx;
		struct blk_bio b[2];
		struct iovec iov[2];
		uint64_t fetched;
		uint8_t *buf = aligned_alloc(4096, 2 * 4096), *chk = aligned_alloc(4096, 4096);
		unsigned int i;

		assert_int_equal(blk_dev_set_elevator(dev, BLK_ELV_MQ_DEADLINE), 0);
		assert_int_equal(nvme_ctrl_add_fault(blk_nvme_ctrl(dev), &f), 0);
		assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
		nvme_ctrl_get_stats(blk_nvme_ctrl(dev), &cs);
		fetched = cs.commands;
		nr_done = 0;
		for (i = 0; i < 2; i++) {
			fill(buf + i * 4096, 4096, 70 + i);
			iov[i] = (struct iovec){ buf + i * 4096, 4096 };
			memset(&b[i], 0, sizeof(b[i]));
			b[i].bi_op = BLK_OP_WRITE;
			b[i].bi_offset = 1048576ull * (i + 1);  /* no merge */
			b[i].bi_size = 4096;
			b[i].bi_vcnt = 1;
			b[i].bi_io_vec = &iov[i];
			b[i].bi_end_io = end_io;
			assert_int_equal(blk_submit(ctx, &b[i]), 0);
		}
		/* the controller has A (delayed) before the reset */
		do {
			blk_poll(ctx);
			nvme_ctrl_get_stats(blk_nvme_ctrl(dev), &cs);
		} while (cs.commands == fetched);
		assert_int_equal(nr_done, 0);   /* A delayed, B waits for the tag */
		assert_int_equal(blk_nvme_reset(dev), 0);
		assert_int_equal(blk_drain(ctx, 3000000000ull), 0);
		assert_int_equal(nr_done, 2);
		for (i = 0; i < 2; i++) {
			assert_int_equal(b[i].bi_status, BLK_STS_OK);
			assert_int_equal(io(ctx, BLK_OP_READ, 1048576ull * (i + 1),
					    &(struct iovec){ chk, 4096 }, 1, 4096, 0),
					 BLK_STS_OK);
			assert_memory_equal(chk, buf + i * 4096, 4096);
		}
		blk_ctx_detach(ctx);
		blk_dev_close(dev);
		free(buf);
		free(chk);
	}
}

/* ---------------------------------------------------- resets under load */

#define LOAD_BLOCKS 4096u
#define LOAD_QD 128u

struct load_io {
	struct blk_bio bio;
	struct iovec iov;
	uint32_t *buf;
	uint32_t blk;
	uint32_t gen;
	unsigned int ends;      /* bi_end_io calls for the current bio */
	bool busy;
};

struct load_thread {
	struct blk_dev *dev;
	pthread_t tid;
	unsigned int id;
	uint32_t base;          /* first block of this thread's range */
	uint32_t gens[LOAD_BLOCKS];  /* generation on the device (0: unwritten) */
	uint8_t busy[LOAD_BLOCKS];
	struct load_io ios[LOAD_QD];
	atomic_bool *stop;
	uint64_t done, bad_ends, bad_data, errors;
	uint64_t seed;
};

static void load_fill(uint32_t *p, uint32_t blk, uint32_t gen)
{
	for (unsigned int i = 0; i < 1024; i++)
		p[i] = blk * 0x9e3779b1u ^ gen * 0x85ebca6bu ^ i;
}

static void load_end_io(struct blk_bio *bio)
{
	struct load_io *io = bio->bi_private;

	io->ends++;
}

static uint32_t load_rand(struct load_thread *t)
{
	t->seed = t->seed * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(t->seed >> 33);
}

/* Account a finished I/O: exactly one end, status OK, data as expected. */
static void load_finish(struct load_thread *t, struct load_io *io)
{
	uint32_t idx = io->blk - t->base;

	if (io->ends != 1)
		t->bad_ends++;
	if (io->bio.bi_status != BLK_STS_OK) {
		t->errors++;
	} else if (io->bio.bi_op == BLK_OP_WRITE) {
		t->gens[idx] = io->gen;
	} else if (t->gens[idx]) {
		uint32_t exp[1024];

		load_fill(exp, io->blk, t->gens[idx]);
		if (memcmp(exp, io->buf, 4096))
			t->bad_data++;
	}
	t->busy[idx] = 0;
	io->busy = false;
	t->done++;
}

static void *load_main(void *arg)
{
	struct load_thread *t = arg;
	struct blk_mq_ctx *ctx;
	unsigned int i;

	if (blk_ctx_attach(t->dev, &ctx))
		return (void *)1;
	while (!atomic_load(t->stop)) {
		for (i = 0; i < LOAD_QD; i++) {
			struct load_io *io = &t->ios[i];
			uint32_t idx;

			if (io->busy) {
				if (!io->ends)
					continue;
				load_finish(t, io);
			}
			idx = load_rand(t) % LOAD_BLOCKS;
			if (t->busy[idx])
				continue;
			memset(&io->bio, 0, sizeof(io->bio));
			io->blk = t->base + idx;
			io->ends = 0;
			io->iov = (struct iovec){ io->buf, 4096 };
			io->bio.bi_op = load_rand(t) & 1 ? BLK_OP_WRITE : BLK_OP_READ;
			if (io->bio.bi_op == BLK_OP_WRITE) {
				io->gen = t->gens[idx] + 1;
				load_fill(io->buf, io->blk, io->gen);
			}
			io->bio.bi_offset = 4096ull * io->blk;
			io->bio.bi_size = 4096;
			io->bio.bi_vcnt = 1;
			io->bio.bi_io_vec = &io->iov;
			io->bio.bi_end_io = load_end_io;
			io->bio.bi_private = io;
			if (blk_submit(ctx, &io->bio))
				break;
			io->busy = true;
			t->busy[idx] = 1;
		}
		blk_poll(ctx);
	}
	if (blk_drain(ctx, 30000000000ull))
		return (void *)2;
	for (i = 0; i < LOAD_QD; i++)
		if (t->ios[i].busy)
			load_finish(t, &t->ios[i]);
	/* every block read back once more: the device holds the last write */
	for (i = 0; i < LOAD_BLOCKS; i++) {
		struct load_io *io = &t->ios[0];
		uint32_t exp[1024];

		if (!t->gens[i])
			continue;
		memset(&io->bio, 0, sizeof(io->bio));
		io->ends = 0;
		io->iov = (struct iovec){ io->buf, 4096 };
		io->bio.bi_op = BLK_OP_READ;
		io->bio.bi_offset = 4096ull * (t->base + i);
		io->bio.bi_size = 4096;
		io->bio.bi_vcnt = 1;
		io->bio.bi_io_vec = &io->iov;
		io->bio.bi_end_io = load_end_io;
		io->bio.bi_private = io;
		while (blk_submit(ctx, &io->bio) == -EAGAIN)
			blk_poll(ctx);
		if (blk_drain(ctx, 30000000000ull))
			return (void *)3;
		load_fill(exp, t->base + i, t->gens[i]);
		if (io->ends != 1)
			t->bad_ends++;
		if (io->bio.bi_status || memcmp(exp, io->buf, 4096))
			t->bad_data++;
	}
	blk_ctx_detach(ctx);
	return NULL;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void reset_load_run_q(enum nvme_ctrl_mode mode, bool drops,
			     unsigned int nt, unsigned int nq)
{
	struct setup s = { .mode = mode, .queues = nq, .entries = 256,
			   .capacity = 4096ull * LOAD_BLOCKS * nt,
			   .rq_timeout_ms = 200, .shared_hctx = nt > nq };
	struct blk_dev *dev = make_dev(&s, 0, NULL, 0);
	struct load_thread *t = calloc(nt, sizeof(*t));
	atomic_bool stop = false;
	struct blk_nvme_stats st;
	unsigned int i, k;

	for (i = 0; i < nt; i++) {
		t[i].dev = dev;
		t[i].id = i;
		t[i].base = i * LOAD_BLOCKS;
		t[i].stop = &stop;
		t[i].seed = 12345 + i;
		for (k = 0; k < LOAD_QD; k++)
			t[i].ios[k].buf = aligned_alloc(4096, 4096);
		assert_int_equal(pthread_create(&t[i].tid, NULL, load_main, &t[i]), 0);
	}
	for (k = 0; k < 6; k++) {
		sleep_ms(60);
		if (drops) {
			struct nvme_ctrl_fault f = { .opcode = -1, .qid = -1,
						     .drop = true, .count = 1 };

			assert_int_equal(nvme_ctrl_add_fault(blk_nvme_ctrl(dev), &f), 0);
			sleep_ms(400);  /* the timeout (200 ms) resets */
		} else {
			assert_int_equal(blk_nvme_reset(dev), 0);
		}
	}
	sleep_ms(60);
	atomic_store(&stop, true);
	for (i = 0; i < nt; i++) {
		void *ret;

		assert_int_equal(pthread_join(t[i].tid, &ret), 0);
		assert_null(ret);
		assert_int_equal(t[i].bad_ends, 0);
		assert_int_equal(t[i].bad_data, 0);
		assert_int_equal(t[i].errors, 0);
		/* threads sharing a queue get less of it on a loaded box */
		assert_true(t[i].done > (nt == nq ? 1000u : 50u));
		for (k = 0; k < LOAD_QD; k++)
			free(t[i].ios[k].buf);
	}
	blk_nvme_get_stats(dev, &st);
	if (drops) {
		assert_true(st.resets >= 1);
		assert_true(st.timeouts >= 1);
		/* the dropped command was in flight at the reset */
		assert_true(st.requeued >= 1);
	} else {
		/*
		 * No requeue count is asserted here: on a loaded machine
		 * (ASan, 2 CPUs) the threads can all be off CPU with nothing
		 * in flight when a reset lands (seen once in CI).
		 */
		assert_int_equal(st.resets, 6);
	}
	blk_dev_close(dev);
	free(t);
}

static void reset_load_run(enum nvme_ctrl_mode mode, bool drops)
{
	reset_load_run_q(mode, drops, 2, 2);
}

/*
 * Threads sharing an I/O queue (shared hctx): a reset, or a dropped
 * completion (Abort, then reset), recovers the queue on whichever thread
 * holds it next, requeueing requests other threads submitted; each still
 * ends exactly once with its data.  3 threads on 1 queue, 3 on 2.
 */
static void test_shared_queue_resets_under_load(void **state)
{
	for (int m = 0; m < 2; m++) {
		reset_load_run_q(modes[m], false, 3, 1);
		reset_load_run_q(modes[m], true, 3, 2);
	}
}

static void test_reset_under_load(void **state)
{
	for (int m = 0; m < 2; m++)
		reset_load_run(modes[m], false);
}

static void test_drop_resets_under_load(void **state)
{
	for (int m = 0; m < 2; m++)
		reset_load_run(modes[m], true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_map),
		cmocka_unit_test(test_bringup_identify),
		cmocka_unit_test(test_setup_errors),
		cmocka_unit_test(test_roundtrip_ops),
		cmocka_unit_test(test_prp_sizes),
		cmocka_unit_test(test_prp_multi_segment),
		cmocka_unit_test(test_bounce),
		cmocka_unit_test(test_queue_wrap),
		cmocka_unit_test(test_fault_status),
		cmocka_unit_test(test_timeout_dropped_completion),
		cmocka_unit_test(test_timeout_abort_succeeds),
		cmocka_unit_test(test_failed_reset_kills_controller),
		cmocka_unit_test(test_idle_resets),
		cmocka_unit_test(test_reset_requeue_frees_driver_tag),
		cmocka_unit_test(test_borrowed_ctrl_shutdown),
		cmocka_unit_test(test_reset_under_load),
		cmocka_unit_test(test_drop_resets_under_load),
		cmocka_unit_test(test_shared_queue_resets_under_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
