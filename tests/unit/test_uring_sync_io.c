// SPDX-License-Identifier: MIT
/*
 * uring_sync_rq() (src/drivers/uring/sync_io.c) on temporary files,
 * called directly with hand-built requests, as both engines call it:
 * a write over two bios read back through other iovec boundaries, FUA and
 * flush, a request with more segments than one preadv2 takes (IOV_MAX:
 * the rest continues as after a short transfer), discard punching a hole,
 * write zeroes on ext4 (ZERO_RANGE) and tmpfs (the hole-punch fallback),
 * reads that reach the end of the file (an error, never zeros), an
 * O_DIRECT EINVAL mapped to BLK_STS_INVAL, and errors from the fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "drivers/uring/uring_int.h"

#define MAX_SEGS 1100

static char dir[] = "/tmp/blkstack-sync-io-XXXXXX";

static int setup_dir(void **state)
{
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* A device over @path of @size bytes (created), opened with @flags. */
static struct uring_dev *dev_open(const char *path, off_t size, int flags)
{
	struct uring_dev *ud = calloc(1, sizeof(*ud));

	assert_non_null(ud);
	snprintf(ud->path, sizeof(ud->path), "%s", path);
	ud->fd = open(path, O_RDWR | O_CREAT | flags, 0644);
	assert_true(ud->fd >= 0);
	assert_int_equal(ftruncate(ud->fd, size), 0);
	ud->cfg.direct = flags & O_DIRECT;
	ud->zero_range_ok = true;
	ud->lbs = 512;
	return ud;
}

static void dev_close(struct uring_dev *ud)
{
	close(ud->fd);
	unlink(ud->path);
	free(ud);
}

/* A request with its struct uring_cmd and room for MAX_SEGS iovecs. */
static struct request *rq_alloc(void)
{
	size_t len = sizeof(struct request) + sizeof(struct uring_cmd) +
		     MAX_SEGS * sizeof(struct iovec);
	struct request *rq = aligned_alloc(64, (len + 63) & ~(size_t)63);

	assert_non_null(rq);
	memset(rq, 0, len);
	return rq;
}

/* Fill @rq from @nb bios of the op, each over its own iovecs. */
static void rq_set(struct request *rq, unsigned int op, uint64_t off,
		   uint8_t flags, struct blk_bio *bios, unsigned int nb)
{
	unsigned int i;

	rq->op = (uint8_t)op;
	rq->offset = off;
	rq->cmd_flags = flags;
	rq->data_len = 0;
	rq->bio = nb ? &bios[0] : NULL;
	for (i = 0; i < nb; i++) {
		bios[i].bi_next = i + 1 < nb ? &bios[i + 1] : NULL;
		rq->data_len += bios[i].bi_size;
	}
	rq->biotail = nb ? &bios[nb - 1] : NULL;
}

static void bio_set(struct blk_bio *b, const struct iovec *iov,
		    unsigned int cnt)
{
	unsigned int i;

	memset(b, 0, sizeof(*b));
	b->bi_io_vec = iov;
	b->bi_vcnt = (uint16_t)cnt;
	for (i = 0; i < cnt; i++)
		b->bi_size += (uint32_t)iov[i].iov_len;
}

/* One op on [off, off + len) with no data (flush, discard, write zeroes). */
static blk_status_t do_nodata(struct uring_dev *ud, unsigned int op,
			      uint64_t off, uint32_t len)
{
	struct request *rq = rq_alloc();
	blk_status_t st;

	rq_set(rq, op, off, 0, NULL, 0);
	rq->data_len = len;
	st = uring_sync_rq(ud, rq);
	free(rq);
	return st;
}

/* One buffer, one bio. */
static blk_status_t do_rw(struct uring_dev *ud, unsigned int op, uint64_t off,
			  void *buf, uint32_t len, uint8_t flags)
{
	struct request *rq = rq_alloc();
	struct iovec iov = { buf, len };
	struct blk_bio b;
	blk_status_t st;

	bio_set(&b, &iov, 1);
	rq_set(rq, op, off, flags, &b, 1);
	st = uring_sync_rq(ud, rq);
	free(rq);
	return st;
}

static void test_rw_two_bios(void **state)
{
	static char w[3 * 4096], r[3 * 4096];
	struct iovec wv[3], rv[2];
	struct blk_bio bios[2];
	struct request *rq = rq_alloc();
	struct uring_dev *ud;
	char p[300];
	unsigned int i;

	snprintf(p, sizeof(p), "%s/rw.img", dir);
	ud = dev_open(p, 1 << 20, 0);
	for (i = 0; i < sizeof(w); i++)
		w[i] = (char)(i * 7 + 3);
	/* bio 0: 4096 + 1024 bytes; bio 1: the remaining 7168 */
	wv[0] = (struct iovec){ w, 4096 };
	wv[1] = (struct iovec){ w + 4096, 1024 };
	wv[2] = (struct iovec){ w + 5120, sizeof(w) - 5120 };
	bio_set(&bios[0], wv, 2);
	bio_set(&bios[1], wv + 2, 1);
	rq_set(rq, BLK_OP_WRITE, 65536, 0, bios, 2);
	assert_int_equal(uring_sync_rq(ud, rq), BLK_STS_OK);
	/* the file holds exactly the bytes, at the offset */
	assert_int_equal(pread(ud->fd, r, sizeof(r), 65536), (ssize_t)sizeof(r));
	assert_memory_equal(w, r, sizeof(w));
	/* read back through other boundaries: 512, then the rest */
	memset(r, 0, sizeof(r));
	rv[0] = (struct iovec){ r, 512 };
	rv[1] = (struct iovec){ r + 512, sizeof(r) - 512 };
	bio_set(&bios[0], rv, 2);
	rq_set(rq, BLK_OP_READ, 65536, 0, bios, 1);
	assert_int_equal(uring_sync_rq(ud, rq), BLK_STS_OK);
	assert_memory_equal(w, r, sizeof(w));
	/* FUA write, then a flush */
	assert_int_equal(do_rw(ud, BLK_OP_WRITE, 0, w, 4096, BLK_BIO_FUA), BLK_STS_OK);
	assert_int_equal(pread(ud->fd, r, 4096, 0), 4096);
	assert_memory_equal(w, r, 4096);
	assert_int_equal(do_nodata(ud, BLK_OP_FLUSH, 0, 0), BLK_STS_OK);
	/* an op the driver does not know */
	assert_int_equal(do_nodata(ud, 4, 0, 512), BLK_STS_NOTSUPP);
	free(rq);
	dev_close(ud);
}

/*
 * More segments than one preadv2/pwritev2 accepts: the first call moves
 * IOV_MAX of them and the loop continues from there, as after a short
 * transfer.
 */
static void test_more_segments_than_iov_max(void **state)
{
	static char w[MAX_SEGS * 512], r[MAX_SEGS * 512];
	static struct iovec v[MAX_SEGS];
	struct request *rq = rq_alloc();
	struct uring_dev *ud;
	struct blk_bio b;
	char p[300];
	unsigned int i;

	assert_true(MAX_SEGS > IOV_MAX);
	snprintf(p, sizeof(p), "%s/segs.img", dir);
	ud = dev_open(p, 1 << 20, 0);
	for (i = 0; i < sizeof(w); i++)
		w[i] = (char)(i / 512 + i);
	for (i = 0; i < MAX_SEGS; i++)
		v[i] = (struct iovec){ w + i * 512, 512 };
	bio_set(&b, v, MAX_SEGS);
	rq_set(rq, BLK_OP_WRITE, 4096, 0, &b, 1);
	assert_int_equal(uring_sync_rq(ud, rq), BLK_STS_OK);
	assert_int_equal(pread(ud->fd, r, sizeof(r), 4096), (ssize_t)sizeof(r));
	assert_memory_equal(w, r, sizeof(w));
	memset(r, 0, sizeof(r));
	for (i = 0; i < MAX_SEGS; i++)
		v[i] = (struct iovec){ r + i * 512, 512 };
	rq_set(rq, BLK_OP_READ, 4096, 0, &b, 1);
	assert_int_equal(uring_sync_rq(ud, rq), BLK_STS_OK);
	assert_memory_equal(w, r, sizeof(w));
	free(rq);
	dev_close(ud);
}

/* DISCARD punches a hole; WRITE_ZEROES zeroes, on ext4 and on tmpfs. */
static void test_discard_and_write_zeroes(void **state)
{
	const char *dirs[2] = { dir, "/dev/shm" };
	static char w[1 << 20], r[1 << 20];
	unsigned int d, i;

	memset(w, 0xab, sizeof(w));
	for (d = 0; d < 2; d++) {
		struct uring_dev *ud;
		struct stat st0, st1;
		char p[300];

		snprintf(p, sizeof(p), "%s/z-%d.img", dirs[d], (int)getpid());
		ud = dev_open(p, 4 << 20, 0);
		assert_int_equal(do_rw(ud, BLK_OP_WRITE, 0, w, sizeof(w), 0), BLK_STS_OK);
		assert_int_equal(fsync(ud->fd), 0);
		assert_int_equal(fstat(ud->fd, &st0), 0);
		assert_int_equal(do_nodata(ud, BLK_OP_DISCARD, 512 << 10, 512 << 10),
				 BLK_STS_OK);
		assert_int_equal(fstat(ud->fd, &st1), 0);
		assert_true(st1.st_blocks < st0.st_blocks);
		assert_int_equal(st1.st_size, 4 << 20); /* KEEP_SIZE */
		assert_int_equal(do_nodata(ud, BLK_OP_WRITE_ZEROES, 4096, 4096),
				 BLK_STS_OK);
		/* tmpfs has no ZERO_RANGE: the device remembers and punches */
		assert_int_equal(ud->zero_range_ok, d == 0);
		assert_int_equal(do_rw(ud, BLK_OP_READ, 0, r, sizeof(r), 0), BLK_STS_OK);
		for (i = 0; i < sizeof(r); i++) {
			int zero = (i >= 4096 && i < 8192) || i >= (512 << 10);

			if ((unsigned char)r[i] != (zero ? 0 : 0xab))
				fail_msg("%s: byte %u is 0x%02x", p, i,
					 (unsigned char)r[i]);
		}
		/* write zeroes past the end of the file: KEEP_SIZE, no growth */
		assert_int_equal(do_nodata(ud, BLK_OP_WRITE_ZEROES, 4 << 20, 4096),
				 BLK_STS_OK);
		assert_int_equal(fstat(ud->fd, &st1), 0);
		assert_int_equal(st1.st_size, 4 << 20);
		dev_close(ud);
	}
}

/* Regression guard: a read reaching EOF fails; it never returns zeros. */
static void test_read_past_eof_is_error(void **state)
{
	static char r[8192];
	struct uring_dev *ud;
	char p[300];

	snprintf(p, sizeof(p), "%s/eof.img", dir);
	ud = dev_open(p, 1 << 20, 0);
	/* the file shrinks under the device by 4 KiB */
	assert_int_equal(ftruncate(ud->fd, (1 << 20) - 4096), 0);
	memset(r, 0x55, sizeof(r));
	/* the first 4 KiB come back (a short read), then EOF: an error */
	assert_int_equal(do_rw(ud, BLK_OP_READ, (1 << 20) - 8192, r, sizeof(r), 0),
			 BLK_STS_IOERR);
	assert_int_equal(r[0], 0);
	/* wholly past the end */
	assert_int_equal(do_rw(ud, BLK_OP_READ, 1 << 20, r, 4096, 0), BLK_STS_IOERR);
	/* inside the file still works */
	assert_int_equal(do_rw(ud, BLK_OP_READ, 0, r, 4096, 0), BLK_STS_OK);
	dev_close(ud);
}

/* errno mapping: O_DIRECT misalignment is INVAL; a read-only fd is IOERR. */
static void test_errors(void **state)
{
	static char buf[8192] __attribute__((aligned(4096)));
	struct uring_dev *ud;
	char p[300];
	int fd;

	snprintf(p, sizeof(p), "%s/direct.img", dir);
	ud = dev_open(p, 1 << 20, 0);
	fd = open(p, O_RDWR | O_DIRECT);
	if (fd < 0) {
		dev_close(ud);
		skip(); /* the file system refuses O_DIRECT */
	}
	close(ud->fd);
	ud->fd = fd;
	ud->cfg.direct = true;
	/* data, not a hole: holes are read without the alignment check */
	assert_int_equal(do_rw(ud, BLK_OP_WRITE, 0, buf, 8192, 0), BLK_STS_OK);
	/* an offset off the O_DIRECT alignment: EINVAL, printed once */
	assert_int_equal(do_rw(ud, BLK_OP_READ, 100, buf, 4096, 0), BLK_STS_INVAL);
	assert_true(ud->warned_einval);
	assert_int_equal(do_rw(ud, BLK_OP_READ, 0, buf, 4096, 0), BLK_STS_OK);
	/* a descriptor that cannot write: EBADF, an I/O error */
	close(ud->fd);
	ud->fd = open(p, O_RDONLY);
	assert_true(ud->fd >= 0);
	assert_int_equal(do_rw(ud, BLK_OP_WRITE, 0, buf, 4096, 0), BLK_STS_IOERR);
	assert_int_not_equal(do_nodata(ud, BLK_OP_DISCARD, 0, 4096), BLK_STS_OK);
	dev_close(ud);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rw_two_bios),
		cmocka_unit_test(test_more_segments_than_iov_max),
		cmocka_unit_test(test_discard_and_write_zeroes),
		cmocka_unit_test(test_read_past_eof_is_error),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
