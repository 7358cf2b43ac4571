/* SPDX-License-Identifier: MIT */
/*
 * What the NBD and iSCSI servers (src/export/nbd/, src/export/iscsi/) and
 * the metrics endpoint (src/export/metrics/) share: a listening TCP
 * socket, the device flush at a stop, and a blocking send of a whole
 * message.  Not installed.
 */
#ifndef BLKSTACK_EXPORT_H
#define BLKSTACK_EXPORT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>

#include "blkstack/blk.h"

/*
 * export_dev_flush() - flush @dev once no connection uses it (a server's
 * stop): writes acknowledged without FUA reach stable storage before the
 * process exits.
 * Return: a word for the stop's log line: "flushed", "nothing to flush"
 * (no volatile cache), or "flush failed..." with why.
 * Context: any thread that holds no ctx of @dev; blocks until the flush ends.
 */
const char *export_dev_flush(struct blk_dev *dev);

/*
 * export_sendmsg_all() - send all of @mh's iovecs on blocking socket @fd
 * (empty iovecs skipped; @mh's iovec array is advanced in place), adding
 * what went out to *@tx_bytes.
 * Return: 0; -errno from sendmsg() (EINTR retried); the socket's
 * SO_SNDTIMEO bounds a peer that stops reading (-EAGAIN).
 * Context: the connection's thread.
 */
int export_sendmsg_all(int fd, struct msghdr *mh, uint64_t *tx_bytes);

/*
 * export_listen_tcp() - a listening TCP socket on @host (numeric or a
 * name; brackets of an IPv6 literal already removed) and @port (decimal
 * 0..65535, checked by the caller: 0 picks a free one), the first address
 * getaddrinfo() gives that binds, with SO_REUSEADDR and close-on-exec, and
 * @backlog connections waiting at most.
 * @bound: set to the address it listens on (getsockname()).
 * @why, @whylen: on failure, why (getaddrinfo()'s or the socket's words),
 *	for the caller to put behind the option it parses.
 * Return: the socket (>= 0); -EINVAL (the name does not resolve); -errno
 * of the last socket(), bind() or listen() tried (-EADDRINUSE, ...).
 * Context: any thread.
 */
int export_listen_tcp(const char *host, const char *port, int backlog,
		      struct sockaddr_storage *bound, char *why, size_t whylen);

/* export_sockaddr_port() - the port of @ss (AF_INET or AF_INET6), host order. */
unsigned int export_sockaddr_port(const struct sockaddr_storage *ss);

/*
 * export_cond_init() - initialize @cond for export_cond_wait_ms(): its
 * timed waits on CLOCK_MONOTONIC, so that a step of the wall clock (NTP,
 * a VM resumed) neither stretches nor cuts them.  Cannot fail (glibc's
 * pthread_cond_init() and its attribute calls return 0 for these).
 * Context: any thread, before @cond is used.
 */
void export_cond_init(pthread_cond_t *cond);

/*
 * export_cond_wait_ms() - wait on @cond (from export_cond_init(), with @m
 * held, as pthread_cond_timedwait() wants) for at most @ms milliseconds
 * of CLOCK_MONOTONIC: the servers' bounded waits for connections to leave.
 * Context: the thread that holds @m; returns with it held.
 */
void export_cond_wait_ms(pthread_cond_t *cond, pthread_mutex_t *m,
			 unsigned int ms);

#endif /* BLKSTACK_EXPORT_H */
