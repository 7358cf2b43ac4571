// SPDX-License-Identifier: MIT
/*
 * Stage timers: the interval arithmetic (adjacent stages, unstamped
 * stages, clocks out of order), seed 000's windows, merging, the parser,
 * and the core's stamps on a null device (every stage, in order).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "blkstack/blk_mq.h"
#include "blkstack/null.h"

static struct blk_stage_stats *new_stats(uint8_t from, uint8_t to,
					 uint64_t window_ns)
{
	struct blk_stage_stats *st = malloc(sizeof(*st));

	assert_non_null(st);
	blk_stage_stats_init(st, from, to, window_ns);
	return st;
}

static void put_stats(struct blk_stage_stats *st)
{
	blk_stage_stats_free(st);
	free(st);
}

static void test_intervals(void **state)
{
	struct blk_stage_stats *st = new_stats(0, 0, 0);
	/* 10, 20, 30 ... ns apart: interval i is 10 * (i + 1) */
	uint64_t ts[BLK_STAGE_NR] = { 1000, 1010, 1030, 1060, 1100, 1150, 1210 };
	unsigned int i;

	(void)state;
	assert_false(st->has_window);
	assert_int_equal(blk_stage_account(st, ts), 0);
	assert_int_equal(blk_stage_account(st, ts), 0);
	for (i = 0; i < BLK_STAGE_NR_INTERVALS; i++) {
		assert_int_equal(st->interval[i].count, 2);
		assert_int_equal(st->interval[i].min, 10 * (i + 1));
		assert_int_equal(st->interval[i].max, 10 * (i + 1));
		assert_int_equal(blk_hist_percentile(&st->interval[i], 50.0),
				 10 * (i + 1));
	}
	/* an unstamped stage: both intervals touching it are not counted */
	ts[BLK_STAGE_DEVICE] = 0;
	blk_stage_account(st, ts);
	assert_int_equal(st->interval[BLK_STAGE_DISPATCH].count, 2);
	assert_int_equal(st->interval[BLK_STAGE_DEVICE].count, 2);
	assert_int_equal(st->interval[BLK_STAGE_SUBMIT].count, 3);
	assert_int_equal(st->interval[BLK_STAGE_COMPLETE].count, 3);
	/* an end before its start (two threads' clocks): 0, never a wrap */
	ts[BLK_STAGE_DEVICE] = 1060;
	ts[BLK_STAGE_FLUSH] = 900;
	blk_stage_account(st, ts);
	assert_int_equal(st->interval[BLK_STAGE_SUBMIT].min, 0);
	assert_true(st->interval[BLK_STAGE_FLUSH].max < 1000);
	put_stats(st);
}

static void test_windows(void **state)
{
	/* window dispatch -> end_io, 1000 ns windows */
	struct blk_stage_stats *st = new_stats(BLK_STAGE_DISPATCH,
					       BLK_STAGE_END_IO, 1000);
	uint64_t ts[BLK_STAGE_NR] = { 0 };
	uint64_t t;

	(void)state;
	assert_true(st->has_window);
	/* one request every 100 ns, each 40 ns long, from t = 10000 */
	for (t = 10000; t <= 12500; t += 100) {
		ts[BLK_STAGE_DISPATCH] = t;
		ts[BLK_STAGE_END_IO] = t + 40;
		assert_int_equal(blk_stage_account(st, ts), 0);
	}
	/* windows start at 10040 and 11140: closed by the samples ending at
	 * 11040 (11 samples) and 12140 (11 samples); 4 left open */
	assert_int_equal(st->nr_windows, 2);
	assert_int_equal(st->windows[0].start_ns, 10040);
	assert_int_equal(st->windows[0].count, 11);
	assert_int_equal(st->windows[0].cum_ns, 11 * 40);
	assert_int_equal(st->windows[1].start_ns, 11140);
	assert_int_equal(st->windows[1].count, 11);
	assert_int_equal(st->win_count, 4);
	/* the windows take only the requests with both stages */
	ts[BLK_STAGE_DISPATCH] = 0;
	ts[BLK_STAGE_END_IO] = 20000;
	blk_stage_account(st, ts);
	assert_int_equal(st->win_count, 4);
	put_stats(st);
}

static void test_merge(void **state)
{
	struct blk_stage_stats *a = new_stats(0, 0, 0);
	struct blk_stage_stats *b = new_stats(BLK_STAGE_SUBMIT, BLK_STAGE_END_IO, 100);
	uint64_t ts[BLK_STAGE_NR] = { 1, 2, 3, 4, 5, 6, 7 };
	unsigned int i;

	(void)state;
	for (i = 0; i < 300; i++) {
		ts[0] = 1000 * (i + 1);
		ts[6] = ts[0] + 50;
		blk_stage_account(b, ts);
	}
	assert_true(b->nr_windows > 100);
	blk_stage_account(a, ts);
	assert_int_equal(blk_stage_stats_merge(a, b), 0);
	assert_int_equal(a->interval[BLK_STAGE_DEVICE].count, 301);
	assert_true(a->has_window);
	assert_int_equal(a->win_to, BLK_STAGE_END_IO);
	assert_int_equal(a->nr_windows, b->nr_windows);
	assert_int_equal(a->windows[5].count, b->windows[5].count);
	put_stats(a);
	put_stats(b);
}

static void test_parse(void **state)
{
	uint8_t from = 9, to = 9;
	char why[256];

	(void)state;
	assert_int_equal(blk_stage_window_parse("device_done:complete", &from, &to,
						why, sizeof(why)), 0);
	assert_int_equal(from, BLK_STAGE_DEVICE_DONE);
	assert_int_equal(to, BLK_STAGE_COMPLETE);
	assert_int_equal(blk_stage_window_parse("submit:end_io", &from, &to,
						why, sizeof(why)), 0);
	assert_int_equal(from, BLK_STAGE_SUBMIT);
	assert_int_equal(to, BLK_STAGE_END_IO);
	assert_int_equal(blk_stage_window_parse("end_io:submit", &from, &to, why,
						sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "not later"));
	assert_int_equal(blk_stage_window_parse("submit:submit", &from, &to, why,
						sizeof(why)), -EINVAL);
	assert_int_equal(blk_stage_window_parse("submit", &from, &to, why,
						sizeof(why)), -EINVAL);
	assert_int_equal(blk_stage_window_parse("submit:devic", &from, &to, why,
						sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "unknown stage 'devic'"));
	assert_non_null(strstr(why, "device_done"));
	assert_string_equal(blk_stage_name(BLK_STAGE_DEVICE_DONE), "device_done");
	assert_string_equal(blk_stage_name(BLK_STAGE_NR), "?");
}

static unsigned int nr_done;

static void end_io(struct blk_bio *bio)
{
	(void)bio;
	nr_done++;
}

/* The core on null: every request stamps every stage, in path order. */
static void test_core_stamps(void **state)
{
	struct blk_null_config nc = { 0 };
	struct blk_stage_stats *st = new_stats(0, 0, 0);
	struct blk_dev *dev;
	struct blk_mq_ctx *ctx;
	struct blk_bio bios[16];
	struct iovec iov = { 0 };
	static char buf[4096];
	unsigned int i;
	int ret;

	(void)state;
	nc.queue.capacity = 1 << 20;
	nc.queue.iostats = true;
	nc.queue.stage_timers = true;
	ret = blk_null_create(&nc, &dev);
#ifndef BLK_STAGE_TIMERS
	assert_int_equal(ret, -EOPNOTSUPP);
	put_stats(st);
	return;
#endif
	assert_int_equal(ret, 0);
	assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
	iov.iov_base = buf;
	iov.iov_len = sizeof(buf);
	blk_start_plug(ctx);
	for (i = 0; i < 16; i++) {
		memset(&bios[i], 0, sizeof(bios[i]));
		bios[i].bi_offset = (uint64_t)(i * 2) * 4096; /* no merges */
		bios[i].bi_size = 4096;
		bios[i].bi_op = BLK_OP_READ;
		bios[i].bi_vcnt = 1;
		bios[i].bi_io_vec = &iov;
		bios[i].bi_end_io = end_io;
		assert_int_equal(blk_submit(ctx, &bios[i]), 0);
	}
	blk_finish_plug(ctx);
	while (nr_done < 16)
		blk_poll(ctx);
	assert_int_equal(blk_ctx_get_stage_stats(ctx, st), 0);
	for (i = 0; i < BLK_STAGE_NR_INTERVALS; i++)
		assert_int_equal(st->interval[i].count, 16);
	blk_ctx_detach(ctx);
	blk_dev_close(dev);
	put_stats(st);
}

static void test_core_off(void **state)
{
	struct blk_null_config nc = { 0 };
	struct blk_stage_stats *st = new_stats(0, 0, 0);
	struct blk_dev *dev;
	struct blk_mq_ctx *ctx;

	(void)state;
	nc.queue.capacity = 1 << 20;
	assert_int_equal(blk_null_create(&nc, &dev), 0);
	assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
	assert_int_equal(blk_ctx_get_stage_stats(ctx, st), -ENODATA);
	blk_ctx_detach(ctx);
	blk_dev_close(dev);
	put_stats(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intervals),
		cmocka_unit_test(test_windows),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_core_stamps),
		cmocka_unit_test(test_core_off),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
