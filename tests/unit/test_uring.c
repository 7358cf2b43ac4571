// SPDX-License-Identifier: MIT
/*
 * uring driver on real files: create and size, round trips through single
 * and several iovecs, fixed buffers, FUA and flush, discard punching a
 * hole, write zeroes (and its hole-punch fallback on tmpfs), a read that
 * runs into the end of a truncated file (short read resubmitted, then an
 * error, never zeros), and the setup errors.  Every test runs twice: on
 * the io_uring engine, then on the thread pool (uring_engine=pool), which
 * must give the same results.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "blkstack/uring.h"

static char dir[] = "/tmp/blkstack-uring-XXXXXX";
static char path[256];
static unsigned int nr_done;
static uint8_t engine = BLK_URING_ENGINE_IO_URING;
static blk_status_t last_status;

static void end_io(struct blk_bio *bio)
{
	nr_done++;
	last_status = bio->bi_status;
}

static int setup_dir(void **state)
{
	if (!mkdtemp(dir))
		return -1;
	return 0;
}

static int setup_pool(void **state)
{
	strcpy(dir, "/tmp/blkstack-uring-XXXXXX");
	engine = BLK_URING_ENGINE_POOL;
	return setup_dir(state);
}

static int teardown_dir(void **state)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static struct blk_dev *open_dev(const char *p, uint64_t create, bool direct,
				int expect)
{
	struct blk_uring_config c = { 0 };
	struct blk_dev *dev = NULL;
	char err[512] = "";
	int ret;

	c.path = p;
	c.create_size = create;
	c.direct = direct;
	c.register_files = true;
	c.fixed_buffers = true;
	c.queue.queue_depth = 32;
	c.engine = engine;
	ret = blk_uring_create(&c, &dev, err, sizeof(err));
	if (ret != expect)
		fprintf(stderr, "blk_uring_create: %d (%s)\n", ret, err);
	assert_int_equal(ret, expect);
	if (expect)
		assert_true(strlen(err) > 0);
	return dev;
}

/* One bio of priority @prio, waited for. */
static blk_status_t io_prio(struct blk_mq_ctx *ctx, unsigned int op,
			    uint64_t off, struct iovec *iov, unsigned int cnt,
			    uint32_t len, uint8_t flags, uint16_t prio)
{
	struct blk_bio b;

	memset(&b, 0, sizeof(b));
	b.bi_ioprio = prio;
	b.bi_op = (uint8_t)op;
	b.bi_flags = flags;
	b.bi_offset = off;
	b.bi_size = len;
	b.bi_vcnt = (uint16_t)cnt;
	b.bi_io_vec = iov;
	b.bi_end_io = end_io;
	nr_done = 0;
	assert_int_equal(blk_submit(ctx, &b), 0);
	assert_int_equal(blk_drain(ctx, 10000000000ull), 0);
	assert_int_equal(nr_done, 1);
	return last_status;
}

static blk_status_t io(struct blk_mq_ctx *ctx, unsigned int op, uint64_t off,
		       struct iovec *iov, unsigned int cnt, uint32_t len,
		       uint8_t flags)
{
	return io_prio(ctx, op, off, iov, cnt, len, flags, 0);
}

/*
 * bi_ioprio reaches the kernel in the SQE: it accepts the three classes
 * (RT as root) and refuses class 7 with -EINVAL, which it could only see
 * in the SQE's ioprio.  The pool engine's preadv2() takes no priority.
 */
static void test_ioprio_in_sqe(void **state)
{
	static char b[4096] __attribute__((aligned(4096)));
	struct iovec iov = { .iov_base = b, .iov_len = sizeof(b) };
	struct blk_mq_ctx *ctx;
	struct blk_dev *dev;
	unsigned int c;

	(void)state;
	snprintf(path, sizeof(path), "%s/prio.img", dir);
	dev = open_dev(path, 1 << 20, false, 0);
	assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
	for (c = IOPRIO_CLASS_BE; c <= IOPRIO_CLASS_IDLE; c++)
		assert_int_equal(io_prio(ctx, BLK_OP_READ, 0, &iov, 1, sizeof(b),
					 0, IOPRIO_PRIO_VALUE(c, 7)),
				 BLK_STS_OK);
	if (geteuid() == 0)
		assert_int_equal(io_prio(ctx, BLK_OP_WRITE, 4096, &iov, 1,
					 sizeof(b), 0,
					 IOPRIO_PRIO_VALUE(IOPRIO_CLASS_RT, 0)),
				 BLK_STS_OK);
	if (engine == BLK_URING_ENGINE_IO_URING)
		assert_int_not_equal(io_prio(ctx, BLK_OP_READ, 0, &iov, 1,
					     sizeof(b), 0,
					     IOPRIO_PRIO_VALUE(7, 0)),
				     BLK_STS_OK);
	blk_ctx_detach(ctx);
	blk_dev_close(dev);
	unlink(path);
}

static void test_create_roundtrip(void **state)
{
	struct blk_dev_info info;
	struct blk_mq_ctx *ctx;
	struct blk_dev *dev;
	static char w[65536] __attribute__((aligned(4096)));
	static char r[65536] __attribute__((aligned(4096)));
	struct iovec iov[3];
	struct stat st;
	unsigned int i;

	snprintf(path, sizeof(path), "%s/a.img", dir);
	dev = open_dev(path, 8 << 20, false, 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 8 << 20);
	blk_dev_get_info(dev, &info);
	assert_int_equal(info.capacity, 8 << 20);
	assert_string_equal(info.name, "uring");
	assert_true(info.stores_data);
	assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
	/* fixed buffer over w: single-segment writes use WRITE_FIXED */
	assert_int_equal(blk_ctx_register_buffer(ctx, w, sizeof(w)),
			 engine == BLK_URING_ENGINE_POOL ? -EOPNOTSUPP : 0);
	for (i = 0; i < sizeof(w); i++)
		w[i] = (char)(i * 13 + 1);
	iov[0].iov_base = w;
	iov[0].iov_len = sizeof(w);
	assert_int_equal(io(ctx, BLK_OP_WRITE, 1 << 20, iov, 1, sizeof(w), 0), BLK_STS_OK);
	/* read back through three iovecs: readv */
	iov[0].iov_base = r;
	iov[0].iov_len = 512;
	iov[1].iov_base = r + 512;
	iov[1].iov_len = 4096;
	iov[2].iov_base = r + 4608;
	iov[2].iov_len = sizeof(r) - 4608;
	assert_int_equal(io(ctx, BLK_OP_READ, 1 << 20, iov, 3, sizeof(r), 0), BLK_STS_OK);
	assert_memory_equal(w, r, sizeof(w));
	/* FUA write and a flush */
	iov[0].iov_base = w;
	iov[0].iov_len = 4096;
	assert_int_equal(io(ctx, BLK_OP_WRITE, 0, iov, 1, 4096, BLK_BIO_FUA), BLK_STS_OK);
	assert_int_equal(io(ctx, BLK_OP_FLUSH, 0, NULL, 0, 0, 0), BLK_STS_OK);
	blk_ctx_detach(ctx);
	blk_dev_close(dev);

	/* an existing file keeps its size, whatever create_size says */
	dev = open_dev(path, 1 << 20, false, 0);
	blk_dev_get_info(dev, &info);
	assert_int_equal(info.capacity, 8 << 20);
	blk_dev_close(dev);
}

static void test_discard_and_write_zeroes(void **state)
{
	const char *dirs[2] = { dir, "/dev/shm" };
	static char w[1 << 20], r[1 << 20];
	unsigned int d, i;

	memset(w, 0xab, sizeof(w));
	for (d = 0; d < 2; d++) {
		struct blk_mq_ctx *ctx;
		struct blk_dev *dev;
		struct iovec iov;
		struct stat st0, st1;
		char p[256];

		snprintf(p, sizeof(p), "%s/z-%d.img", dirs[d], (int)getpid());
		unlink(p);
		dev = open_dev(p, 4 << 20, false, 0);
		assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
		iov.iov_base = w;
		iov.iov_len = sizeof(w);
		assert_int_equal(io(ctx, BLK_OP_WRITE, 0, &iov, 1, sizeof(w), 0), BLK_STS_OK);
		assert_int_equal(io(ctx, BLK_OP_FLUSH, 0, NULL, 0, 0, 0), BLK_STS_OK);
		assert_int_equal(stat(p, &st0), 0);
		/* discard the second half: a hole, reads as zeros */
		assert_int_equal(io(ctx, BLK_OP_DISCARD, 512 << 10, NULL, 0, 512 << 10, 0),
				 BLK_STS_OK);
		assert_int_equal(stat(p, &st1), 0);
		assert_true(st1.st_blocks < st0.st_blocks);
		assert_int_equal(st1.st_size, 4 << 20);
		/* write zeroes over 4 KiB..8 KiB (tmpfs: punched instead) */
		assert_int_equal(io(ctx, BLK_OP_WRITE_ZEROES, 4096, NULL, 0, 4096, 0),
				 BLK_STS_OK);
		iov.iov_base = r;
		assert_int_equal(io(ctx, BLK_OP_READ, 0, &iov, 1, sizeof(r), 0), BLK_STS_OK);
		for (i = 0; i < sizeof(r); i++) {
			int zero = (i >= 4096 && i < 8192) || i >= (512 << 10);

			if ((unsigned char)r[i] != (zero ? 0 : 0xab))
				fail_msg("%s: byte %u is 0x%02x", p, i, (unsigned char)r[i]);
		}
		blk_ctx_detach(ctx);
		blk_dev_close(dev);
		unlink(p);
	}
}

/* Regression: a read reaching EOF must fail, not return zeros. */
static void test_read_past_eof_of_truncated_file_is_error(void **state)
{
	static char r[8192];
	struct blk_mq_ctx *ctx;
	struct blk_dev *dev;
	struct iovec iov = { r, sizeof(r) };
	char p[256];

	snprintf(p, sizeof(p), "%s/eof.img", dir);
	dev = open_dev(p, 1 << 20, false, 0);
	assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
	/* someone shrinks the file under the device by 4 KiB */
	assert_int_equal(truncate(p, (1 << 20) - 4096), 0);
	memset(r, 0x55, sizeof(r));
	/* the first 4 KiB come back (short read), then EOF: an error */
	assert_int_equal(io(ctx, BLK_OP_READ, (1 << 20) - 8192, &iov, 1, sizeof(r), 0),
			 BLK_STS_IOERR);
	assert_int_equal(r[0], 0); /* the part before EOF was read */
	blk_ctx_detach(ctx);
	blk_dev_close(dev);
}

static void test_direct(void **state)
{
	static char w[4096] __attribute__((aligned(4096)));
	struct blk_mq_ctx *ctx;
	struct blk_dev *dev;
	struct iovec iov = { w, sizeof(w) };
	char p[256];

	snprintf(p, sizeof(p), "%s/direct.img", dir);
	dev = open_dev(p, 1 << 20, true, 0);
	assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
	memset(w, 7, sizeof(w));
	assert_int_equal(io(ctx, BLK_OP_WRITE, 8192, &iov, 1, 4096, 0), BLK_STS_OK);
	assert_int_equal(io(ctx, BLK_OP_READ, 8192, &iov, 1, 4096, 0), BLK_STS_OK);
	blk_ctx_detach(ctx);
	blk_dev_close(dev);
}

static void test_setup_errors(void **state)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/missing.img", dir);
	open_dev(p, 0, false, -ENOENT);         /* missing, no size */
	open_dev(dir, 0, false, -EISDIR);        /* a directory */
	open_dev("/dev/null", 0, false, -EINVAL); /* a character device */
	open_dev("", 0, false, -EINVAL);
	snprintf(p, sizeof(p), "%s/empty.img", dir);
	close(open(p, O_CREAT | O_WRONLY, 0644));
	open_dev(p, 0, false, -EINVAL);          /* empty, no size */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_roundtrip),
		cmocka_unit_test(test_discard_and_write_zeroes),
		cmocka_unit_test(test_read_past_eof_of_truncated_file_is_error),
		cmocka_unit_test(test_direct),
		cmocka_unit_test(test_setup_errors),
		cmocka_unit_test(test_ioprio_in_sqe),
	};

	int failed = cmocka_run_group_tests_name("io_uring", tests, setup_dir,
						 teardown_dir);

	return failed + cmocka_run_group_tests_name("pool", tests, setup_pool,
						    teardown_dir);
}
