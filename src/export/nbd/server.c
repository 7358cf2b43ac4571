// SPDX-License-Identifier: MIT
/*
 * NBD server: listening sockets, one thread per connection - see
 * blkstack/nbd.h.  The protocol lives in handshake.c and transmission.c;
 * this file only moves bytes and decides when to wait.
 *
 * Waiting: the connection's socket is nonblocking.  While the device has
 * requests of this connection in flight (uring completes asynchronously)
 * the thread waits in ppoll() for at most BUSY_WAIT_NS before polling the
 * device again; when nothing is in flight it sleeps in recv() on the
 * socket (SO_RCVTIMEO IDLE_WAIT_MS, to check for shutdown), after
 * spinning for --spin-us, or, when its client is at queue depth, sleeps on
 * a timer first and reads the batch that gathered (request coalescing,
 * coalesce.h).  ram and null complete inline, so their replies leave in
 * the same loop turn as the requests arrived.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "blkstack/lock.h"
#include "blkstack/metrics.h"
#include "blkstack/nbd.h"
#include "coalesce.h"
#include "../export.h"

#define IDLE_WAIT_MS 100
#define BUSY_WAIT_NS 20000
#define HANDSHAKE_IDLE_MS 30000     /* a silent client in the handshake */
#define HANDSHAKE_LIMIT_MS 30000    /* the whole handshake (slowloris) */
#define HANDSHAKE_STOP_MS 1000      /* a handshake still talking at stop */
#define STOP_GRACE_MS 10000         /* shutdown: wait this long for clients */
#define TX_IOV 256

struct blk_nbd_server {
	struct blk_nbd_server_config cfg;
	int tcp_fd, unix_fd;
	unsigned int port;
	char unix_path[108];
	dev_t unix_dev;                 /* our socket file, to unlink only it */
	ino_t unix_ino;
	int *stop;
	struct blk_mutex lock;
	pthread_cond_t cond;
	/*
	 * connections; changed under @lock, and read without it (relaxed) by
	 * connection threads deciding whether to spin: a stale count only
	 * changes one spin-or-sleep choice
	 */
	unsigned int active;
	unsigned int ncpu;
	unsigned long next_id;
	FILE *log;
};

static inline int stop_flag(const struct blk_nbd_server *srv)
{
	return __atomic_load_n(srv->stop, __ATOMIC_ACQUIRE);
}

struct nbd_client {
	struct blk_nbd_server *srv;
	int fd;
	unsigned long id;
	char peer[80];
	bool unix_peer;                 /* AF_UNIX (else TCP) */
	uint64_t rx_bytes, tx_bytes;
	struct blk_nbd_coalesce co;
	uint64_t hs_deadline;           /* now_ms() the handshake must end by */
	uint64_t stop_seen;             /* now_ms() the handshake saw the stop */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------- handshake I/O */

static bool cl_stopping(void *opaque)
{
	struct nbd_client *cl = opaque;

	return stop_flag(cl->srv) != 0;
}

static int cl_recv(void *opaque, void *buf, size_t len)
{
	struct nbd_client *cl = opaque;
	uint64_t idle_since = now_ms();

	while (len) {
		struct pollfd pfd = { .fd = cl->fd, .events = POLLIN };
		ssize_t n;
		int r;

		/*
		 * A client that keeps sending, however slowly, is never idle:
		 * bound the whole handshake, and the time it may go on once
		 * the server stops (enough to finish an option and get
		 * NBD_REP_ERR_SHUTDOWN), or it holds a connection slot, or
		 * the stop, for as long as it likes.
		 */
		if (cl_stopping(cl)) {
			if (!cl->stop_seen)
				cl->stop_seen = now_ms();
			else if (now_ms() - cl->stop_seen > HANDSHAKE_STOP_MS)
				return -ESHUTDOWN;
		}
		if (now_ms() > cl->hs_deadline)
			return -ETIMEDOUT;
		r = poll(&pfd, 1, IDLE_WAIT_MS);

		if (r < 0 && errno != EINTR)
			return -errno;
		if (r <= 0) {
			if (cl_stopping(cl))
				return -ESHUTDOWN;
			if (now_ms() - idle_since > HANDSHAKE_IDLE_MS)
				return -ETIMEDOUT;
			continue;
		}
		n = recv(cl->fd, buf, len, 0);
		if (n == 0)
			return -EPIPE;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		cl->rx_bytes += (uint64_t)n;
		buf = (uint8_t *)buf + n;
		len -= (size_t)n;
		idle_since = now_ms();
	}
	return 0;
}

static int cl_send(void *opaque, const struct iovec *iov, int iovcnt)
{
	struct nbd_client *cl = opaque;
	struct iovec v[4];
	struct msghdr mh = { .msg_iov = v };
	int i, cnt = 0;

	for (i = 0; i < iovcnt && cnt < 4; i++)
		if (iov[i].iov_len)
			v[cnt++] = iov[i];
	mh.msg_iovlen = (size_t)cnt;
	/* SO_SNDTIMEO bounds a stuck client */
	return export_sendmsg_all(cl->fd, &mh, &cl->tx_bytes);
}

/* ------------------------------------------------------- transmission */

/* Send what the engine has queued; -errno when the peer is gone. */
static int tx_flush(struct nbd_client *cl, struct blk_nbd_conn *conn)
{
	struct iovec iov[TX_IOV];

	for (;;) {
		struct msghdr mh = { .msg_iov = iov };
		int n = blk_nbd_conn_tx_iov(conn, iov, TX_IOV);
		ssize_t sent;

		if (!n)
			return 0;
		mh.msg_iovlen = (size_t)n;
		sent = sendmsg(cl->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (sent < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			return -errno;
		}
		cl->tx_bytes += (uint64_t)sent;
		blk_nbd_conn_tx_done(conn, (size_t)sent);
	}
}

static void tv_set(int fd, int opt, unsigned int ms);

/* connections right now, read without the lock (see struct blk_nbd_server) */
static inline unsigned int active_conns(const struct blk_nbd_server *srv)
{
	return __atomic_load_n(&srv->active, __ATOMIC_RELAXED);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Busy-wait up to @ns for device completions of @conn (NULL: none owed)
 * and, when there is @room, for bytes on @fd (MSG_PEEK, nonblocking): a
 * client at queue depth sends its next request within microseconds of a
 * reply, and catching it awake saves a sleep and a wake-up on both sides
 * (the client's send() pays for waking the server).  Return: true when a
 * completion or request arrived.
 */
static bool spin(int fd, struct blk_nbd_conn *conn, size_t room, uint64_t ns)
{
	uint64_t end = now_ns() + ns;
	char b;

	do {
		if (conn && blk_nbd_conn_poll(conn) > 0)
			return true;
		if (room && recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 1)
			return true;
	} while (now_ns() < end);
	return false;
}

/*
 * recv() that also reports when the newest of the bytes it returned
 * arrived (SO_TIMESTAMPNS, CLOCK_REALTIME ns; 0 when the kernel gave no
 * timestamp).
 */
static ssize_t recv_stamped(int fd, void *buf, size_t len, int flags,
			    uint64_t *arrived_ns)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct timespec))];
		struct cmsghdr align;
	} ctl;
	struct iovec v = { buf, len };
	struct msghdr mh = { .msg_iov = &v, .msg_iovlen = 1,
			     .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;
	ssize_t n = recvmsg(fd, &mh, flags);

	for (c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
			struct timespec ts;

			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			*arrived_ns = (uint64_t)ts.tv_sec * 1000000000ull +
				      (uint64_t)ts.tv_nsec;
		}
	}
	return n;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const char *transmit(struct nbd_client *cl,
			    const struct blk_nbd_export *exp,
			    const struct blk_nbd_session *s)
{
	struct blk_nbd_server *srv = cl->srv;
	struct blk_nbd_conn *conn;
	struct blk_metrics_conn *mc;
	const char *why = NULL;
	bool eof = false;
	struct iovec eof_v;
	uint64_t stop_ms = 0, spin_ns = srv->cfg.spin_us * 1000ull;
	unsigned int batch = 0; /* requests received in the last turn */
	uint64_t rx0;
	bool tcp, tcp_stamps = true;
	int ret, one = 1, sndbuf = 0;
	socklen_t sl = sizeof(sndbuf);

	ret = blk_nbd_conn_create(exp, s, srv->cfg.max_inflight, &conn);
	if (ret)
		return ret == -EBUSY ? "no free hardware queue" : "out of memory";
	if (blk_metrics_conn_open(exp->metrics, BLK_METRICS_NBD, cl->id,
				  cl->peer, &mc)) {
		blk_nbd_conn_destroy(conn);
		return "out of memory";
	}
	blk_nbd_conn_set_metrics(conn, mc);
	/*
	 * The socket stays blocking with a receive timeout: when nothing is
	 * in flight the thread sleeps in recv() itself (one system call per
	 * request batch instead of poll() + recv()); sends never block
	 * (MSG_DONTWAIT) and a backed-up client is waited for with poll().
	 */
	tv_set(cl->fd, SO_RCVTIMEO, IDLE_WAIT_MS);
	setsockopt(cl->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

	if (getsockopt(cl->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &sl) || sndbuf <= 0)
		sndbuf = 212992;
	/*
	 * Whether the client ran out of work during a coalescing sleep: a
	 * Unix socket says if it read every reply (SIOCOUTQ); over TCP that
	 * counts unacknowledged bytes instead, so the receive timestamps say
	 * when its requests stopped coming.
	 */
	tcp = !cl->unix_peer;
	if (tcp && srv->cfg.coalesce_us &&
	    setsockopt(cl->fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)))
		tcp_stamps = false;
	blk_nbd_coalesce_init(&cl->co, tcp && !tcp_stamps ? 0 : srv->cfg.coalesce_us);
	for (;;) {
		void *buf;
		size_t room;
		int rflags = MSG_DONTWAIT;
		uint64_t nreq, slept = 0, co_ns, woke_rt = 0, last_rt = 0;
		bool drained = false;
		int unread;

		if (stop_flag(srv) && !stop_ms) {
			stop_ms = now_ms();
			blk_nbd_conn_shutdown(conn);
		}
		if (stop_ms && now_ms() - stop_ms > STOP_GRACE_MS) {
			why = "server stopping: client does not read its replies";
			goto out;
		}
		blk_nbd_conn_poll(conn);
		if (tx_flush(cl, conn)) {
			why = "client gone (send failed)";
			goto out;
		}
		/*
		 * EOF may be a half-close (shutdown(SHUT_WR)) by a client
		 * still reading: requests already received run and their
		 * replies go out first (a send failure ends it sooner).
		 */
		if (eof && !blk_nbd_conn_dev_busy(conn) &&
		    !blk_nbd_conn_tx_iov(conn, &eof_v, 1)) {
			why = blk_nbd_conn_closing(conn) ? "disconnected" :
			      "client hung up without NBD_CMD_DISC";
			goto out;
		}
		if (blk_nbd_conn_error(conn)) {
			why = "protocol error (bad request magic)";
			goto out;
		}
		if (blk_nbd_conn_closing(conn) && !blk_nbd_conn_inflight(conn)) {
			why = stop_ms ? "server stopping" : "NBD_CMD_DISC";
			goto out;
		}
		room = eof ? 0 : blk_nbd_conn_rx_buf(conn, &buf);
		if (blk_nbd_conn_dev_busy(conn)) {
			/*
			 * The device owes completions (uring: io-wq or the
			 * disk).  Spin on both first: ppoll()'s 20 us is
			 * 100 us on this VM's timers; then wait briefly.
			 */
			struct pollfd pfd = { .fd = cl->fd, .events = POLLIN };
			struct timespec ts = { 0, BUSY_WAIT_NS };

			if (spin_ns && active_conns(srv) < srv->ncpu &&
			    spin(cl->fd, conn, room, spin_ns))
				;
			else if (room)
				ppoll(&pfd, 1, &ts, NULL);
			else
				nanosleep(&ts, NULL);
		} else {
			struct iovec v;

			if (blk_nbd_conn_tx_iov(conn, &v, 1) || !room) {
				struct pollfd pfd = { .fd = cl->fd };

				pfd.events = (room ? POLLIN : 0) |
					     (blk_nbd_conn_tx_iov(conn, &v, 1) ?
					      POLLOUT : 0);
				/* a hang-up is seen here when we do not read */
				if (poll(&pfd, 1, IDLE_WAIT_MS) > 0 && !room &&
				    (pfd.revents & (POLLHUP | POLLERR)))
					eof = true;
			} else if ((co_ns = blk_nbd_coalesce_wait(&cl->co, batch))) {
				/*
				 * The client is at queue depth: let its next
				 * requests gather while it reads our replies
				 * (a timer, so its sends wake nobody).
				 */
				struct timespec ts = { (time_t)(co_ns / 1000000000),
						       (long)(co_ns % 1000000000) };
				uint64_t t0 = now_ns();

				nanosleep(&ts, NULL);
				slept = now_ns() - t0;
				if (!slept)
					slept = 1;
				/* bytes sent that the client has not read yet */
				if (!tcp)
					drained = ioctl(cl->fd, SIOCOUTQ, &unread) ||
						  unread <= 0;
				else
					woke_rt = realtime_ns();
			} else if (spin_ns && active_conns(srv) < srv->ncpu &&
				   spin(cl->fd, NULL, room, spin_ns)) {
				/* the next request came while spinning */
			} else {
				rflags = 0; /* sleep in recv(), up to SO_RCVTIMEO */
			}
		}
		/* receive what the socket holds, as room allows */
		nreq = blk_nbd_conn_requests(conn);
		rx0 = cl->rx_bytes;
		while (!eof && (room = blk_nbd_conn_rx_buf(conn, &buf))) {
			bool idle = !rflags;
			ssize_t n = woke_rt ? recv_stamped(cl->fd, buf, room, rflags, &last_rt) :
					      recv(cl->fd, buf, room, rflags);

			rflags = MSG_DONTWAIT;
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR &&
				       errno != EWOULDBLOCK)) {
				eof = true;
				break;
			}
			if (n < 0) {
				/*
				 * IDLE_WAIT_MS with nothing from the client or
				 * the device: the device's queue is polled all
				 * the same (a network driver's keep-alive).
				 */
				if (idle && errno != EINTR)
					blk_nbd_conn_idle_poll(conn);
				break;
			}
			cl->rx_bytes += (uint64_t)n;
			if (blk_nbd_conn_rx_done(conn, (size_t)n)) {
				why = "protocol error (bad request magic)";
				goto out;
			}
			if ((size_t)n < room)
				break;
		}
		batch = (unsigned int)(blk_nbd_conn_requests(conn) - nreq);
		/*
		 * Requests that filled half a socket buffer while we slept
		 * (writes carry data) may have blocked the client's send():
		 * as good as drained.  Half our own SO_SNDBUF stands in for
		 * the client's (both default to net.core.wmem_default).
		 */
		if (slept && cl->rx_bytes - rx0 >= (uint64_t)sndbuf / 2)
			drained = true;
		/*
		 * TCP: no request (or no timestamp), or requests that stopped
		 * arriving more than one of the client's gaps (and 10 us)
		 * before we woke: it had nothing left to do for a while.
		 */
		if (woke_rt && (!batch || !last_rt ||
				(woke_rt > last_rt + 10000 &&
				 woke_rt - last_rt > slept / batch)))
			drained = true;
		if (slept)
			blk_nbd_coalesce_update(&cl->co, batch, drained);
	}
out:
	blk_nbd_conn_destroy(conn);
	blk_metrics_conn_close(mc);
	return why;
}

static void tv_set(int fd, int opt, unsigned int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };

	setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof(tv));
}

static void *client_thread(void *arg)
{
	struct nbd_client *cl = arg;
	struct blk_nbd_server *srv = cl->srv;
	struct blk_nbd_io io = {
		.opaque = cl, .recv = cl_recv, .send = cl_send,
		.stopping = cl_stopping,
	};
	struct blk_nbd_session s;
	struct timeval tv = { .tv_sec = 10 };
	uint64_t t0 = now_ms();
	const char *why, *name = "-";
	char whybuf[64];
	int ret;

	prctl(PR_SET_TIMERSLACK, 1UL); /* ppoll's 20 us waits stay short */
	setsockopt(cl->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	cl->hs_deadline = t0 + HANDSHAKE_LIMIT_MS;
	ret = blk_nbd_handshake(srv->cfg.exports, srv->cfg.nr_exports, &io, &s);
	if (ret == 0) {
		name = srv->cfg.exports[s.export_idx].name;
		why = transmit(cl, &srv->cfg.exports[s.export_idx], &s);
	} else if (ret == 1) {
		why = "handshake ended by the client";
	} else {
		snprintf(whybuf, sizeof(whybuf), "handshake failed: %s",
			 ret == -EPROTO ? "protocol violation" :
			 ret == -ENOENT ? "unknown export name" :
					  strerror(-ret));
		why = whybuf;
	}
	fprintf(srv->log,
		"nbd: conn %lu %s export '%s' %.3f s rx %llu B tx %llu B "
		"coalesced %llu (client dry %llu): %s\n",
		cl->id, cl->peer, name, (now_ms() - t0) / 1000.0,
		(unsigned long long)cl->rx_bytes,
		(unsigned long long)cl->tx_bytes,
		(unsigned long long)cl->co.sleeps,
		(unsigned long long)cl->co.dry, why ? why : "closed");
	fflush(srv->log);
	close(cl->fd);
	free(cl);
	blk_mutex_lock(&srv->lock);
	__atomic_store_n(&srv->active, srv->active - 1, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&srv->cond);
	blk_mutex_unlock(&srv->lock);
	return NULL;
}

/* ------------------------------------------------------- sockets */

static int listen_tcp(struct blk_nbd_server *srv, const char *addr, char *err,
		      size_t errlen)
{
	char host[256];
	const char *colon = strrchr(addr, ':');
	char why[128];
	struct sockaddr_storage ss;
	size_t hl;
	int fd;

	if (!colon || !colon[1]) {
		snprintf(err, errlen, "--nbd=%s: expected HOST:PORT", addr);
		return -EINVAL;
	}
	hl = (size_t)(colon - addr);
	if (hl >= sizeof(host)) {
		snprintf(err, errlen, "--nbd=%s: host name too long", addr);
		return -EINVAL;
	}
	/*
	 * getaddrinfo() takes a numeric port modulo 65536 (99999 would
	 * listen on 34463): only decimal 0..65535 is a port.
	 */
	if (strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
	    strlen(colon + 1) > 5 || atoi(colon + 1) > 65535) {
		snprintf(err, errlen, "--nbd=%s: port must be 0..65535", addr);
		return -EINVAL;
	}
	memcpy(host, addr, hl);
	host[hl] = 0;
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = 0;
	}
	fd = export_listen_tcp(host[0] ? host : "127.0.0.1", colon + 1, 64, &ss,
			       why, sizeof(why));
	if (fd < 0) {
		snprintf(err, errlen, "--nbd=%s: %s", addr, why);
		return fd;
	}
	srv->port = export_sockaddr_port(&ss);
	srv->tcp_fd = fd;
	return 0;
}

/*
 * Is a server listening on the Unix socket at @sa?  Only a socket nobody
 * listens on (ECONNREFUSED: its server died without removing it) may be
 * replaced; a live one is "address in use", as a TCP port is.
 */
static int unix_socket_live(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), ret;

	if (fd < 0)
		return -errno;
	ret = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) ? -errno : 1;
	close(fd);
	return ret == -ECONNREFUSED ? 0 : ret;
}

static int listen_unix(struct blk_nbd_server *srv, const char *path, char *err,
		       size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, ret;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "--unix=%s: path longer than %zu bytes",
			 path, sizeof(sa.sun_path) - 1);
		return -EINVAL;
	}
	strcpy(sa.sun_path, path);
	if (!stat(path, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "--unix=%s: exists and is not a socket",
				 path);
			return -EEXIST;
		}
		ret = unix_socket_live(&sa);
		if (ret == 1) {
			snprintf(err, errlen,
				 "--unix=%s: address in use: a server is listening on it (stop it, or choose another path)",
				 path);
			return -EADDRINUSE;
		}
		if (ret < 0) {
			snprintf(err, errlen,
				 "--unix=%s: exists and cannot be checked for a server: %s",
				 path, strerror(-ret));
			return ret;
		}
		unlink(path); /* stale: nobody listens */
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fd, 64)) {
		ret = -errno;
		snprintf(err, errlen, "--unix=%s: cannot listen: %s", path,
			 strerror(-ret));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	if (!stat(path, &st)) {
		srv->unix_dev = st.st_dev;
		srv->unix_ino = st.st_ino;
	}
	strcpy(srv->unix_path, path);
	srv->unix_fd = fd;
	return 0;
}

int blk_nbd_server_create(const struct blk_nbd_server_config *cfg,
			  struct blk_nbd_server **out, char *err,
			  size_t errlen)
{
	struct blk_nbd_server *srv;
	int ret;

	if (!cfg->nr_exports || cfg->nr_exports > 64 ||
	    (!cfg->tcp_addr && !cfg->unix_path) || cfg->max_inflight > 1024 ||
	    cfg->coalesce_us > 100000) {
		snprintf(err, errlen, "nbd server: bad configuration");
		return -EINVAL;
	}
	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return -ENOMEM;
	srv->cfg = *cfg;
	if (!srv->cfg.max_connections)
		srv->cfg.max_connections = 64;
	if (!srv->cfg.max_inflight)
		srv->cfg.max_inflight = 64;
	srv->log = cfg->log ? cfg->log : stderr;
	srv->tcp_fd = srv->unix_fd = -1;
	srv->ncpu = (unsigned int)sysconf(_SC_NPROCESSORS_ONLN);
	blk_mutex_init(&srv->lock, "&nbd_server->lock", -1);
	export_cond_init(&srv->cond);
	ret = cfg->tcp_addr ? listen_tcp(srv, cfg->tcp_addr, err, errlen) : 0;
	if (!ret && cfg->unix_path)
		ret = listen_unix(srv, cfg->unix_path, err, errlen);
	if (ret) {
		blk_nbd_server_destroy(srv);
		return ret;
	}
	*out = srv;
	return 0;
}

unsigned int blk_nbd_server_port(const struct blk_nbd_server *srv)
{
	return srv->tcp_fd >= 0 ? srv->port : 0;
}

/* Name the peer for the log into @buf; return: true for a Unix socket. */
static bool peer_name(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[64] = "?";

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) ||
	    ss.ss_family == AF_UNIX) {
		snprintf(buf, len, "unix");
		return true;
	}
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(in->sin_port));
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(in6->sin6_port));
	}
	return false;
}

static void accept_one(struct blk_nbd_server *srv, int lfd)
{
	struct nbd_client *cl;
	pthread_attr_t attr;
	pthread_t th;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return; /* EAGAIN, ECONNABORTED, EMFILE: try again later */
	cl = calloc(1, sizeof(*cl));
	if (!cl) {
		close(fd);
		return;
	}
	cl->srv = srv;
	cl->fd = fd;
	cl->unix_peer = peer_name(fd, cl->peer, sizeof(cl->peer));
	blk_mutex_lock(&srv->lock);
	cl->id = ++srv->next_id;
	if (srv->active >= srv->cfg.max_connections) {
		blk_mutex_unlock(&srv->lock);
		fprintf(srv->log, "nbd: conn %lu %s refused: %u connections already\n",
			cl->id, cl->peer, srv->cfg.max_connections);
		close(fd);
		free(cl);
		return;
	}
	__atomic_store_n(&srv->active, srv->active + 1, __ATOMIC_RELAXED);
	blk_mutex_unlock(&srv->lock);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, client_thread, cl)) {
		fprintf(srv->log, "nbd: conn %lu %s refused: no thread\n",
			cl->id, cl->peer);
		close(fd);
		free(cl);
		blk_mutex_lock(&srv->lock);
		__atomic_store_n(&srv->active, srv->active - 1, __ATOMIC_RELAXED);
		blk_mutex_unlock(&srv->lock);
	}
	pthread_attr_destroy(&attr);
}

int blk_nbd_server_run(struct blk_nbd_server *srv, int *stop)
{
	unsigned int deadline_ms = srv->cfg.stop_deadline_ms ?
				   srv->cfg.stop_deadline_ms : 30000;
	struct pollfd pfd[2];
	uint64_t stop_ns, idle_ns = now_ns();
	int n = 0, i;

	srv->stop = stop;
	if (srv->tcp_fd >= 0)
		pfd[n++] = (struct pollfd){ .fd = srv->tcp_fd, .events = POLLIN };
	if (srv->unix_fd >= 0)
		pfd[n++] = (struct pollfd){ .fd = srv->unix_fd, .events = POLLIN };
	while (!__atomic_load_n(stop, __ATOMIC_ACQUIRE)) {
		int r = poll(pfd, (nfds_t)n, IDLE_WAIT_MS);
		uint64_t now = now_ns();

		if (r < 0 && errno != EINTR)
			return -errno;
		/* queues no connection holds: their drivers' timers (keep-alive) */
		if (now - idle_ns >= IDLE_WAIT_MS * 1000000ull) {
			idle_ns = now;
			for (i = 0; i < (int)srv->cfg.nr_exports; i++)
				blk_dev_poll_idle(srv->cfg.exports[i].dev);
		}
		for (i = 0; r > 0 && i < n; i++)
			if (pfd[i].revents & POLLIN)
				accept_one(srv, pfd[i].fd);
	}
	/*
	 * Connections see the stop flag within IDLE_WAIT_MS and give up on a
	 * client that does not read within STOP_GRACE_MS: waiting for all of
	 * them is bounded, and the devices stay open until then.
	 */
	blk_mutex_lock(&srv->lock);
	stop_ns = now_ns();
	while (srv->active) {
		if (now_ns() - stop_ns > (uint64_t)deadline_ms * 1000000ull) {
			fprintf(srv->log,
				"nbd: stop deadline (%u ms) passed: %u connections still wait for their devices' completions\n",
				deadline_ms, srv->active);
			blk_mutex_unlock(&srv->lock);
			return -ETIMEDOUT;
		}
		export_cond_wait_ms(&srv->cond, &srv->lock.m, 100);
	}
	blk_mutex_unlock(&srv->lock);
	/* every connection is gone: make acknowledged writes durable */
	for (i = 0; i < (int)srv->cfg.nr_exports; i++)
		fprintf(srv->log, "nbd: export '%s': %s\n", srv->cfg.exports[i].name,
			export_dev_flush(srv->cfg.exports[i].dev));
	return 0;
}

void blk_nbd_server_destroy(struct blk_nbd_server *srv)
{
	if (!srv)
		return;
	if (srv->tcp_fd >= 0)
		close(srv->tcp_fd);
	if (srv->unix_fd >= 0) {
		struct stat st;

		close(srv->unix_fd);
		/* only our own socket: another server may have replaced it */
		if (!stat(srv->unix_path, &st) && st.st_dev == srv->unix_dev &&
		    st.st_ino == srv->unix_ino)
			unlink(srv->unix_path);
	}
	blk_mutex_destroy(&srv->lock);
	pthread_cond_destroy(&srv->cond);
	free(srv);
}
