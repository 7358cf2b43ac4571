// SPDX-License-Identifier: MIT
/*
 * null driver: the three completion modes, the timer delay, the spin per
 * request, fault injection (fail, timeout, requeue every Nth) and
 * memory_backed data.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "blkstack/null.h"

#define N 64

static unsigned int nr_done, nr_err[BLK_STS_MAX];
static struct blk_bio bios[N];
static struct iovec iovs[N];
static char bufs[N][4096];

static void end_io(struct blk_bio *bio)
{
	nr_done++;
	nr_err[bio->bi_status]++;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct blk_null_config cfg(void)
{
	struct blk_null_config c = { 0 };

	c.queue.capacity = 64 << 20;
	c.queue.queue_depth = 64;
	/* the default 30 s timeout: a loaded CI machine must not time out */
	return c;
}

/* Submit @n 4 KiB bios, spaced so none merge, and wait for them all. */
static void run_ios(struct blk_null_config *c, unsigned int n, unsigned int op)
{
	struct blk_mq_ctx *ctx;
	struct blk_dev *dev;
	unsigned int i;

	nr_done = 0;
	memset(nr_err, 0, sizeof(nr_err));
	assert_int_equal(blk_null_create(c, &dev), 0);
	assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
	for (i = 0; i < n; i++) {
		memset(&bios[i], 0, sizeof(bios[i]));
		iovs[i].iov_base = bufs[i];
		iovs[i].iov_len = 4096;
		bios[i].bi_op = (uint8_t)op;
		bios[i].bi_offset = (uint64_t)i * 8192;
		bios[i].bi_size = 4096;
		bios[i].bi_vcnt = 1;
		bios[i].bi_io_vec = &iovs[i];
		bios[i].bi_end_io = end_io;
		assert_int_equal(blk_submit(ctx, &bios[i]), 0);
	}
	assert_int_equal(blk_drain(ctx, 5000000000ull), 0);
	assert_int_equal(nr_done, n);
	blk_ctx_detach(ctx);
	blk_dev_close(dev);
}

static void test_irqmodes(void **state)
{
	struct blk_null_config c = cfg();
	uint64_t t0;

	for (c.irqmode = NULL_IRQ_NONE; c.irqmode <= NULL_IRQ_TIMER; c.irqmode++) {
		c.completion_nsec = 2000000; /* 2 ms */
		t0 = now_ns();
		run_ios(&c, N, BLK_OP_READ);
		assert_int_equal(nr_err[BLK_STS_OK], N);
		if (c.irqmode == NULL_IRQ_TIMER)
			assert_true(now_ns() - t0 >= 2000000);
	}
}

static void test_bad_config(void **state)
{
	struct blk_null_config c = cfg();
	struct blk_dev *dev;

	c.irqmode = 3;
	assert_int_equal(blk_null_create(&c, &dev), -EINVAL);
	c = cfg();
	c.completion_nsec = 2000000000ull;
	assert_int_equal(blk_null_create(&c, &dev), -EINVAL);
	c = cfg();
	c.spin_nsec = 2000000000ull;
	assert_int_equal(blk_null_create(&c, &dev), -EINVAL);
	c = cfg();
	c.queue.capacity = 1000;
	assert_int_equal(blk_null_create(&c, &dev), -EINVAL);
}

/*
 * spin_nsec: every request busy-waits in queue_rq, on the submitting
 * thread, in each irqmode: 64 requests at 100 us take at least 6.4 ms,
 * and at least half of that is this thread's CPU time (a spin, not a
 * sleep; the other half allows for preemption on a loaded machine).
 */
static void test_spin(void **state)
{
	struct blk_null_config c = cfg();
	struct timespec c0, c1;
	uint64_t t0, cpu;

	for (c.irqmode = NULL_IRQ_NONE; c.irqmode <= NULL_IRQ_TIMER; c.irqmode++) {
		c.spin_nsec = 100000;
		c.completion_nsec = 1000;
		t0 = now_ns();
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
		run_ios(&c, N, BLK_OP_READ);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
		assert_int_equal(nr_err[BLK_STS_OK], N);
		assert_true(now_ns() - t0 >= N * 100000ull);
		cpu = (uint64_t)(c1.tv_sec - c0.tv_sec) * 1000000000ull +
		      (uint64_t)c1.tv_nsec - (uint64_t)c0.tv_nsec;
		/* a spin on the wall clock: CPU time less any preemption */
		assert_true(cpu >= N * 100000ull / 2);
	}
}

static void test_fail_every(void **state)
{
	struct blk_null_config c = cfg();

	c.fail_every = 3;
	run_ios(&c, 9, BLK_OP_WRITE);
	assert_int_equal(nr_err[BLK_STS_IOERR], 3);
	assert_int_equal(nr_err[BLK_STS_OK], 6);
	c.irqmode = NULL_IRQ_SOFTIRQ;
	run_ios(&c, 9, BLK_OP_WRITE);
	assert_int_equal(nr_err[BLK_STS_IOERR], 3);
}

static void test_timeout_every(void **state)
{
	struct blk_null_config c = cfg();

	c.timeout_every = 4;
	/* long enough for a loaded machine's timer thread, short for the test */
	c.queue.rq_timeout_ms = 200;
	run_ios(&c, 8, BLK_OP_READ);
	assert_int_equal(nr_err[BLK_STS_TIMEOUT], 2);
	assert_int_equal(nr_err[BLK_STS_OK], 6);
	c.irqmode = NULL_IRQ_TIMER;
	c.completion_nsec = 1000;
	run_ios(&c, 8, BLK_OP_READ);
	assert_int_equal(nr_err[BLK_STS_TIMEOUT], 2);
}

static void test_requeue_every(void **state)
{
	struct blk_null_config c = cfg();
	struct blk_disk_stats st;
	struct blk_mq_ctx *ctx;
	struct blk_dev *dev;
	unsigned int i;

	c.requeue_every = 2;
	run_ios(&c, 16, BLK_OP_READ);
	assert_int_equal(nr_err[BLK_STS_OK], 16);

	/* the requeues are counted */
	nr_done = 0;
	assert_int_equal(blk_null_create(&c, &dev), 0);
	assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
	blk_start_plug(ctx);
	for (i = 0; i < 8; i++) {
		bios[i].bi_offset = (uint64_t)i * 8192;
		assert_int_equal(blk_submit(ctx, &bios[i]), 0);
	}
	blk_finish_plug(ctx);
	assert_int_equal(blk_drain(ctx, 5000000000ull), 0);
	blk_dev_get_stats(dev, &st);
	assert_true(st.requeues >= 1);
	assert_int_equal(st.ios[BLK_STAT_READ], 8);
	blk_ctx_detach(ctx);
	blk_dev_close(dev);
}

static void test_memory_backed(void **state)
{
	struct blk_null_config c = cfg();
	unsigned int i;

	c.memory_backed = true;
	for (i = 0; i < N; i++)
		memset(bufs[i], 'a' + (i % 26), 4096);
	/* never-written blocks read as zeros, over the old buffer contents */
	run_ios(&c, 4, BLK_OP_READ);
	for (i = 0; i < 4; i++)
		assert_int_equal(bufs[i][100], 0);
}

static void test_memory_backed_roundtrip(void **state)
{
	struct blk_null_config c = cfg();
	struct blk_mq_ctx *ctx;
	struct blk_dev *dev;
	struct blk_bio b;
	struct iovec iov;
	static char w[8192], r[8192];

	c.memory_backed = true;
	assert_int_equal(blk_null_create(&c, &dev), 0);
	assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
	memset(w, 0x5a, sizeof(w));
	memset(&b, 0, sizeof(b));
	iov.iov_base = w;
	iov.iov_len = sizeof(w);
	b.bi_op = BLK_OP_WRITE;
	b.bi_offset = 4096 + 512;
	b.bi_size = sizeof(w);
	b.bi_vcnt = 1;
	b.bi_io_vec = &iov;
	b.bi_end_io = end_io;
	assert_int_equal(blk_submit(ctx, &b), 0);
	assert_int_equal(blk_drain(ctx, 0), 0);
	iov.iov_base = r;
	b.bi_op = BLK_OP_READ;
	assert_int_equal(blk_submit(ctx, &b), 0);
	assert_int_equal(blk_drain(ctx, 0), 0);
	assert_memory_equal(w, r, sizeof(w));
	blk_ctx_detach(ctx);
	blk_dev_close(dev);
}

/* memory_backed: a discard zeroes; with discard_keeps_data it leaves the data. */
static void discard_and_read(bool keeps, char *r)
{
	struct blk_null_config c = cfg();
	struct blk_mq_ctx *ctx;
	struct blk_dev *dev;
	struct blk_bio b;
	struct iovec iov;
	static char w[4096];

	c.memory_backed = true;
	c.discard_keeps_data = keeps;
	assert_int_equal(blk_null_create(&c, &dev), 0);
	assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
	memset(w, 0x5a, sizeof(w));
	memset(&b, 0, sizeof(b));
	iov.iov_base = w;
	iov.iov_len = sizeof(w);
	b.bi_op = BLK_OP_WRITE;
	b.bi_offset = 8192;
	b.bi_size = sizeof(w);
	b.bi_vcnt = 1;
	b.bi_io_vec = &iov;
	b.bi_end_io = end_io;
	assert_int_equal(blk_submit(ctx, &b), 0);
	assert_int_equal(blk_drain(ctx, 0), 0);
	b.bi_op = BLK_OP_DISCARD;
	b.bi_vcnt = 0;
	b.bi_io_vec = NULL;
	assert_int_equal(blk_submit(ctx, &b), 0);
	assert_int_equal(blk_drain(ctx, 0), 0);
	assert_int_equal(b.bi_status, BLK_STS_OK);
	iov.iov_base = r;
	b.bi_op = BLK_OP_READ;
	b.bi_vcnt = 1;
	b.bi_io_vec = &iov;
	assert_int_equal(blk_submit(ctx, &b), 0);
	assert_int_equal(blk_drain(ctx, 0), 0);
	blk_ctx_detach(ctx);
	blk_dev_close(dev);
}

static void test_discard_keeps_data(void **state)
{
	static char r[4096], zero[4096], w[4096];

	memset(w, 0x5a, sizeof(w));
	memset(r, 0xff, sizeof(r));
	discard_and_read(false, r);
	assert_memory_equal(r, zero, sizeof(r));
	discard_and_read(true, r);
	assert_memory_equal(r, w, sizeof(r));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_irqmodes),
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_spin),
		cmocka_unit_test(test_fail_every),
		cmocka_unit_test(test_timeout_every),
		cmocka_unit_test(test_requeue_every),
		cmocka_unit_test(test_memory_backed),
		cmocka_unit_test(test_memory_backed_roundtrip),
		cmocka_unit_test(test_discard_keeps_data),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
