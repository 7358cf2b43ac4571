// SPDX-License-Identifier: MIT
/*
 * Unit tests for the mq-deadline scheduler, driven through its
 * elevator_type ops on a fake hctx.  hctx->elv_now_ns is set by hand, so
 * expiry is deterministic.
 *
 * The merge helpers the scheduler calls live in merge.c and blk-mq.c.
 * Weak versions below, with the same semantics, let this test run without
 * them; when the real ones are linked in they win, and the tests are
 * written to pass with either (requests hold real scheduler tags from an
 * sbitmap, so a real blk_mq_merge_requests() can release them).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/blk-mq.h"
#include "core/mq-deadline.h"

#define MS 1000000ull
#define BS 4096u
#define NR_TAGS 64
#define NR_BIOS 8192

/* ---- weak stand-ins for merge.c / blk-mq.c ---- */

__attribute__((weak)) __thread struct blk_mq_ctx *blk_current_ctx;

static bool stub_mergeable(unsigned int op)
{
	return op == BLK_OP_READ || op == BLK_OP_WRITE;
}

__attribute__((weak)) enum elv_merge
blk_try_merge(const struct blk_dev *dev, const struct request *rq,
	      const struct blk_bio *bio)
{
	uint64_t max_bytes = (uint64_t)dev->cfg.max_sectors << 9;

	if (rq->op != bio->bi_op || !stub_mergeable(bio->bi_op) ||
	    rq->cmd_flags != bio->bi_flags || !rq->bio)
		return ELEVATOR_NO_MERGE;
	if ((uint64_t)rq->data_len + bio->bi_size > max_bytes ||
	    (unsigned int)rq->nr_segments + bio->bi_vcnt >
		    dev->cfg.max_segments)
		return ELEVATOR_NO_MERGE;
	if (rq->offset + rq->data_len == bio->bi_offset)
		return ELEVATOR_BACK_MERGE;
	if (bio->bi_offset + bio->bi_size == rq->offset)
		return ELEVATOR_FRONT_MERGE;
	return ELEVATOR_NO_MERGE;
}

__attribute__((weak)) void blk_rq_merge_bio(struct request *rq,
					    struct blk_bio *bio,
					    enum elv_merge how)
{
	if (how == ELEVATOR_BACK_MERGE) {
		bio->bi_next = NULL;
		rq->biotail->bi_next = bio;
		rq->biotail = bio;
	} else {
		bio->bi_next = rq->bio;
		rq->bio = bio;
		rq->offset = bio->bi_offset;
	}
	rq->data_len += bio->bi_size;
	rq->nr_segments += bio->bi_vcnt;
}

__attribute__((weak)) bool blk_rq_merge_ok_rq(const struct blk_dev *dev,
					      const struct request *rq,
					      const struct request *next)
{
	uint64_t max_bytes = (uint64_t)dev->cfg.max_sectors << 9;

	if (rq->op != next->op || !stub_mergeable(rq->op) ||
	    rq->cmd_flags != next->cmd_flags || !rq->bio || !next->bio)
		return false;
	if (rq->offset + rq->data_len != next->offset)
		return false;
	if ((uint64_t)rq->data_len + next->data_len > max_bytes ||
	    (unsigned int)rq->nr_segments + next->nr_segments >
		    dev->cfg.max_segments)
		return false;
	return true;
}

__attribute__((weak)) void blk_mq_account_merge(struct blk_mq_ctx *ctx,
						unsigned int op)
{
	if (ctx)
		ctx->stats.merges[blk_op_stat_dir(op)]++;
}

__attribute__((weak)) void blk_mq_merge_requests(struct blk_mq_hw_ctx *hctx,
						 struct request *rq,
						 struct request *next)
{
	rq->biotail->bi_next = next->bio;
	rq->biotail = next->biotail;
	rq->data_len += next->data_len;
	rq->nr_segments += next->nr_segments;
	blk_mq_account_merge(next->mq_ctx, next->op);
	sbitmap_put(&hctx->sched_tags->bitmap_tags, next->internal_tag,
		    &next->mq_ctx->sched_tag_hint);
	next->bio = next->biotail = NULL;
	next->internal_tag = -1;
}

/* ---- fixture ---- */

struct fixture {
	struct blk_mq_ctx ctx;
	struct blk_dev dev;
	struct blk_mq_hw_ctx hctx;
	struct blk_mq_hw_ctx *hctxs[1];
	struct blk_mq_tags tags;
	struct request *rqs[NR_TAGS];
	struct request *static_rqs[NR_TAGS];
	struct request rq_mem[NR_TAGS];
	struct blk_bio bios[NR_BIOS];
	unsigned int nr_bios;
	char buf[BS];
	struct iovec iov;
};

static struct fixture *F;

static int setup(void **state)
{
	size_t sz = (sizeof(struct fixture) + 63) & ~(size_t)63;
	struct fixture *f = aligned_alloc(64, sz);

	assert_non_null(f);
	memset(f, 0, sz);
	f->dev.cfg.name = "fake";
	f->dev.cfg.capacity = 1ull << 40;
	f->dev.cfg.logical_block_size = 512;
	f->dev.cfg.max_sectors = 256; /* 128 KiB */
	f->dev.cfg.max_segments = 128;
	f->dev.cfg.nr_hw_queues = 1;
	f->dev.cfg.queue_depth = NR_TAGS / 2;
	f->dev.cfg.nr_requests = NR_TAGS;
	f->dev.lbs_shift = 9;
	f->dev.hctxs = f->hctxs;
	f->dev.elevator = BLK_ELV_MQ_DEADLINE;
	f->hctxs[0] = &f->hctx;

	assert_int_equal(sbitmap_init(&f->tags.bitmap_tags, NR_TAGS, false), 0);
	f->tags.nr_tags = NR_TAGS;
	f->tags.rqs = f->rqs;
	f->tags.static_rqs = f->static_rqs;
	for (unsigned int i = 0; i < NR_TAGS; i++)
		f->static_rqs[i] = &f->rq_mem[i];
	f->tags.rq_size = sizeof(struct request);

	f->hctx.dev = &f->dev;
	f->hctx.sched_tags = &f->tags;
	f->hctx.elv = &elv_mq_deadline;
	f->hctx.nr_ctx = 1;
	rq_list_init(&f->hctx.dispatch);

	f->ctx.dev = &f->dev;
	f->ctx.hctx = &f->hctx;
	blk_current_ctx = &f->ctx;

	f->iov.iov_base = f->buf;
	f->iov.iov_len = BS;

	assert_int_equal(elv_mq_deadline.init_hctx(&f->hctx), 0);
	assert_non_null(f->hctx.sched_data);
	F = f;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	elv_mq_deadline.exit_hctx(&f->hctx);
	assert_null(f->hctx.sched_data);
	sbitmap_free(&f->tags.bitmap_tags);
	blk_current_ctx = NULL;
	free(f);
	return 0;
}

static struct blk_bio *mk_bio(unsigned int op, uint64_t off, uint32_t len)
{
	struct blk_bio *bio;

	assert_true(F->nr_bios < NR_BIOS);
	bio = &F->bios[F->nr_bios++];
	memset(bio, 0, sizeof(*bio));
	bio->bi_offset = off;
	bio->bi_size = len;
	bio->bi_op = op;
	if (len) {
		bio->bi_vcnt = 1;
		bio->bi_io_vec = &F->iov;
	}
	return bio;
}

/* A request as the core builds it: one bio, a scheduler tag. */
static struct request *mk_rq(unsigned int op, uint64_t off, uint32_t len)
{
	int tag = sbitmap_get(&F->tags.bitmap_tags, &F->ctx.sched_tag_hint);
	struct blk_bio *bio = mk_bio(op, off, len);
	struct request *rq;

	assert_true(tag >= 0);
	rq = F->tags.static_rqs[tag];
	memset(rq, 0, sizeof(*rq));
	rq->mq_hctx = &F->hctx;
	rq->mq_ctx = &F->ctx;
	rq->offset = off;
	rq->data_len = len;
	rq->tag = -1;
	rq->internal_tag = tag;
	rq->op = op;
	rq->rq_flags = RQF_ELV;
	rq->nr_segments = bio->bi_vcnt;
	rq->bio = rq->biotail = bio;
	return rq;
}

static void insert(struct request *rq)
{
	struct rq_list l;

	rq_list_init(&l);
	rq_list_add_tail(&l, rq);
	elv_mq_deadline.insert_requests(&F->hctx, &l);
	assert_null(l.head);
	assert_int_equal(l.count, 0);
}

static struct request *insert_new(unsigned int op, uint64_t off, uint32_t len)
{
	struct request *rq = mk_rq(op, off, len);

	insert(rq);
	return rq;
}

static bool tag_busy(int tag)
{
	return sbitmap_test_bit(&F->tags.bitmap_tags, tag);
}

/* Dispatch one request and complete it at once (free its tag). */
static struct request *dispatch(void)
{
	struct request *rq = elv_mq_deadline.dispatch_request(&F->hctx);

	if (rq && rq->internal_tag >= 0) {
		assert_true(tag_busy(rq->internal_tag));
		sbitmap_put(&F->tags.bitmap_tags, rq->internal_tag,
			    &F->ctx.sched_tag_hint);
	}
	return rq;
}

static uint64_t dispatch_off(void)
{
	struct request *rq = dispatch();

	assert_non_null(rq);
	return rq->offset;
}

static bool merge(struct blk_bio *bio)
{
	return elv_mq_deadline.bio_merge(&F->hctx, bio);
}

/* Offer a new bio to the scheduler; true if it joined a queued request. */
static bool merge_new(unsigned int op, uint64_t off, uint32_t len)
{
	return merge(mk_bio(op, off, len));
}

static bool has_work(void)
{
	return elv_mq_deadline.has_work(&F->hctx);
}

static void set_tunable(const char *name, uint64_t v)
{
	assert_int_equal(mq_deadline_set_tunable(&F->hctx, name, v), 0);
}

static uint64_t get_tunable(const char *name)
{
	uint64_t v = UINT64_MAX;

	assert_int_equal(mq_deadline_get_tunable(&F->hctx, name, &v), 0);
	return v;
}

static struct mq_deadline_stats stats(void)
{
	struct mq_deadline_stats st;

	assert_int_equal(mq_deadline_get_stats(&F->hctx, &st), 0);
	return st;
}

static unsigned int nr_bios_of(const struct request *rq)
{
	const struct blk_bio *bio;
	unsigned int n = 0;

	rq_for_each_bio(bio, rq)
		n++;
	return n;
}

/* ---- tests ---- */

static void test_sorted_dispatch(void **state)
{
	struct rq_list l;

	(void)state;
	/* one insert call with three requests, arriving 5, 1, 3 */
	rq_list_init(&l);
	rq_list_add_tail(&l, mk_rq(BLK_OP_READ, 5 * BS, BS));
	rq_list_add_tail(&l, mk_rq(BLK_OP_READ, 1 * BS, BS));
	rq_list_add_tail(&l, mk_rq(BLK_OP_READ, 3 * BS, BS));
	assert_false(has_work());
	elv_mq_deadline.insert_requests(&F->hctx, &l);
	assert_true(has_work());

	assert_int_equal(dispatch_off(), 1 * BS);
	assert_int_equal(dispatch_off(), 3 * BS);
	assert_int_equal(dispatch_off(), 5 * BS);
	assert_null(dispatch());
	assert_false(has_work());
	assert_int_equal(stats().dispatched[0], 3);
	assert_int_equal(stats().inserted[0], 3);
	assert_int_equal(sbitmap_weight(&F->tags.bitmap_tags), 0);
}

/*
 * A batch sweeps upwards from the last dispatched position, picking up
 * requests that arrive above it; those that arrive below wait for the
 * sweep to restart at the oldest request.
 */
static void test_batch_sort_order(void **state)
{
	(void)state;
	insert_new(BLK_OP_READ, 10 * BS, BS);
	insert_new(BLK_OP_READ, 30 * BS, BS);
	insert_new(BLK_OP_READ, 20 * BS, BS);
	assert_int_equal(dispatch_off(), 10 * BS);

	F->hctx.elv_now_ns = 1 * MS;
	insert_new(BLK_OP_READ, 5 * BS, BS);   /* behind the head */
	insert_new(BLK_OP_READ, 40 * BS, BS);
	insert_new(BLK_OP_READ, 25 * BS, BS);
	assert_int_equal(dispatch_off(), 20 * BS);
	assert_int_equal(dispatch_off(), 25 * BS);
	assert_int_equal(dispatch_off(), 30 * BS);
	assert_int_equal(dispatch_off(), 40 * BS);
	assert_int_equal(dispatch_off(), 5 * BS);
	assert_null(dispatch());
	assert_int_equal(stats().fifo_expired[0], 0);
}

/*
 * An expired read jumps the sort order, but only between batches: a batch
 * in progress is finished first.
 */
static void test_read_fifo_expiry(void **state)
{
	struct request *old;

	(void)state;
	set_tunable("fifo_batch", 2);
	F->hctx.elv_now_ns = 1000 * MS;
	old = insert_new(BLK_OP_READ, 100 * BS, BS);
	assert_int_equal(old->fifo_time_ns, 1500 * MS);

	F->hctx.elv_now_ns = 1100 * MS;
	insert_new(BLK_OP_READ, 10 * BS, BS);
	insert_new(BLK_OP_READ, 20 * BS, BS);
	insert_new(BLK_OP_READ, 30 * BS, BS);
	insert_new(BLK_OP_READ, 40 * BS, BS);

	/* nothing expired: sort order from offset 0 */
	assert_int_equal(dispatch_off(), 10 * BS);
	/* 100 expires, but the batch of two continues */
	F->hctx.elv_now_ns = 1500 * MS;
	assert_int_equal(dispatch_off(), 20 * BS);
	/* new batch: the expired FIFO head goes first */
	assert_int_equal(dispatch_off(), 100 * BS);
	assert_int_equal(stats().fifo_expired[0], 1);
	/* nothing above 100 and 30, 40 not expired (1600 ms): oldest next */
	assert_int_equal(dispatch_off(), 30 * BS);
	assert_int_equal(dispatch_off(), 40 * BS);
	assert_null(dispatch());
	assert_int_equal(stats().fifo_expired[0], 1);
}

/* Writes expire too: an expired write head is where a write batch starts. */
static void test_write_fifo_expiry(void **state)
{
	(void)state;
	set_tunable("write_expire", 100);
	set_tunable("fifo_batch", 1);
	set_tunable("writes_starved", 0); /* every batch may be writes */
	insert_new(BLK_OP_WRITE, 50 * BS, BS);
	F->hctx.elv_now_ns = 10 * MS;
	insert_new(BLK_OP_WRITE, 5 * BS, BS);
	insert_new(BLK_OP_WRITE, 60 * BS, BS);
	assert_int_equal(dispatch_off(), 5 * BS);
	F->hctx.elv_now_ns = 100 * MS;
	/* sort order would give 60; the expired 50 goes first */
	assert_int_equal(dispatch_off(), 50 * BS);
	assert_int_equal(dispatch_off(), 60 * BS);
	assert_int_equal(stats().fifo_expired[1], 1);
	assert_int_equal(stats().dispatched[1], 3);
}

/* After writes_starved read batches with writes waiting, writes go. */
static void test_write_starvation(void **state)
{
	const char expect[] = "RRWRRWRRWRRR";
	unsigned int i;

	(void)state;
	set_tunable("fifo_batch", 1);
	for (i = 0; i < 9; i++)
		insert_new(BLK_OP_READ, (2 * i) * BS, BS);
	for (i = 0; i < 3; i++)
		insert_new(BLK_OP_WRITE, (1000 + 2 * i) * BS, BS);

	for (i = 0; i < strlen(expect); i++) {
		struct request *rq = dispatch();

		assert_non_null(rq);
		assert_int_equal(rq_data_dir(rq) ? 'W' : 'R', expect[i]);
	}
	assert_null(dispatch());
	assert_int_equal(stats().starved_write_batches, 3);
	assert_int_equal(stats().dispatched[0], 9);
	assert_int_equal(stats().dispatched[1], 3);
}

/* A batch holds at most fifo_batch requests. */
static void test_fifo_batch_limit(void **state)
{
	const char expect[] = "RRRRRRRRWWWWRRWWWWWW";
	uint64_t last[2] = { 0, 0 };
	unsigned int i;

	(void)state;
	set_tunable("fifo_batch", 4);
	for (i = 0; i < 10; i++) {
		insert_new(BLK_OP_WRITE, (1000 + 2 * (9 - i)) * BS, BS);
		insert_new(BLK_OP_READ, (2 * (9 - i)) * BS, BS);
	}
	for (i = 0; i < strlen(expect); i++) {
		struct request *rq = dispatch();
		int dir;

		assert_non_null(rq);
		dir = rq_data_dir(rq);
		assert_int_equal(dir ? 'W' : 'R', expect[i]);
		/* each direction is served in increasing offset order */
		assert_true(rq->offset >= last[dir]);
		last[dir] = rq->offset;
	}
	assert_null(dispatch());
	assert_int_equal(stats().starved_write_batches, 1);
}

/* Discards and write-zeroes are write direction; they do not merge. */
static void test_discard_write_direction(void **state)
{
	struct request *d, *z;

	(void)state;
	set_tunable("fifo_batch", 1);
	set_tunable("writes_starved", 0);
	d = insert_new(BLK_OP_DISCARD, 0, BS);
	z = insert_new(BLK_OP_WRITE_ZEROES, BS, BS);
	assert_true(tag_busy(d->internal_tag));
	assert_true(tag_busy(z->internal_tag));
	assert_false(merge_new(BLK_OP_DISCARD, 2 * BS, BS));
	assert_ptr_equal(dispatch(), d);
	assert_ptr_equal(dispatch(), z);
	assert_int_equal(stats().dispatched[1], 2);
	assert_int_equal(stats().dispatched[0], 0);
}

/* Flushes bypass sorting and go first, in arrival order. */
static void test_flush_bypass(void **state)
{
	struct request *r, *f1, *f2;

	(void)state;
	r = insert_new(BLK_OP_READ, 0, BS);
	f1 = insert_new(BLK_OP_FLUSH, 0, 0);
	f2 = insert_new(BLK_OP_FLUSH, 0, 0);
	assert_false(merge_new(BLK_OP_FLUSH, 0, 0));
	assert_ptr_equal(dispatch(), f1);
	assert_ptr_equal(dispatch(), f2);
	assert_true(has_work());
	assert_ptr_equal(dispatch(), r);
	assert_false(has_work());
	assert_int_equal(stats().bypass_dispatched, 2);
	assert_int_equal(stats().untracked, 0);
}

/* A request without a scheduler tag is still dispatched, unsorted. */
static void test_untracked_request(void **state)
{
	struct request *rq = mk_rq(BLK_OP_READ, 0, BS);
	int tag = rq->internal_tag;

	(void)state;
	rq->internal_tag = -1;
	insert(rq);
	assert_true(has_work());
	assert_ptr_equal(dispatch(), rq);
	assert_false(has_work());
	assert_int_equal(stats().untracked, 1);
	sbitmap_put(&F->tags.bitmap_tags, tag, &F->ctx.sched_tag_hint);
}

static void test_has_work(void **state)
{
	(void)state;
	assert_false(has_work());
	assert_null(dispatch());
	insert_new(BLK_OP_WRITE, 0, BS);
	assert_true(has_work());
	assert_non_null(dispatch());
	assert_false(has_work());
	insert_new(BLK_OP_READ, 0, BS);
	assert_true(has_work());
	assert_non_null(dispatch());
	assert_false(has_work());
	assert_null(dispatch());
}

static void test_bio_back_merge(void **state)
{
	struct request *rq;
	struct blk_bio *bio;

	(void)state;
	rq = insert_new(BLK_OP_READ, 2 * BS, BS);
	/* other direction: no merge */
	assert_false(merge_new(BLK_OP_WRITE, 3 * BS, BS));
	/* not contiguous: no merge */
	assert_false(merge_new(BLK_OP_READ, 4 * BS, BS));
	bio = mk_bio(BLK_OP_READ, 3 * BS, BS);
	assert_true(merge(bio));
	assert_int_equal(rq->offset, 2 * BS);
	assert_int_equal(rq->data_len, 2 * BS);
	assert_ptr_equal(rq->biotail, bio);
	assert_int_equal(nr_bios_of(rq), 2);
	assert_int_equal(rq->nr_segments, 2);
	assert_int_equal(stats().back_merges, 1);
	assert_true(F->ctx.stats.merges[BLK_STAT_READ] >= 1);

	/* the new end is found again */
	assert_true(merge_new(BLK_OP_READ, 4 * BS, BS));
	assert_int_equal(rq->data_len, 3 * BS);
	assert_ptr_equal(dispatch(), rq);
	assert_null(dispatch());
}

static void test_bio_front_merge(void **state)
{
	struct request *a, *b;
	struct blk_bio *bio;
	uint64_t o;

	(void)state;
	/* a is FUA, so nothing but b can merge with bios next to it */
	a = mk_rq(BLK_OP_WRITE, 10 * BS, BS);
	a->cmd_flags = BLK_BIO_FUA;
	a->bio->bi_flags = BLK_BIO_FUA;
	insert(a);
	b = insert_new(BLK_OP_WRITE, 20 * BS, BS);

	bio = mk_bio(BLK_OP_WRITE, 19 * BS, BS);
	assert_true(merge(bio));
	assert_ptr_equal(b->bio, bio);
	assert_int_equal(b->offset, 19 * BS);
	assert_int_equal(b->data_len, 2 * BS);
	assert_int_equal(stats().front_merges, 1);

	/* grow b downwards past a's end, over a, and below a's start */
	for (o = 18; o >= 9; o--)
		assert_true(merge_new(BLK_OP_WRITE, o * BS, BS));
	assert_int_equal(b->offset, 9 * BS);
	assert_int_equal(b->data_len, 12 * BS);
	assert_int_equal(nr_bios_of(b), 12);
	assert_int_equal(a->data_len, BS);
	assert_int_equal(stats().front_merges, 11);
	assert_int_equal(stats().back_merges, 0);

	/* b was re-keyed: it now sorts below a */
	assert_ptr_equal(dispatch(), b);
	assert_ptr_equal(dispatch(), a);
	assert_null(dispatch());
}

static void test_front_merges_off(void **state)
{
	struct request *rq;

	(void)state;
	set_tunable("front_merges", 0);
	rq = insert_new(BLK_OP_READ, 10 * BS, BS);
	assert_false(merge_new(BLK_OP_READ, 9 * BS, BS));
	/* back merges are unaffected */
	assert_true(merge_new(BLK_OP_READ, 11 * BS, BS));
	assert_int_equal(rq->offset, 10 * BS);
	assert_int_equal(rq->data_len, 2 * BS);
	assert_int_equal(stats().front_merges, 0);
}

/* A bio that would take a request past its limits stays out. */
static void test_merge_limits(void **state)
{
	struct request *rq;

	(void)state;
	F->dev.cfg.max_sectors = 2 * BS / 512;
	rq = insert_new(BLK_OP_READ, 10 * BS, BS);
	assert_true(merge_new(BLK_OP_READ, 11 * BS, BS));
	assert_false(merge_new(BLK_OP_READ, 12 * BS, BS));
	assert_false(merge_new(BLK_OP_READ, 9 * BS, BS));
	assert_int_equal(rq->data_len, 2 * BS);
	assert_int_equal(rq->offset, 10 * BS);

	/* segments */
	F->dev.cfg.max_sectors = 256;
	F->dev.cfg.max_segments = 4;
	assert_true(merge_new(BLK_OP_READ, 12 * BS, BS));
	assert_true(merge_new(BLK_OP_READ, 13 * BS, BS));
	assert_false(merge_new(BLK_OP_READ, 14 * BS, BS));
	assert_int_equal(rq->nr_segments, 4);

	/* FUA differs: no merge */
	F->dev.cfg.max_segments = 128;
	{
		struct blk_bio *fua = mk_bio(BLK_OP_READ, 14 * BS, BS);

		fua->bi_flags = BLK_BIO_FUA;
		assert_false(merge(fua));
	}
	assert_int_equal(stats().back_merges, 3);
}

/* A bio that fills a gap joins the two requests around it. */
static void test_bio_merge_joins_requests(void **state)
{
	struct request *a, *b;
	int btag;

	(void)state;
	a = insert_new(BLK_OP_READ, 0, 2 * BS);
	b = insert_new(BLK_OP_READ, 3 * BS, 2 * BS);
	btag = b->internal_tag;
	assert_true(merge_new(BLK_OP_READ, 2 * BS, BS));
	assert_int_equal(a->offset, 0);
	assert_int_equal(a->data_len, 5 * BS);
	assert_int_equal(nr_bios_of(a), 3);
	assert_false(tag_busy(btag));
	assert_int_equal(stats().rq_merges, 1);
	assert_ptr_equal(dispatch(), a);
	assert_null(dispatch());
	assert_false(has_work());
}

static void test_insert_merge(void **state)
{
	struct request *a, *b, *c, *d, *g, *h;
	int btag, ctag, dtag, gtag;

	(void)state;
	/* a new request continuing a queued one joins it */
	a = insert_new(BLK_OP_WRITE, 0, BS);
	b = mk_rq(BLK_OP_WRITE, BS, BS);
	btag = b->internal_tag;
	insert(b);
	assert_false(tag_busy(btag));
	assert_int_equal(a->data_len, 2 * BS);
	assert_int_equal(stats().insert_merges, 1);

	/* ... and then absorbs the queued one it now touches */
	c = insert_new(BLK_OP_WRITE, 3 * BS, BS);
	ctag = c->internal_tag;
	d = mk_rq(BLK_OP_WRITE, 2 * BS, BS);
	dtag = d->internal_tag;
	insert(d);
	assert_false(tag_busy(dtag));
	assert_false(tag_busy(ctag));
	assert_int_equal(a->data_len, 4 * BS);
	assert_int_equal(nr_bios_of(a), 4);
	assert_int_equal(stats().insert_merges, 2);
	assert_int_equal(stats().rq_merges, 1);

	/*
	 * A new request in front of a queued one absorbs it, and keeps the
	 * older deadline.
	 */
	g = insert_new(BLK_OP_WRITE, 11 * BS, BS);
	gtag = g->internal_tag;
	F->hctx.elv_now_ns = 100 * MS;
	h = insert_new(BLK_OP_WRITE, 10 * BS, BS);
	assert_false(tag_busy(gtag));
	assert_int_equal(h->data_len, 2 * BS);
	assert_int_equal(h->fifo_time_ns, 5000 * MS);
	assert_int_equal(stats().rq_merges, 2);

	/* not mergeable (read vs write): inserted apart */
	insert_new(BLK_OP_READ, 4 * BS, BS);
	assert_int_equal(stats().insert_merges, 2);

	set_tunable("writes_starved", 0);
	assert_ptr_equal(dispatch(), a);
	assert_ptr_equal(dispatch(), h);
	assert_int_equal(dispatch_off(), 4 * BS);
	assert_null(dispatch());
	assert_int_equal(sbitmap_weight(&F->tags.bitmap_tags), 0);
}

static void test_tunables(void **state)
{
	struct blk_mq_hw_ctx none;
	uint64_t v;

	(void)state;
	assert_int_equal(get_tunable("read_expire"), 500);
	assert_int_equal(get_tunable("write_expire"), 5000);
	assert_int_equal(get_tunable("writes_starved"), 2);
	assert_int_equal(get_tunable("fifo_batch"), 16);
	assert_int_equal(get_tunable("front_merges"), 1);

	set_tunable("read_expire", 20);
	assert_int_equal(get_tunable("read_expire"), 20);
	F->hctx.elv_now_ns = 7 * MS;
	assert_int_equal(insert_new(BLK_OP_READ, 0, BS)->fifo_time_ns, 27 * MS);
	set_tunable("write_expire", 0);
	assert_int_equal(insert_new(BLK_OP_WRITE, 0, BS)->fifo_time_ns, 7 * MS);

	assert_int_equal(mq_deadline_set_tunable(&F->hctx, "front_merges", 2),
			 -EINVAL);
	assert_int_equal(mq_deadline_set_tunable(&F->hctx, "fifo_batch",
						 1ull << 32), -EINVAL);
	assert_int_equal(mq_deadline_set_tunable(&F->hctx, "read_expire",
						 UINT64_MAX), -EINVAL);
	assert_int_equal(mq_deadline_set_tunable(&F->hctx, "quantum", 1),
			 -ENOENT);
	assert_int_equal(mq_deadline_get_tunable(&F->hctx, "quantum", &v),
			 -ENOENT);
	assert_int_equal(mq_deadline_set_tunable(&F->hctx, NULL, 1), -EINVAL);

	memset(&none, 0, sizeof(none));
	assert_int_equal(mq_deadline_set_tunable(&none, "fifo_batch", 1),
			 -EINVAL);
	assert_int_equal(mq_deadline_get_tunable(&none, "fifo_batch", &v),
			 -EINVAL);
	assert_int_equal(mq_deadline_set_tunable(NULL, "fifo_batch", 1),
			 -EINVAL);
	assert_non_null(dispatch());
	assert_non_null(dispatch());
}

/* fifo_batch 0: each dispatch is a batch, so expiry is seen at once. */
static void test_fifo_batch_zero(void **state)
{
	(void)state;
	set_tunable("fifo_batch", 0);
	insert_new(BLK_OP_READ, 50 * BS, BS);
	F->hctx.elv_now_ns = 1 * MS;
	insert_new(BLK_OP_READ, 1 * BS, BS);
	insert_new(BLK_OP_READ, 3 * BS, BS);
	assert_int_equal(dispatch_off(), 1 * BS);
	F->hctx.elv_now_ns = 500 * MS;
	assert_int_equal(dispatch_off(), 50 * BS);
	assert_int_equal(dispatch_off(), 3 * BS);
}

/*
 * Random inserts, bio merges and dispatches over a small range (so that
 * requests touch and overlap): every bio comes out exactly once, in a
 * request whose bios are contiguous and within limits, and every tag is
 * released.
 */
static struct request *insert_prio(unsigned int op, uint64_t off,
				   uint32_t len, unsigned int class)
{
	struct request *rq = mk_rq(op, off, len);

	rq->bio->bi_ioprio = IOPRIO_PRIO_VALUE(class, 0);
	insert(rq);
	return rq;
}

/*
 * Linux's mq-deadline with priorities: RT before BE (and no class) before
 * IDLE, whatever the offsets and arrival; a new RT request breaks into a
 * BE batch; requests of different classes never merge.
 */
static void test_prio_classes(void **state)
{
	(void)state;
	F->hctx.elv_now_ns = 1000 * MS;
	insert_prio(BLK_OP_READ, 10 * BS, BS, IOPRIO_CLASS_IDLE);
	insert_prio(BLK_OP_READ, 20 * BS, BS, IOPRIO_CLASS_BE);
	insert_prio(BLK_OP_READ, 30 * BS, BS, IOPRIO_CLASS_NONE);
	insert_prio(BLK_OP_WRITE, 40 * BS, BS, IOPRIO_CLASS_RT);
	insert_prio(BLK_OP_READ, 50 * BS, BS, IOPRIO_CLASS_RT);
	/* RT: the read, then the write (reads first) */
	assert_int_equal(dispatch_off(), 50 * BS);
	assert_int_equal(dispatch_off(), 40 * BS);
	/* BE and none are one class, in offset order */
	assert_int_equal(dispatch_off(), 20 * BS);
	/* an RT arrival is served before the BE batch goes on */
	insert_prio(BLK_OP_READ, 5 * BS, BS, IOPRIO_CLASS_RT);
	assert_int_equal(dispatch_off(), 5 * BS);
	assert_int_equal(dispatch_off(), 30 * BS);
	assert_int_equal(dispatch_off(), 10 * BS);
	assert_null(dispatch());
	assert_int_equal(stats().dispatched_prio[0], 3);
	assert_int_equal(stats().dispatched_prio[1], 2);
	assert_int_equal(stats().dispatched_prio[2], 1);
	/* a bio of another class does not join a queued request */
	insert_prio(BLK_OP_READ, 60 * BS, BS, IOPRIO_CLASS_IDLE);
	assert_false(merge_new(BLK_OP_READ, 61 * BS, BS));
	assert_int_equal(dispatch_off(), 61 * BS - BS);
	assert_null(dispatch());
}

/* prio_aging_expire: an IDLE request waiting that long goes before RT. */
static void test_prio_aging(void **state)
{
	(void)state;
	assert_int_equal(get_tunable("prio_aging_expire"), 10000);
	set_tunable("prio_aging_expire", 100);
	F->hctx.elv_now_ns = 1000 * MS;
	insert_prio(BLK_OP_READ, 10 * BS, BS, IOPRIO_CLASS_IDLE);
	F->hctx.elv_now_ns = 1050 * MS;
	insert_prio(BLK_OP_READ, 20 * BS, BS, IOPRIO_CLASS_RT);
	insert_prio(BLK_OP_READ, 30 * BS, BS, IOPRIO_CLASS_RT);
	/* 50 ms: not aged, RT first */
	assert_int_equal(dispatch_off(), 20 * BS);
	/* 100 ms since it was inserted: the idle one goes */
	F->hctx.elv_now_ns = 1100 * MS;
	assert_int_equal(dispatch_off(), 10 * BS);
	assert_int_equal(stats().prio_aged, 1);
	assert_int_equal(dispatch_off(), 30 * BS);
	assert_null(dispatch());
}

static void test_random(void **state)
{
	static uint8_t seen[NR_BIOS];
	uint64_t bytes_in = 0, bytes_out = 0;
	unsigned int i, bios_in = 0, bios_out = 0;
	uint32_t seed = 12345;
	struct mq_deadline_stats st;

	(void)state;
	memset(seen, 0, sizeof(seen));
	set_tunable("fifo_batch", 4);
	set_tunable("read_expire", 20);
	set_tunable("write_expire", 50);
	F->dev.cfg.max_sectors = 8 * BS / 512;
	for (i = 0; i < 20000 && F->nr_bios < NR_BIOS - 1; i++) {
		unsigned int r, op;
		uint64_t off;
		uint32_t len;

		seed = seed * 1103515245u + 12345u;
		r = seed >> 8;
		op = (r & 1) ? BLK_OP_WRITE : BLK_OP_READ;
		off = ((r >> 1) % 64) * BS;
		len = (1 + (r >> 7) % 2) * BS;
		F->hctx.elv_now_ns += (r >> 9) % 3 * MS;

		switch ((r >> 11) % 5) {
		case 0:
			/* built elsewhere (a plug): insert directly */
			if (sbitmap_weight(&F->tags.bitmap_tags) >= NR_TAGS)
				break;
			bios_in++;
			bytes_in += len;
			insert_new(op, off, len);
			break;
		case 1:
		case 2: {
			struct blk_bio *bio = mk_bio(op, off, len);

			bios_in++;
			bytes_in += len;
			if (merge(bio))
				break;
			if (sbitmap_weight(&F->tags.bitmap_tags) >= NR_TAGS) {
				bios_in--;
				bytes_in -= len;
				break;
			}
			/* not merged: the core builds a request from it */
			F->nr_bios--;
			insert_new(op, off, len);
			break;
		}
		default: {
			struct request *rq = dispatch();
			struct blk_bio *bio;
			uint64_t pos;

			if (!rq) {
				assert_false(has_work());
				break;
			}
			pos = rq->offset;
			rq_for_each_bio(bio, rq) {
				unsigned int idx = bio - F->bios;

				assert_true(idx < NR_BIOS);
				assert_int_equal(seen[idx], 0);
				seen[idx] = 1;
				assert_int_equal(bio->bi_offset, pos);
				assert_int_equal(bio->bi_op, rq->op);
				pos += bio->bi_size;
				bios_out++;
				bytes_out += bio->bi_size;
			}
			assert_int_equal(pos, rq->offset + rq->data_len);
			assert_true(rq->data_len <=
				    F->dev.cfg.max_sectors * 512u);
			break;
		}
		}
	}
	while (has_work()) {
		struct request *rq = dispatch();
		struct blk_bio *bio;

		assert_non_null(rq);
		rq_for_each_bio(bio, rq) {
			assert_int_equal(seen[bio - F->bios], 0);
			seen[bio - F->bios] = 1;
			bios_out++;
			bytes_out += bio->bi_size;
		}
	}
	assert_null(dispatch());
	assert_int_equal(bios_in, bios_out);
	assert_int_equal(bytes_in, bytes_out);
	assert_int_equal(sbitmap_weight(&F->tags.bitmap_tags), 0);
	assert_true(stats().back_merges > 0);
	assert_true(stats().front_merges > 0);
	st = stats();
	/* the workload must have reached every path it is meant to cover */
	assert_true(st.back_merges > 0);
	assert_true(st.front_merges > 0);
	assert_true(st.insert_merges > 0);
	assert_true(st.rq_merges > 0);
	assert_true(st.fifo_expired[0] > 0);
	assert_true(st.fifo_expired[1] > 0);
	assert_true(st.starved_write_batches > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_sorted_dispatch),
		T(test_batch_sort_order),
		T(test_read_fifo_expiry),
		T(test_write_fifo_expiry),
		T(test_write_starvation),
		T(test_fifo_batch_limit),
		T(test_discard_write_direction),
		T(test_flush_bypass),
		T(test_untracked_request),
		T(test_has_work),
		T(test_bio_back_merge),
		T(test_bio_front_merge),
		T(test_front_merges_off),
		T(test_merge_limits),
		T(test_bio_merge_joins_requests),
		T(test_insert_merge),
		T(test_tunables),
		T(test_fifo_batch_zero),
		T(test_prio_classes),
		T(test_prio_aging),
		T(test_random),
#undef T
	};

	return cmocka_run_group_tests_name("mq-deadline", tests, NULL, NULL);
}
