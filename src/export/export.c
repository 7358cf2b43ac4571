// SPDX-License-Identifier: MIT
/* The pieces the NBD and iSCSI servers share (export.h). */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "export.h"

int export_listen_tcp(const char *host, const char *port, int backlog,
		      struct sockaddr_storage *bound, char *why, size_t whylen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *res, *ai;
	socklen_t sl = sizeof(*bound);
	int fd = -1, ret, one = 1;

	ret = getaddrinfo(host, port, &hints, &res);
	if (ret) {
		snprintf(why, whylen, "%s", gai_strerror(ret));
		return -EINVAL;
	}
	ret = -EADDRNOTAVAIL;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			ret = -errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, backlog))
			break;
		ret = -errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(why, whylen, "cannot listen: %s", strerror(-ret));
		return ret;
	}
	memset(bound, 0, sizeof(*bound));
	getsockname(fd, (struct sockaddr *)bound, &sl);
	return fd;
}

void export_cond_init(pthread_cond_t *cond)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(cond, &a);
	pthread_condattr_destroy(&a);
}

void export_cond_wait_ms(pthread_cond_t *cond, pthread_mutex_t *m,
			 unsigned int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_cond_timedwait(cond, m, &ts);
}

unsigned int export_sockaddr_port(const struct sockaddr_storage *ss)
{
	return ntohs(ss->ss_family == AF_INET6 ?
		     ((const struct sockaddr_in6 *)ss)->sin6_port :
		     ((const struct sockaddr_in *)ss)->sin_port);
}

static void flush_end_io(struct blk_bio *bio)
{
	*(int *)bio->bi_private = 1;
}

const char *export_dev_flush(struct blk_dev *dev)
{
	struct blk_dev_info info;
	struct blk_mq_ctx *ctx;
	int done = 0;
	struct blk_bio bio = { .bi_op = BLK_OP_FLUSH, .bi_end_io = flush_end_io,
			       .bi_private = &done };

	blk_dev_get_info(dev, &info);
	if (!info.can_flush)
		return "nothing to flush";
	if (blk_ctx_attach(dev, &ctx))
		return "flush failed: no queue";
	if (!blk_submit(ctx, &bio))
		blk_drain(ctx, 0);
	blk_ctx_detach(ctx);
	return !done ? "flush failed: not submitted" :
	       bio.bi_status ? "flush failed" : "flushed";
}

int export_sendmsg_all(int fd, struct msghdr *mh, uint64_t *tx_bytes)
{
	for (;;) {
		ssize_t n;

		while (mh->msg_iovlen && !mh->msg_iov->iov_len) {
			mh->msg_iov++;
			mh->msg_iovlen--;
		}
		if (!mh->msg_iovlen)
			return 0;
		n = sendmsg(fd, mh, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		*tx_bytes += (uint64_t)n;
		while (n && mh->msg_iovlen) {
			if ((size_t)n >= mh->msg_iov->iov_len) {
				n -= (ssize_t)mh->msg_iov->iov_len;
				mh->msg_iov++;
				mh->msg_iovlen--;
			} else {
				mh->msg_iov->iov_base = (uint8_t *)mh->msg_iov->iov_base + n;
				mh->msg_iov->iov_len -= (size_t)n;
				n = 0;
			}
		}
	}
}
