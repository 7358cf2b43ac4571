// SPDX-License-Identifier: MIT
/*
 * Merge decisions: adjacent (back and front), gap, overlap, direction and
 * flag changes, non-mergeable ops, max_sectors and max_segments limits.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/blk-mq.h"

static struct blk_dev dev;
static struct request rq;
static struct blk_bio rbio, bio;

static void reset(void)
{
	memset(&dev, 0, sizeof(dev));
	dev.cfg.max_sectors = 16;  /* 8 KiB */
	dev.cfg.max_segments = 4;
	memset(&rq, 0, sizeof(rq));
	memset(&rbio, 0, sizeof(rbio));
	rq.op = BLK_OP_WRITE;
	rq.offset = 8192;
	rq.data_len = 4096;
	rq.nr_segments = 1;
	rq.bio = rq.biotail = &rbio;
	memset(&bio, 0, sizeof(bio));
	bio.bi_op = BLK_OP_WRITE;
	bio.bi_size = 2048;
	bio.bi_vcnt = 1;
}

static void test_back_and_front(void **state)
{
	reset();
	bio.bi_offset = 12288;
	assert_int_equal(blk_try_merge(&dev, &rq, &bio), ELEVATOR_BACK_MERGE);
	blk_rq_merge_bio(&rq, &bio, ELEVATOR_BACK_MERGE);
	assert_int_equal(rq.data_len, 6144);
	assert_ptr_equal(rq.biotail, &bio);
	assert_ptr_equal(rbio.bi_next, &bio);
	assert_int_equal(rq.nr_segments, 2);

	reset();
	bio.bi_offset = 8192 - 2048;
	assert_int_equal(blk_try_merge(&dev, &rq, &bio), ELEVATOR_FRONT_MERGE);
	blk_rq_merge_bio(&rq, &bio, ELEVATOR_FRONT_MERGE);
	assert_int_equal(rq.offset, 6144);
	assert_ptr_equal(rq.bio, &bio);
	assert_ptr_equal(bio.bi_next, &rbio);
}

static void test_no_merge_cases(void **state)
{
	reset();
	bio.bi_offset = 12288 + 512; /* gap */
	assert_int_equal(blk_try_merge(&dev, &rq, &bio), ELEVATOR_NO_MERGE);
	bio.bi_offset = 10240; /* overlap */
	assert_int_equal(blk_try_merge(&dev, &rq, &bio), ELEVATOR_NO_MERGE);
	bio.bi_offset = 12288;
	bio.bi_op = BLK_OP_READ; /* direction change */
	assert_int_equal(blk_try_merge(&dev, &rq, &bio), ELEVATOR_NO_MERGE);
	bio.bi_op = BLK_OP_WRITE;
	bio.bi_flags = BLK_BIO_FUA; /* FUA differs */
	assert_int_equal(blk_try_merge(&dev, &rq, &bio), ELEVATOR_NO_MERGE);
	bio.bi_flags = 0;
	/* I/O priority differs (Linux's blk_rq_merge_ok()) */
	bio.bi_ioprio = IOPRIO_PRIO_VALUE(IOPRIO_CLASS_RT, 0);
	assert_int_equal(blk_try_merge(&dev, &rq, &bio), ELEVATOR_NO_MERGE);
	rq.bio->bi_ioprio = bio.bi_ioprio; /* the same one (its first bio's) merges */
	assert_int_equal(blk_try_merge(&dev, &rq, &bio), ELEVATOR_BACK_MERGE);
	rq.bio->bi_ioprio = bio.bi_ioprio = 0;
	rq.op = bio.bi_op = BLK_OP_DISCARD; /* not mergeable */
	assert_int_equal(blk_try_merge(&dev, &rq, &bio), ELEVATOR_NO_MERGE);
}

/*
 * Regression: a bio merged into another ctx's request was ended on that
 * ctx's thread and counted in its in-flight total (jobs sharing a queue
 * under mq-deadline never drained).
 */
static void test_no_merge_across_ctx(void **state)
{
	struct request next;
	struct blk_bio nbio = { 0 };	/* its bi_ioprio is compared */

	reset();
	bio.bi_offset = 12288;
	rq.mq_ctx = (struct blk_mq_ctx *)0x1000;
	blk_current_ctx = (struct blk_mq_ctx *)0x2000;
	assert_int_equal(blk_try_merge(&dev, &rq, &bio), ELEVATOR_NO_MERGE);
	blk_current_ctx = rq.mq_ctx;
	assert_int_equal(blk_try_merge(&dev, &rq, &bio), ELEVATOR_BACK_MERGE);
	memset(&next, 0, sizeof(next));
	next.op = BLK_OP_WRITE;
	next.offset = 12288;
	next.data_len = 2048;
	next.nr_segments = 1;
	next.bio = next.biotail = &nbio;
	next.mq_ctx = (struct blk_mq_ctx *)0x2000;
	assert_false(blk_rq_merge_ok_rq(&dev, &rq, &next));
	next.mq_ctx = rq.mq_ctx;
	assert_true(blk_rq_merge_ok_rq(&dev, &rq, &next));
	blk_current_ctx = NULL;
}

static void test_limits(void **state)
{
	reset();
	bio.bi_offset = 12288;
	bio.bi_size = 4096; /* 8 KiB total: at the limit */
	assert_int_equal(blk_try_merge(&dev, &rq, &bio), ELEVATOR_BACK_MERGE);
	bio.bi_size = 4608; /* one sector over */
	assert_int_equal(blk_try_merge(&dev, &rq, &bio), ELEVATOR_NO_MERGE);
	bio.bi_size = 512;
	bio.bi_vcnt = 3; /* 1 + 3 segments: at the limit */
	assert_int_equal(blk_try_merge(&dev, &rq, &bio), ELEVATOR_BACK_MERGE);
	bio.bi_vcnt = 4;
	assert_int_equal(blk_try_merge(&dev, &rq, &bio), ELEVATOR_NO_MERGE);
}

static void test_request_merge(void **state)
{
	struct request next;
	struct blk_bio nbio = { 0 };	/* its bi_ioprio is compared */

	reset();
	memset(&next, 0, sizeof(next));
	next.op = BLK_OP_WRITE;
	next.offset = 12288;
	next.data_len = 4096;
	next.nr_segments = 1;
	next.bio = next.biotail = &nbio;
	assert_true(blk_rq_merge_ok_rq(&dev, &rq, &next));
	next.offset = 16384;
	assert_false(blk_rq_merge_ok_rq(&dev, &rq, &next));
	next.offset = 12288;
	next.data_len = 8192;
	assert_false(blk_rq_merge_ok_rq(&dev, &rq, &next)); /* 12 KiB > 8 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_back_and_front),
		cmocka_unit_test(test_no_merge_cases),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_no_merge_across_ctx),
		cmocka_unit_test(test_request_merge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
