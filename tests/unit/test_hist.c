// SPDX-License-Identifier: MIT
/*
 * Log-linear histogram: bucket bounds, percentiles within one bucket's
 * error, exact min/max/mean/stddev, merge.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "blkstack/hist.h"

static void test_buckets_monotonic(void **state)
{
	uint64_t v;
	unsigned int prev = 0;

	for (v = 0; v < 1000000; v += 1 + v / 50) {
		unsigned int b = blk_hist_bucket(v);

		assert_true(b >= prev);
		assert_true(b < BLK_HIST_BUCKETS);
		assert_true(blk_hist_bucket_low(b) <= v);
		if (b + 1 < BLK_HIST_BUCKETS)
			assert_true(blk_hist_bucket_low(b + 1) > v);
		prev = b;
	}
	assert_true(blk_hist_bucket(UINT64_MAX) < BLK_HIST_BUCKETS);
	assert_int_equal(blk_hist_bucket(63), 63);
	assert_int_equal(blk_hist_bucket_low(blk_hist_bucket(64)), 64);
}

static void test_percentiles(void **state)
{
	struct blk_hist *h = malloc(sizeof(*h));
	uint64_t v, p50, p99;

	blk_hist_init(h);
	assert_int_equal(blk_hist_percentile(h, 50), 0);
	for (v = 1; v <= 100000; v++)
		blk_hist_add(h, v * 10);
	assert_int_equal(h->count, 100000);
	assert_int_equal(h->min, 10);
	assert_int_equal(h->max, 1000000);
	p50 = blk_hist_percentile(h, 50);
	p99 = blk_hist_percentile(h, 99);
	/* within the 1/32 bucket width */
	assert_true(fabs((double)p50 - 500000.0) / 500000.0 < 0.04);
	assert_true(fabs((double)p99 - 990000.0) / 990000.0 < 0.04);
	assert_int_equal(blk_hist_percentile(h, 100), 1000000);
	assert_true(fabs(blk_hist_mean(h) - 500005.0) < 1e-3);
	/* stddev of 10..1e6 step 10: 10 * sqrt((n^2-1)/12) */
	assert_true(fabs(blk_hist_stddev(h) - 10.0 * sqrt((1e10 - 1) / 12.0)) < 1.0);
	free(h);
}

static void test_merge_and_add_n(void **state)
{
	struct blk_hist *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));

	blk_hist_init(a);
	blk_hist_init(b);
	blk_hist_add_n(a, 100, 3);
	blk_hist_add(b, 5);
	blk_hist_add(b, 7000);
	blk_hist_merge(a, b);
	assert_int_equal(a->count, 5);
	assert_int_equal(a->min, 5);
	assert_int_equal(a->max, 7000);
	assert_true(fabs(blk_hist_mean(a) - (300.0 + 5 + 7000) / 5) < 1e-9);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets_monotonic),
		cmocka_unit_test(test_percentiles),
		cmocka_unit_test(test_merge_and_add_n),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
