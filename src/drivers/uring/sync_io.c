// SPDX-License-Identifier: MIT
/*
 * uring driver: one request performed with blocking system calls
 * (uring_sync_rq(), the thread pool's whole I/O path), and the errno to
 * blk_status_t mapping both engines share.
 *
 * The semantics are the io_uring engine's (docs/uring.md, "Operations"):
 * short transfers continue from the byte where they stopped, EINTR and
 * EAGAIN are retried, a read that meets the end of the file is an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "uring_int.h"

blk_status_t uring_errno_status(struct uring_dev *ud, struct request *rq,
				int err)
{
	switch (err) {
	case -ECANCELED:
		/* the ring path cancelled it after repeated timeouts */
		return BLK_STS_TIMEOUT;
	case -ENOSPC:
	case -EDQUOT:
		return BLK_STS_NOSPC;
	case -EOPNOTSUPP:
		return BLK_STS_NOTSUPP;
	case -EINVAL:
		/* workers of several queues may fail at once: print once */
		if (ud->cfg.direct &&
		    !__atomic_exchange_n(&ud->warned_einval, true, __ATOMIC_RELAXED))
			fprintf(stderr,
				"blkstack: uring: %s: EINVAL for %u bytes at offset %llu: "
				"with direct=1 the offset, the length and the buffer address "
				"must be multiples of the file system's O_DIRECT alignment "
				"(logical_block_size=%u here)\n",
				ud->path, rq->data_len,
				(unsigned long long)rq->offset, ud->lbs);
		return BLK_STS_INVAL;
	default:
		return BLK_STS_IOERR;
	}
}

/* Block devices: discard and zeroout are ioctls. */
blk_status_t uring_bdev_zero(struct uring_dev *ud, struct request *rq)
{
	uint64_t range[2] = { rq->offset, rq->data_len };
	unsigned long req = rq->op == BLK_OP_DISCARD ? BLKDISCARD : BLKZEROOUT;
	int ret;

	do
		ret = ioctl(ud->fd, req, range);
	while (ret && errno == EINTR);
	if (ret == 0)
		return BLK_STS_OK;
	return errno == EOPNOTSUPP ? BLK_STS_NOTSUPP : BLK_STS_IOERR;
}

/* Drop the first @n bytes of the iovec array *@iov (*@cnt entries). */
static void iov_advance(struct iovec **iov, unsigned int *cnt, size_t n)
{
	while (n && *cnt) {
		if (n < (*iov)->iov_len) {
			(*iov)->iov_base = (char *)(*iov)->iov_base + n;
			(*iov)->iov_len -= n;
			return;
		}
		n -= (*iov)->iov_len;
		(*iov)++;
		(*cnt)--;
	}
}

static blk_status_t sync_rw(struct uring_dev *ud, struct request *rq)
{
	struct uring_cmd *cmd = blk_mq_rq_to_pdu(rq);
	bool wr = rq->op == BLK_OP_WRITE;
	int flags = wr && (rq->cmd_flags & BLK_BIO_FUA) ? RWF_DSYNC : 0;
	struct iovec *iov = cmd->iov;
	unsigned int cnt = uring_build_iov(rq, cmd, 0);
	uint64_t off = rq->offset, left = rq->data_len;
	bool sync_after = false;

	while (left) {
		/* more than IOV_MAX segments: the rest is a short transfer */
		int n = cnt > IOV_MAX ? IOV_MAX : (int)cnt;
		ssize_t r;

		r = wr ? pwritev2(ud->fd, iov, n, (off_t)off, flags) :
			 preadv2(ud->fd, iov, n, (off_t)off, 0);
		if (unlikely(r < 0)) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			if (errno == EOPNOTSUPP && flags) {
				/* no RWF_DSYNC (before 4.7): write, then fdatasync */
				flags = 0;
				sync_after = true;
				continue;
			}
			return uring_errno_status(ud, rq, -errno);
		}
		if (unlikely(r == 0))
			/* end of file inside the device: an error, not zeros */
			return wr ? BLK_STS_IOERR :
			       uring_eof(ud, rq, (uint32_t)(rq->data_len - left));
		off += (uint64_t)r;
		left -= (uint64_t)r < left ? (uint64_t)r : left;
		iov_advance(&iov, &cnt, (size_t)r);
	}
	if (sync_after) {
		while (fdatasync(ud->fd))
			if (errno != EINTR)
				return uring_errno_status(ud, rq, -errno);
	}
	return BLK_STS_OK;
}

blk_status_t uring_eof(struct uring_dev *ud, struct request *rq, uint32_t done)
{
	struct uring_cmd *cmd = blk_mq_rq_to_pdu(rq);
	unsigned int i, n;

	if (!ud->cfg.create_empty || rq->op != BLK_OP_READ)
		return BLK_STS_IOERR;
	n = uring_build_iov(rq, cmd, done);
	for (i = 0; i < n; i++)
		memset(cmd->iov[i].iov_base, 0, cmd->iov[i].iov_len);
	return BLK_STS_OK;
}

/* Files: DISCARD punches a hole; WRITE_ZEROES zeroes the range in place. */
static blk_status_t sync_fallocate(struct uring_dev *ud, struct request *rq)
{
	bool punch = rq->op == BLK_OP_DISCARD ||
		     !__atomic_load_n(&ud->zero_range_ok, __ATOMIC_RELAXED);
	int ret;

	for (;;) {
		int mode = (punch ? FALLOC_FL_PUNCH_HOLE : FALLOC_FL_ZERO_RANGE) |
			   FALLOC_FL_KEEP_SIZE;

		ret = fallocate(ud->fd, mode, (off_t)rq->offset,
				(off_t)rq->data_len);
		if (ret == 0)
			return BLK_STS_OK;
		if (errno == EINTR || errno == EAGAIN)
			continue;
		if (errno == EOPNOTSUPP && !punch) {
			/* no ZERO_RANGE on this file system (tmpfs): punch */
			__atomic_store_n(&ud->zero_range_ok, false, __ATOMIC_RELAXED);
			punch = true;
			continue;
		}
		return uring_errno_status(ud, rq, -errno);
	}
}

blk_status_t uring_sync_rq(struct uring_dev *ud, struct request *rq)
{
	switch (rq->op) {
	case BLK_OP_READ:
	case BLK_OP_WRITE:
		return sync_rw(ud, rq);
	case BLK_OP_FLUSH:
		while (fdatasync(ud->fd))
			if (errno != EINTR)
				return uring_errno_status(ud, rq, -errno);
		return BLK_STS_OK;
	case BLK_OP_DISCARD:
	case BLK_OP_WRITE_ZEROES:
		if (ud->is_bdev)
			return uring_bdev_zero(ud, rq);
		return sync_fallocate(ud, rq);
	default:
		return BLK_STS_NOTSUPP;
	}
}
