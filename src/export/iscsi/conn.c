// SPDX-License-Identifier: MIT
/*
 * One iSCSI connection on its own thread: login (login.c), then the full
 * feature phase over the SCSI target core (RFC 7143 ErrorRecoveryLevel 0).
 * A session may have several connections (MaxConnections > 1), each a
 * thread of its own like this one: they share the session's I_T nexus and
 * its CmdSN state (struct iscsi_session, atomics), nothing else; a
 * command is answered on the connection it came on (allegiance, 4.2.1).
 *
 * The thread owns a scsi_tgt queue: commands are submitted and complete
 * on it (from scsi_tgt_poll(), which the loop calls while commands are
 * in the core).
 * The socket is blocking with short waits (SO_RCVTIMEO, poll()) so that
 * the stop flag and a session reinstatement (iscsi_conn_kill()) are seen
 * within 100 ms; those waits are also where the keep-alive looks at the
 * clock (a NOP-In to an idle initiator, 11.19).  At the stop the
 * initiator is asked to log out (an Asynchronous Message, 11.9.1) once
 * its commands have been answered.
 *
 * Received bytes go through a 64 KiB buffer the PDU parser reads from
 * (data segments of 16 KiB or more that have not arrived yet are received
 * straight into the command's buffer); responses are batched and sent
 * with one sendmsg() when the thread would wait.  Data-In is sent from
 * the command's buffer.
 *
 * Memory a peer can make us hold is bounded: at most max_cmds + 16
 * commands per connection (the CmdSN window, plus immediate commands),
 * each with a buffer of at most ISCSI_MAX_XFER bytes (the target core
 * refuses longer media transfers, its VPD 0xb0 says so), and as many
 * ended ones cached for the next commands with buffers of at most
 * TASK_BUF_KEEP (freed when the connection idles); data segments at most
 * our MaxRecvDataSegmentLength, key lists ISCSI_TEXT_MAX.
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "blkstack/metrics.h"
#include "pdu.h"
#include "server.h"
#include "../export.h"

#define IDLE_WAIT_MS 100
#define PDU_STALL_MS 30000   /* a PDU started and not finished */
#define LOGIN_LIMIT_MS 30000 /* the whole login (slowloris) */
#define LOGIN_MAX_DSL 8192   /* 13.12: both sides' limit during login */
#define MAX_R2T 16           /* our MaxOutstandingR2T, at most */
#define IMM_SLACK 16         /* immediate commands beyond the window */
#define ISCSI_MAX_XFER (32u << 20)
#define ISCSI_CDB_MAX 260
#define ABORTED_RING 32
#define RXB_SIZE (64u << 10)   /* received bytes not yet parsed */
#define RX_DIRECT (16u << 10)  /* read straight into the destination */
#define TXV_MAX 256            /* iovecs of one batched sendmsg() */
#define TXA_SIZE (16u << 10)   /* headers and small data of a batch */
#define TX_COPY_MAX 512        /* larger unstable data: sent at once */
#define PDU_BATCH 64           /* PDUs taken before the core is polled */
#define KA_SLEEPS 2048         /* empty 20 us waits between keep-alive looks */
#define STOP_LOGOUT_MS 2000    /* longest wait for a Logout at the stop */
#define LOGOUT_OTHERS_MS 5000  /* a Logout waits this long for the others */
#define XTMF_WAIT_MS 2000      /* another connection takes a TMF within */
#define TASK_BUF_KEEP (64u << 10) /* a cached task keeps a buffer this big */
#define ITT_HASH_BITS 7        /* c->itt_hash: 128 chains */

enum task_state {
	TASK_DATA,      /* waiting for Data-Out */
	TASK_CORE,      /* submitted to the target core */
	TASK_DONE,      /* ended; response not sent yet */
};

struct r2t {
	uint32_t ttt, off, len, got, datasn;
};

/*
 * A command.  Ended tasks go back to the connection's cache (task_put())
 * with their buffer, up to the window's worth and TASK_BUF_KEEP bytes
 * each, so that the next command takes one without malloc(), calloc()
 * and free() (about 950 instructions a 4 KiB WRITE, callgrind).
 */
struct iscsi_task {
	/* kept while cached */
	uint8_t *buf;
	uint32_t buf_cap;       /* bytes at @buf */
	/* zeroed for each command (task_get()): @c .. @mdir */
	struct iscsi_conn *c;
	/* c->tasks (@next, @pprev: NULL when not on it; @next also links
	 * the cache), and its ITT's chain of c->itt_hash */
	struct iscsi_task *next, **pprev;
	struct iscsi_task *hnext, **hpprev;
	struct iscsi_task *done_next; /* also retired */
	uint8_t state;
	bool read, write, aborted;
	bool data_err;          /* a Data-Out was bad: discard, then fail */
	bool unsol_open;        /* unsolicited Data-Out may still come */
	bool imm;               /* an immediate command: outside the window */
	uint8_t lun_raw[8];
	uint32_t itt, edtl, xfer;
	struct iovec iov;
	/* Data-Out */
	uint32_t received, unsol_end, unsol_datasn, r2t_next, r2tsn;
	unsigned int nr_r2t;
	uint32_t datasn_sent;   /* Data-In and R2T PDUs sent (ExpDataSN) */
	/* metrics: its LUN's counters (NULL: not counted, or counted) */
	struct blk_metrics_conn *m;
	uint64_t t0_ns;         /* the recv() that brought the command */
	enum blk_metrics_dir mdir;
	/* set where used: r2t[i] by send_r2ts(), @cdb from the PDU, @cmd's
	 * inputs by handle_scsi_cmd() (the target core sets its results) */
	struct r2t r2t[MAX_R2T];
	uint8_t cdb[ISCSI_CDB_MAX];
	struct scsi_tgt_cmd cmd;
};

#define TASK_ZERO_START offsetof(struct iscsi_task, c)
#define TASK_ZERO_LEN (offsetof(struct iscsi_task, r2t) - TASK_ZERO_START)

/*
 * Task management that reaches the tasks of another connection of the
 * session (RFC 7143 11.5: a function may be sent on any connection; the
 * tasks belong to the connection they came on, and only its thread may
 * touch them or its target queue).  The asking thread posts one of these
 * to each other connection (iscsi_conn.xtmf) and waits for them; each
 * runs it on its own thread (xtmf_serve()).  srv->lock guards @taken,
 * @done, @result and the posting.
 */
enum {
	XTMF_ABORT_TASK = 1,   /* @itt on @lun: ended, or -ENOENT */
	XTMF_ABORT_TASK_SET,   /* every task of @lun: ended */
	XTMF_MARK,             /* tasks of @lun (UINT64_MAX: all) get no
				* response; those waiting for Data-Out end
				* (a reset or CLEAR TASK SET: the core ends
				* the rest) */
	XTMF_UNMARK,           /* that function failed: answer them again */
};

struct iscsi_xtmf {
	uint8_t op;
	bool taken, done;
	uint32_t itt;
	uint64_t lun;
	int result;
};

struct iscsi_conn {
	struct blk_iscsi_server *srv;
	int fd;
	unsigned long id;
	char peer[80];
	char portal[80];        /* our address, "ADDR:PORT" */
	struct iscsi_node *node;
	int node_idx;
	struct scsi_tgt_queue *q;
	unsigned int nexus;
	struct iscsi_session *sess; /* NULL until the login ends */
	struct iscsi_params p;
	uint32_t peer_mrdsl;    /* largest data segment we send */
	uint32_t max_dsl;       /* largest data segment we take */
	uint32_t statsn, window;
	uint16_t cid;
	struct iscsi_task *tasks;
	struct iscsi_task *itt_hash[1u << ITT_HASH_BITS]; /* tasks by ITT */
	unsigned int nr_tasks, in_core;
	struct iscsi_task *cache; /* ended tasks to take again (task_get()) */
	unsigned int nr_cache;
	struct iscsi_task *done_head, *done_tail;
	uint32_t next_ttt;
	uint8_t *rx;            /* max_dsl + 4: data we do not keep */
	/* received, not parsed: rxb[rxb_off .. rxb_off + rxb_len) */
	uint8_t *rxb;
	uint32_t rxb_off, rxb_len;
	bool rx_drained;        /* the last recv() left the socket empty */
	/* PDUs waiting for one sendmsg(): iovecs, their headers and small
	 * data in txa, and the tasks whose buffers they point into */
	struct iovec txv[TXV_MAX];
	unsigned int txv_n;
	uint32_t txa_used;
	uint8_t txa[TXA_SIZE];
	struct iscsi_task *retired;
	uint64_t tx_batches;
	bool closing;
	const char *why;
	int kill;               /* set by another thread (atomic) */
	const char *kill_why;   /* set before it */
	bool stopping;
	uint64_t rx_bytes, tx_bytes, cmds;
	uint64_t data_errs;      /* commands failed for bad Data-Out */
	uint64_t dropped;       /* requests outside the CmdSN window */
	uint64_t gap_waits;     /* requests that waited for a lower CmdSN */
	/* keep-alive (11.19): rx_bytes at the last look and when it last
	 * changed; the NOP-In ping outstanding, if any */
	uint64_t ka_rx, ka_since;
	unsigned int ka_sleeps;
	bool ping_out;
	uint32_t ping_ttt;
	uint64_t ping_sent, pings;
	/* stopping: the Asynchronous Message went, a Logout is awaited until */
	uint64_t logout_by;
	unsigned int logout_wait;
	char why_buf[128];
	struct iscsi_xtmf *xtmf; /* posted to us (atomic; srv->lock to post) */
	bool xtmf_closed;       /* leaving: nothing more is posted (srv->lock) */
	uint32_t aborted_itt[ABORTED_RING];
	unsigned int aborted_pos;
	/* the PDU being handled */
	uint8_t bhs[ISCSI_BHS_LEN];
	uint8_t ahs[ISCSI_AHS_MAX];
	struct iscsi_pdu_lens l;
	char *text;             /* a Text request over several PDUs */
	uint32_t text_len;
	/* metrics: counters per LUN of the target (NULL: off); rx_ns: the
	 * clock after the last recv() into rxb, 0 until read */
	struct blk_metrics_conn **mlun;
	unsigned int nr_mlun;
	uint64_t rx_ns;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void iscsi_conn_kill(struct iscsi_conn *c, const char *why)
{
	__atomic_store_n(&c->kill_why, why, __ATOMIC_RELAXED);
	__atomic_store_n(&c->kill, 1, __ATOMIC_RELEASE);
	shutdown(c->fd, SHUT_RDWR);
}

static bool killed(const struct iscsi_conn *c)
{
	return __atomic_load_n(&c->kill, __ATOMIC_ACQUIRE) != 0;
}

int iscsi_conn_fd(const struct iscsi_conn *c)
{
	return c->fd;
}

/* ------------------------------------------------------------ socket */

static int tx_flush(struct iscsi_conn *c);

/* Bytes from the receive buffer into @p: how many. */
static size_t rx_take(struct iscsi_conn *c, uint8_t *p, size_t len)
{
	size_t n = len < c->rxb_len ? len : c->rxb_len;

	memcpy(p, c->rxb + c->rxb_off, n);
	c->rxb_off += (uint32_t)n;
	c->rxb_len -= (uint32_t)n;
	if (!c->rxb_len)
		c->rxb_off = 0;
	return n;
}

/*
 * What the socket has into the receive buffer: now, without waiting
 * (@flags MSG_DONTWAIT), or waiting up to the socket's SO_RCVTIMEO
 * (IDLE_WAIT_MS; @flags 0).  Return bytes received (> 0); 0: nothing
 * came; -EPIPE at end of stream; -errno.
 */
static ssize_t rx_recv(struct iscsi_conn *c, int flags)
{
	uint32_t room = RXB_SIZE - c->rxb_off - c->rxb_len;
	ssize_t n;

	if (c->rxb_len && c->rxb_off) {
		memmove(c->rxb, c->rxb + c->rxb_off, c->rxb_len);
		c->rxb_off = 0;
		room = RXB_SIZE - c->rxb_len;
	}
	if (!room)
		return 0;
	do
		n = recv(c->fd, c->rxb + c->rxb_off + c->rxb_len, room, flags);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		return -EPIPE;
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	c->rx_bytes += (uint64_t)n;
	c->rx_ns = 0; /* commands in these bytes get a new arrival time */
	c->rxb_len += (uint32_t)n;
	c->rx_drained = (uint32_t)n < room;
	return n;
}

static ssize_t rx_try(struct iscsi_conn *c)
{
	return rx_recv(c, MSG_DONTWAIT);
}

/*
 * Read exactly @len bytes: from the receive buffer, then the socket
 * (large reads straight into @buf, small ones through the buffer, which
 * takes what else has arrived).  What is batched for sending goes out
 * before any wait: the peer may be waiting for it (an R2T).  Return 0;
 * -EPIPE at end of stream; -ETIMEDOUT when the peer stalls inside a
 * PDU; -ESHUTDOWN when the server stops or the session is reinstated
 * before a byte came.
 */
static int rx_full(struct iscsi_conn *c, void *buf, size_t len, bool start)
{
	uint64_t since = 0;
	uint8_t *p = buf;
	size_t got;

	got = rx_take(c, p, len);
	p += got;
	len -= got;
	if (got)
		start = false;
	while (len) {
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		ssize_t n;
		int r;

		if (killed(c))
			return -ESHUTDOWN;
		if (len < RX_DIRECT) {
			n = rx_try(c);
			if (n < 0)
				return (int)n;
			if (n > 0) {
				got = rx_take(c, p, len);
				p += got;
				len -= got;
				start = false;
				since = 0;
				continue;
			}
		}
		if (c->txv_n && tx_flush(c))
			return -EPIPE;
		if (!since)
			since = now_ms();
		r = poll(&pfd, 1, IDLE_WAIT_MS);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r <= 0) {
			if (start && iscsi_stop_flag(c->srv))
				return -ESHUTDOWN;
			if (!start && now_ms() - since > PDU_STALL_MS)
				return -ETIMEDOUT;
			continue;
		}
		if (len < RX_DIRECT)
			continue; /* readable: rx_try() takes it */
		n = recv(c->fd, p, len, MSG_DONTWAIT);
		if (n == 0)
			return -EPIPE;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		start = false;
		c->rx_bytes += (uint64_t)n;
		p += n;
		len -= (size_t)n;
		since = 0;
	}
	return 0;
}

/* SBC-3 opcodes that move media data (label dir=read / write). */
static enum blk_metrics_dir cdb_class(uint8_t op)
{
	switch (op) {
	case READ_6: case READ_10: case READ_12: case READ_16:
		return BLK_METRICS_READ;
	case WRITE_6: case WRITE_10: case WRITE_12: case WRITE_16:
	case WRITE_VERIFY_10: case WRITE_VERIFY_12: case WRITE_VERIFY_16:
		return BLK_METRICS_WRITE;
	default:
		return BLK_METRICS_OTHER;
	}
}

/*
 * A command ended (answered, or dropped without an answer): record it in
 * its LUN's counters, once.  @now: the clock, read on first need.
 */
static void task_metrics(struct iscsi_task *t, uint64_t *now)
{
	const struct scsi_tgt_cmd *m = &t->cmd;
	bool err;

	if (!t->m)
		return;
	if (!*now)
		*now = blk_metrics_now_ns();
	err = t->state != TASK_DONE || t->aborted || m->no_response ||
	      (m->status != SAM_STAT_GOOD && m->status != SAM_STAT_CONDITION_MET);
	blk_metrics_record(t->m, t->mdir,
			   err || t->mdir == BLK_METRICS_OTHER ? 0 :
			   m->overflow ? t->xfer : t->xfer - m->resid,
			   err, *now - t->t0_ns);
	BLK_METRICS_ADD(&t->m->inflight, (uint64_t)-1);
	t->m = NULL;
}

/*
 * A task for a command that moves @xfer bytes, its buffer (@t->buf, at
 * least @xfer bytes, not zeroed) included: from the cache when it has
 * one, its fields from @c to @mdir zeroed.  Return NULL when out of
 * memory.
 */
static struct iscsi_task *task_get(struct iscsi_conn *c, uint32_t xfer)
{
	struct iscsi_task *t = c->cache;

	if (t) {
		c->cache = t->next;
		c->nr_cache--;
		memset((uint8_t *)t + TASK_ZERO_START, 0, TASK_ZERO_LEN);
	} else {
		t = calloc(1, sizeof(*t));
		if (!t)
			return NULL;
	}
	if (xfer > t->buf_cap) {
		free(t->buf);
		t->buf_cap = 0;
		t->buf = malloc(xfer);
		if (!t->buf) {
			free(t);
			return NULL;
		}
		t->buf_cap = xfer;
	}
	return t;
}

/* An ended task back to the cache, or freed: the cache holds at most
 * what the CmdSN window can bring at once, buffers up to TASK_BUF_KEEP. */
static void task_put(struct iscsi_conn *c, struct iscsi_task *t)
{
	if (c->nr_cache < c->window + IMM_SLACK && t->buf_cap <= TASK_BUF_KEEP) {
		t->next = c->cache;
		c->cache = t;
		c->nr_cache++;
		return;
	}
	free(t->buf);
	free(t);
}

/* Free the cache (the connection ends, or idles). */
static void task_cache_free(struct iscsi_conn *c)
{
	while (c->cache) {
		struct iscsi_task *t = c->cache;

		c->cache = t->next;
		free(t->buf);
		free(t);
	}
	c->nr_cache = 0;
}

/* Free the tasks whose buffers the sent batch pointed into. */
static void tx_retire_free(struct iscsi_conn *c)
{
	uint64_t now = 0;

	while (c->retired) {
		struct iscsi_task *t = c->retired;

		c->retired = t->done_next;
		task_metrics(t, &now);
		task_put(c, t);
	}
}

static bool tx_failed(const struct iscsi_conn *c)
{
	return c->closing && c->why && !strncmp(c->why, "send failed", 11);
}

/*
 * Send what is batched, with one sendmsg() as far as the socket takes it
 * (SO_SNDTIMEO bounds a stuck peer).  Return 0 or -EPIPE (the connection
 * is closing; the batch is dropped).
 */
static int tx_flush(struct iscsi_conn *c)
{
	struct msghdr mh = { .msg_iov = c->txv, .msg_iovlen = c->txv_n };
	int r = 0;

	if (c->txv_n && !tx_failed(c)) {
		c->tx_batches++;
		if (export_sendmsg_all(c->fd, &mh, &c->tx_bytes)) {
			c->closing = true;
			c->why = "send failed: initiator gone";
			r = -EPIPE;
		}
	}
	c->txv_n = 0;
	c->txa_used = 0;
	tx_retire_free(c);
	return tx_failed(c) ? -EPIPE : r;
}

/* @len bytes of @src copied into the batch's arena: an iovec of them. */
static void tx_add_copy(struct iscsi_conn *c, const void *src, uint32_t len)
{
	uint8_t *d = c->txa + c->txa_used;

	memcpy(d, src, len);
	c->txa_used += (len + 7) & ~7u;
	c->txv[c->txv_n++] = (struct iovec){ d, len };
}

/*
 * Add a PDU to the batch: @bhs (DataSegmentLength set here) and @len
 * bytes of @data.  @stable: @data stays valid until the batch is sent
 * (a task's buffer, freed after tx_flush()); otherwise it is copied when
 * small (TX_COPY_MAX), or the batch and this PDU are sent at once.
 * Sent by tx_flush(): when the connection would wait, when the batch is
 * full.  Return 0 or -EPIPE.
 */
static int tx_pdu_data(struct iscsi_conn *c, uint8_t *bhs, const void *data,
		       uint32_t len, bool stable)
{
	static const uint8_t zero[4];
	uint8_t dd[4];
	uint32_t pad = iscsi_pad4(len);
	bool now = !stable && len > TX_COPY_MAX;
	uint32_t need = ISCSI_BHS_LEN + 8 + 8 +
			(!stable && !now && len ? ((len + 7) & ~7u) : 0);

	if (tx_failed(c))
		return -EPIPE;
	if ((c->txv_n + 5 > TXV_MAX || c->txa_used + need > TXA_SIZE) &&
	    tx_flush(c))
		return -EPIPE;
	bhs_set_dsl(bhs, len);
	tx_add_copy(c, bhs, ISCSI_BHS_LEN);
	if (c->p.header_digest) {
		uint8_t hd[4];

		iscsi_digest_put(hd, iscsi_digest(&c->txv[c->txv_n - 1], 1));
		tx_add_copy(c, hd, 4);
	}
	if (len) {
		unsigned int d0 = c->txv_n;

		if (stable || now)
			c->txv[c->txv_n++] = (struct iovec){ (void *)(uintptr_t)data, len };
		else
			tx_add_copy(c, data, len);
		if (pad)
			c->txv[c->txv_n++] = (struct iovec){ (void *)(uintptr_t)zero, pad };
		if (c->p.data_digest) {
			iscsi_digest_put(dd, iscsi_digest(c->txv + d0, (int)(c->txv_n - d0)));
			tx_add_copy(c, dd, 4);
		}
	}
	return now ? tx_flush(c) : 0;
}

static int tx_pdu(struct iscsi_conn *c, uint8_t *bhs, const void *data,
		  uint32_t len)
{
	return tx_pdu_data(c, bhs, data, len, false);
}

/*
 * Receive the data segment of the PDU in c->bhs (its padding and digest
 * too) into @dst, or drop it (@dst NULL).  Return 0; -EBADMSG: the data
 * digest is wrong; -errno from the socket.
 */
static int rx_data(struct iscsi_conn *c, void *dst, uint32_t len)
{
	uint8_t tail[8];
	uint32_t tl = c->l.pad + (c->p.data_digest && len ? 4 : 0);
	struct iovec iov[2];
	int r;

	if (!len)
		return 0;
	if (!dst)
		dst = c->rx;
	r = rx_full(c, dst, len, false);
	if (!r && tl)
		r = rx_full(c, tail, tl, false);
	if (r)
		return r;
	if (c->p.data_digest) {
		iov[0] = (struct iovec){ dst, len };
		iov[1] = (struct iovec){ tail, c->l.pad };
		if (iscsi_digest(iov, 2) != iscsi_digest_get(tail + c->l.pad))
			return -EBADMSG;
	}
	return 0;
}

/* ------------------------------------------------------- sequence numbers */

/* The session's ExpCmdSN (0 during the login). */
static uint32_t exp_cmdsn(const struct iscsi_conn *c)
{
	return c->sess ? __atomic_load_n(&c->sess->exp_cmdsn, __ATOMIC_ACQUIRE) : 0;
}

/*
 * The session's MaxCmdSN: its window less the commands it holds, @self of
 * them counted by the caller for a command not yet accepted.  Read after
 * ExpCmdSN (@exp, an acquire load): a command is counted before its
 * CmdSN moves ExpCmdSN (cmdsn_accept_cmd()), so a MaxCmdSN built on a
 * new ExpCmdSN never leaves that command out of the count.
 */
static uint32_t max_cmdsn_held(const struct iscsi_conn *c, uint32_t exp,
			       unsigned int self)
{
	unsigned int held = c->sess ?
			    __atomic_load_n(&c->sess->nr_tasks, __ATOMIC_RELAXED) - self : 0;
	unsigned int busy = held < c->window ? held : c->window;

	/* stopping: close the window (MaxCmdSN = ExpCmdSN - 1) */
	if (c->stopping)
		return exp - 1;
	return exp + (c->window - busy) - 1;
}

static uint32_t max_cmdsn_of(const struct iscsi_conn *c, uint32_t exp)
{
	return max_cmdsn_held(c, exp, 0);
}

/* Every response carries the session's ExpCmdSN and MaxCmdSN (4.2.2.1);
 * StatSN is the connection's */
static void put_sn(struct iscsi_conn *c, uint8_t *bhs, bool statsn_inc)
{
	uint32_t exp = exp_cmdsn(c);

	put_be32(bhs + BHS_STATSN, c->statsn);
	if (statsn_inc)
		c->statsn++;
	put_be32(bhs + BHS_EXPCMDSN, exp);
	put_be32(bhs + BHS_MAXCMDSN, max_cmdsn_of(c, exp));
}

static void flush_done(struct iscsi_conn *c);
static inline void xtmf_serve(struct iscsi_conn *c);

/* Has the session other connections (that may bring a CmdSN)? */
static bool other_conns(const struct iscsi_conn *c)
{
	return __atomic_load_n(&c->sess->nr_conns, __ATOMIC_ACQUIRE) > 1;
}

static void cmdsn_dropped(struct iscsi_conn *c, uint32_t sn, uint32_t exp)
{
	/* the first one is logged; the logout line counts them all */
	if (!c->dropped++)
		fprintf(c->srv->log,
			"iscsi: conn %lu: %s CmdSN %u dropped (ExpCmdSN %u, MaxCmdSN %u)\n",
			c->id, iscsi_opcode_name(c->bhs[0]), sn, exp,
			max_cmdsn_of(c, exp));
}

/*
 * A non-immediate request's CmdSN (RFC 7143 4.2.2.1), against the
 * session's ExpCmdSN, which every connection of the session advances: the
 * one expected is taken (a compare-and-swap: one connection wins a
 * CmdSN); one ahead of it inside the window waits until the connections
 * that carry the CmdSNs before it have taken them ("the iSCSI target
 * layer MUST deliver the commands for execution ... in the order
 * specified by CmdSN"; one connection sends in order, so the gap is on
 * another); one outside the window, one already taken, or one ahead on
 * the session's only connection (no other can fill the gap) is dropped
 * ("silently ignored").  While it waits the connection answers its own
 * commands that end.  A gap not filled within PDU_STALL_MS ends the
 * connection (ErrorRecoveryLevel 0 has no way to ask for the CmdSN).
 * Return: true to process the PDU.
 */
static bool cmdsn_take(struct iscsi_conn *c, unsigned int self)
{
	uint32_t sn = get_be32(c->bhs + BHS_CMDSN);
	uint32_t exp = exp_cmdsn(c), max;
	uint64_t since = 0;

	if (c->bhs[BHS_OPCODE] & ISCSI_OP_IMMEDIATE)
		return true;
	if (sn == exp && __atomic_compare_exchange_n(&c->sess->exp_cmdsn, &exp,
						     sn + 1, false,
						     __ATOMIC_ACQ_REL,
						     __ATOMIC_ACQUIRE))
		return true;
	max = max_cmdsn_held(c, exp, self);
	if (iscsi_sn_cmp(sn, exp) < 0 || iscsi_sn_cmp(sn, max) > 0 ||
	    !other_conns(c)) {
		/* outside the window, taken, or a gap no connection fills */
		cmdsn_dropped(c, sn, exp);
		return false;
	}
	/* ahead of ExpCmdSN, inside the window: another connection's turn */
	c->gap_waits++;
	for (;;) {
		struct timespec ts = { 0, 20000 };

		exp = exp_cmdsn(c);
		if (iscsi_sn_cmp(sn, exp) < 0) {
			cmdsn_dropped(c, sn, exp); /* taken: a duplicate */
			return false;
		}
		if (sn == exp &&
		    __atomic_compare_exchange_n(&c->sess->exp_cmdsn, &exp, sn + 1,
						false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return true;
		if (sn == exp)
			continue;
		if (killed(c) || iscsi_stop_flag(c->srv) || c->closing ||
		    !other_conns(c)) {
			cmdsn_dropped(c, sn, exp);
			return false;
		}
		if (!since)
			since = now_ms();
		else if (now_ms() - since > PDU_STALL_MS) {
			snprintf(c->why_buf, sizeof(c->why_buf),
				 "CmdSN %u waited %u ms for ExpCmdSN %u: no connection of the session brought it",
				 sn, PDU_STALL_MS, exp);
			c->why = c->why_buf;
			c->closing = true;
			return false;
		}
		if (c->in_core)
			scsi_tgt_poll(c->q);
		flush_done(c);
		xtmf_serve(c);
		if (tx_flush(c))
			return false;
		nanosleep(&ts, NULL);
	}
}

static bool cmdsn_accept(struct iscsi_conn *c)
{
	return cmdsn_take(c, 0);
}

/*
 * cmdsn_accept() for a SCSI Command: a non-immediate one is counted in the
 * session's window (sess->nr_tasks) before its CmdSN is taken, so that
 * another connection's response between the two cannot announce a
 * MaxCmdSN one too high (4.2.2.1); the count is given back when the
 * CmdSN is refused, and by task_uncount() when the command then makes no
 * task; task_unlink() gives it back when the task ends.
 */
static bool cmdsn_accept_cmd(struct iscsi_conn *c)
{
	if (c->bhs[BHS_OPCODE] & ISCSI_OP_IMMEDIATE)
		return true;
	__atomic_fetch_add(&c->sess->nr_tasks, 1, __ATOMIC_RELAXED);
	if (cmdsn_take(c, 1))
		return true;
	__atomic_fetch_sub(&c->sess->nr_tasks, 1, __ATOMIC_RELAXED);
	return false;
}

/* A SCSI Command accepted by cmdsn_accept_cmd() that makes no task. */
static void task_uncount(struct iscsi_conn *c)
{
	if (!(c->bhs[BHS_OPCODE] & ISCSI_OP_IMMEDIATE))
		__atomic_fetch_sub(&c->sess->nr_tasks, 1, __ATOMIC_RELAXED);
}

static int send_reject(struct iscsi_conn *c, uint8_t reason)
{
	uint8_t bhs[ISCSI_BHS_LEN];
	uint8_t copy[ISCSI_BHS_LEN];

	memcpy(copy, c->bhs, sizeof(copy));
	iscsi_bhs_init(bhs, ISCSI_OP_REJECT, ISCSI_FLAG_FINAL);
	bhs[BHS_REJECT_REASON] = reason;
	put_be32(bhs + BHS_ITT, ISCSI_RSVD_TAG);
	put_sn(c, bhs, true);
	return tx_pdu(c, bhs, copy, sizeof(copy));
}

/* ------------------------------------------------------------ tasks */

static uint64_t lun_decode(const uint8_t *l)
{
	/* single level: bytes 2..7 zero (one load, not six) */
	if (scsi_get_be64(l) & 0xffffffffffffull)
		return UINT64_MAX;
	switch (l[0] >> 6) {
	case 0: /* peripheral device addressing, bus 0 */
		return l[0] ? UINT64_MAX : l[1];
	case 1: /* flat space */
		return (uint64_t)(l[0] & 0x3f) << 8 | l[1];
	default:
		return UINT64_MAX;
	}
}

/* c->itt_hash's chain of @itt: a multiplicative hash (initiators number
 * their tasks in sequence, or put a generation in the high bits) */
static unsigned int itt_bucket(uint32_t itt)
{
	return (itt * 0x9e3779b1u) >> (32 - ITT_HASH_BITS);
}

/* The task of @itt that has not ended, or NULL. */
static struct iscsi_task *task_find(struct iscsi_conn *c, uint32_t itt)
{
	struct iscsi_task *t;

	for (t = c->itt_hash[itt_bucket(itt)]; t; t = t->hnext)
		if (t->itt == itt && t->state != TASK_DONE)
			return t;
	return NULL;
}

/* @t (its ITT set) onto c->tasks and its ITT's chain. */
static void task_link(struct iscsi_conn *c, struct iscsi_task *t)
{
	struct iscsi_task **h = &c->itt_hash[itt_bucket(t->itt)];

	t->next = c->tasks;
	if (t->next)
		t->next->pprev = &t->next;
	c->tasks = t;
	t->pprev = &c->tasks;
	t->hnext = *h;
	if (t->hnext)
		t->hnext->hpprev = &t->hnext;
	*h = t;
	t->hpprev = h;
	c->nr_tasks++;
	/* the session's count is the window's, taken for a non-immediate
	 * command by cmdsn_accept_cmd(): an immediate command takes no
	 * CmdSN, so counting it would lower MaxCmdSN below one already
	 * sent (RFC 7143 4.2.2.1) */
}

/* @t off c->tasks and its chain, when it is on them. */
static void task_unlink(struct iscsi_conn *c, struct iscsi_task *t)
{
	if (!t->pprev)
		return;
	*t->pprev = t->next;
	if (t->next)
		t->next->pprev = t->pprev;
	t->pprev = NULL;
	*t->hpprev = t->hnext;
	if (t->hnext)
		t->hnext->hpprev = t->hpprev;
	c->nr_tasks--;
	if (!t->imm)
		__atomic_fetch_sub(&c->sess->nr_tasks, 1, __ATOMIC_RELAXED);
}

static void task_free(struct iscsi_conn *c, struct iscsi_task *t)
{
	uint64_t now = 0;

	task_metrics(t, &now);
	task_unlink(c, t);
	task_put(c, t);
}

static void remember_aborted(struct iscsi_conn *c, uint32_t itt)
{
	c->aborted_itt[c->aborted_pos++ % ABORTED_RING] = itt;
}

static bool was_aborted(const struct iscsi_conn *c, uint32_t itt)
{
	unsigned int i;

	for (i = 0; i < ABORTED_RING && i < c->aborted_pos; i++)
		if (c->aborted_itt[i] == itt)
			return true;
	return false;
}

static void task_done(struct scsi_tgt_cmd *cmd)
{
	struct iscsi_task *t = cmd->priv;
	struct iscsi_conn *c = t->c;

	t->state = TASK_DONE;
	c->in_core--;
	t->done_next = NULL;
	if (c->done_tail)
		c->done_tail->done_next = t;
	else
		c->done_head = t;
	c->done_tail = t;
}

/* Residual (11.4.5): bytes of EDTL not moved, or moved past it. */
static void residual(const struct iscsi_task *t, uint8_t *flags, uint32_t *count)
{
	const struct scsi_tgt_cmd *m = &t->cmd;
	uint64_t wanted = m->overflow ? (uint64_t)t->xfer + m->resid :
			  (uint64_t)t->xfer - m->resid;

	*flags = 0;
	*count = 0;
	if (wanted > t->edtl) {
		*flags = ISCSI_RSP_O;
		*count = wanted - t->edtl > UINT32_MAX ? UINT32_MAX :
			 (uint32_t)(wanted - t->edtl);
	} else if (wanted < t->edtl) {
		*flags = ISCSI_RSP_U;
		*count = (uint32_t)(t->edtl - wanted);
	}
}

/*
 * The end of a command: Data-In (status in the last one when there is
 * no sense data, 11.7.4) and, otherwise, a SCSI Response.
 */
static void send_status(struct iscsi_conn *c, struct iscsi_task *t)
{
	struct scsi_tgt_cmd *m = &t->cmd;
	uint32_t moved = m->overflow ? t->xfer : t->xfer - m->resid;
	uint32_t off = 0, burst = 0, rcount;
	uint8_t bhs[ISCSI_BHS_LEN], rflags;
	bool in_data = t->read && moved &&
		       (m->status == SAM_STAT_GOOD ||
			m->status == SAM_STAT_CHECK_CONDITION ||
			m->status == SAM_STAT_CONDITION_MET);
	bool status_in_data = in_data && !m->sense_len &&
			      m->status != SAM_STAT_CHECK_CONDITION;
	uint8_t sense[2 + SCSI_SENSE_MAX];

	/* a command that failed sends only what its media access moved,
	 * never the rest of the buffer (a cached task's holds the data of
	 * an earlier command, maybe another initiator's) */
	if (m->status == SAM_STAT_CHECK_CONDITION && m->moved < moved) {
		moved = m->moved;
		in_data = in_data && moved;
	}
	residual(t, &rflags, &rcount);
	while (in_data && off < moved) {
		uint32_t n = moved - off, room = c->p.max_burst_length - burst;
		bool last;

		if (n > c->peer_mrdsl)
			n = c->peer_mrdsl;
		if (n > room)
			n = room;
		last = off + n == moved;
		burst += n;
		iscsi_bhs_init(bhs, ISCSI_OP_DATA_IN, 0);
		if (last || burst == c->p.max_burst_length) {
			bhs[BHS_FLAGS] |= ISCSI_FLAG_FINAL;
			burst = 0;
		}
		memcpy(bhs + BHS_LUN, t->lun_raw, 8);
		put_be32(bhs + BHS_ITT, t->itt);
		put_be32(bhs + BHS_TTT, ISCSI_RSVD_TAG);
		if (last && status_in_data) {
			bhs[BHS_FLAGS] |= ISCSI_DATA_S | rflags;
			bhs[BHS_DATA_STATUS] = m->status;
			put_be32(bhs + BHS_DATA_RESID, rcount);
			put_sn(c, bhs, true);
		} else {
			uint32_t exp = exp_cmdsn(c);

			put_be32(bhs + BHS_EXPCMDSN, exp);
			put_be32(bhs + BHS_MAXCMDSN, max_cmdsn_of(c, exp));
		}
		put_be32(bhs + BHS_DATASN, t->datasn_sent++);
		put_be32(bhs + BHS_BUF_OFFSET, off);
		if (tx_pdu_data(c, bhs, t->buf + off, n, true))
			return;
		off += n;
	}
	if (status_in_data)
		return;
	iscsi_bhs_init(bhs, ISCSI_OP_SCSI_RSP, ISCSI_FLAG_FINAL | rflags);
	bhs[BHS_RSP_RESPONSE] = ISCSI_RESPONSE_COMPLETED;
	bhs[BHS_RSP_STATUS] = m->status;
	put_be32(bhs + BHS_ITT, t->itt);
	put_sn(c, bhs, true);
	put_be32(bhs + BHS_RSP_EXPDATASN, t->datasn_sent);
	put_be32(bhs + BHS_RSP_RESID, rcount);
	if (m->sense_len) {
		put_be16(sense, m->sense_len);
		memcpy(sense + 2, m->sense, m->sense_len);
	}
	tx_pdu(c, bhs, sense, m->sense_len ? 2u + m->sense_len : 0);
}

/*
 * Batch the responses of the commands that ended, in the order they did;
 * their tasks are freed once the batch is sent (Data-In points into their
 * buffers).
 */
static void flush_done(struct iscsi_conn *c)
{
	while (c->done_head) {
		struct iscsi_task *t = c->done_head;

		c->done_head = t->done_next;
		if (!c->done_head)
			c->done_tail = NULL;
		/* off the window first: the response's MaxCmdSN counts its
		 * slot as free (as LIO's does), so that an initiator keeping
		 * the whole window busy may send its next command at once */
		task_unlink(c, t);
		/* a task our own task management ended gets no response, nor
		 * one another nexus's PREEMPT AND ABORT ended with TAS=0 (SAM-5
		 * 5.6: the initiator learns of it from 2F/00) */
		if (!t->aborted && !t->cmd.no_response && !c->closing)
			send_status(c, t);
		t->done_next = c->retired;
		c->retired = t;
	}
	if (c->closing)
		tx_flush(c);
}

/* A status without the target core (BUSY, TASK SET FULL). */
static void task_end_now(struct iscsi_conn *c, struct iscsi_task *t,
			 uint8_t status)
{
	t->cmd.status = status;
	t->cmd.sense_len = 0;
	t->cmd.resid = t->xfer;
	t->cmd.moved = 0;
	t->cmd.overflow = false;
	t->cmd.no_response = false;
	c->in_core++;
	task_done(&t->cmd);
}

/* CHECK CONDITION without the target core, fixed-format sense (SPC-4 4.5.3). */
static void task_fail_now(struct iscsi_conn *c, struct iscsi_task *t,
			  uint8_t key, uint8_t asc, uint8_t ascq)
{
	task_end_now(c, t, SAM_STAT_CHECK_CONDITION);
	t->cmd.sense_len = 18;
	memset(t->cmd.sense, 0, 18);
	t->cmd.sense[0] = 0x70;
	t->cmd.sense[2] = key;
	t->cmd.sense[7] = 10;
	t->cmd.sense[12] = asc;
	t->cmd.sense[13] = ascq;
}

static void task_submit(struct iscsi_conn *c, struct iscsi_task *t)
{
	unsigned int tries = 0;
	int r;

	t->state = TASK_CORE;
	c->in_core++;
	for (;;) {
		r = scsi_tgt_submit(c->q, &t->cmd);
		if (r != -EAGAIN || ++tries > 100000)
			break;
		scsi_tgt_poll(c->q); /* no tag: let completions free one */
	}
	if (r) {
		c->in_core--;
		task_end_now(c, t, r == -EAGAIN || r == -EBUSY ?
			     SAM_STAT_BUSY : SAM_STAT_TASK_SET_FULL);
	}
}

/* R2Ts for what is left to solicit, up to MaxOutstandingR2T (11.8). */
static void send_r2ts(struct iscsi_conn *c, struct iscsi_task *t)
{
	while (t->r2t_next < t->xfer && t->nr_r2t < c->p.max_outstanding_r2t &&
	       t->nr_r2t < MAX_R2T) {
		struct r2t *r = &t->r2t[t->nr_r2t++];
		uint8_t bhs[ISCSI_BHS_LEN];
		uint32_t len = t->xfer - t->r2t_next;

		if (len > c->p.max_burst_length)
			len = c->p.max_burst_length;
		r->ttt = c->next_ttt++;
		if (r->ttt == ISCSI_RSVD_TAG)
			r->ttt = c->next_ttt++;
		r->off = t->r2t_next;
		r->len = len;
		r->got = 0;
		r->datasn = 0;
		t->r2t_next += len;
		iscsi_bhs_init(bhs, ISCSI_OP_R2T, ISCSI_FLAG_FINAL);
		memcpy(bhs + BHS_LUN, t->lun_raw, 8);
		put_be32(bhs + BHS_ITT, t->itt);
		put_be32(bhs + BHS_TTT, r->ttt);
		put_sn(c, bhs, false);
		put_be32(bhs + BHS_R2TSN, t->r2tsn++);
		put_be32(bhs + BHS_BUF_OFFSET, r->off);
		put_be32(bhs + BHS_R2T_DDTL, len);
		t->datasn_sent++;
		if (tx_pdu(c, bhs, NULL, 0))
			return;
	}
}

/* A protocol error on a command at ErrorRecoveryLevel 0: Reject, close. */
static int proto_error(struct iscsi_conn *c, uint8_t reason, const char *why)
{
	send_reject(c, reason);
	c->closing = true;
	c->why = why;
	return -EPROTO;
}

static int handle_scsi_cmd(struct iscsi_conn *c)
{
	const uint8_t *b = c->bhs;
	uint8_t flags = b[BHS_FLAGS];
	uint32_t dlen = c->l.data_len, edtl, xfer;
	struct iscsi_ahs ahs;
	struct iscsi_task *t;
	bool no_buf = false;
	int r;

	if (!c->node) {
		rx_data(c, NULL, dlen);
		return send_reject(c, ISCSI_REJECT_PROTOCOL_ERROR);
	}
	if (iscsi_ahs_parse(c->ahs, c->l.ahs_len, &ahs) ||
	    ahs.ext_cdb_len > ISCSI_CDB_MAX - ISCSI_CDB_LEN)
		return proto_error(c, ISCSI_REJECT_INVALID_PDU_FIELD,
				   "bad AHS on a SCSI Command");
	if (!cmdsn_accept_cmd(c))
		return rx_data(c, NULL, dlen);
	if (c->nr_tasks >= c->window + IMM_SLACK) {
		/* only immediate commands get here: the window holds others */
		task_uncount(c);
		rx_data(c, NULL, dlen);
		return send_reject(c, ISCSI_REJECT_IMM_CMD);
	}
	if (task_find(c, get_be32(b + BHS_ITT))) {
		task_uncount(c);
		rx_data(c, NULL, dlen);
		return send_reject(c, ISCSI_REJECT_TASK_IN_PROGRESS);
	}
	edtl = get_be32(b + BHS_CMD_EDTL);
	xfer = flags & (ISCSI_CMD_R | ISCSI_CMD_W) ?
	       (edtl < ISCSI_MAX_XFER ? edtl : ISCSI_MAX_XFER) : 0;
	t = task_get(c, xfer);
	if (!t) {
		/* the command gets TASK SET FULL, a task without a buffer */
		t = task_get(c, 0);
		if (!t) {
			task_uncount(c);
			return proto_error(c, ISCSI_REJECT_IMM_CMD, "out of memory");
		}
		no_buf = true;
	}
	t->c = c;
	t->itt = get_be32(b + BHS_ITT);
	t->edtl = edtl;
	t->read = flags & ISCSI_CMD_R;
	t->write = flags & ISCSI_CMD_W;
	memcpy(t->lun_raw, b + BHS_LUN, 8);
	memcpy(t->cdb, b + BHS_CMD_CDB, ISCSI_CDB_LEN);
	if (ahs.ext_cdb_len)
		memcpy(t->cdb + ISCSI_CDB_LEN, ahs.ext_cdb, ahs.ext_cdb_len);
	t->xfer = xfer;
	t->imm = b[BHS_OPCODE] & ISCSI_OP_IMMEDIATE;
	task_link(c, t);
	c->cmds++;
	if (c->mlun) {
		uint64_t lun = lun_decode(t->lun_raw);

		t->m = c->mlun[lun < c->nr_mlun ? lun : 0];
		if (!c->rx_ns)
			c->rx_ns = blk_metrics_now_ns();
		t->t0_ns = c->rx_ns;
		t->mdir = cdb_class(t->cdb[0]);
		BLK_METRICS_ADD(&t->m->inflight, 1);
	}
	/* the inputs only: scsi_tgt_submit() sets every result (a task
	 * taken again from the cache has the last command's there) */
	t->cmd.lun = lun_decode(t->lun_raw);
	t->cmd.nexus = c->nexus;
	t->cmd.cdb = t->cdb;
	t->cmd.cdb_len = (uint8_t)(ISCSI_CDB_LEN + ahs.ext_cdb_len > 255 ?
				   255 : ISCSI_CDB_LEN + ahs.ext_cdb_len);
	t->cmd.dir = t->write ? SCSI_DIR_TO_DEVICE :
		     t->read ? SCSI_DIR_FROM_DEVICE : SCSI_DIR_NONE;
	t->cmd.xfer_len = t->xfer;
	t->cmd.done = task_done;
	t->cmd.priv = t;
	t->cmd.iov = NULL;
	t->cmd.iovcnt = 0;
	t->cmd.no_response = false;
	if (no_buf) {
		rx_data(c, NULL, dlen);
		task_end_now(c, t, SAM_STAT_TASK_SET_FULL);
		return 0;
	}
	if (t->xfer) {
		t->iov = (struct iovec){ t->buf, t->xfer };
		t->cmd.iov = &t->iov;
		t->cmd.iovcnt = 1;
	}
	if (t->read && t->write) {
		/* bidirectional commands: none in SBC the core runs */
		rx_data(c, NULL, dlen);
		/* ILLEGAL REQUEST, INVALID FIELD IN CDB */
		task_fail_now(c, t, 0x05, 0x24, 0x00);
		return 0;
	}
	if (!t->write) {
		if (dlen)
			return proto_error(c, ISCSI_REJECT_PROTOCOL_ERROR,
					   "data segment on a command without W");
		task_submit(c, t);
		return 0;
	}
	/* immediate data (11.3.4.2 ... FirstBurstLength, EDTL) */
	if (dlen && (!c->p.immediate_data || dlen > c->p.first_burst_length ||
		     dlen > t->edtl))
		return proto_error(c, ISCSI_REJECT_PROTOCOL_ERROR,
				   "immediate data not allowed or too long");
	if (!(flags & ISCSI_CMD_F) && (c->p.initial_r2t || dlen >= t->edtl))
		return proto_error(c, ISCSI_REJECT_PROTOCOL_ERROR,
				   "unsolicited Data-Out announced (F clear) where none may follow");
	r = rx_data(c, dlen <= t->xfer ? t->buf : NULL, dlen);
	if (r)
		return r == -EBADMSG ?
		       proto_error(c, ISCSI_REJECT_DATA_DIGEST, "data digest error") : r;
	t->received = dlen < t->xfer ? dlen : t->xfer;
	t->unsol_end = t->received;
	if (!(flags & ISCSI_CMD_F)) {
		uint32_t fb = c->p.first_burst_length < t->edtl ?
			      c->p.first_burst_length : t->edtl;

		t->unsol_end = fb < t->xfer ? fb : t->xfer;
	}
	t->r2t_next = t->unsol_end;
	t->unsol_open = !(flags & ISCSI_CMD_F) && t->unsol_end > t->received;
	t->state = TASK_DATA;
	if (t->received >= t->xfer) {
		task_submit(c, t);
		return 0;
	}
	send_r2ts(c, t);
	return 0;
}

/*
 * A Data-Out burst of @t ended (F bit): the unsolicited one (@r NULL) or
 * the one an R2T asked for.  Return whether data may still come.
 */
static bool burst_end(struct iscsi_task *t, struct r2t *r)
{
	if (r)
		*r = t->r2t[--t->nr_r2t];
	else
		t->unsol_open = false;
	return t->unsol_open || t->nr_r2t;
}

/*
 * A Data-Out of a task whose data went bad (RFC 7143 7.8.1 option b, which
 * 7.9 applies to a DataSN out of order, an implied digest error): its data
 * is discarded, no R2T more is sent, and once every burst outstanding has
 * ended (F bit) the task ends with CHECK CONDITION, ABORTED COMMAND,
 * PROTOCOL SERVICE CRC ERROR (47/05, 11.4.7.2).  The connection and the
 * session stay: at ErrorRecoveryLevel 0 this is the one recovery a target
 * has that does not drop them.
 */
static int data_out_bad(struct iscsi_conn *c, struct iscsi_task *t,
			struct r2t *r, bool final, int rx)
{
	if (!t->data_err) {
		t->data_err = true;
		c->data_errs++;
	}
	if (rx == -EBADMSG)
		send_reject(c, ISCSI_REJECT_DATA_DIGEST);
	else if (rx)
		return rx;
	if (final && !burst_end(t, r))
		task_fail_now(c, t, 0x0b, 0x47, 0x05);
	return 0;
}

static int handle_data_out(struct iscsi_conn *c)
{
	const uint8_t *b = c->bhs;
	uint32_t itt = get_be32(b + BHS_ITT), ttt = get_be32(b + BHS_TTT);
	uint32_t off = get_be32(b + BHS_BUF_OFFSET), sn = get_be32(b + BHS_DATASN);
	uint32_t len = c->l.data_len;
	bool final = b[BHS_FLAGS] & ISCSI_FLAG_FINAL;
	struct iscsi_task *t = task_find(c, itt);
	struct r2t *r = NULL;
	uint32_t end, *datasn;
	unsigned int i;
	int ret;

	if (!t || t->state != TASK_DATA) {
		ret = rx_data(c, NULL, len);
		if (ret || (t == NULL && was_aborted(c, itt)))
			return ret; /* data of an aborted task: dropped (4.2.3.x) */
		return send_reject(c, ISCSI_REJECT_INVALID_PDU_FIELD);
	}
	if (ttt == ISCSI_RSVD_TAG) {
		if (!t->unsol_open)
			return proto_error(c, ISCSI_REJECT_PROTOCOL_ERROR,
					   "unsolicited Data-Out after its burst ended");
		end = t->unsol_end;
		datasn = &t->unsol_datasn;
	} else {
		for (i = 0; i < t->nr_r2t; i++)
			if (t->r2t[i].ttt == ttt)
				r = &t->r2t[i];
		if (!r)
			return proto_error(c, ISCSI_REJECT_INVALID_PDU_FIELD,
					   "Data-Out for no R2T (Target Transfer Tag)");
		end = r->off + r->len;
		datasn = &r->datasn;
	}
	if (t->data_err)
		return data_out_bad(c, t, r, final, rx_data(c, NULL, len));
	/* DataPDUInOrder and DataSequenceInOrder are Yes: data comes in order,
	 * so a DataSN out of order means PDUs went missing (7.9) */
	if (sn != *datasn)
		return data_out_bad(c, t, r, final, rx_data(c, NULL, len));
	if (off != t->received || len > end - off || !len)
		return proto_error(c, ISCSI_REJECT_PROTOCOL_ERROR,
				   "Data-Out offset or length outside the burst");
	if (final != (off + len == end))
		return proto_error(c, ISCSI_REJECT_PROTOCOL_ERROR,
				   "Data-Out F bit not at the end of its burst");
	ret = rx_data(c, t->buf + off, len);
	if (ret)
		return data_out_bad(c, t, r, final, ret);
	(*datasn)++;
	t->received += len;
	if (r) {
		r->got += len;
		if (final)
			burst_end(t, r); /* this R2T is answered: solicit more */
	} else if (final) {
		burst_end(t, NULL);
	}
	if (t->received == t->xfer) {
		task_submit(c, t);
		return 0;
	}
	if (t->received >= t->unsol_end)
		send_r2ts(c, t);
	return 0;
}

static int handle_nop_out(struct iscsi_conn *c)
{
	uint32_t itt = get_be32(c->bhs + BHS_ITT), len = c->l.data_len;
	uint8_t bhs[ISCSI_BHS_LEN];
	int r;

	r = rx_data(c, NULL, len);
	if (r)
		return r == -EBADMSG ? send_reject(c, ISCSI_REJECT_DATA_DIGEST) : r;
	if (itt == ISCSI_RSVD_TAG) {
		/*
		 * 11.18: the answer to our NOP-In ping (its Target Transfer
		 * Tag copied back), or a NOP-Out that wants no answer; neither
		 * gets one.  A TTT of no ping outstanding is dropped.
		 */
		if (c->ping_out && get_be32(c->bhs + BHS_TTT) == c->ping_ttt)
			c->ping_out = false;
		return 0;
	}
	if (!cmdsn_accept(c))
		return 0;
	iscsi_bhs_init(bhs, ISCSI_OP_NOP_IN, ISCSI_FLAG_FINAL);
	memcpy(bhs + BHS_LUN, c->bhs + BHS_LUN, 8);
	put_be32(bhs + BHS_ITT, itt);
	put_be32(bhs + BHS_TTT, ISCSI_RSVD_TAG);
	put_sn(c, bhs, true);
	/* echo the ping data, as much as the initiator takes in one PDU */
	return tx_pdu(c, bhs, c->rx, len < c->peer_mrdsl ? len : c->peer_mrdsl);
}

/* A NOP-In ping unanswered for nopin_ms: the connection is dead. */
static bool ping_overdue(struct iscsi_conn *c, uint64_t now)
{
	if (now - c->ping_sent < c->srv->cfg.nopin_ms)
		return false;
	snprintf(c->why_buf, sizeof(c->why_buf),
		 "no NOP-Out answered the NOP-In ping (TTT 0x%x) within %u ms: initiator dead",
		 c->ping_ttt, c->srv->cfg.nopin_ms);
	c->why = c->why_buf;
	return true;
}

/*
 * Keep-alive (RFC 7143 11.19).  Called where the thread waits for lack of
 * anything to do (after a receive wait that timed out, every KA_SLEEPS
 * empty passes with commands in the core): the clock is read here, not per
 * PDU, and activity is rx_bytes having moved since the last look.  A
 * connection that has received nothing for nopin_ms gets a NOP-In with a
 * Target Transfer Tag, which asks for a NOP-Out; one whose ping stays
 * unanswered for nopin_ms more ends.  Return 0; -ETIMEDOUT or -EPIPE: the
 * connection ends (c->why says why).
 */
static int keepalive(struct iscsi_conn *c)
{
	static const uint8_t lun0[8];
	uint8_t bhs[ISCSI_BHS_LEN];
	uint64_t now = now_ms();

	if (c->rx_bytes != c->ka_rx) {
		c->ka_rx = c->rx_bytes;
		c->ka_since = now;
	}
	if (c->ping_out)
		return ping_overdue(c, now) ? -ETIMEDOUT : 0;
	if (now - c->ka_since < c->srv->cfg.nopin_ms)
		return 0;
	c->ping_ttt = c->next_ttt++;
	if (c->ping_ttt == ISCSI_RSVD_TAG)
		c->ping_ttt = c->next_ttt++;
	c->ping_out = true;
	c->ping_sent = now;
	c->pings++;
	iscsi_nop_in_ping_init(bhs, c->ping_ttt, lun0);
	/* 11.19: the next StatSN, not advanced (the ITT is 0xffffffff) */
	put_sn(c, bhs, false);
	if (tx_pdu(c, bhs, NULL, 0) || tx_flush(c))
		return -EPIPE;
	return 0;
}

/*
 * At the stop, once the connection's commands have been answered: ask the
 * initiator to log out (11.9.1, AsyncEvent 1, Parameter3 the seconds it
 * has) and wait for its Logout until STOP_LOGOUT_MS, or a quarter of the
 * server's stop deadline, after the stop was seen at @seen (past the
 * deadline the server exits unflushed).  Return false when that time has
 * already gone (the connection closes at once).
 */
static bool ask_logout(struct iscsi_conn *c, uint64_t seen)
{
	unsigned int dl = c->srv->cfg.stop_deadline_ms ?
			  c->srv->cfg.stop_deadline_ms : 30000;
	unsigned int wait = dl / 4 < STOP_LOGOUT_MS ? dl / 4 : STOP_LOGOUT_MS;
	uint8_t bhs[ISCSI_BHS_LEN];

	if (now_ms() >= seen + wait || tx_failed(c))
		return false;
	iscsi_async_logout_init(bhs, (uint16_t)((wait + 999) / 1000));
	/* an unsolicited status: StatSN advances (as LIO, and Linux's
	 * initiator expects: ExpStatSN = this StatSN + 1); the CmdSN window
	 * is closed (max_cmdsn() while stopping) */
	put_sn(c, bhs, true);
	if (tx_pdu(c, bhs, NULL, 0) || tx_flush(c))
		return false;
	c->logout_by = seen + wait;
	c->logout_wait = wait;
	return true;
}

/* End every task of @lun (all LUNs: UINT64_MAX) of this connection. */
static void abort_waiting(struct iscsi_conn *c, uint64_t lun)
{
	struct iscsi_task *t, *n;

	for (t = c->tasks; t; t = n) {
		n = t->next;
		if (lun != UINT64_MAX && t->cmd.lun != lun)
			continue;
		t->aborted = true;
		remember_aborted(c, t->itt);
		if (t->state == TASK_DATA)
			task_free(c, t);
	}
}

/* A reset that did nothing: the core's commands are answered after all. */
static void unabort(struct iscsi_conn *c)
{
	struct iscsi_task *t;

	for (t = c->tasks; t; t = t->next)
		if (t->state == TASK_CORE)
			t->aborted = false;
}

/*
 * Drop the commands still waiting for Data-Out (they never reach the
 * core); those in the core run to their end and are answered.
 */
static void drop_waiting(struct iscsi_conn *c)
{
	struct iscsi_task *t, *n;

	for (t = c->tasks; t; t = n) {
		n = t->next;
		if (t->state == TASK_DATA) {
			remember_aborted(c, t->itt);
			task_free(c, t);
		}
	}
}

/* Run another connection's task management request on this thread. */
static int xtmf_run(struct iscsi_conn *c, uint8_t op, uint64_t lun,
		    uint32_t itt)
{
	struct iscsi_task *t;
	int r, ret = 0;

	switch (op) {
	case XTMF_ABORT_TASK:
		t = task_find(c, itt);
		if (!t || t->cmd.lun != lun)
			return -ENOENT;
		t->aborted = true;
		remember_aborted(c, t->itt);
		if (t->state == TASK_DATA) {
			task_free(c, t);
			return 0;
		}
		r = scsi_tgt_abort_task(c->q, &t->cmd);
		return r == 0 || r == -ENOENT ? 0 : -EIO;
	case XTMF_ABORT_TASK_SET:
		abort_waiting(c, lun);
		for (t = c->tasks; t; t = t->next)
			if (t->cmd.lun == lun && t->state == TASK_CORE &&
			    (r = scsi_tgt_abort_task(c->q, &t->cmd)) && r != -ENOENT)
				ret = -EIO;
		return ret;
	case XTMF_MARK:
		abort_waiting(c, lun);
		return 0;
	default:
		unabort(c);
		return 0;
	}
}

/*
 * A task management request another connection of the session posted to
 * this one, if any: taken under srv->lock (the poster may withdraw one
 * not taken yet), run here, answered under it (xtmf_take()).  One
 * atomic load, inline, when there is none (xtmf_serve(), called from the
 * loop's every pass and its waits).
 */
static void __attribute__((noinline)) xtmf_take(struct iscsi_conn *c)
{
	struct blk_iscsi_server *srv = c->srv;
	struct iscsi_xtmf *x;
	uint32_t itt;
	uint64_t lun;
	uint8_t op;
	int r;

	blk_mutex_lock(&srv->lock);
	x = c->xtmf;
	if (!x) {
		blk_mutex_unlock(&srv->lock);
		return;
	}
	x->taken = true;
	op = x->op;
	lun = x->lun;
	itt = x->itt;
	blk_mutex_unlock(&srv->lock);
	r = xtmf_run(c, op, lun, itt);
	flush_done(c); /* what it ended gets no response: gone now */
	blk_mutex_lock(&srv->lock);
	x->result = r;
	x->done = true;
	__atomic_store_n(&c->xtmf, NULL, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&srv->cond);
	blk_mutex_unlock(&srv->lock);
}

static inline void xtmf_serve(struct iscsi_conn *c)
{
	if (__builtin_expect(!!__atomic_load_n(&c->xtmf, __ATOMIC_ACQUIRE), 0))
		xtmf_take(c);
}

/* This connection leaves its session: nothing more is posted to it, and
 * what was posted and not taken is answered "no such task". */
static void xtmf_close(struct iscsi_conn *c)
{
	struct blk_iscsi_server *srv = c->srv;

	xtmf_serve(c);
	blk_mutex_lock(&srv->lock);
	c->xtmf_closed = true;
	if (c->xtmf) {
		c->xtmf->result = -ENOENT;
		c->xtmf->done = true;
		__atomic_store_n(&c->xtmf, NULL, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&srv->cond);
	}
	blk_mutex_unlock(&srv->lock);
}

/*
 * Run @op on every other connection of the session and wait for them
 * (each on its own thread).  While it waits this thread serves what is
 * posted to it, so two connections asking each other do not wait on each
 * other.  A request not taken within XTMF_WAIT_MS is withdrawn (-EIO);
 * one taken is awaited (the core bounds a function by tmf_timeout_ms).
 * Return: XTMF_ABORT_TASK: 0 when a connection had the task and ended
 * it, -ENOENT when none had it; the others: 0; -EIO: one failed or did
 * not answer.
 */
static int xtmf_others(struct iscsi_conn *c, uint8_t op, uint64_t lun,
		       uint32_t itt)
{
	struct blk_iscsi_server *srv = c->srv;
	struct iscsi_session *s = c->sess;
	struct iscsi_xtmf x[ISCSI_SESSION_MAX_CONNS];
	struct iscsi_conn *to[ISCSI_SESSION_MAX_CONNS];
	unsigned int i, n = 0;
	uint64_t since = now_ms();
	bool busy = false, all;
	int r = op == XTMF_ABORT_TASK ? -ENOENT : 0;

	if (!other_conns(c))
		return r;
	blk_mutex_lock(&srv->lock);
	for (;;) {
		all = true;
		for (i = 0; i < s->nr_conns; i++) {
			struct iscsi_conn *o = s->conns[i];
			unsigned int k;

			for (k = 0; k < n && to[k] != o; k++)
				;
			if (o == c || s->gone[i] || o->xtmf_closed || k < n)
				continue;
			if (o->xtmf) {
				all = false; /* another's request first */
				continue;
			}
			x[n] = (struct iscsi_xtmf){ .op = op, .lun = lun,
						    .itt = itt, .result = -EIO };
			to[n] = o;
			__atomic_store_n(&o->xtmf, &x[n], __ATOMIC_RELEASE);
			n++;
		}
		for (i = 0; i < n; i++)
			all &= x[i].done;
		if (all)
			break;
		if (now_ms() - since > XTMF_WAIT_MS) {
			/* withdraw what was not taken; wait for the rest */
			bool taken = false;

			for (i = 0; i < n; i++) {
				if (!x[i].done && !x[i].taken &&
				    to[i]->xtmf == &x[i]) {
					__atomic_store_n(&to[i]->xtmf, NULL,
							 __ATOMIC_RELEASE);
					x[i].done = true;
					busy = true;
				}
				taken |= !x[i].done;
			}
			if (!taken)
				break;
		}
		export_cond_wait_ms(&srv->cond, &srv->lock.m, 5);
		blk_mutex_unlock(&srv->lock);
		xtmf_serve(c);
		blk_mutex_lock(&srv->lock);
	}
	for (i = 0; i < n; i++) {
		if (op == XTMF_ABORT_TASK) {
			if (x[i].result == 0 || (x[i].result == -EIO && r == -ENOENT))
				r = x[i].result;
		} else if (x[i].result) {
			r = -EIO;
		}
	}
	blk_mutex_unlock(&srv->lock);
	return busy && r == -ENOENT ? -EIO : r;
}

static int handle_tmf(struct iscsi_conn *c)
{
	const uint8_t *b = c->bhs;
	uint8_t func = b[BHS_FLAGS] & ISCSI_TMF_FUNC_MASK, resp;
	uint64_t lun = lun_decode(b + BHS_LUN);
	uint8_t bhs[ISCSI_BHS_LEN];
	struct iscsi_task *t;
	bool cold = false;
	int r = 0;

	if (!cmdsn_accept(c))
		return 0;
	if (!c->node) {
		resp = ISCSI_TMF_RSP_NOT_SUPPORTED;
		goto answer;
	}
	switch (func) {
	case ISCSI_TMF_ABORT_TASK: {
		uint32_t ref = get_be32(b + BHS_TMF_REF_TASK);

		t = task_find(c, ref);
		if (!t && other_conns(c)) {
			/* the task may be another connection's (11.5.1:
			 * the function may come on any connection) */
			r = xtmf_others(c, XTMF_ABORT_TASK, lun, ref);
			if (r != -ENOENT) {
				resp = !r ? ISCSI_TMF_RSP_COMPLETE :
				       ISCSI_TMF_RSP_REJECTED;
				break;
			}
		}
		if (!t) {
			/*
			 * 11.6.1 b: a task not received yet whose RefCmdSN is
			 * in the window and before this request's CmdSN:
			 * complete, its CmdSN "considered received"; c: any
			 * other (ended, or outside the window): no such task.
			 */
			uint32_t ref_sn = get_be32(b + BHS_TMF_REFCMDSN);
			uint32_t exp = exp_cmdsn(c);

			if (iscsi_sn_cmp(ref_sn, exp) < 0 ||
			    iscsi_sn_cmp(ref_sn, get_be32(b + BHS_CMDSN)) >= 0) {
				resp = ISCSI_TMF_RSP_NO_TASK;
				break;
			}
			resp = ISCSI_TMF_RSP_COMPLETE;
			/* the next CmdSN expected: taken here, so that the
			 * command, should it come, is dropped as one taken,
			 * and the session's later commands are not held
			 * behind a CmdSN that never comes.  One further
			 * ahead (several connections: the CmdSNs before it
			 * are on others) is not tracked (docs/iscsi.md). */
			if (ref_sn == exp)
				__atomic_compare_exchange_n(&c->sess->exp_cmdsn,
							    &exp, exp + 1, false,
							    __ATOMIC_ACQ_REL,
							    __ATOMIC_ACQUIRE);
			break;
		}
		if (t->cmd.lun != lun) {
			resp = ISCSI_TMF_RSP_NO_TASK;
			break;
		}
		t->aborted = true;
		remember_aborted(c, t->itt);
		if (t->state == TASK_DATA) {
			task_free(c, t);
			resp = ISCSI_TMF_RSP_COMPLETE;
			break;
		}
		r = scsi_tgt_abort_task(c->q, &t->cmd);
		resp = r == 0 || r == -ENOENT ? ISCSI_TMF_RSP_COMPLETE :
		       ISCSI_TMF_RSP_REJECTED;
		break;
	}
	case ISCSI_TMF_ABORT_TASK_SET:
		/* SAM-5 7.3: this session's tasks (one I_T nexus), on every
		 * connection of it; a LUN the target has not: 2 (11.6.1) */
		if (lun >= c->node->nr_luns) {
			resp = ISCSI_TMF_RSP_NO_LUN;
			break;
		}
		resp = xtmf_others(c, XTMF_ABORT_TASK_SET, lun, 0) ?
		       ISCSI_TMF_RSP_REJECTED : ISCSI_TMF_RSP_COMPLETE;
		abort_waiting(c, lun);
		for (t = c->tasks; t; t = t->next)
			if (t->cmd.lun == lun && t->state == TASK_CORE &&
			    (r = scsi_tgt_abort_task(c->q, &t->cmd)) &&
			    r != -ENOENT)
				resp = ISCSI_TMF_RSP_REJECTED;
		break;
	case ISCSI_TMF_CLEAR_TASK_SET:
		/*
		 * SAM-5 7.4: every nexus's tasks on the unit; the core ends
		 * ours before it returns, and other sessions' as TAS says
		 * (TASK ABORTED, or no response and 2F/00)
		 */
		abort_waiting(c, lun);
		/* the session's other connections: no response for theirs */
		xtmf_others(c, XTMF_MARK, lun, 0);
		r = scsi_tgt_clear_task_set(c->q, lun, c->nexus);
		resp = !r ? ISCSI_TMF_RSP_COMPLETE :
		       r == -EINVAL ? ISCSI_TMF_RSP_NO_LUN : ISCSI_TMF_RSP_REJECTED;
		if (r == -EINVAL) {
			unabort(c);
			xtmf_others(c, XTMF_UNMARK, lun, 0);
		}
		break;
	case ISCSI_TMF_LUN_RESET:
		abort_waiting(c, lun);
		xtmf_others(c, XTMF_MARK, lun, 0);
		r = scsi_tgt_lun_reset(c->q, lun, c->nexus);
		resp = !r ? ISCSI_TMF_RSP_COMPLETE :
		       r == -EINVAL ? ISCSI_TMF_RSP_NO_LUN : ISCSI_TMF_RSP_REJECTED;
		if (r == -EINVAL || r == -EIO) {
			unabort(c);
			xtmf_others(c, XTMF_UNMARK, lun, 0);
		}
		break;
	case ISCSI_TMF_TARGET_COLD_RESET:
		cold = true;
		/* fall through */
	case ISCSI_TMF_TARGET_WARM_RESET:
		abort_waiting(c, UINT64_MAX);
		xtmf_others(c, XTMF_MARK, UINT64_MAX, 0);
		r = scsi_tgt_target_reset(c->q, c->nexus);
		resp = !r ? ISCSI_TMF_RSP_COMPLETE : ISCSI_TMF_RSP_REJECTED;
		if (r == -EIO) {
			unabort(c);
			xtmf_others(c, XTMF_UNMARK, UINT64_MAX, 0);
		}
		break;
	case ISCSI_TMF_CLEAR_ACA:
		resp = ISCSI_TMF_RSP_NOT_SUPPORTED; /* no ACA (NACA refused) */
		break;
	case ISCSI_TMF_TASK_REASSIGN:
		resp = ISCSI_TMF_RSP_NO_REASSIGN; /* ErrorRecoveryLevel 0 */
		break;
	default:
		resp = ISCSI_TMF_RSP_REJECTED;
		break;
	}
answer:
	iscsi_bhs_init(bhs, ISCSI_OP_TMF_RSP, ISCSI_FLAG_FINAL);
	bhs[BHS_RSP_RESPONSE] = resp;
	put_be32(bhs + BHS_ITT, get_be32(b + BHS_ITT));
	/* tasks the function ended get no response: drop them first */
	flush_done(c);
	put_sn(c, bhs, true);
	r = tx_pdu(c, bhs, NULL, 0);
	if (cold && resp == ISCSI_TMF_RSP_COMPLETE) {
		/* 11.5.1: a cold reset drops the connection after answering */
		c->closing = true;
		c->why = "TARGET COLD RESET";
	}
	return r;
}

/* SendTargets (13.3, appendix C): the targets and our portals. */
static void send_targets(struct iscsi_conn *c, const char *what,
			 struct iscsi_text_out *out)
{
	unsigned int i;

	for (i = 0; i < c->srv->cfg.nr_targets; i++) {
		const char *name = c->srv->nodes[i].name;

		if (!iscsi_srv_allowed(c->srv, i, c->p.initiator_name))
			continue; /* not in its ACL: not shown */
		if (!strcmp(what, "All") ? !c->node || c->node_idx == (int)i :
		    *what ? !strcmp(what, name) : c->node_idx == (int)i) {
			iscsi_text_add(out, "TargetName", name);
			iscsi_srv_target_addresses(c->srv, c->portal, out);
		}
	}
}

static int handle_text(struct iscsi_conn *c)
{
	const uint8_t *b = c->bhs;
	uint32_t len = c->l.data_len;
	bool cont = b[BHS_FLAGS] & ISCSI_TEXT_C;
	uint8_t bhs[ISCSI_BHS_LEN];
	struct iscsi_params scratch;
	struct iscsi_neg neg = { 0 };
	struct iscsi_text_out out;
	char *buf, *t;
	int r;

	r = rx_data(c, NULL, len);
	if (r)
		return r == -EBADMSG ? send_reject(c, ISCSI_REJECT_DATA_DIGEST) : r;
	if (!cmdsn_accept(c))
		return 0;
	if ((uint64_t)c->text_len + len > ISCSI_TEXT_MAX)
		return proto_error(c, ISCSI_REJECT_PROTOCOL_ERROR,
				   "Text request over 64 KiB");
	t = realloc(c->text, c->text_len + len + 1);
	if (!t)
		return proto_error(c, ISCSI_REJECT_LONG_OP, "out of memory");
	c->text = t;
	memcpy(t + c->text_len, c->rx, len);
	c->text_len += len;
	iscsi_bhs_init(bhs, ISCSI_OP_TEXT_RSP, 0);
	put_be32(bhs + BHS_ITT, get_be32(b + BHS_ITT));
	memcpy(bhs + BHS_LUN, b + BHS_LUN, 8);
	if (cont) {
		/* more of the request follows: an empty answer asks for it */
		put_be32(bhs + BHS_TTT, 1);
		put_sn(c, bhs, true);
		return tx_pdu(c, bhs, NULL, 0);
	}
	buf = malloc(c->peer_mrdsl);
	if (!buf)
		return proto_error(c, ISCSI_REJECT_LONG_OP, "out of memory");
	out = (struct iscsi_text_out){ .buf = buf, .cap = c->peer_mrdsl };
	scratch = c->p;
	neg.ours = &c->srv->ours;
	neg.cur = &scratch;
	neg.peer_max_recv_dsl = c->peer_mrdsl;
	r = iscsi_keys_negotiate(&neg, c->text, c->text_len, &out, NULL);
	free(c->text);
	c->text = NULL;
	c->text_len = 0;
	if (r == -EINVAL) {
		free(buf);
		return send_reject(c, ISCSI_REJECT_PROTOCOL_ERROR);
	}
	/* MaxRecvDataSegmentLength may change in full feature phase (ALL) */
	if (neg.peer_max_recv_dsl != c->peer_mrdsl)
		c->peer_mrdsl = neg.peer_max_recv_dsl;
	if (neg.got_send_targets)
		send_targets(c, neg.send_targets, &out);
	bhs[BHS_FLAGS] = ISCSI_FLAG_FINAL;
	put_be32(bhs + BHS_TTT, ISCSI_RSVD_TAG);
	put_sn(c, bhs, true);
	r = tx_pdu(c, bhs, buf, out.overflow ? 0 : (uint32_t)out.len);
	free(buf);
	return r;
}

/* Wait for the commands in the target core to end, and answer them. */
static void drain(struct iscsi_conn *c)
{
	while (c->in_core && !killed(c)) {
		if (!scsi_tgt_poll(c->q)) {
			struct timespec ts = { 0, 20000 };

			nanosleep(&ts, NULL);
		}
		flush_done(c);
		xtmf_serve(c);
	}
	flush_done(c);
}

static int handle_logout(struct iscsi_conn *c)
{
	const uint8_t *b = c->bhs;
	uint8_t reason = b[BHS_FLAGS] & ISCSI_LOGOUT_REASON_MASK;
	uint8_t bhs[ISCSI_BHS_LEN], resp;

	uint16_t cid = get_be16(b + BHS_LOGOUT_CID);
	bool other = false;

	if (!cmdsn_accept(c))
		return 0;
	if (reason == ISCSI_LOGOUT_SESSION) {
		/*
		 * 11.14.1: the whole session closes.  Its other connections
		 * end as lost ones (their tasks with them; no Asynchronous
		 * Message: the initiator asked for this) before the answer.
		 */
		resp = ISCSI_LOGOUT_OK;
		iscsi_srv_session_end_others(c->srv, c->sess, c, -1,
					     "logout (session) on another connection of the session",
					     LOGOUT_OTHERS_MS);
	} else if (reason == ISCSI_LOGOUT_CONNECTION) {
		/* 11.14.1: the connection @cid, this one or another of the
		 * session (which ends as a lost connection) */
		if (cid == c->cid)
			resp = ISCSI_LOGOUT_OK;
		else if (iscsi_srv_session_end_others(c->srv, c->sess, c, cid,
						      "logout (connection) asked on another connection",
						      LOGOUT_OTHERS_MS)) {
			resp = ISCSI_LOGOUT_OK;
			other = true;
		} else {
			resp = ISCSI_LOGOUT_CID_NOT_FOUND;
		}
	} else {
		resp = ISCSI_LOGOUT_RECOVERY_UNSUPPORTED;
	}
	if (other) {
		/* this connection goes on */
		iscsi_bhs_init(bhs, ISCSI_OP_LOGOUT_RSP, ISCSI_FLAG_FINAL);
		bhs[BHS_LOGOUT_RESPONSE] = resp;
		put_be32(bhs + BHS_ITT, get_be32(b + BHS_ITT));
		put_sn(c, bhs, true);
		return tx_pdu(c, bhs, NULL, 0);
	}
	/* 11.14: the response follows the end of the connection's commands */
	drop_waiting(c);
	drain(c);
	iscsi_bhs_init(bhs, ISCSI_OP_LOGOUT_RSP, ISCSI_FLAG_FINAL);
	bhs[BHS_LOGOUT_RESPONSE] = resp;
	put_be32(bhs + BHS_ITT, get_be32(b + BHS_ITT));
	put_sn(c, bhs, true);
	put_be16(bhs + BHS_LOGOUT_T2W, 0);
	put_be16(bhs + BHS_LOGOUT_T2R, 0);
	tx_pdu(c, bhs, NULL, 0);
	if (resp == ISCSI_LOGOUT_OK) {
		c->closing = true;
		if (c->logout_by)
			c->why = reason == ISCSI_LOGOUT_SESSION ?
				 "server stopping: logout (session) as the Asynchronous Message asked" :
				 "server stopping: logout (connection) as the Asynchronous Message asked";
		else
			c->why = reason == ISCSI_LOGOUT_SESSION ? "logout (session)" :
				 "logout (connection)";
	}
	return 0;
}

/*
 * Read one PDU's header (and check it), then hand it to its handler,
 * which reads the data segment.  Return 0 or -errno (connection ends).
 */
static int rx_pdu_header(struct iscsi_conn *c, uint32_t max_dsl)
{
	uint8_t hd[4];
	struct iovec iov[2];
	int r, chk;

	r = rx_full(c, c->bhs, ISCSI_BHS_LEN, true);
	if (r)
		return r;
	chk = iscsi_pdu_check(c->bhs, max_dsl, &c->l);
	if (chk == -EMSGSIZE) {
		c->why = "data segment over MaxRecvDataSegmentLength";
		send_reject(c, ISCSI_REJECT_PROTOCOL_ERROR);
		return -EPROTO;
	}
	if (c->l.ahs_len && (r = rx_full(c, c->ahs, c->l.ahs_len, false)))
		return r;
	if (c->p.header_digest) {
		r = rx_full(c, hd, 4, false);
		if (r)
			return r;
		iov[0] = (struct iovec){ c->bhs, ISCSI_BHS_LEN };
		iov[1] = (struct iovec){ c->ahs, c->l.ahs_len };
		if (iscsi_digest(iov, 2) != iscsi_digest_get(hd)) {
			/* lengths cannot be trusted: ErrorRecoveryLevel 0 ends */
			c->why = "header digest error";
			return -EPROTO;
		}
	}
	if (chk == -EOPNOTSUPP) {
		r = rx_data(c, NULL, c->l.data_len);
		if (r && r != -EBADMSG)
			return r;
		send_reject(c, ISCSI_REJECT_CMD_NOT_SUPPORTED);
		return 1;
	}
	if (chk == -EPROTO) {
		c->why = "PDU not valid from an initiator";
		send_reject(c, ISCSI_REJECT_PROTOCOL_ERROR);
		return -EPROTO;
	}
	return 0;
}

static int ffp_pdu(struct iscsi_conn *c)
{
	int r = rx_pdu_header(c, c->max_dsl);

	if (r)
		return r > 0 ? 0 : r;
	if (c->logout_by) {
		uint8_t op = bhs_opcode(c->bhs);

		/*
		 * The stop asked for a Logout (11.9.1): new requests are
		 * refused, "waiting for logout"; a NOP-Out, a Logout and the
		 * Data-Out of commands already dropped go on as ever.
		 */
		if (op == ISCSI_OP_SCSI_CMD || op == ISCSI_OP_TMF_REQ ||
		    op == ISCSI_OP_TEXT_REQ) {
			r = rx_data(c, NULL, c->l.data_len);
			if (r && r != -EBADMSG)
				return r;
			if (!cmdsn_accept(c))
				return 0;
			return send_reject(c, ISCSI_REJECT_WAITING_FOR_LOGOUT);
		}
	}
	switch (bhs_opcode(c->bhs)) {
	case ISCSI_OP_SCSI_CMD:
		r = handle_scsi_cmd(c);
		break;
	case ISCSI_OP_DATA_OUT:
		r = handle_data_out(c);
		break;
	case ISCSI_OP_NOP_OUT:
		r = handle_nop_out(c);
		break;
	case ISCSI_OP_TMF_REQ:
		r = handle_tmf(c);
		break;
	case ISCSI_OP_TEXT_REQ:
		r = handle_text(c);
		break;
	case ISCSI_OP_LOGOUT_REQ:
		r = handle_logout(c);
		break;
	default: /* a Login Request in full feature phase */
		rx_data(c, NULL, c->l.data_len);
		return proto_error(c, ISCSI_REJECT_PROTOCOL_ERROR,
				   "Login Request in full feature phase");
	}
	return r == -EPROTO ? 0 : r;
}

/*
 * The full feature phase.  Each pass batches the responses of what ended,
 * then takes the PDUs that have arrived (at most PDU_BATCH in a row, their
 * commands' media I/O in one plug: scsi_tgt_plug()), then polls the core;
 * only when there is nothing to read and nothing ended does the batch go
 * out in one sendmsg() and the thread wait.  So a window of commands that
 * arrived in one segment is answered in one.
 */
static void full_feature(struct iscsi_conn *c)
{
	unsigned int taken = 0;
	bool ka = c->srv->cfg.nopin_ms != 0;
	int r;

	c->ka_since = now_ms();
	c->ka_rx = c->rx_bytes;
	while (!c->closing) {
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		ssize_t n = 0;

		flush_done(c);
		if (c->closing)
			break;
		if (killed(c)) {
			c->why = c->kill_why;
			break;
		}
		xtmf_serve(c);
		if (iscsi_stop_flag(c->srv) && !c->stopping) {
			uint64_t seen = now_ms();

			/* take nothing new; the commands in the core finish
			 * and are answered; then ask for a Logout */
			c->stopping = true;
			ka = false;
			drop_waiting(c);
			drain(c);
			if (killed(c))
				continue;
			if (!ask_logout(c, seen)) {
				if (!c->why)
					c->why = "server stopping";
				break;
			}
		}
		if (c->logout_by && now_ms() >= c->logout_by) {
			snprintf(c->why_buf, sizeof(c->why_buf),
				 "server stopping: no Logout within %u ms of the Asynchronous Message",
				 c->logout_wait);
			c->why = c->why_buf;
			break;
		}
		/* a ping outstanding: its answer is due even while busy */
		if (__builtin_expect(c->ping_out, 0) && ka &&
		    ping_overdue(c, now_ms()))
			break;
		/*
		 * A recv() that did not fill the buffer left the socket empty
		 * (rx_drained): another would only contend for the socket's
		 * lock with the peer's sends (__pv_queued_spin_lock_slowpath
		 * was 29 % of the thread under iscsi-perf with one more
		 * recv() per pass); the wait below looks again.
		 */
		if (taken < PDU_BATCH && !c->rxb_len && !c->rx_drained)
			n = rx_try(c);
		if (n < 0) {
			/* a kill shuts the socket down: say why it ended */
			c->why = killed(c) ? c->kill_why :
				 n == -EPIPE ? "initiator hung up" : "receive failed";
			break;
		}
		if (taken < PDU_BATCH && c->rxb_len) {
			taken++;
			if (c->q) /* none in a discovery session */
				scsi_tgt_plug(c->q);
			goto pdu;
		}
		taken = 0;
		if (c->in_core) {
			if (scsi_tgt_poll(c->q))
				continue;
			if (tx_flush(c))
				break;
			r = poll(&pfd, 1, 0);
			if (r > 0) {
				c->rx_drained = false;
				continue;
			}
			{
				struct timespec ts = { 0, 20000 };

				nanosleep(&ts, NULL);
			}
			/* commands in the core, nothing received: the
			 * keep-alive looks now and then */
			if (ka && ++c->ka_sleeps >= KA_SLEEPS) {
				c->ka_sleeps = 0;
				if (keepalive(c))
					break;
			}
			continue;
		}
		if (tx_flush(c))
			break;
		if (c->logout_by) {
			/* stopping: a Logout is awaited until logout_by */
			uint64_t now = now_ms();
			int ms = c->logout_by > now ?
				 (int)(c->logout_by - now) : 0;

			if (poll(&pfd, 1, ms < IDLE_WAIT_MS ? ms : IDLE_WAIT_MS) > 0)
				c->rx_drained = false;
			continue;
		}
		/* nothing in the core: wait for the peer in recv() itself,
		 * SO_RCVTIMEO (IDLE_WAIT_MS) bounding it for the stop flag */
		n = rx_recv(c, 0);
		if (n < 0) {
			/* a kill shuts the socket down: say why it ended */
			c->why = killed(c) ? c->kill_why :
				 n == -EPIPE ? "initiator hung up" : "receive failed";
			break;
		}
		if (!n) {
			/*
			 * The wait timed out: an idle connection keeps no
			 * cached task; the devices' queues are polled all the
			 * same (a network driver's timers: the iscsi LLD's
			 * keep-alive behind this target), and the keep-alive
			 * looks at the clock.
			 */
			if (c->nr_cache)
				task_cache_free(c);
			if (c->q)
				scsi_tgt_poll(c->q);
			if (ka && keepalive(c))
				break;
		}
		continue;
pdu:
		r = ffp_pdu(c);
		if (r && killed(c) && !c->why)
			c->why = c->kill_why;
		if (r) {
			if (!c->why)
				c->why = r == -EPIPE ? "initiator hung up" :
					 r == -ESHUTDOWN ? "stopped" :
					 r == -ETIMEDOUT ? "initiator stalled inside a PDU" :
					 r == -EPROTO ? "protocol error" : "receive failed";
			break;
		}
	}
	/* nothing more from the session's other connections */
	xtmf_close(c);
	/* commands still in the core end before the queue goes */
	abort_waiting(c, UINT64_MAX);
	if (c->in_core)
		scsi_tgt_queue_reset(c->q);
	c->closing = true;
	flush_done(c);
	tx_flush(c);
}

/*
 * I_T nexus loss (SAM-5 6.3.4), once the session's tasks have ended: the
 * target core releases an SPC-2 reservation the nexus holds, ends its
 * prevention of medium removal and leaves it the I_T NEXUS LOSS OCCURRED
 * unit attention in place of those it had pending; persistent
 * reservations stay (SPC-4 5.9.1).
 */
static void nexus_loss(struct iscsi_conn *c)
{
	scsi_tgt_nexus_loss(c->node->tgt, c->nexus);
}

/* ------------------------------------------------------------ login */

/* A failed login's response (a status the login state machine did not
 * give: the session, nexus or queue the end of the login needed). */
static int login_refuse(struct iscsi_login *l, uint8_t *rsp,
			struct iscsi_text_out *out, uint16_t status,
			const char *why)
{
	l->status = status;
	l->why = why;
	rsp[BHS_FLAGS] = 0;
	rsp[BHS_LOGIN_STATUS_CLASS] = (uint8_t)(status >> 8);
	rsp[BHS_LOGIN_STATUS_DETAIL] = (uint8_t)status;
	out->len = 0;
	bhs_set_dsl(rsp, 0);
	return ISCSI_LOGIN_FAILED;
}

/*
 * The login ends: a new session (its nexus, on the session list), or the
 * connection joins the live one its TSIH names (6.3.1: the session's
 * leading-only values, nexus and CmdSN; a queue of its own), before the
 * last response says yes.  Return: ISCSI_LOGIN_DONE or _FAILED (@rsp
 * rewritten).
 */
static int login_session(struct iscsi_conn *c, struct iscsi_login *l,
			 uint8_t *rsp, struct iscsi_text_out *out)
{
	struct blk_iscsi_server *srv = c->srv;
	struct iscsi_session *s = NULL;
	int target = l->params.discovery ? -1 : l->target;
	int r;

	/*
	 * A login whose last request came in as the server stopped (one
	 * that starts later is cut at its first PDU): no session; it would
	 * be asked to log out at once and hold the exit meanwhile.
	 */
	if (iscsi_stop_flag(srv))
		return login_refuse(l, rsp, out, ISCSI_LOGIN_SERVICE_UNAVAILABLE,
				    "the target is stopping");
	if (l->joining) {
		uint16_t st = iscsi_srv_session_join(srv, c, l->tsih, l->isid,
						     l->params.initiator_name,
						     target, l->cid, &s);
		const struct iscsi_params *sp;

		if (st)
			return login_refuse(l, rsp, out, st,
					    st == ISCSI_LOGIN_TOO_MANY_CONNECTIONS ?
					    "the session has MaxConnections connections already" :
					    "the session ended during the login");
		/* the session's values of the leading-only keys (13) */
		sp = &s->p;
		l->params.max_connections = sp->max_connections;
		l->params.initial_r2t = sp->initial_r2t;
		l->params.immediate_data = sp->immediate_data;
		l->params.max_burst_length = sp->max_burst_length;
		l->params.first_burst_length = sp->first_burst_length;
		l->params.default_time2wait = sp->default_time2wait;
		l->params.default_time2retain = sp->default_time2retain;
		l->params.max_outstanding_r2t = sp->max_outstanding_r2t;
		l->params.data_pdu_in_order = sp->data_pdu_in_order;
		l->params.data_sequence_in_order = sp->data_sequence_in_order;
		l->params.error_recovery_level = sp->error_recovery_level;
		l->params.protocol_level = sp->protocol_level;
		c->sess = s;
		c->nexus = s->nexus;
		c->node_idx = s->node;
		c->node = &srv->nodes[s->node];
	} else {
		s = calloc(1, sizeof(*s));
		if (!s)
			return login_refuse(l, rsp, out, ISCSI_LOGIN_OUT_OF_RESOURCES,
					    "out of memory");
		s->tsih = l->tsih;
		s->node = target;
		snprintf(s->iname, sizeof(s->iname), "%s", l->params.initiator_name);
		memcpy(s->isid, l->isid, 6);
		s->p = l->params;
		s->cids[0] = l->cid;
		s->exp_cmdsn = l->exp_cmdsn;
		r = iscsi_srv_session_add(srv, c, s);
		if (r) {
			free(s);
			return r == -ESHUTDOWN ?
			       login_refuse(l, rsp, out, ISCSI_LOGIN_SERVICE_UNAVAILABLE,
					    "the target is stopping") :
			       login_refuse(l, rsp, out, ISCSI_LOGIN_OUT_OF_RESOURCES,
					    "no I_T nexus left");
		}
		c->sess = s;
		c->nexus = s->nexus;
		if (target >= 0) {
			c->node_idx = target;
			c->node = &srv->nodes[target];
		}
	}
	if (c->node && scsi_tgt_queue_attach(c->node->tgt, &c->q)) {
		c->q = NULL;
		return login_refuse(l, rsp, out, ISCSI_LOGIN_OUT_OF_RESOURCES,
				    "no target queue left");
	}
	return ISCSI_LOGIN_DONE;
}

static int login(struct iscsi_conn *c, struct iscsi_login *l)
{
	uint64_t deadline = now_ms() + LOGIN_LIMIT_MS;
	uint8_t rsp[ISCSI_BHS_LEN];
	char *text = malloc(LOGIN_MAX_DSL);
	struct iscsi_text_out out = { .buf = text, .cap = LOGIN_MAX_DSL };
	int r;

	if (!text) {
		c->why = "out of memory";
		return -ENOMEM;
	}
	l->alloc_tsih = iscsi_srv_alloc_tsih;
	for (;;) {
		if (now_ms() > deadline) {
			c->why = "login not finished within 30 s";
			r = -ETIMEDOUT;
			break;
		}
		r = rx_pdu_header(c, LOGIN_MAX_DSL);
		if (r) {
			if (r > 0 || r == -EPROTO)
				c->why = "not a Login Request during login";
			else
				c->why = r == -EPIPE ? "initiator hung up during login" :
					 r == -ESHUTDOWN ? "server stopping" :
					 "login receive failed";
			r = -EPROTO;
			break;
		}
		if (bhs_opcode(c->bhs) != ISCSI_OP_LOGIN_REQ) {
			c->why = "not a Login Request during login";
			r = -EPROTO;
			break;
		}
		r = rx_data(c, NULL, c->l.data_len);
		if (r) {
			c->why = "login receive failed";
			break;
		}
		r = iscsi_login_step(l, c->bhs, c->rx, c->l.data_len, rsp, &out);
		if (r == ISCSI_LOGIN_DONE)
			r = login_session(c, l, rsp, &out);
		if (tx_pdu(c, rsp, text, (uint32_t)out.len)) {
			r = -EPIPE;
			c->why = "initiator hung up during login";
			break;
		}
		if (r == ISCSI_LOGIN_FAILED) {
			r = -EACCES;
			break;
		}
		if (r == ISCSI_LOGIN_DONE) {
			r = 0;
			break;
		}
	}
	free(text);
	return r;
}

struct iscsi_conn *iscsi_conn_new(struct blk_iscsi_server *srv, int fd,
				  unsigned long id)
{
	struct iscsi_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->srv = srv;
	c->fd = fd;
	c->id = id;
	c->node_idx = -1;
	return c;
}

/* Counters for each LUN of the target logged in to; -ENOMEM. */
static int metrics_open(struct iscsi_conn *c)
{
	struct blk_metrics_export *const *mx = c->node ? c->node->cfg.metrics : NULL;
	unsigned int i;

	if (!mx)
		return 0;
	c->mlun = calloc(c->node->nr_luns, sizeof(*c->mlun));
	if (!c->mlun)
		return -ENOMEM;
	c->nr_mlun = c->node->nr_luns;
	for (i = 0; i < c->nr_mlun; i++)
		if (blk_metrics_conn_open(mx[i], BLK_METRICS_ISCSI, c->id,
					  c->peer, &c->mlun[i]))
			return -ENOMEM;
	/* a NULL entry (an export not counted) stands for LUN 0's */
	for (i = 1; i < c->nr_mlun; i++)
		if (!c->mlun[i])
			c->mlun[i] = c->mlun[0];
	if (!c->mlun[0]) {
		free(c->mlun);
		c->mlun = NULL;
		c->nr_mlun = 0;
	}
	return 0;
}

static void metrics_close(struct iscsi_conn *c)
{
	unsigned int i;

	for (i = 0; i < c->nr_mlun; i++)
		if (c->mlun[i] && (!i || c->mlun[i] != c->mlun[0]))
			blk_metrics_conn_close(c->mlun[i]);
	free(c->mlun);
	c->mlun = NULL;
	c->nr_mlun = 0;
}

static void name_addr(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char host[64] = "?";

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(in->sin_port));
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(in6->sin6_port));
	} else {
		snprintf(buf, len, "?");
	}
}

void *iscsi_conn_thread(void *arg)
{
	struct iscsi_conn *c = arg;
	struct blk_iscsi_server *srv = c->srv;
	struct iscsi_login l;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct timeval tv = { .tv_sec = 10 };
	struct timeval rtv = { .tv_usec = IDLE_WAIT_MS * 1000 };
	uint64_t t0 = now_ms();
	char isid[16];
	int one = 1, r;

	prctl(PR_SET_TIMERSLACK, 1UL);
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &rtv, sizeof(rtv));
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (!getpeername(c->fd, (struct sockaddr *)&ss, &sl))
		name_addr(&ss, c->peer, sizeof(c->peer));
	sl = sizeof(ss);
	if (!getsockname(c->fd, (struct sockaddr *)&ss, &sl))
		name_addr(&ss, c->portal, sizeof(c->portal));
	iscsi_params_default(&c->p);
	c->max_dsl = srv->ours.max_recv_dsl;
	c->rx = malloc((c->max_dsl > LOGIN_MAX_DSL ? c->max_dsl : LOGIN_MAX_DSL) + 4);
	c->rxb = malloc(RXB_SIZE);
	iscsi_login_init(&l, &srv->env, &srv->ours);
	r = c->rx && c->rxb ? login(c, &l) : -ENOMEM;
	snprintf(isid, sizeof(isid), "%02x%02x%02x%02x%02x%02x", l.isid[0],
		 l.isid[1], l.isid[2], l.isid[3], l.isid[4], l.isid[5]);
	if (r) {
		fprintf(srv->log,
			"iscsi: conn %lu %s login failed: initiator '%s' isid 0x%s target '%s': %s%s%s\n",
			c->id, c->peer, l.params.initiator_name, isid,
			l.params.target_name,
			l.status ? iscsi_login_status_name(l.status) : "",
			l.status ? ": " : "",
			l.why ? l.why : c->why ? c->why : "connection ended");
		fflush(srv->log);
		goto out;
	}
	c->p = l.params;
	c->peer_mrdsl = l.peer_max_recv_dsl;
	c->statsn = l.statsn + 1;
	c->cid = l.cid;
	c->window = srv->cfg.max_cmds;
	c->next_ttt = 1;
	if (metrics_open(c)) {
		metrics_close(c);
		fprintf(srv->log, "iscsi: conn %lu %s: no memory for its metrics: closed\n",
			c->id, c->peer);
		fflush(srv->log);
		goto out;
	}
	fprintf(srv->log,
		"iscsi: conn %lu %s login: initiator '%s' isid 0x%s tsih %u cid %u%s %s%s%s nexus %u, auth %s%s%s%s, digests %s/%s, MaxRecvDataSegmentLength %u/%u, MaxBurstLength %u, FirstBurstLength %u, ImmediateData %s, InitialR2T %s, MaxConnections %u\n",
		c->id, c->peer, c->p.initiator_name, isid, l.tsih, c->cid,
		l.joining ? " (a connection added to the session)" : "",
		c->p.discovery ? "discovery session" : "target '",
		c->p.discovery ? "" : c->p.target_name,
		c->p.discovery ? "," : "',", c->nexus,
		c->p.auth_method[0] ? c->p.auth_method : "None",
		l.chap_user[0] ? " (user '" : "", l.chap_user,
		l.chap_user[0] ? "')" : "",
		c->p.header_digest ? "CRC32C" : "None",
		c->p.data_digest ? "CRC32C" : "None", c->max_dsl, c->peer_mrdsl,
		c->p.max_burst_length, c->p.first_burst_length,
		c->p.immediate_data ? "Yes" : "No",
		c->p.initial_r2t ? "Yes" : "No", c->p.max_connections);
	fflush(srv->log);
	full_feature(c);
	fprintf(srv->log,
		"iscsi: conn %lu %s logout: initiator '%s' isid 0x%s tsih %u cid %u %.3f s, %llu commands, %llu dropped (CmdSN), %llu waited for a lower CmdSN, %llu NOP-In pings, %llu failed on bad Data-Out, rx %llu B tx %llu B: %s\n",
		c->id, c->peer, c->p.initiator_name, isid, l.tsih, c->cid,
		(double)(now_ms() - t0) / 1000.0, (unsigned long long)c->cmds,
		(unsigned long long)c->dropped,
		(unsigned long long)c->gap_waits, (unsigned long long)c->pings,
		(unsigned long long)c->data_errs,
		(unsigned long long)c->rx_bytes, (unsigned long long)c->tx_bytes,
		c->why ? c->why : "closed");
	fflush(srv->log);
out:
	tx_flush(c); /* a login reject, the last responses */
	if (c->sess)
		xtmf_close(c); /* a login that joined, then failed */
	iscsi_login_free(&l);
	while (c->tasks)
		task_free(c, c->tasks);
	task_cache_free(c);
	metrics_close(c); /* after the last tasks are counted */
	if (c->q)
		scsi_tgt_queue_detach(c->q);
	/* the last connection of the session ends its I_T nexus (SAM-5
	 * 6.3.4), before the session is off the list (a reinstating login
	 * waits for that) */
	if (c->sess && iscsi_srv_session_leave(srv, c->sess, c)) {
		if (c->node)
			nexus_loss(c);
		iscsi_srv_session_del(srv, c->sess);
	}
	free(c->text);
	free(c->rx);
	free(c->rxb);
	close(c->fd);
	free(c);
	blk_mutex_lock(&srv->lock);
	srv->active--;
	pthread_cond_broadcast(&srv->cond);
	blk_mutex_unlock(&srv->lock);
	return NULL;
}
