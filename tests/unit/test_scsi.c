// SPDX-License-Identifier: MIT
/*
 * SCSI disk driver: the completion decision as a table (status x sense key
 * x ASC/ASCQ -> retry or a block status), and a disk attached through the
 * loopback LLD over ram (capacity and limits from the probe; read, write,
 * discard, write zeroes and flush) and over a failing null device (MEDIUM
 * ERROR, its status and sense in bi_native_status).
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
#include "blkstack/ram.h"
#include "blkstack/scsi.h"
#include "blkstack/scsi_tgt.h"

static void test_decide_table(void **state)
{
	static const struct {
		uint8_t status;
		int key;            /* -1: no sense */
		uint16_t asc;
		uint32_t retries;
		enum scsi_disposition want;
		blk_status_t blk;
	} rows[] = {
		{ SAM_STAT_GOOD, -1, 0, 0, SCSI_DONE, BLK_STS_OK },
		{ SAM_STAT_CONDITION_MET, -1, 0, 0, SCSI_DONE, BLK_STS_OK },
		{ SAM_STAT_CHECK_CONDITION, SK_RECOVERED_ERROR, 0x1700, 0, SCSI_DONE, BLK_STS_OK },
		{ SAM_STAT_CHECK_CONDITION, SK_UNIT_ATTENTION, ASC_POWER_ON_RESET, 0, SCSI_RETRY, 0 },
		{ SAM_STAT_CHECK_CONDITION, SK_UNIT_ATTENTION, ASC_POWER_ON_RESET, 5, SCSI_DONE, BLK_STS_IOERR },
		{ SAM_STAT_CHECK_CONDITION, SK_NOT_READY, 0x0401, 4, SCSI_RETRY, 0 },
		{ SAM_STAT_CHECK_CONDITION, SK_ABORTED_COMMAND, ASC_COMMAND_TIMEOUT, 5, SCSI_DONE, BLK_STS_TIMEOUT },
		{ SAM_STAT_CHECK_CONDITION, SK_MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR, 0, SCSI_DONE, BLK_STS_MEDIUM },
		{ SAM_STAT_CHECK_CONDITION, SK_DATA_PROTECT, ASC_SPACE_ALLOC_FAILED_WP, 0, SCSI_DONE, BLK_STS_NOSPC },
		{ SAM_STAT_CHECK_CONDITION, SK_DATA_PROTECT, ASC_WRITE_PROTECTED, 0, SCSI_DONE, BLK_STS_TARGET },
		{ SAM_STAT_CHECK_CONDITION, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE, 0, SCSI_DONE, BLK_STS_TARGET },
		{ SAM_STAT_CHECK_CONDITION, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE, 0, SCSI_DONE, BLK_STS_IOERR },
		{ SAM_STAT_CHECK_CONDITION, -1, 0, 0, SCSI_DONE, BLK_STS_IOERR },
		{ SAM_STAT_BUSY, -1, 0, 0, SCSI_RETRY, 0 },
		{ SAM_STAT_TASK_SET_FULL, -1, 0, 5, SCSI_DONE, BLK_STS_IOERR },
		{ SAM_STAT_RESERVATION_CONFLICT, -1, 0, 0, SCSI_DONE, BLK_STS_IOERR },
		{ SAM_STAT_TASK_ABORTED, -1, 0, 0, SCSI_RETRY, 0 },
		{ SAM_STAT_TASK_ABORTED, -1, 0, 5, SCSI_DONE, BLK_STS_TIMEOUT },
	};
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct scsi_sense s = { .key = (uint8_t)rows[i].key,
					.asc_ascq = rows[i].asc };
		blk_status_t blk;
		enum scsi_disposition d;

		d = scsi_decide(rows[i].status, rows[i].key < 0 ? NULL : &s,
				rows[i].retries, 5, &blk);
		print_message("row %u\n", i);
		assert_int_equal(d, rows[i].want);
		if (d == SCSI_DONE)
			assert_int_equal(blk, rows[i].blk);
	}
}

static int nr_end;

static void end_io(struct blk_bio *bio)
{
	(void)bio;
	nr_end++;
}

static blk_status_t one(struct blk_mq_ctx *ctx, uint8_t op, uint64_t off,
			uint32_t len, void *buf, uint32_t *native)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct blk_bio bio = { 0 };
	int n = nr_end;

	bio.bi_op = op;
	bio.bi_offset = off;
	bio.bi_size = op == BLK_OP_FLUSH ? 0 : len;
	if (op <= BLK_OP_WRITE) {
		bio.bi_vcnt = 1;
		bio.bi_io_vec = &iov;
	}
	bio.bi_end_io = end_io;
	assert_int_equal(blk_submit(ctx, &bio), 0);
	assert_int_equal(blk_drain(ctx, 10000000000ull), 0);
	assert_int_equal(nr_end, n + 1);
	if (native)
		*native = bio.bi_native_status;
	return bio.bi_status;
}

static struct blk_dev *disk(struct blk_dev *lower, char *err, size_t len)
{
	struct blk_dev_config q = { .queue_depth = 32, .nr_hw_queues = 1 };
	struct blk_scsi_config sc = { .queue = &q, .lower = lower, .max_retries = 5 };
	struct blk_dev *dev = NULL;

	assert_int_equal(blk_scsi_create(&sc, &dev, err, len), 0);
	return dev;
}

static void test_disk_on_ram(void **state)
{
	struct blk_ram_config rc = { 0 };
	struct blk_dev *lower, *dev;
	struct blk_mq_ctx *ctx;
	struct blk_dev_info in;
	static char w[65536], r[65536], z[65536];
	char err[256];

	(void)state;
	rc.queue.capacity = 64 << 20;
	rc.queue.logical_block_size = 4096;
	rc.queue.queue_depth = 32;
	assert_int_equal(blk_ram_create(&rc, &lower), 0);
	dev = disk(lower, err, sizeof(err));
	blk_dev_get_info(dev, &in);
	assert_string_equal(in.name, "scsi");
	assert_true(in.capacity == 64 << 20);
	assert_int_equal(in.logical_block_size, 4096);
	assert_true(in.can_discard);
	assert_true(in.can_write_zeroes);
	assert_true(in.stores_data);
	/* regression: WCE was read from past the mode data, so a disk on a
	 * device with a cache took no FLUSH and no FUA */
	assert_true(in.can_flush);
	assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
	memset(w, 0x3c, sizeof(w));
	/* past 16 TiB of 4 KiB blocks is not needed: 10-byte CDBs here */
	assert_int_equal(one(ctx, BLK_OP_WRITE, 1 << 20, sizeof(w), w, NULL), BLK_STS_OK);
	assert_int_equal(one(ctx, BLK_OP_READ, 1 << 20, sizeof(r), r, NULL), BLK_STS_OK);
	assert_memory_equal(w, r, sizeof(w));
	assert_int_equal(one(ctx, BLK_OP_FLUSH, 0, 0, NULL, NULL), BLK_STS_OK);
	/* UNMAP and WRITE SAME (16) NDOB: zeros afterwards */
	assert_int_equal(one(ctx, BLK_OP_DISCARD, 1 << 20, 32768, NULL, NULL), BLK_STS_OK);
	assert_int_equal(one(ctx, BLK_OP_WRITE_ZEROES, (1 << 20) + 32768, 32768, NULL, NULL),
			 BLK_STS_OK);
	assert_int_equal(one(ctx, BLK_OP_READ, 1 << 20, sizeof(r), r, NULL), BLK_STS_OK);
	assert_memory_equal(r, z, sizeof(r));
	blk_ctx_detach(ctx);
	blk_dev_close(dev); /* closes the ram device too (ASan: no leak) */
}

static void test_disk_medium_error(void **state)
{
	struct blk_null_config nc = { 0 };
	struct blk_dev *lower, *dev;
	struct blk_mq_ctx *ctx;
	static char buf[4096];
	uint32_t native;
	char err[256];

	(void)state;
	nc.queue.capacity = 16 << 20;
	nc.queue.queue_depth = 32;
	nc.fail_every = 1;
	assert_int_equal(blk_null_create(&nc, &lower), 0);
	dev = disk(lower, err, sizeof(err));
	assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
	assert_int_equal(one(ctx, BLK_OP_READ, 8192, 4096, buf, &native), BLK_STS_MEDIUM);
	/* CHECK CONDITION, MEDIUM ERROR, UNRECOVERED READ ERROR */
	assert_int_equal(native, (uint32_t)SAM_STAT_CHECK_CONDITION << 24 |
				 SK_MEDIUM_ERROR << 16 | ASC_UNRECOVERED_READ_ERROR);
	assert_int_equal(one(ctx, BLK_OP_WRITE, 8192, 4096, buf, &native), BLK_STS_MEDIUM);
	assert_int_equal(native & 0xffff, ASC_WRITE_ERROR);
	blk_ctx_detach(ctx);
	blk_dev_close(dev);
}

/*
 * Partial completion: 16 reads of 4 KiB merged into one 64 KiB READ over
 * LBAs 4608..4735 (512-byte blocks); the disk's opts=0x2 fails LBA 4660
 * with MEDIUM ERROR and INFORMATION 4660.  The 6 bios before it end OK,
 * the rest (from the one that holds LBA 4660) fail with MEDIUM, as
 * scsi_io_completion() ends good_bytes and fails the remainder.
 */
static blk_status_t pst[16];
static int pend;

static void partial_end_io(struct blk_bio *bio)
{
	pst[(uintptr_t)bio->bi_private] = bio->bi_status;
	pend++;
}

static void test_partial_medium_error(void **state)
{
	struct blk_ram_config rc = { 0 };
	struct blk_dev_config q = { .queue_depth = 32, .nr_hw_queues = 1 };
	struct blk_scsi_config sc = { .queue = &q, .max_retries = 5,
				      .opts = 0x2 };
	struct blk_scsi_stats st;
	struct blk_bio bios[16];
	struct iovec iov[16];
	static char buf[16][4096];
	struct blk_dev *dev;
	struct blk_mq_ctx *ctx;
	char err[256];
	unsigned int i;

	(void)state;
	rc.queue.capacity = 64 << 20;
	rc.queue.queue_depth = 32;
	assert_int_equal(blk_ram_create(&rc, &sc.lower), 0);
	assert_int_equal(blk_scsi_create(&sc, &dev, err, sizeof(err)), 0);
	assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
	memset(bios, 0, sizeof(bios));
	pend = 0;
	blk_start_plug(ctx);
	for (i = 0; i < 16; i++) {
		iov[i].iov_base = buf[i];
		iov[i].iov_len = 4096;
		bios[i].bi_op = BLK_OP_READ;
		bios[i].bi_offset = (576ull + i) * 4096;
		bios[i].bi_size = 4096;
		bios[i].bi_vcnt = 1;
		bios[i].bi_io_vec = &iov[i];
		bios[i].bi_end_io = partial_end_io;
		bios[i].bi_private = (void *)(uintptr_t)i;
		assert_int_equal(blk_submit(ctx, &bios[i]), 0);
	}
	blk_finish_plug(ctx);
	assert_int_equal(blk_drain(ctx, 10000000000ull), 0);
	assert_int_equal(pend, 16);
	for (i = 0; i < 16; i++) {
		print_message("bio %u\n", i);
		assert_int_equal(pst[i], i < 6 ? BLK_STS_OK : BLK_STS_MEDIUM);
	}
	blk_scsi_get_stats(dev, &st);
	assert_true(st.reads == 1);   /* merged: one READ */
	assert_true(st.partial == 1);
	blk_ctx_detach(ctx);
	blk_dev_close(dev);
}

/*
 * A request past the disk's MAXIMUM TRANSFER LENGTH (8 blocks of 4 KiB
 * here) goes in parts: a 64 KiB write and read each take two commands,
 * and the data lands where it belongs.
 */
static void test_split_at_max_transfer(void **state)
{
	struct blk_ram_config rc = { 0 };
	struct blk_dev_config q = { .queue_depth = 32, .nr_hw_queues = 1 };
	struct scsi_tgt_config tc = { .max_xfer_blocks = 8 };
	struct blk_scsi_config sc = { .queue = &q, .max_retries = 5, .tgt = &tc };
	static char w[65536], r[65536];
	struct blk_scsi_stats st;
	struct blk_dev *dev;
	struct blk_mq_ctx *ctx;
	char err[256];
	unsigned int i;

	(void)state;
	rc.queue.capacity = 64 << 20;
	rc.queue.logical_block_size = 4096;
	rc.queue.queue_depth = 32;
	assert_int_equal(blk_ram_create(&rc, &sc.lower), 0);
	assert_int_equal(blk_scsi_create(&sc, &dev, err, sizeof(err)), 0);
	assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
	for (i = 0; i < sizeof(w); i++)
		w[i] = (char)(i * 7 + i / 4096);
	assert_int_equal(one(ctx, BLK_OP_WRITE, 1 << 20, sizeof(w), w, NULL), BLK_STS_OK);
	assert_int_equal(one(ctx, BLK_OP_READ, 1 << 20, sizeof(r), r, NULL), BLK_STS_OK);
	assert_memory_equal(w, r, sizeof(w));
	/* the second half alone: it is where the second part wrote it */
	memset(r, 0, sizeof(r));
	assert_int_equal(one(ctx, BLK_OP_READ, (1 << 20) + 32768, 32768, r, NULL),
			 BLK_STS_OK);
	assert_memory_equal(w + 32768, r, 32768);
	blk_scsi_get_stats(dev, &st);
	assert_true(st.writes == 2 && st.reads == 3);
	assert_true(st.split == 2);
	blk_ctx_detach(ctx);
	blk_dev_close(dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decide_table),
		cmocka_unit_test(test_disk_on_ram),
		cmocka_unit_test(test_disk_medium_error),
		cmocka_unit_test(test_partial_medium_error),
		cmocka_unit_test(test_split_at_max_transfer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
