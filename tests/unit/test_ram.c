// SPDX-License-Identifier: MIT
/*
 * ram driver: zeros before first write, round trips through split iovecs
 * and page boundaries, allocation on write, discard freeing whole pages
 * and zeroing partial ones, write zeroes, two threads on two queues.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "blkstack/ram.h"

static unsigned int nr_done, nr_bad;

static void end_io(struct blk_bio *bio)
{
	nr_done++;
	if (bio->bi_status)
		nr_bad++;
}

static struct blk_dev *make(unsigned int queues, uint64_t cap)
{
	struct blk_ram_config c = { 0 };
	struct blk_dev *dev;

	c.queue.capacity = cap;
	c.queue.nr_hw_queues = queues;
	assert_int_equal(blk_ram_create(&c, &dev), 0);
	return dev;
}

static void do_io(struct blk_mq_ctx *ctx, unsigned int op, uint64_t off,
		  struct iovec *iov, unsigned int cnt, uint32_t size)
{
	struct blk_bio b;

	memset(&b, 0, sizeof(b));
	b.bi_op = (uint8_t)op;
	b.bi_offset = off;
	b.bi_size = size;
	b.bi_vcnt = (uint16_t)cnt;
	b.bi_io_vec = iov;
	b.bi_end_io = end_io;
	assert_int_equal(blk_submit(ctx, &b), 0);
	assert_int_equal(blk_drain(ctx, 0), 0);
	assert_int_equal(nr_bad, 0);
}

static void test_zeros_and_roundtrip(void **state)
{
	struct blk_dev *dev = make(1, 1 << 20);
	struct blk_mq_ctx *ctx;
	static char w[12288], r[12288];
	struct iovec iov[3];
	unsigned int i;

	assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
	memset(r, 0xff, sizeof(r));
	iov[0].iov_base = r;
	iov[0].iov_len = sizeof(r);
	do_io(ctx, BLK_OP_READ, 0, iov, 1, sizeof(r));
	for (i = 0; i < sizeof(r); i++)
		assert_int_equal(r[i], 0);
	assert_int_equal(blk_ram_allocated_bytes(dev), 0);

	for (i = 0; i < sizeof(w); i++)
		w[i] = (char)(i * 7 + 3);
	/* three uneven iovecs crossing page boundaries, at an odd sector */
	iov[0].iov_base = w;
	iov[0].iov_len = 1536;
	iov[1].iov_base = w + 1536;
	iov[1].iov_len = 5120;
	iov[2].iov_base = w + 6656;
	iov[2].iov_len = 12288 - 6656;
	do_io(ctx, BLK_OP_WRITE, 3584, iov, 3, sizeof(w));
	/* 3584 .. 15872 touches pages 0..3 */
	assert_int_equal(blk_ram_allocated_bytes(dev), 4 * 4096);
	memset(r, 0, sizeof(r));
	iov[0].iov_base = r;
	iov[0].iov_len = sizeof(r);
	do_io(ctx, BLK_OP_READ, 3584, iov, 1, sizeof(r));
	assert_memory_equal(w, r, sizeof(w));
	blk_ctx_detach(ctx);
	blk_dev_close(dev);
}

static void test_discard_and_write_zeroes(void **state)
{
	struct blk_dev *dev = make(1, 1 << 20);
	struct blk_mq_ctx *ctx;
	static char w[16384], r[16384];
	struct iovec iov;
	unsigned int i;

	assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
	memset(w, 0x77, sizeof(w));
	iov.iov_base = w;
	iov.iov_len = sizeof(w);
	do_io(ctx, BLK_OP_WRITE, 0, &iov, 1, sizeof(w));
	assert_int_equal(blk_ram_allocated_bytes(dev), 16384);
	/* discard 2048..10240: frees page 1, zeroes half of pages 0 and 2 */
	do_io(ctx, BLK_OP_DISCARD, 2048, NULL, 0, 8192);
	assert_int_equal(blk_ram_allocated_bytes(dev), 12288);
	iov.iov_base = r;
	do_io(ctx, BLK_OP_READ, 0, &iov, 1, sizeof(r));
	for (i = 0; i < sizeof(r); i++)
		assert_int_equal((unsigned char)r[i],
				 i >= 2048 && i < 10240 ? 0 : 0x77);
	do_io(ctx, BLK_OP_WRITE_ZEROES, 0, NULL, 0, 16384);
	assert_int_equal(blk_ram_allocated_bytes(dev), 0);
	do_io(ctx, BLK_OP_READ, 0, &iov, 1, sizeof(r));
	for (i = 0; i < sizeof(r); i++)
		assert_int_equal(r[i], 0);
	blk_ctx_detach(ctx);
	blk_dev_close(dev);
}

struct worker {
	struct blk_dev *dev;
	unsigned int id;
	int bad;
};

static void end_io_check(struct blk_bio *bio)
{
	if (bio->bi_status)
		*(int *)bio->bi_private = 1;
}

/* Each thread has its own ctx (its own hardware queue) and region. */
static void *worker_fn(void *p)
{
	struct worker *wk = p;
	struct blk_mq_ctx *ctx;
	char w[4096], r[4096];
	struct iovec iov;
	struct blk_bio b;
	unsigned int i;

	if (blk_ctx_attach(wk->dev, &ctx)) {
		wk->bad = 1;
		return NULL;
	}
	for (i = 0; i < 512 && !wk->bad; i++) {
		memset(w, (int)(i * 2 + wk->id), sizeof(w));
		iov.iov_base = w;
		iov.iov_len = sizeof(w);
		memset(&b, 0, sizeof(b));
		b.bi_op = BLK_OP_WRITE;
		b.bi_offset = ((uint64_t)i * 2 + wk->id) * 4096;
		b.bi_size = 4096;
		b.bi_vcnt = 1;
		b.bi_io_vec = &iov;
		b.bi_end_io = end_io_check;
		b.bi_private = &wk->bad;
		if (blk_submit(ctx, &b) || blk_drain(ctx, 0))
			wk->bad = 1;
		iov.iov_base = r;
		b.bi_op = BLK_OP_READ;
		if (blk_submit(ctx, &b) || blk_drain(ctx, 0))
			wk->bad = 1;
		if (memcmp(w, r, sizeof(w)))
			wk->bad = 1;
	}
	blk_ctx_detach(ctx);
	return NULL;
}

static void test_two_queues_two_threads(void **state)
{
	struct blk_dev *dev = make(2, 8 << 20);
	struct worker wk[2] = { { dev, 0, 0 }, { dev, 1, 0 } };
	pthread_t t[2];

	pthread_create(&t[0], NULL, worker_fn, &wk[0]);
	pthread_create(&t[1], NULL, worker_fn, &wk[1]);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	assert_int_equal(wk[0].bad, 0);
	assert_int_equal(wk[1].bad, 0);
	assert_int_equal(blk_ram_allocated_bytes(dev), 1024 * 4096);
	blk_dev_close(dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zeros_and_roundtrip),
		cmocka_unit_test(test_discard_and_write_zeroes),
		cmocka_unit_test(test_two_queues_two_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
