// SPDX-License-Identifier: MIT
/*
 * Block core tests with a scripted test driver: submit checks, plugging and
 * commit_rqs batching, merge limits, RESOURCE requeue and run_batch,
 * timeouts (fail, retry, requeue), remote completion with stale
 * generations, reserved and shared tags, ctx mapping, elevator dispatch.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "blkstack/blk_mq.h"
#include "core/blk-mq.h"

#define MAXQ 1024

/* The test driver: holds requests until the test completes them. */
struct tdrv {
	unsigned int queue_rq_calls;
	unsigned int commit_calls;
	unsigned int timeout_calls;
	unsigned int busy_limit;          /* RESOURCE when this many held */
	enum blk_eh_timer_return timeout_ret[8]; /* per timeout call */
	bool drop;                        /* never complete (timeouts) */
	bool complete_inline;
	struct request *held[MAXQ];
	unsigned int nr_held;
	uint64_t order[MAXQ];             /* offsets in queue_rq order */
	unsigned int nr_order;
};

static struct tdrv td;

static blk_status_t tdrv_queue_rq(struct blk_mq_hw_ctx *hctx,
				  const struct blk_mq_queue_data *bd)
{
	td.queue_rq_calls++;
	if (td.busy_limit && td.nr_held >= td.busy_limit)
		return BLK_STS_RESOURCE;
	if (td.nr_order < MAXQ)
		td.order[td.nr_order++] = bd->rq->offset;
	if (td.complete_inline) {
		blk_mq_complete_request(bd->rq, BLK_STS_OK);
		return BLK_STS_OK;
	}
	if (!td.drop)
		td.held[td.nr_held++] = bd->rq;
	return BLK_STS_OK;
}

static void tdrv_commit(struct blk_mq_hw_ctx *hctx)
{
	td.commit_calls++;
}

static enum blk_eh_timer_return tdrv_timeout(struct request *rq)
{
	unsigned int i = td.timeout_calls++;

	return td.timeout_ret[i < 8 ? i : 7];
}

/* Complete the @n oldest held requests. */
static void tdrv_complete(unsigned int n, blk_status_t st)
{
	unsigned int i;

	if (n > td.nr_held)
		n = td.nr_held;
	for (i = 0; i < n; i++)
		blk_mq_complete_request(td.held[i], st);
	memmove(td.held, td.held + n, (td.nr_held - n) * sizeof(td.held[0]));
	td.nr_held -= n;
}

static const struct blk_mq_ops tdrv_ops = {
	.queue_rq = tdrv_queue_rq,
	.commit_rqs = tdrv_commit,
	.timeout = tdrv_timeout,
};

static struct blk_dev_config base_cfg(void)
{
	struct blk_dev_config c = {
		.name = "test",
		.capacity = 1 << 20,
		.logical_block_size = 512,
		.queue_depth = 64,
		.ops = &tdrv_ops,
		.can_discard = false,
		.can_write_zeroes = true,
	};
	return c;
}

static unsigned int nr_done;
static blk_status_t last_status;

static void end_io(struct blk_bio *bio)
{
	nr_done++;
	last_status = bio->bi_status;
}

static char buf[1 << 20];

static void bio_init(struct blk_bio *b, struct iovec *iov, unsigned int op,
		     uint64_t off, uint32_t len)
{
	memset(b, 0, sizeof(*b));
	iov->iov_base = buf;
	iov->iov_len = len;
	b->bi_op = (uint8_t)op;
	b->bi_offset = off;
	b->bi_size = len;
	b->bi_vcnt = op <= BLK_OP_WRITE ? 1 : 0;
	b->bi_io_vec = op <= BLK_OP_WRITE ? iov : NULL;
	b->bi_end_io = end_io;
}

static int setup(void **state)
{
	memset(&td, 0, sizeof(td));
	nr_done = 0;
	last_status = 0;
	return 0;
}

static void open_dev(struct blk_dev_config *c, struct blk_dev **dev,
		     struct blk_mq_ctx **ctx)
{
	assert_int_equal(blk_dev_create(c, dev), 0);
	assert_int_equal(blk_ctx_attach(*dev, ctx), 0);
}

static void close_dev(struct blk_dev *dev, struct blk_mq_ctx *ctx)
{
	td.complete_inline = true;
	tdrv_complete(td.nr_held, BLK_STS_OK);
	blk_ctx_detach(ctx);
	blk_dev_close(dev);
}

static void test_submit_checks(void **state)
{
	struct blk_dev_config c = base_cfg();
	struct blk_dev *dev;
	struct blk_mq_ctx *ctx;
	struct blk_bio b;
	struct iovec iov;

	open_dev(&c, &dev, &ctx);
	bio_init(&b, &iov, BLK_OP_READ, 100, 512);
	assert_int_equal(blk_submit(ctx, &b), -EINVAL); /* misaligned offset */
	bio_init(&b, &iov, BLK_OP_READ, 0, 700);
	assert_int_equal(blk_submit(ctx, &b), -EINVAL); /* misaligned length */
	bio_init(&b, &iov, BLK_OP_READ, (1 << 20) - 512, 1024);
	assert_int_equal(blk_submit(ctx, &b), -ERANGE); /* past the end */
	bio_init(&b, &iov, BLK_OP_READ, UINT64_MAX - 511, 512);
	assert_int_equal(blk_submit(ctx, &b), -ERANGE); /* wraps */
	bio_init(&b, &iov, BLK_OP_READ, 0, 1024);
	iov.iov_len = 512;
	assert_int_equal(blk_submit(ctx, &b), -EINVAL); /* iovecs != size */
	bio_init(&b, &iov, BLK_OP_DISCARD, 0, 512);
	assert_int_equal(blk_submit(ctx, &b), -EOPNOTSUPP);
	bio_init(&b, &iov, 4, 0, 512);
	assert_int_equal(blk_submit(ctx, &b), -EINVAL); /* no op 4 */
	bio_init(&b, &iov, BLK_OP_READ, 0, 0);
	assert_int_equal(blk_submit(ctx, &b), -EINVAL); /* empty read */
	assert_int_equal(td.queue_rq_calls, 0);
	assert_int_equal(blk_ctx_inflight(ctx), 0);
	/* a good one, at the very end */
	bio_init(&b, &iov, BLK_OP_WRITE_ZEROES, (1 << 20) - 512, 512);
	assert_int_equal(blk_submit(ctx, &b), 0);
	close_dev(dev, ctx);
	assert_int_equal(nr_done, 1);
}

static void test_plug_merges_and_commits_once(void **state)
{
	struct blk_dev_config c = base_cfg();
	struct blk_disk_stats st;
	struct blk_dev *dev;
	struct blk_mq_ctx *ctx;
	struct blk_bio b[8];
	struct iovec iov[8];
	unsigned int i;

	td.complete_inline = true;
	open_dev(&c, &dev, &ctx);
	blk_start_plug(ctx);
	for (i = 0; i < 8; i++) {
		bio_init(&b[i], &iov[i], BLK_OP_READ, i * 4096, 4096);
		assert_int_equal(blk_submit(ctx, &b[i]), 0);
	}
	assert_int_equal(td.queue_rq_calls, 0); /* held in the plug */
	blk_finish_plug(ctx);
	assert_int_equal(td.queue_rq_calls, 1); /* one merged request */
	assert_int_equal(td.commit_calls, 1);
	assert_int_equal(blk_poll(ctx), 8);
	assert_int_equal(nr_done, 8);
	blk_dev_get_stats(dev, &st);
	assert_int_equal(st.merges[BLK_STAT_READ], 7);
	assert_int_equal(st.ios[BLK_STAT_READ], 1);
	assert_int_equal(st.sectors[BLK_STAT_READ], 64);
	close_dev(dev, ctx);
}

static void test_plug_front_merge_and_direction_change(void **state)
{
	struct blk_dev_config c = base_cfg();
	struct blk_dev *dev;
	struct blk_mq_ctx *ctx;
	struct blk_bio b[4];
	struct iovec iov[4];

	td.complete_inline = true;
	open_dev(&c, &dev, &ctx);
	blk_start_plug(ctx);
	bio_init(&b[0], &iov[0], BLK_OP_WRITE, 8192, 4096);
	bio_init(&b[1], &iov[1], BLK_OP_WRITE, 4096, 4096); /* front */
	bio_init(&b[2], &iov[2], BLK_OP_READ, 12288, 4096); /* other op */
	bio_init(&b[3], &iov[3], BLK_OP_READ, 20480, 4096); /* gap */
	for (int i = 0; i < 4; i++)
		assert_int_equal(blk_submit(ctx, &b[i]), 0);
	blk_finish_plug(ctx);
	assert_int_equal(td.queue_rq_calls, 3);
	assert_int_equal(td.order[0], 4096); /* front merge moved the start */
	blk_poll(ctx);
	assert_int_equal(nr_done, 4);
	close_dev(dev, ctx);
}

static void test_merge_limits(void **state)
{
	struct blk_dev_config c = base_cfg();
	struct blk_dev *dev;
	struct blk_mq_ctx *ctx;
	struct blk_bio b[8];
	struct iovec iov[8];
	unsigned int i;

	c.max_sectors = 16; /* 8 KiB */
	td.complete_inline = true;
	open_dev(&c, &dev, &ctx);
	blk_start_plug(ctx);
	for (i = 0; i < 8; i++) {
		bio_init(&b[i], &iov[i], BLK_OP_READ, i * 4096, 4096);
		assert_int_equal(blk_submit(ctx, &b[i]), 0);
	}
	blk_finish_plug(ctx);
	assert_int_equal(td.queue_rq_calls, 4); /* 8 KiB each */
	blk_poll(ctx);
	close_dev(dev, ctx);

	setup(NULL);
	c = base_cfg();
	c.max_segments = 3;
	td.complete_inline = true;
	open_dev(&c, &dev, &ctx);
	blk_start_plug(ctx);
	for (i = 0; i < 8; i++) {
		bio_init(&b[i], &iov[i], BLK_OP_READ, i * 512, 512);
		assert_int_equal(blk_submit(ctx, &b[i]), 0);
	}
	blk_finish_plug(ctx);
	assert_int_equal(td.queue_rq_calls, 3); /* 3 + 3 + 2 segments */
	blk_poll(ctx);
	close_dev(dev, ctx);
}

static void test_plug_flushes_at_32(void **state)
{
	struct blk_dev_config c = base_cfg();
	struct blk_dev *dev;
	struct blk_mq_ctx *ctx;
	static struct blk_bio b[40];
	static struct iovec iov[40];
	unsigned int i;

	td.complete_inline = true;
	open_dev(&c, &dev, &ctx);
	blk_start_plug(ctx);
	for (i = 0; i < 40; i++) {
		bio_init(&b[i], &iov[i], BLK_OP_READ, i * 8192, 4096);
		assert_int_equal(blk_submit(ctx, &b[i]), 0);
	}
	assert_int_equal(td.commit_calls, 1);
	assert_int_equal(td.queue_rq_calls, 32);
	blk_finish_plug(ctx);
	assert_int_equal(td.commit_calls, 2);
	assert_int_equal(td.queue_rq_calls, 40);
	blk_drain(ctx, 0);
	assert_int_equal(nr_done, 40);
	close_dev(dev, ctx);
}

static void test_no_tag_eagain(void **state)
{
	struct blk_dev_config c = base_cfg();
	struct blk_dev *dev;
	struct blk_mq_ctx *ctx;
	struct blk_bio b[5];
	struct iovec iov[5];
	unsigned int i;

	c.queue_depth = 4;
	open_dev(&c, &dev, &ctx);
	blk_start_plug(ctx);
	for (i = 0; i < 4; i++) {
		bio_init(&b[i], &iov[i], BLK_OP_READ, i * 8192, 512);
		assert_int_equal(blk_submit(ctx, &b[i]), 0);
	}
	bio_init(&b[4], &iov[4], BLK_OP_READ, 65536, 512);
	assert_int_equal(blk_submit(ctx, &b[4]), -EAGAIN);
	/* the plug was flushed so that completions can free tags */
	assert_int_equal(td.queue_rq_calls, 4);
	tdrv_complete(1, BLK_STS_OK);
	assert_int_equal(blk_poll(ctx), 1);
	assert_int_equal(blk_submit(ctx, &b[4]), 0);
	blk_finish_plug(ctx);
	close_dev(dev, ctx);
	assert_int_equal(nr_done, 5);
}

static void test_resource_requeue_and_run_batch(void **state)
{
	struct blk_dev_config c = base_cfg();
	struct blk_disk_stats st;
	struct blk_dev *dev;
	struct blk_mq_ctx *ctx;
	static struct blk_bio b[16];
	static struct iovec iov[16];
	unsigned int i, calls;

	c.run_batch = 4;
	td.busy_limit = 8;
	open_dev(&c, &dev, &ctx);
	blk_start_plug(ctx);
	for (i = 0; i < 16; i++) {
		bio_init(&b[i], &iov[i], BLK_OP_READ, i * 8192, 512);
		assert_int_equal(blk_submit(ctx, &b[i]), 0);
	}
	blk_finish_plug(ctx);
	assert_int_equal(td.nr_held, 8);
	assert_int_equal(td.queue_rq_calls, 9); /* the 9th got RESOURCE */
	calls = td.queue_rq_calls;
	/* three completions: below run_batch, the queue stays stopped */
	tdrv_complete(3, BLK_STS_OK);
	assert_int_equal(blk_poll(ctx), 3);
	assert_int_equal(td.queue_rq_calls, calls);
	/* the fourth completion restarts it */
	tdrv_complete(1, BLK_STS_OK);
	assert_int_equal(blk_poll(ctx), 1);
	assert_true(td.queue_rq_calls > calls);
	assert_int_equal(td.nr_held, 8);
	while (nr_done < 16) {
		tdrv_complete(td.nr_held, BLK_STS_OK);
		blk_poll(ctx);
	}
	blk_dev_get_stats(dev, &st);
	assert_true(st.requeues >= 2);
	assert_int_equal(st.ios[BLK_STAT_READ], 16);
	assert_int_equal(st.in_flight[0], 0);
	close_dev(dev, ctx);
}

static void wait_timeouts(struct blk_mq_ctx *ctx, unsigned int want_done,
			  unsigned int want_timeouts)
{
	int i;

	for (i = 0; i < 4000 && (nr_done < want_done ||
				 td.timeout_calls < want_timeouts); i++) {
		blk_poll(ctx);
		usleep(500);
	}
}

static void test_timeout_fail(void **state)
{
	struct blk_dev_config c = base_cfg();
	struct blk_disk_stats st;
	struct blk_dev *dev;
	struct blk_mq_ctx *ctx;
	struct blk_bio b;
	struct iovec iov;

	c.rq_timeout_ms = 5;
	td.drop = true;
	td.timeout_ret[0] = BLK_EH_FAIL;
	open_dev(&c, &dev, &ctx);
	bio_init(&b, &iov, BLK_OP_READ, 0, 512);
	assert_int_equal(blk_submit(ctx, &b), 0);
	wait_timeouts(ctx, 1, 1);
	assert_int_equal(nr_done, 1);
	assert_int_equal(last_status, BLK_STS_TIMEOUT);
	assert_int_equal(td.timeout_calls, 1);
	blk_dev_get_stats(dev, &st);
	assert_int_equal(st.timeouts, 1);
	assert_int_equal(st.errors, 1);
	close_dev(dev, ctx);
}

static void test_timeout_reset_then_fail(void **state)
{
	struct blk_dev_config c = base_cfg();
	struct blk_dev *dev;
	struct blk_mq_ctx *ctx;
	struct blk_bio b;
	struct iovec iov;

	c.rq_timeout_ms = 5;
	td.drop = true;
	td.timeout_ret[0] = BLK_EH_RESET_TIMER;
	td.timeout_ret[1] = BLK_EH_RESET_TIMER;
	td.timeout_ret[2] = BLK_EH_FAIL;
	open_dev(&c, &dev, &ctx);
	bio_init(&b, &iov, BLK_OP_READ, 0, 512);
	assert_int_equal(blk_submit(ctx, &b), 0);
	wait_timeouts(ctx, 1, 3);
	assert_int_equal(td.timeout_calls, 3);
	assert_int_equal(nr_done, 1);
	assert_int_equal(last_status, BLK_STS_TIMEOUT);
	close_dev(dev, ctx);
}

static void test_timeout_requeue_then_complete(void **state)
{
	struct blk_dev_config c = base_cfg();
	struct blk_dev *dev;
	struct blk_mq_ctx *ctx;
	struct blk_bio b;
	struct iovec iov;
	int i;

	c.rq_timeout_ms = 5;
	td.drop = true;
	td.timeout_ret[0] = BLK_EH_REQUEUE;
	open_dev(&c, &dev, &ctx);
	bio_init(&b, &iov, BLK_OP_READ, 0, 512);
	assert_int_equal(blk_submit(ctx, &b), 0);
	assert_int_equal(td.queue_rq_calls, 1);
	td.drop = false;
	for (i = 0; i < 4000 && td.queue_rq_calls < 2; i++) {
		blk_poll(ctx);
		usleep(500);
	}
	assert_int_equal(td.queue_rq_calls, 2); /* dispatched again */
	assert_int_equal(nr_done, 0);
	tdrv_complete(1, BLK_STS_OK);
	blk_poll(ctx);
	assert_int_equal(nr_done, 1);
	assert_int_equal(last_status, BLK_STS_OK);
	close_dev(dev, ctx);
}

/* A late completion for a request that already timed out is dropped. */
static void test_late_completion_after_timeout_ignored(void **state)
{
	struct blk_dev_config c = base_cfg();
	struct blk_dev *dev;
	struct blk_mq_ctx *ctx;
	struct blk_bio b;
	struct iovec iov;
	struct request *rq;

	c.rq_timeout_ms = 5;
	td.timeout_ret[0] = BLK_EH_FAIL;
	open_dev(&c, &dev, &ctx);
	bio_init(&b, &iov, BLK_OP_READ, 0, 512);
	assert_int_equal(blk_submit(ctx, &b), 0);
	rq = td.held[0];
	td.nr_held = 0;
	wait_timeouts(ctx, 1, 1);
	assert_int_equal(nr_done, 1);
	assert_false(blk_mq_complete_request(rq, BLK_STS_OK));
	assert_int_equal(blk_poll(ctx), 0);
	assert_int_equal(nr_done, 1);
	close_dev(dev, ctx);
}

struct remote_arg {
	struct blk_mq_hw_ctx *hctx;
	struct request *rq[MAXQ];
	uint32_t gen[MAXQ];
	unsigned int n;
};

static void *remote_completer(void *p)
{
	struct remote_arg *a = p;
	unsigned int i;

	for (i = 0; i < a->n; i++)
		while (blk_mq_complete_request_remote(a->hctx, a->rq[i],
						      a->gen[i], BLK_STS_OK))
			;
	return NULL;
}

static void test_remote_completion_ring(void **state)
{
	struct blk_dev_config c = base_cfg();
	static struct remote_arg a;
	struct blk_dev *dev;
	struct blk_mq_ctx *ctx;
	static struct blk_bio b[64];
	static struct iovec iov[64];
	pthread_t thr;
	unsigned int i;

	open_dev(&c, &dev, &ctx);
	for (i = 0; i < 64; i++) {
		bio_init(&b[i], &iov[i], BLK_OP_READ, i * 8192, 512);
		assert_int_equal(blk_submit(ctx, &b[i]), 0);
	}
	assert_int_equal(td.nr_held, 64);
	a.hctx = ctx->hctx;
	a.n = 65;
	for (i = 0; i < 64; i++) {
		a.rq[i] = td.held[i];
		a.gen[i] = td.held[i]->gen;
	}
	/* a stale duplicate of the first: wrong generation, must be dropped */
	a.rq[64] = td.held[0];
	a.gen[64] = td.held[0]->gen - 1;
	td.nr_held = 0;
	assert_int_equal(pthread_create(&thr, NULL, remote_completer, &a), 0);
	while (nr_done < 64)
		blk_poll(ctx);
	pthread_join(thr, NULL);
	blk_poll(ctx);
	assert_int_equal(nr_done, 64);
	close_dev(dev, ctx);
}

static void test_reserved_tags(void **state)
{
	struct blk_dev_config c = base_cfg();
	struct blk_dev *dev;
	struct blk_mq_ctx *ctx;
	struct request *rqs[8];
	unsigned int i;

	c.queue_depth = 8;
	c.nr_reserved_tags = 2;
	open_dev(&c, &dev, &ctx);
	for (i = 0; i < 2; i++) {
		rqs[i] = blk_mq_alloc_request(ctx, BLK_OP_FLUSH, BLK_MQ_REQ_RESERVED);
		assert_non_null(rqs[i]);
		assert_true(rqs[i]->tag < 2);
	}
	assert_null(blk_mq_alloc_request(ctx, BLK_OP_FLUSH, BLK_MQ_REQ_RESERVED));
	for (i = 2; i < 8; i++) {
		rqs[i] = blk_mq_alloc_request(ctx, BLK_OP_READ, 0);
		assert_non_null(rqs[i]);
		assert_true(rqs[i]->tag >= 2);
	}
	assert_null(blk_mq_alloc_request(ctx, BLK_OP_READ, 0));
	blk_mq_free_request(rqs[0]);
	assert_non_null(rqs[0] = blk_mq_alloc_request(ctx, BLK_OP_FLUSH,
						      BLK_MQ_REQ_RESERVED));
	for (i = 0; i < 8; i++)
		blk_mq_free_request(rqs[i]);
	close_dev(dev, ctx);
}

static void test_ctx_mapping_and_shared_tags(void **state)
{
	struct blk_dev_config c = base_cfg();
	struct blk_dev *dev;
	struct blk_mq_ctx *ctx[3];
	struct request *rq;
	unsigned int n = 0;

	c.nr_hw_queues = 2;
	c.queue_depth = 8;
	c.shared_tags = true;
	assert_int_equal(blk_dev_create(&c, &dev), 0);
	assert_int_equal(blk_ctx_attach(dev, &ctx[0]), 0);
	assert_int_equal(blk_ctx_attach(dev, &ctx[1]), 0);
	assert_ptr_not_equal(ctx[0]->hctx, ctx[1]->hctx);
	assert_int_equal(blk_ctx_attach(dev, &ctx[2]), -EBUSY);
	/* one tag space: 8 requests in all, whichever queue asks */
	while ((rq = blk_mq_alloc_request(ctx[n & 1], BLK_OP_READ, 0)))
		n++;
	assert_int_equal(n, 8);
	blk_ctx_detach(ctx[0]);
	blk_ctx_detach(ctx[1]);
	blk_dev_close(dev);

	c.shared_tags = false;
	c.shared_hctx = true;
	assert_int_equal(blk_dev_create(&c, &dev), 0);
	assert_int_equal(blk_ctx_attach(dev, &ctx[0]), 0);
	assert_int_equal(blk_ctx_attach(dev, &ctx[1]), 0);
	assert_int_equal(blk_ctx_attach(dev, &ctx[2]), 0);
	assert_ptr_equal(ctx[2]->hctx, ctx[0]->hctx);
	assert_int_equal(blk_dev_set_elevator(dev, BLK_ELV_MQ_DEADLINE), -EBUSY);
	blk_ctx_detach(ctx[0]);
	blk_ctx_detach(ctx[1]);
	blk_ctx_detach(ctx[2]);
	blk_dev_close(dev);
}

static void test_bad_config(void **state)
{
	struct blk_dev_config c = base_cfg();
	struct blk_dev *dev;

	c.logical_block_size = 1000;
	assert_int_equal(blk_dev_create(&c, &dev), -EINVAL);
	c = base_cfg();
	c.capacity = 1000;
	assert_int_equal(blk_dev_create(&c, &dev), -EINVAL);
	c = base_cfg();
	c.nr_reserved_tags = 64;
	assert_int_equal(blk_dev_create(&c, &dev), -EINVAL);
	c = base_cfg();
	c.ops = NULL;
	assert_int_equal(blk_dev_create(&c, &dev), -EINVAL);
}

static void test_elevator_sorts_dispatch(void **state)
{
	struct blk_dev_config c = base_cfg();
	struct blk_dev *dev;
	struct blk_mq_ctx *ctx;
	struct blk_bio b[4];
	struct iovec iov[4];
	uint64_t offs[4] = { 40960, 8192, 65536, 24576 };
	unsigned int i;

	assert_int_equal(blk_dev_create(&c, &dev), 0);
	assert_int_equal(blk_dev_set_elevator(dev, BLK_ELV_MQ_DEADLINE), 0);
	assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
	td.complete_inline = true;
	blk_start_plug(ctx);
	for (i = 0; i < 4; i++) {
		bio_init(&b[i], &iov[i], BLK_OP_READ, offs[i], 4096);
		assert_int_equal(blk_submit(ctx, &b[i]), 0);
	}
	blk_finish_plug(ctx);
	blk_drain(ctx, 0);
	assert_int_equal(nr_done, 4);
	assert_int_equal(td.nr_order, 4);
	assert_int_equal(td.order[0], 8192);
	assert_int_equal(td.order[1], 24576);
	assert_int_equal(td.order[2], 40960);
	assert_int_equal(td.order[3], 65536);
	close_dev(dev, ctx);
}

static void test_diskstats_line(void **state)
{
	struct blk_dev_config c = base_cfg();
	struct blk_dev *dev;
	struct blk_mq_ctx *ctx;
	struct blk_bio b;
	struct iovec iov;
	char line[256];
	unsigned long v[17];

	c.iostats = true;
	td.complete_inline = true;
	open_dev(&c, &dev, &ctx);
	bio_init(&b, &iov, BLK_OP_WRITE, 0, 4096);
	assert_int_equal(blk_submit(ctx, &b), 0);
	blk_drain(ctx, 0);
	blk_dev_format_diskstats(dev, "bs0", line, sizeof(line));
	assert_int_equal(sscanf(line, "259 0 bs0 %lu %lu %lu %lu %lu %lu %lu %lu "
				      "%lu %lu %lu %lu %lu %lu %lu %lu %lu",
				&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
				&v[7], &v[8], &v[9], &v[10], &v[11], &v[12],
				&v[13], &v[14], &v[15], &v[16]), 17);
	assert_int_equal(v[4], 1); /* writes completed */
	assert_int_equal(v[6], 8); /* sectors written */
	assert_int_equal(v[8], 0); /* in flight */
	close_dev(dev, ctx);
}


/*
 * Regression: with mq-deadline and one driver tag, the stopped queue was
 * restarted before the completed request's tag was freed, found no tag,
 * and then waited for the 3 ms resource delay per request.  Each poll must
 * now move the next request along.
 */
static void test_elevator_restart_after_tags_freed(void **state)
{
	struct blk_dev_config c = base_cfg();
	struct blk_dev *dev;
	struct blk_mq_ctx *ctx;
	static struct blk_bio b[16];
	static struct iovec iov[16];
	unsigned int i, polls = 0;

	c.queue_depth = 1;   /* one driver tag */
	c.nr_requests = 64;  /* room for all 16 in the scheduler */
	assert_int_equal(blk_dev_create(&c, &dev), 0);
	assert_int_equal(blk_dev_set_elevator(dev, BLK_ELV_MQ_DEADLINE), 0);
	assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
	td.complete_inline = true;
	blk_start_plug(ctx);
	for (i = 0; i < 16; i++) {
		bio_init(&b[i], &iov[i], BLK_OP_READ, i * 8192, 512);
		assert_int_equal(blk_submit(ctx, &b[i]), 0);
	}
	blk_finish_plug(ctx);
	while (nr_done < 16 && polls < 1000) {
		blk_poll(ctx);
		polls++;
	}
	assert_int_equal(nr_done, 16);
	/* one request per poll, not one per 3 ms (thousands of polls) */
	assert_true(polls <= 17);
	close_dev(dev, ctx);
}

struct tag_worker {
	struct blk_dev *dev;
	unsigned int done;
	int err;
};

static void tag_worker_end_io(struct blk_bio *bio)
{
	(*(unsigned int *)bio->bi_private)++;
}

static blk_status_t inline_queue_rq(struct blk_mq_hw_ctx *hctx,
				    const struct blk_mq_queue_data *bd)
{
	blk_mq_complete_request(bd->rq, BLK_STS_OK);
	return BLK_STS_OK;
}

static const struct blk_mq_ops inline_ops = {
	.queue_rq = inline_queue_rq,
};

static void *tag_worker_fn(void *p)
{
	struct tag_worker *w = p;
	struct blk_bio b[6];
	struct iovec iov[6];
	struct blk_mq_ctx *ctx;
	unsigned int i, submitted = 0;

	if (blk_ctx_attach(w->dev, &ctx)) {
		w->err = 1;
		return NULL;
	}
	for (i = 0; i < 6; i++) {
		memset(&b[i], 0, sizeof(b[i]));
		iov[i].iov_base = buf;
		iov[i].iov_len = 512;
		b[i].bi_op = BLK_OP_READ;
		b[i].bi_offset = i * 8192;
		b[i].bi_size = 512;
		b[i].bi_vcnt = 1;
		b[i].bi_io_vec = &iov[i];
		b[i].bi_end_io = tag_worker_end_io;
		b[i].bi_private = &w->done;
	}
	/* keep up to 6 in flight against 8 shared tags, 20000 times */
	while (submitted < 20000) {
		for (i = 0; i < 6 && submitted < 20000; i++) {
			int ret = blk_submit(ctx, &b[i]);

			if (ret == -EAGAIN)
				break;
			if (ret) {
				w->err = 1;
				break;
			}
			submitted++;
			while (blk_ctx_inflight(ctx))
				blk_poll(ctx);
		}
		blk_poll(ctx);
	}
	if (blk_drain(ctx, 10000000000ull))
		w->err = 1;
	blk_ctx_detach(ctx);
	return NULL;
}

/*
 * Regression: a request's fields were written after its tag was put back,
 * clobbering the request another thread had just allocated from a shared
 * tag set; its tag leaked and the run hung.
 */
static void test_shared_tags_two_threads_no_tag_leak(void **state)
{
	struct blk_dev_config c = base_cfg();
	struct tag_worker w[2] = { { 0 }, { 0 } };
	struct blk_mq_tags *tags;
	struct blk_dev *dev;
	pthread_t t[2];

	c.ops = &inline_ops;
	c.nr_hw_queues = 2;
	c.queue_depth = 8;
	c.shared_tags = true;
	assert_int_equal(blk_dev_create(&c, &dev), 0);
	w[0].dev = w[1].dev = dev;
	pthread_create(&t[0], NULL, tag_worker_fn, &w[0]);
	pthread_create(&t[1], NULL, tag_worker_fn, &w[1]);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	assert_int_equal(w[0].err, 0);
	assert_int_equal(w[1].err, 0);
	assert_int_equal(w[0].done, 20000);
	assert_int_equal(w[1].done, 20000);
	tags = dev->tags[0];
	assert_int_equal(sbitmap_weight(&tags->bitmap_tags), 0);
	blk_dev_close(dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_submit_checks, setup),
		cmocka_unit_test_setup(test_plug_merges_and_commits_once, setup),
		cmocka_unit_test_setup(test_plug_front_merge_and_direction_change, setup),
		cmocka_unit_test_setup(test_merge_limits, setup),
		cmocka_unit_test_setup(test_plug_flushes_at_32, setup),
		cmocka_unit_test_setup(test_no_tag_eagain, setup),
		cmocka_unit_test_setup(test_resource_requeue_and_run_batch, setup),
		cmocka_unit_test_setup(test_timeout_fail, setup),
		cmocka_unit_test_setup(test_timeout_reset_then_fail, setup),
		cmocka_unit_test_setup(test_timeout_requeue_then_complete, setup),
		cmocka_unit_test_setup(test_late_completion_after_timeout_ignored, setup),
		cmocka_unit_test_setup(test_remote_completion_ring, setup),
		cmocka_unit_test_setup(test_reserved_tags, setup),
		cmocka_unit_test_setup(test_ctx_mapping_and_shared_tags, setup),
		cmocka_unit_test_setup(test_bad_config, setup),
		cmocka_unit_test_setup(test_elevator_sorts_dispatch, setup),
		cmocka_unit_test_setup(test_diskstats_line, setup),
		cmocka_unit_test_setup(test_elevator_restart_after_tags_freed, setup),
		cmocka_unit_test_setup(test_shared_tags_two_threads_no_tag_leak, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
