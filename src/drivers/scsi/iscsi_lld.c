// SPDX-License-Identifier: MIT
/*
 * The iscsi LLD (blkstack/scsi_iscsi.h, docs/iscsi-initiator.md): SCSI
 * commands from the midlayer to a remote target over iSCSI/TCP (RFC 7143,
 * ErrorRecoveryLevel 0).  The protocol is blkiscsiproto's, the same code
 * the target runs: PDU checks and digests (pdu.c), keys (keys.c), the
 * initiator's builders and login (initiator.c).  This file does the I/O.
 *
 * Each hardware queue has a TCP connection of its own, a session with its
 * own ISID (qualifier: the queue's index + 1; 0 for the probe's), driven
 * only by the queue's thread: no lock, nothing shared between queues.
 * The socket is non-blocking; queuecommand() builds PDUs, commit_rqs()
 * sends the batch with one sendmsg(), poll() sends what is left, reads
 * what has arrived and ends commands; wait() sleeps in poll(2), no
 * longer than the keep-alive's next NOP-Out ping or its deadline
 * (keepalive(), called from poll()).
 *
 * Sending: a list of PDUs (tx_pdu), each its header (and digest) and,
 * for immediate data and Data-Out, a range of the command's own iovecs:
 * no data is copied.  Receiving: a 64 KiB buffer that recv() fills; a
 * Data-In segment goes into the command's iovecs, straight from the
 * socket when RX_DIRECT bytes or more of it are still to come, else out
 * of the buffer.
 *
 * Every command ends once through done: the midlayer's done is called
 * from poll() (or from an eh_* handler, for what the handler ends), out of
 * a list that the receive path fills; an ITT names a slot and its
 * generation, so a late answer for a command that was aborted or retried
 * finds no command and is dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <time.h>
#include <unistd.h>

#include "blkstack/scsi_host.h"
#include "blkstack/scsi_iscsi.h"
#include "export/iscsi/initiator.h"

#define RXB_SIZE (64u << 10)     /* received bytes not yet parsed */
#define RX_DIRECT (8u << 10)     /* Data-In received straight into the iovecs */
/*
 * After a recv() that found the socket empty (a short read, or EAGAIN),
 * the next RX_SKIP attempts to receive (or RX_SKIP - 1 after EAGAIN) are
 * skipped until wait() has polled: the one that ends this pass of the
 * receive loop and the one of the queue's next poll() (blk_wait()'s,
 * after the completions' new commands went out), which would both read
 * nothing (EAGAIN) in the usual round.  A caller that spins on poll()
 * without wait() loses at most two passes; poll(2) is level-triggered,
 * so nothing that arrived meanwhile is missed.
 */
#define RX_SKIP 2
/*
 * Wake-up coalescing (wait()): with COALESCE_MIN commands or more at the
 * target, wait() sleeps until the socket holds a quarter of the bytes
 * they will bring (SO_RCVLOWAT, rounded down to a power of two, at most
 * RXB_SIZE), or COALESCE_NS at most: one wake-up for several responses
 * instead of one for each response a target sends by itself (tgt does).
 * Three quarters of the window stay at the target, so a target with work
 * queued keeps its rate; a response shorter than counted (an error, a
 * residual) costs at most COALESCE_NS.  Fewer commands in flight: no
 * coalescing (a low queue depth is latency-bound).  Only where it pays:
 * a plain wait (SO_RCVLOWAT 1) that slept (COALESCE_SLEPT_NS or more in
 * ppoll()) and ended fewer commands than a quarter of those in flight
 * turns it on; then every COALESCE_PROBE-th wait is a plain one again, to
 * see whether the target now answers in batches by itself.  A plain wait
 * that finds data at once saves no sleep by waiting for more (blkstack's
 * target, answering in batches, mostly has data there: coalescing there
 * added 5-10 % CPU per I/O before the sleep was part of the test).
 */
#define COALESCE_MIN 8
#define COALESCE_NS 500000u
#define COALESCE_PROBE 64
#define COALESCE_SLEPT_NS 20000u
#define TXV_MAX 1024             /* iovecs of one sendmsg() (IOV_MAX) */
#define MAX_SLOTS 32768u         /* ITTs: generation << 15 | slot */
#define ITT_SPECIAL 0x80000000u  /* login, TMF, logout: outside the slots' */
#define LOGIN_DSL 8192u          /* 13.12: both sides' limit during login */
#define RETRY_MS 1000            /* between two logins after a loss */
#define LOGOUT_WAIT_MS 2000      /* for a Logout Response */
#define DEF_LOGIN_MS 15000
#define DEF_RECONNECT_MS 15000
#define DEF_TMF_MS 10000
#define DEF_NOOP_MS 5000         /* the ping's interval and its timeout */

enum cmd_state {
	C_FREE = 0,     /* not ours (before queuecommand, after done) */
	C_WAIT,         /* accepted, not sent: the CmdSN window, no connection */
	C_SENT,         /* at the target */
	C_DONE,         /* ended, on the done list */
};

struct ini_queue;

/* Per command (the template's cmd_size). */
struct ini_cmd {
	struct scsi_cmnd *sc;
	struct ini_cmd *next;   /* wait list, done list */
	uint32_t itt;
	uint32_t cmdsn;
	uint32_t xfer;
	uint32_t in_got;        /* Data-In bytes taken */
	uint32_t exp_datasn;    /* of the next Data-In */
	uint32_t exp_r2tsn;
	uint16_t slot;
	uint8_t state;
	bool aborting;          /* ABORT TASK sent: R2Ts are not answered */
	bool window_waited;     /* counted in window_waits */
};

/* One PDU to send: its header, and data from a command's iovecs or @buf. */
struct tx_pdu {
	struct tx_pdu *next;
	struct ini_cmd *cmd;
	const uint8_t *buf;
	uint8_t *owned;         /* @buf to free: a copy of an ended command's */
	uint32_t off, len;      /* data: bytes [off, off + len) of the source */
	uint8_t hlen, tlen;
	uint8_t hdr[ISCSI_BHS_LEN + ISCSI_DIGEST_LEN];
	uint8_t tail[3 + ISCSI_DIGEST_LEN]; /* padding, data digest */
};

enum rx_state { RX_HDR, RX_DATA, RX_TAIL };

enum q_state { Q_DOWN = 0, Q_UP };

struct ini_host {
	struct scsi_iscsi_config cfg;
	char initiator[SCSI_ISCSI_NAME_MAX + 1];
	struct iscsi_params ours;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	char where[SCSI_ISCSI_HOST_MAX + 300]; /* "host:port iqn LUN n" */
	uint8_t isid[6];        /* the qualifier (bytes 4-5) per queue */
	uint8_t lun[8];
	struct ini_queue *stash; /* scsi_iscsi_create()'s, for the probe */
	struct scsi_iscsi_stats st; /* queues' counters, added at their exit */
	bool reported;          /* the attach line */
	struct iscsi_chap *chap; /* CHAP credentials (NULL: AuthMethod=None) */
};

struct ini_queue {
	struct ini_host *h;
	uint32_t idx;
	int fd;
	uint8_t state;
	struct iscsi_params p;  /* negotiated */
	uint32_t peer_mrdsl;
	struct iscsi_window win;
	uint16_t tsih;
	uint8_t isid[6];
	uint32_t special_itt;
	/* commands */
	struct ini_cmd **slot;
	uint16_t *gen;
	uint32_t *free_slots;
	uint32_t nslots, nfree;
	unsigned int nr_sent;
	struct ini_cmd *wait_head, *wait_tail;
	struct ini_cmd *done_head, *done_tail;
	/* sending */
	struct tx_pdu *tx_head, *tx_tail, *tx_pool;
	uint32_t tx_sent;       /* bytes of tx_head sent */
	struct iovec txv[TXV_MAX];
	/* receiving */
	uint8_t *rxb;
	uint32_t rxb_off, rxb_len;
	uint8_t rx_state;
	uint8_t rx_skip;        /* recv()s to skip: the socket was found empty */
	uint64_t rx_expect;     /* bytes the commands at the target will bring, at least */
	int rcvlowat;           /* the socket's SO_RCVLOWAT */
	uint32_t ended;         /* commands ended since the last wait() */
	uint32_t waits;         /* wait()s, for COALESCE_PROBE */
	bool coalesce;          /* the last plain wait() found it pays */
	bool waited_plain;      /* the last wait() had SO_RCVLOWAT 1 */
	bool plain_slept;       /* ... and slept in it (COALESCE_SLEPT_NS or more) */
	uint8_t hdr[ISCSI_BHS_LEN + ISCSI_DIGEST_LEN];
	uint32_t hdr_got, hdr_len;
	struct iscsi_pdu_lens l;
	struct ini_cmd *rx_cmd; /* Data-In into its iovecs; NULL: scratch */
	uint32_t rx_off;        /* ... at this offset of them */
	uint32_t rx_got;        /* data bytes received */
	bool rx_orphan;         /* rx_cmd ended while its data came: no digest check */
	uint8_t tail[3 + ISCSI_DIGEST_LEN];
	uint32_t tail_got, tail_len;
	uint8_t *scratch;       /* data we do not keep in a command */
	uint32_t scratch_len;
	/* task management, logout */
	uint32_t tmf_itt;
	int tmf_response;       /* -1: none yet */
	bool logout_asked;      /* Asynchronous Message, AsyncEvent 1 */
	bool logout_done;
	/* keep-alive: our NOP-Out pings (RFC 7143 11.18) */
	bool rx_seen;           /* a PDU came since the last keepalive() */
	bool rx_stale;          /* ... and last_rx is not yet its time */
	bool ping_out;          /* a ping sent, nothing received since */
	uint64_t last_rx;       /* coarse ms: a PDU last seen */
	uint64_t ping_sent;     /* coarse ms */
	/* reconnection */
	uint64_t down_since, next_try;
	bool down_logged;
	char why[256];
	struct scsi_iscsi_stats st;
};

/* CLOCK_MONOTONIC_COARSE, ms: the keep-alive's clock (a vDSO read, no system call). */
static uint64_t coarse_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void qlog(const struct ini_queue *q, const char *fmt, const char *a,
		 const char *b)
{
	char who[24];

	if (q->h->cfg.quiet)
		return;
	if (q->idx == UINT32_MAX)
		snprintf(who, sizeof(who), "probe");
	else
		snprintf(who, sizeof(who), "queue %u", q->idx);
	fprintf(stderr, "iscsi: %s: %s: ", q->h->where, who);
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
}

/* ------------------------------------------------------------ iovecs */

/*
 * Up to @max iovecs for bytes [@off, @off + @len) of @src (@cnt entries).
 * Return how many; *@covered: the bytes they hold (less than @len when
 * @max ran out).
 */
static unsigned int iov_range(const struct iovec *src, unsigned int cnt,
			      uint32_t off, uint32_t len, struct iovec *dst,
			      unsigned int max, uint32_t *covered)
{
	unsigned int i, n = 0;
	uint32_t got = 0;

	for (i = 0; i < cnt && got < len && n < max; i++) {
		size_t l = src[i].iov_len;

		if (off >= l) {
			off -= (uint32_t)l;
			continue;
		}
		l -= off;
		if (l > len - got)
			l = len - got;
		dst[n].iov_base = (char *)src[i].iov_base + off;
		dst[n].iov_len = l;
		n++;
		got += (uint32_t)l;
		off = 0;
	}
	*covered = got;
	return n;
}

/* Call @fn on each piece of bytes [@off, @off + @len) of @src, in order. */
static inline void iov_each(const struct iovec *src, unsigned int cnt,
			    uint32_t off, uint32_t len,
			    void (*fn)(void *arg, const uint8_t *p, size_t l),
			    void *arg)
{
	unsigned int i;

	for (i = 0; i < cnt && len; i++) {
		size_t l = src[i].iov_len;

		if (off >= l) {
			off -= (uint32_t)l;
			continue;
		}
		l -= off;
		if (l > len)
			l = len;
		fn(arg, (const uint8_t *)src[i].iov_base + off, l);
		len -= (uint32_t)l;
		off = 0;
	}
}

static void copy_piece(void *arg, const uint8_t *p, size_t l)
{
	uint8_t **dst = arg;

	memcpy(*dst, p, l);
	*dst += l;
}

/* Copy bytes [@off, @off + @len) of @src to @dst. */
static void iov_copy_out(const struct iovec *src, unsigned int cnt,
			 uint32_t off, uint32_t len, uint8_t *dst)
{
	iov_each(src, cnt, off, len, copy_piece, &dst);
}

static void crc_piece(void *arg, const uint8_t *p, size_t l)
{
	uint32_t *crc = arg;

	*crc = iscsi_crc32c(*crc, p, l);
}

/* The CRC32C of bytes [@off, @off + @len) of @src, continued from @crc. */
static uint32_t iov_crc(uint32_t crc, const struct iovec *src, unsigned int cnt,
			uint32_t off, uint32_t len)
{
	iov_each(src, cnt, off, len, crc_piece, &crc);
	return crc;
}

/* ------------------------------------------------------------ commands */

static inline struct ini_cmd *cmd_of(struct scsi_cmnd *sc)
{
	return scsi_cmd_priv(sc);
}

/* The command an ITT names, or NULL (a special ITT, a stale one). */
static struct ini_cmd *cmd_find(struct ini_queue *q, uint32_t itt)
{
	uint32_t s = itt & (MAX_SLOTS - 1);
	struct ini_cmd *c;

	if (itt & ITT_SPECIAL || s >= q->nslots)
		return NULL;
	c = q->slot[s];
	if (!c || c->itt != itt || q->gen[s] != (uint16_t)(itt >> 15))
		return NULL;
	return c;
}

static void tx_purge(struct ini_queue *q, struct ini_cmd *c);

/* The bytes @c's answer brings when it succeeds: a BHS, and its Data-In. */
static inline uint32_t rx_expect_of(const struct ini_cmd *c)
{
	return ISCSI_BHS_LEN + (c->sc->dir == SCSI_DIR_FROM_DEVICE ? c->xfer : 0);
}

/* Set the socket's SO_RCVLOWAT to @v bytes, when it is not already. */
static void set_rcvlowat(struct ini_queue *q, int v)
{
	if (q->rcvlowat == v)
		return;
	if (!setsockopt(q->fd, SOL_SOCKET, SO_RCVLOWAT, &v, sizeof(v)))
		q->rcvlowat = v;
}

static void slot_release(struct ini_queue *q, struct ini_cmd *c)
{
	/* nothing may point into the command's buffers after done */
	if (q->tx_head)
		tx_purge(q, c);
	if (q->rx_cmd == c) {
		q->rx_cmd = NULL; /* the rest of its Data-In goes to scratch */
		q->rx_orphan = true;
	}
	q->slot[c->slot] = NULL;
	q->gen[c->slot]++; /* a late answer for this ITT finds nothing */
	q->free_slots[q->nfree++] = c->slot;
}

/* @c ended: its results go to the midlayer's command, @c to the done list. */
static void cmd_end(struct ini_queue *q, struct ini_cmd *c, uint8_t host_status,
		    uint8_t status)
{
	struct scsi_cmnd *sc = c->sc;

	if (c->state == C_SENT) {
		q->nr_sent--;
		q->rx_expect -= rx_expect_of(c);
	}
	q->ended++;
	slot_release(q, c);
	sc->host_status = host_status;
	sc->status = status;
	if (status != SAM_STAT_CHECK_CONDITION)
		sc->sense_len = 0;
	if (host_status != SCSI_HOST_OK) {
		sc->resid = c->xfer;
		sc->overflow = false;
	}
	c->state = C_DONE;
	c->next = NULL;
	if (q->done_tail)
		q->done_tail->next = c;
	else
		q->done_head = c;
	q->done_tail = c;
}

/* Call done for what ended.  Return how many. */
static int deliver(struct ini_queue *q)
{
	int n = 0;

	while (q->done_head) {
		struct ini_cmd *c = q->done_head;

		q->done_head = c->next;
		if (!q->done_head)
			q->done_tail = NULL;
		c->state = C_FREE;
		c->sc->done(c->sc); /* may queue commands again: popped first */
		n++;
	}
	return n;
}

/* End @c now, through done (an eh_* handler's own). */
static void cmd_end_now(struct ini_queue *q, struct ini_cmd *c, uint8_t host_status,
			uint8_t status)
{
	struct scsi_cmnd *sc = c->sc;

	if (c->state == C_SENT) {
		q->nr_sent--;
		q->rx_expect -= rx_expect_of(c);
	}
	slot_release(q, c);
	sc->host_status = host_status;
	sc->status = status;
	sc->sense_len = 0;
	sc->resid = c->xfer;
	sc->overflow = false;
	c->state = C_FREE;
	sc->done(sc);
}

static void wait_unlink(struct ini_queue *q, struct ini_cmd *c)
{
	struct ini_cmd **pp, *prev = NULL;

	for (pp = &q->wait_head; *pp; prev = *pp, pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			if (q->wait_tail == c)
				q->wait_tail = prev;
			return;
		}
}

/* ------------------------------------------------------------ sending */

static struct tx_pdu *tx_alloc(struct ini_queue *q)
{
	struct tx_pdu *t = q->tx_pool;

	if (t)
		q->tx_pool = t->next;
	else
		t = malloc(sizeof(*t));
	if (t) {
		t->next = NULL;
		t->cmd = NULL;
		t->buf = NULL;
		t->owned = NULL;
		t->off = t->len = 0;
		t->tlen = 0;
	}
	return t;
}

static void tx_put(struct ini_queue *q, struct tx_pdu *t)
{
	free(t->owned);
	t->owned = NULL;
	t->next = q->tx_pool;
	q->tx_pool = t;
}

/*
 * Finish @t (digests, padding) and queue it.  The header digest covers
 * the BHS; the data digest the data and its padding (13.1).
 */
static void tx_queue(struct ini_queue *q, struct tx_pdu *t)
{
	uint32_t pad = iscsi_pad4(t->len);
	static const uint8_t zero[4];

	t->hlen = ISCSI_BHS_LEN;
	if (q->p.header_digest) {
		struct iovec v = { t->hdr, ISCSI_BHS_LEN };

		iscsi_digest_put(t->hdr + ISCSI_BHS_LEN, iscsi_digest(&v, 1));
		t->hlen += ISCSI_DIGEST_LEN;
	}
	memset(t->tail, 0, pad);
	t->tlen = (uint8_t)pad;
	if (t->len && q->p.data_digest) {
		uint32_t crc = t->cmd ?
			iov_crc(ISCSI_CRC_INIT, t->cmd->sc->iov, t->cmd->sc->iovcnt,
				t->off, t->len) :
			iscsi_crc32c(ISCSI_CRC_INIT, t->buf + t->off, t->len);

		crc = iscsi_crc32c(crc, zero, pad);
		iscsi_digest_put(t->tail + pad, iscsi_crc32c_final(crc));
		t->tlen += ISCSI_DIGEST_LEN;
	}
	if (q->tx_tail)
		q->tx_tail->next = t;
	else
		q->tx_head = t;
	q->tx_tail = t;
}

static void tx_drop_all(struct ini_queue *q)
{
	while (q->tx_head) {
		struct tx_pdu *t = q->tx_head;

		q->tx_head = t->next;
		tx_put(q, t);
	}
	q->tx_tail = NULL;
	q->tx_sent = 0;
}

/*
 * An ended command's PDUs that have not started to go are dropped; one
 * that is half sent must go whole (the stream would break), from a copy
 * of its data.
 */
static void tx_purge(struct ini_queue *q, struct ini_cmd *c)
{
	struct tx_pdu **pp = &q->tx_head, *t, *prev = NULL;

	while ((t = *pp)) {
		if (t->cmd != c) {
			prev = t;
			pp = &t->next;
			continue;
		}
		if (t == q->tx_head && q->tx_sent) {
			uint8_t *copy = malloc(t->len ? t->len : 1);

			if (copy)
				iov_copy_out(c->sc->iov, c->sc->iovcnt, t->off,
					     t->len, copy);
			/* without memory the target gets scratch bytes for a
			 * task that has ended: the stream stays whole */
			t->owned = copy;
			t->buf = copy ? copy : (const uint8_t *)q->scratch;
			t->off = 0;
			t->cmd = NULL;
			prev = t;
			pp = &t->next;
			continue;
		}
		*pp = t->next;
		if (q->tx_tail == t)
			q->tx_tail = prev;
		tx_put(q, t);
	}
}

static void conn_fail(struct ini_queue *q, const char *why);

/*
 * The iovecs of @t from byte @skip on, at most @max (>= 1).  Return how
 * many were used; *@whole: they reach the PDU's end (else the rest goes
 * with the next sendmsg(), and no other PDU may follow in this one).
 */
static unsigned int tx_iov(struct tx_pdu *t, uint32_t skip, struct iovec *v,
			   unsigned int max, bool *whole)
{
	unsigned int n = 0;
	uint32_t covered;

	*whole = false;
	if (skip < t->hlen) {
		v[n].iov_base = t->hdr + skip;
		v[n++].iov_len = t->hlen - skip;
		skip = 0;
	} else {
		skip -= t->hlen;
	}
	if (t->len && skip < t->len) {
		if (n == max)
			return n;
		if (t->cmd) {
			n += iov_range(t->cmd->sc->iov, t->cmd->sc->iovcnt,
				       t->off + skip, t->len - skip, v + n, max - n,
				       &covered);
			if (covered < t->len - skip)
				return n; /* the rest next time */
		} else {
			v[n].iov_base = (void *)(t->buf + t->off + skip);
			v[n++].iov_len = t->len - skip;
		}
		skip = 0;
	} else {
		skip -= t->len;
	}
	if (t->tlen && skip < t->tlen) {
		if (n == max)
			return n;
		v[n].iov_base = t->tail + skip;
		v[n++].iov_len = t->tlen - skip;
	}
	*whole = true;
	return n;
}

/*
 * Send what is queued, as much as the socket takes, one sendmsg() per
 * TXV_MAX iovecs.  Return 0 (all sent, or the socket is full); -errno:
 * the connection failed (conn_fail() done).
 */
static int tx_flush(struct ini_queue *q)
{
	while (q->tx_head && q->state == Q_UP) {
		struct msghdr m = { .msg_iov = q->txv };
		struct tx_pdu *t;
		unsigned int n = 0;
		uint32_t skip = q->tx_sent;
		bool whole = true;
		ssize_t r;

		for (t = q->tx_head; t && whole && n < TXV_MAX; t = t->next) {
			n += tx_iov(t, skip, q->txv + n, TXV_MAX - n, &whole);
			skip = 0;
		}
		m.msg_iovlen = n;
		r = sendmsg(q->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == EINTR)
				continue;
			snprintf(q->why, sizeof(q->why), "send: %s", strerror(errno));
			conn_fail(q, q->why);
			return -EPIPE;
		}
		q->st.send_calls++;
		/* retire what went whole */
		while (r > 0 && q->tx_head) {
			t = q->tx_head;
			uint32_t left = t->hlen + t->len + t->tlen - q->tx_sent;

			if ((size_t)r < left) {
				q->tx_sent += (uint32_t)r;
				break;
			}
			r -= left;
			q->tx_sent = 0;
			q->tx_head = t->next;
			if (!q->tx_head)
				q->tx_tail = NULL;
			q->st.pdus_sent++;
			tx_put(q, t);
		}
	}
	return 0;
}

/* A PDU with a header only (NOP-Out, TMF, Logout): queued. */
static int tx_header(struct ini_queue *q, const uint8_t *bhs)
{
	struct tx_pdu *t = tx_alloc(q);

	if (!t)
		return -ENOMEM;
	memcpy(t->hdr, bhs, ISCSI_BHS_LEN);
	tx_queue(q, t);
	return 0;
}

/* Data-Out PDUs for bytes [@off, @off + @len) of @c's data. */
static int send_data_out(struct ini_queue *q, struct ini_cmd *c, uint32_t ttt,
			 uint32_t off, uint32_t len)
{
	uint32_t end = off + len, datasn = 0;

	while (off < end) {
		struct tx_pdu *t = tx_alloc(q);
		uint32_t n = end - off;

		if (!t)
			return -ENOMEM;
		if (n > q->peer_mrdsl)
			n = q->peer_mrdsl;
		iscsi_data_out_init(t->hdr, off + n == end, q->h->lun, c->itt, ttt,
				    datasn++, off, n, q->win.exp_statsn);
		t->cmd = c;
		t->off = off;
		t->len = n;
		tx_queue(q, t);
		off += n;
		if (ttt == ISCSI_RSVD_TAG)
			q->st.unsolicited_pdus++;
		else
			q->st.solicited_pdus++;
	}
	return 0;
}

/*
 * The SCSI Command PDU of @c, with immediate data and the unsolicited
 * Data-Out as negotiated (RFC 7143 3.2.4.2): ImmediateData=Yes: the first
 * min(FirstBurstLength, MaxRecvDataSegmentLength, length) bytes in the
 * command; InitialR2T=No: Data-Out up to FirstBurstLength, the F bit on
 * its last; the rest when the target sends R2Ts.
 */
static int send_cmd(struct ini_queue *q, struct ini_cmd *c)
{
	struct scsi_cmnd *sc = c->sc;
	struct tx_pdu *t = tx_alloc(q);
	uint32_t imm = 0, unsol = 0, fb = q->p.first_burst_length;
	uint8_t flags = ISCSI_ATTR_SIMPLE;

	if (!t)
		return -ENOMEM;
	if (sc->dir == SCSI_DIR_TO_DEVICE && c->xfer) {
		flags |= ISCSI_CMD_W;
		if (q->p.immediate_data) {
			imm = c->xfer < fb ? c->xfer : fb;
			if (imm > q->peer_mrdsl)
				imm = q->peer_mrdsl;
		}
		unsol = q->p.initial_r2t ? imm : (c->xfer < fb ? c->xfer : fb);
		if (unsol == imm)
			flags |= ISCSI_CMD_F;
	} else {
		flags |= ISCSI_CMD_F;
		if (sc->dir == SCSI_DIR_FROM_DEVICE && c->xfer)
			flags |= ISCSI_CMD_R;
	}
	c->cmdsn = q->win.cmdsn++;
	c->in_got = 0;
	c->exp_datasn = 0;
	c->exp_r2tsn = 0;
	c->aborting = false;
	iscsi_scsi_cmd_init(t->hdr, flags, q->h->lun, c->itt, c->xfer, sc->cdb,
			    sc->cdb_len, imm);
	iscsi_req_set_sn(t->hdr, c->cmdsn, q->win.exp_statsn);
	if (imm) {
		t->cmd = c;
		t->len = imm;
	}
	tx_queue(q, t);
	q->st.commands++;
	q->st.immediate_bytes += imm;
	return unsol > imm ? send_data_out(q, c, ISCSI_RSVD_TAG, imm, unsol - imm) : 0;
}

/* Send the waiting commands the CmdSN window lets go. */
static void start_cmds(struct ini_queue *q)
{
	while (q->wait_head && q->state == Q_UP && !q->logout_asked) {
		struct ini_cmd *c = q->wait_head;

		if (!iscsi_window_open(&q->win)) {
			if (!c->window_waited) {
				c->window_waited = true;
				q->st.window_waits++;
			}
			return;
		}
		q->wait_head = c->next;
		if (!q->wait_head)
			q->wait_tail = NULL;
		c->state = C_SENT;
		q->nr_sent++;
		q->rx_expect += rx_expect_of(c);
		if (send_cmd(q, c)) {
			cmd_end(q, c, SCSI_HOST_BUSY, SAM_STAT_GOOD); /* no memory */
			return;
		}
	}
}

/* ------------------------------------------------------------ connection */

static void rx_reset(struct ini_queue *q)
{
	q->rxb_off = q->rxb_len = 0;
	q->rx_state = RX_HDR;
	q->rx_skip = 0;
	q->hdr_got = 0;
	q->rx_cmd = NULL;
}

/*
 * The connection is gone (the target closed it, a protocol or digest
 * error, a host reset): commands at the target end SCSI_HOST_BUSY (the
 * midlayer sends them again, over the next login, which reinstates the
 * session: RFC 7143 6.3.5); waiting ones stay.
 */
static void conn_close(struct ini_queue *q, uint8_t status_sent)
{
	uint32_t i;

	if (q->fd >= 0)
		close(q->fd);
	q->fd = -1;
	q->state = Q_DOWN;
	tx_drop_all(q);
	rx_reset(q);
	q->logout_asked = false;
	q->tmf_itt = 0;
	for (i = 0; i < q->nslots; i++) {
		struct ini_cmd *c = q->slot[i];

		if (c && c->state == C_SENT)
			cmd_end(q, c, status_sent == SAM_STAT_GOOD ? SCSI_HOST_BUSY :
				SCSI_HOST_OK, status_sent);
	}
}

static void conn_fail(struct ini_queue *q, const char *why)
{
	if (q->state != Q_UP)
		return;
	if (q->logout_done) {
		conn_close(q, SAM_STAT_GOOD); /* the close after our Logout */
		return;
	}
	q->st.connection_losses++;
	if (why != q->why)
		snprintf(q->why, sizeof(q->why), "%s", why);
	qlog(q, "connection lost: %s; commands at the target are sent again after a new login%s",
	     q->why, "");
	conn_close(q, SAM_STAT_GOOD);
	q->down_since = now_ms();
	q->next_try = q->down_since;
	q->down_logged = false;
}

/* Wait for @events on @fd until @deadline (ms).  Return 0; -ETIMEDOUT; -errno. */
static int fd_wait(int fd, short events, uint64_t deadline)
{
	for (;;) {
		uint64_t now = now_ms();
		struct pollfd pf = { .fd = fd, .events = events };
		int r;

		if (now >= deadline)
			return -ETIMEDOUT;
		r = poll(&pf, 1, (int)(deadline - now));
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

static int send_all(int fd, const void *buf, size_t len, uint64_t deadline)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		int r;

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		r = fd_wait(fd, POLLOUT, deadline);
		if (r)
			return r;
	}
	return 0;
}

static int recv_all(int fd, void *buf, size_t len, uint64_t deadline)
{
	char *p = buf;

	while (len) {
		ssize_t n = recv(fd, p, len, MSG_DONTWAIT);
		int r;

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		r = fd_wait(fd, POLLIN, deadline);
		if (r)
			return r;
	}
	return 0;
}

/*
 * Connect to the target and log in (RFC 7143 6.3) with @ours (a normal
 * or a discovery session), @isid and TSIH 0.  Blocks up to the login
 * timeout.  Return: a connected socket in full feature phase, @l its
 * results (the caller frees @l with iscsi_ini_login_free()); -errno with
 * a message in @err.
 */
static int login_fd(struct ini_host *h, const struct iscsi_params *ours,
		    const uint8_t *isid, uint32_t itt, struct iscsi_ini_login *l,
		    char *err, size_t errlen)
{
	uint64_t deadline = now_ms() + h->cfg.login_timeout_ms;
	static const uint8_t zero[4];
	char *qbuf = NULL, *rbuf = NULL;
	uint8_t req[ISCSI_BHS_LEN], rsp[ISCSI_BHS_LEN];
	int fd, one = 1, r, soerr = 0;
	socklen_t sl = sizeof(soerr);

	iscsi_ini_login_init(l, ours, isid, 0, 0, itt, 1);
	l->chap = h->chap;
	qbuf = malloc(LOGIN_DSL);
	rbuf = malloc(LOGIN_DSL + 4);
	if (!qbuf || !rbuf) {
		free(qbuf);
		free(rbuf);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	fd = socket(h->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "socket: %s", strerror(-r));
		goto out_free;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&h->addr, h->addrlen) < 0) {
		if (errno != EINPROGRESS) {
			r = -errno;
			snprintf(err, errlen, "connect: %s", strerror(-r));
			goto out_close;
		}
		r = fd_wait(fd, POLLOUT, deadline);
		if (!r && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr)
			r = -soerr;
		if (r) {
			snprintf(err, errlen, "connect: %s", strerror(-r));
			goto out_close;
		}
	}
	for (;;) {
		struct iscsi_text_out out = { .buf = qbuf, .cap = LOGIN_DSL };
		struct iscsi_pdu_lens pl;
		uint32_t dsl;

		r = iscsi_ini_login_request(l, req, &out);
		if (r) {
			snprintf(err, errlen, "login: our keys do not fit one PDU");
			r = -EPROTO;
			goto out_close;
		}
		if ((r = send_all(fd, req, sizeof(req), deadline)) ||
		    (r = send_all(fd, qbuf, out.len, deadline)) ||
		    (r = send_all(fd, zero, iscsi_pad4((uint32_t)out.len), deadline)) ||
		    (r = recv_all(fd, rsp, sizeof(rsp), deadline))) {
			snprintf(err, errlen, "login: %s", r == -ETIMEDOUT ?
				 "no answer within the login timeout" : strerror(-r));
			goto out_close;
		}
		if (bhs_opcode(rsp) != ISCSI_OP_LOGIN_RSP ||
		    iscsi_pdu_check_target(rsp, LOGIN_DSL, &pl)) {
			snprintf(err, errlen, "login: the target answered a %s (%u bytes of data)",
				 iscsi_opcode_name(rsp[0]), bhs_dsl(rsp));
			r = -EPROTO;
			goto out_close;
		}
		dsl = pl.data_len;
		r = recv_all(fd, rbuf, dsl + pl.pad, deadline);
		if (r) {
			snprintf(err, errlen, "login: %s", strerror(-r));
			goto out_close;
		}
		r = iscsi_ini_login_response(l, rsp, (const uint8_t *)rbuf, dsl);
		if (r == ISCSI_INI_LOGIN_CONTINUE)
			continue;
		if (r == ISCSI_INI_LOGIN_DONE)
			break;
		if (l->status == ISCSI_LOGIN_AUTH_FAILED)
			snprintf(err, errlen, "login refused: %s (0x%04x)%s%.64s%s", l->why,
				 l->status, h->chap ? ": CHAP user '" :
				 ": we have no CHAP credentials (iscsi_chap_file=, or BLKSTACK_ISCSI_CHAP_USER and _SECRET)",
				 h->chap ? h->chap->users[0].name : "",
				 h->chap ? "' or its secret not accepted" : "");
		else if (l->status)
			snprintf(err, errlen, "login refused: %s (0x%04x)", l->why, l->status);
		else
			snprintf(err, errlen, "login: %s", l->why);
		r = (l->status >> 8) == 2 || (!l->status && l->auth != ISCSI_INI_AUTH_DONE &&
					       l->auth != ISCSI_INI_AUTH_NONE) ? -EACCES :
		    l->status ? -ECONNREFUSED : -EPROTO;
		goto out_close;
	}
	free(qbuf);
	free(rbuf);
	return fd;
out_close:
	close(fd);
out_free:
	iscsi_ini_login_free(l);
	free(qbuf);
	free(rbuf);
	return r < 0 ? r : -EPROTO;
}

/*
 * Connect and log in: a new session (TSIH 0) with this queue's ISID,
 * which reinstates the previous one if the target still has it.  Blocks
 * up to the login timeout.  Return 0 (the queue is up); -errno with a
 * message in @err.
 */
static int conn_login(struct ini_queue *q, char *err, size_t errlen)
{
	struct iscsi_ini_login *l = malloc(sizeof(*l));
	int fd;

	if (!l) {
		snprintf(err, errlen, "out of memory");
		q->st.login_failures++;
		return -ENOMEM;
	}
	fd = login_fd(q->h, &q->h->ours, q->isid, ITT_SPECIAL | q->special_itt++,
		      l, err, errlen);
	if (fd < 0) {
		q->st.login_failures++;
		free(l);
		return fd;
	}
	q->fd = fd;
	q->rcvlowat = 1;
	q->p = l->params;
	q->peer_mrdsl = l->peer_max_recv_dsl;
	q->win = l->win;
	q->tsih = l->tsih;
	q->state = Q_UP;
	q->logout_asked = false;
	q->logout_done = false;
	q->tmf_itt = 0;
	q->rx_seen = false;
	q->rx_stale = false;
	q->ping_out = false;
	q->last_rx = coarse_ms();
	rx_reset(q);
	q->st.logins++;
	iscsi_ini_login_free(l);
	free(l);
	return 0;
}

/* ------------------------------------------------------------ receiving */

/* End @c with the status of a SCSI Response or a final Data-In. */
static void cmd_status(struct ini_queue *q, struct ini_cmd *c, uint8_t status,
		       uint8_t flags, uint32_t count)
{
	struct scsi_cmnd *sc = c->sc;
	uint32_t resid;
	bool over;

	if (iscsi_residual(flags, count, &resid, &over)) {
		conn_fail(q, "a status with both residual overflow and underflow");
		return;
	}
	sc->resid = resid;
	sc->overflow = over;
	cmd_end(q, c, SCSI_HOST_OK, status);
}

static void rx_data_in(struct ini_queue *q)
{
	const uint8_t *b = q->hdr;
	struct ini_cmd *c = q->rx_cmd;

	q->st.data_in_pdus++;
	if (!c)
		return; /* a command that ended meanwhile: dropped */
	c->in_got += q->l.data_len;
	c->exp_datasn++;
	if (b[BHS_FLAGS] & ISCSI_DATA_S) {
		q->win.exp_statsn = get_be32(b + BHS_STATSN) + 1;
		q->st.status_in_data_in++;
		cmd_status(q, c, b[BHS_DATA_STATUS], b[BHS_FLAGS],
			   get_be32(b + BHS_DATA_RESID));
	}
}

static void rx_scsi_rsp(struct ini_queue *q)
{
	const uint8_t *b = q->hdr;
	struct ini_cmd *c = cmd_find(q, get_be32(b + BHS_ITT));
	int n;

	q->win.exp_statsn = get_be32(b + BHS_STATSN) + 1;
	if (!c || c->state != C_SENT)
		return;
	if (b[BHS_RSP_RESPONSE] != ISCSI_RESPONSE_COMPLETED) {
		/* target failure: the command did not complete (11.4.3) */
		cmd_end(q, c, SCSI_HOST_ERROR, SAM_STAT_GOOD);
		return;
	}
	c->sc->sense_len = 0;
	if (b[BHS_RSP_STATUS] == SAM_STAT_CHECK_CONDITION && q->l.data_len) {
		n = iscsi_sense_get(q->scratch, q->l.data_len, scsi_cmd_sense(c->sc),
				    SCSI_SENSE_MAX);
		if (n < 0) {
			conn_fail(q, "SenseLength past the data segment of a SCSI Response");
			return;
		}
		c->sc->sense_len = (uint8_t)n;
	}
	cmd_status(q, c, b[BHS_RSP_STATUS], b[BHS_FLAGS], get_be32(b + BHS_RSP_RESID));
}

static void rx_r2t(struct ini_queue *q)
{
	const uint8_t *b = q->hdr;
	struct ini_cmd *c = cmd_find(q, get_be32(b + BHS_ITT));
	uint32_t off = get_be32(b + BHS_BUF_OFFSET), len = get_be32(b + BHS_R2T_DDTL);

	q->st.r2ts++;
	if (!c || c->state != C_SENT || c->aborting)
		return; /* ended or being aborted: no more data for it */
	if (c->sc->dir != SCSI_DIR_TO_DEVICE || !len || off > c->xfer ||
	    len > c->xfer - off || len > q->p.max_burst_length ||
	    get_be32(b + BHS_R2TSN) != c->exp_r2tsn) {
		conn_fail(q, "an R2T outside its command's data, over MaxBurstLength or out of order");
		return;
	}
	c->exp_r2tsn++;
	if (send_data_out(q, c, get_be32(b + BHS_TTT), off, len))
		conn_fail(q, "out of memory for Data-Out");
}

static void rx_nop_in(struct ini_queue *q)
{
	const uint8_t *b = q->hdr;
	uint8_t out[ISCSI_BHS_LEN];

	if (get_be32(b + BHS_ITT) != ISCSI_RSVD_TAG) {
		/* the answer to a ping of ours (keepalive()): rx_pdu() saw it */
		q->win.exp_statsn = get_be32(b + BHS_STATSN) + 1;
		return;
	}
	if (get_be32(b + BHS_TTT) == ISCSI_RSVD_TAG)
		return; /* no answer wanted */
	/* a ping (11.19): answered with a NOP-Out echoing the TTT and LUN */
	iscsi_nop_out_answer_init(out, b, q->win.cmdsn, q->win.exp_statsn);
	if (tx_header(q, out))
		conn_fail(q, "out of memory for a NOP-Out");
	q->st.nop_in_pings++;
}

static void rx_async(struct ini_queue *q)
{
	const uint8_t *b = q->hdr;
	char what[64];

	q->win.exp_statsn = get_be32(b + BHS_STATSN) + 1;
	q->st.async_events++;
	switch (b[BHS_ASYNC_EVENT]) {
	case ISCSI_ASYNC_LOGOUT_REQUEST:
		/* log out once the commands at the target have ended; no new
		 * one goes meanwhile (they wait for the next login) */
		snprintf(what, sizeof(what), "%u s", get_be16(b + BHS_ASYNC_PARAM3));
		qlog(q, "the target asks for a logout within %s%s", what, "");
		q->logout_asked = true;
		break;
	case ISCSI_ASYNC_DROP_CONNECTION:
	case ISCSI_ASYNC_DROP_SESSION:
		qlog(q, "the target will drop the %s%s", b[BHS_ASYNC_EVENT] ==
		     ISCSI_ASYNC_DROP_CONNECTION ? "connection" : "session", "");
		break;
	default:
		break; /* SCSI events, renegotiation, vendor: not acted on */
	}
}

static void rx_reject(struct ini_queue *q)
{
	const uint8_t *b = q->hdr;
	uint8_t reason = b[BHS_REJECT_REASON];
	struct ini_cmd *c = NULL;

	q->win.exp_statsn = get_be32(b + BHS_STATSN) + 1;
	q->st.rejects++;
	if (q->l.data_len >= ISCSI_BHS_LEN &&
	    bhs_opcode(q->scratch) == ISCSI_OP_SCSI_CMD)
		c = cmd_find(q, get_be32(q->scratch + BHS_ITT));
	if (c && c->state == C_SENT) {
		/* waiting for logout: sent again after the next login */
		cmd_end(q, c, reason == ISCSI_REJECT_WAITING_FOR_LOGOUT ?
			SCSI_HOST_BUSY : SCSI_HOST_ERROR, SAM_STAT_GOOD);
		return;
	}
	snprintf(q->why, sizeof(q->why), "Reject, reason 0x%02x, of a %s", reason,
		 q->l.data_len >= ISCSI_BHS_LEN ? iscsi_opcode_name(q->scratch[0]) :
		 "PDU");
	/* at ErrorRecoveryLevel 0 the stream cannot be trusted after most */
	if (reason != ISCSI_REJECT_WAITING_FOR_LOGOUT &&
	    reason != ISCSI_REJECT_CMD_NOT_SUPPORTED)
		conn_fail(q, q->why);
}

/* A whole PDU has arrived: act on it. */
static void rx_pdu(struct ini_queue *q)
{
	const uint8_t *b = q->hdr;

	q->rx_seen = true; /* the connection lives (keepalive()) */
	iscsi_window_update(&q->win, b);
	switch (bhs_opcode(b)) {
	case ISCSI_OP_DATA_IN:
		rx_data_in(q);
		break;
	case ISCSI_OP_SCSI_RSP:
		rx_scsi_rsp(q);
		break;
	case ISCSI_OP_R2T:
		rx_r2t(q);
		break;
	case ISCSI_OP_NOP_IN:
		rx_nop_in(q);
		break;
	case ISCSI_OP_TMF_RSP:
		q->win.exp_statsn = get_be32(b + BHS_STATSN) + 1;
		if (q->tmf_itt && get_be32(b + BHS_ITT) == q->tmf_itt)
			q->tmf_response = b[BHS_RSP_RESPONSE];
		break;
	case ISCSI_OP_LOGOUT_RSP:
		q->win.exp_statsn = get_be32(b + BHS_STATSN) + 1;
		q->logout_done = true;
		break;
	case ISCSI_OP_ASYNC:
		rx_async(q);
		break;
	case ISCSI_OP_REJECT:
		rx_reject(q);
		break;
	case ISCSI_OP_TEXT_RSP:
		q->win.exp_statsn = get_be32(b + BHS_STATSN) + 1;
		break; /* we send no Text Request */
	default:
		conn_fail(q, "a Login Response in full feature phase");
		break;
	}
}

/*
 * The header is whole: check it and say where its data goes.  Return 0;
 * -EPROTO (conn_fail() done).
 */
static int rx_header(struct ini_queue *q)
{
	const uint8_t *b = q->hdr;
	struct ini_cmd *c;
	int r;

	if (q->p.header_digest) {
		struct iovec v = { q->hdr, ISCSI_BHS_LEN };

		if (iscsi_digest(&v, 1) != iscsi_digest_get(q->hdr + ISCSI_BHS_LEN)) {
			conn_fail(q, "header digest error");
			return -EPROTO;
		}
	}
	r = iscsi_pdu_check_target(b, q->p.max_recv_dsl, &q->l);
	if (r) {
		snprintf(q->why, sizeof(q->why), "%s: %s", iscsi_opcode_name(b[0]),
			 r == -EMSGSIZE ? "data segment over our MaxRecvDataSegmentLength" :
			 "not a PDU a target sends, or data or AHS where none goes");
		conn_fail(q, q->why);
		return -EPROTO;
	}
	q->rx_cmd = NULL;
	q->rx_orphan = false;
	q->rx_off = 0;
	q->rx_got = 0;
	q->tail_got = 0;
	q->tail_len = q->l.pad + (q->l.data_len && q->p.data_digest ? ISCSI_DIGEST_LEN : 0);
	if (bhs_opcode(b) == ISCSI_OP_DATA_IN) {
		uint32_t off = get_be32(b + BHS_BUF_OFFSET);

		c = cmd_find(q, get_be32(b + BHS_ITT));
		if (c && c->state == C_SENT) {
			if (c->sc->dir != SCSI_DIR_FROM_DEVICE || off > c->xfer ||
			    q->l.data_len > c->xfer - off ||
			    get_be32(b + BHS_DATASN) != c->exp_datasn) {
				conn_fail(q, "a Data-In outside its command's buffer or out of order");
				return -EPROTO;
			}
			q->rx_cmd = c;
			q->rx_off = off;
		}
	}
	q->rx_state = q->l.data_len ? RX_DATA : (q->tail_len ? RX_TAIL : RX_HDR);
	return 0;
}

/* The destination of data bytes [@got, data_len) as iovecs. */
static unsigned int rx_dest(struct ini_queue *q, struct iovec *v, unsigned int max)
{
	uint32_t covered;

	if (q->rx_cmd)
		return iov_range(q->rx_cmd->sc->iov, q->rx_cmd->sc->iovcnt,
				 q->rx_off + q->rx_got, q->l.data_len - q->rx_got,
				 v, max, &covered);
	v[0].iov_base = q->scratch + q->rx_got;
	v[0].iov_len = q->l.data_len - q->rx_got;
	return 1;
}

/* Move up to @len buffered bytes into the data's destination. */
static void rx_copy(struct ini_queue *q, uint32_t len)
{
	struct iovec v[16];
	unsigned int n, i;

	while (len) {
		n = rx_dest(q, v, 16);
		for (i = 0; i < n && len; i++) {
			uint32_t k = v[i].iov_len < len ? (uint32_t)v[i].iov_len : len;

			memcpy(v[i].iov_base, q->rxb + q->rxb_off, k);
			q->rxb_off += k;
			q->rxb_len -= k;
			q->rx_got += k;
			len -= k;
		}
	}
	if (!q->rxb_len)
		q->rxb_off = 0;
}

/* The data digest of the data just received, with its padding. */
static bool rx_digest_ok(struct ini_queue *q)
{
	uint32_t crc, pad = q->l.pad;

	if (q->rx_cmd)
		crc = iov_crc(ISCSI_CRC_INIT, q->rx_cmd->sc->iov, q->rx_cmd->sc->iovcnt,
			      q->rx_off, q->l.data_len);
	else
		crc = iscsi_crc32c(ISCSI_CRC_INIT, q->scratch, q->l.data_len);
	crc = iscsi_crc32c(crc, q->tail, pad);
	return iscsi_crc32c_final(crc) == iscsi_digest_get(q->tail + pad);
}

/*
 * Parse what has arrived; recv() what the socket has, without waiting.
 * Return 0 (nothing more now); -errno: the connection failed.
 */
static int rx_process(struct ini_queue *q)
{
	for (;;) {
		ssize_t r;

		if (q->state != Q_UP)
			return -EPIPE;
		switch (q->rx_state) {
		case RX_HDR: {
			uint32_t want = ISCSI_BHS_LEN +
					(q->p.header_digest ? ISCSI_DIGEST_LEN : 0);
			uint32_t k = want - q->hdr_got;

			if (k > q->rxb_len)
				k = q->rxb_len;
			memcpy(q->hdr + q->hdr_got, q->rxb + q->rxb_off, k);
			q->hdr_got += k;
			q->rxb_off += k;
			q->rxb_len -= k;
			if (!q->rxb_len)
				q->rxb_off = 0;
			if (q->hdr_got < want)
				break; /* receive more */
			q->hdr_got = 0;
			if (rx_header(q))
				return -EPROTO;
			if (q->rx_state == RX_HDR)
				rx_pdu(q);
			continue;
		}
		case RX_DATA: {
			uint32_t left = q->l.data_len - q->rx_got;

			if (q->rxb_len) {
				rx_copy(q, left < q->rxb_len ? left : q->rxb_len);
				left = q->l.data_len - q->rx_got;
			}
			if (left && left >= RX_DIRECT) {
				/* straight into the destination, no copy */
				struct iovec v[64];
				struct msghdr m = { .msg_iov = v };
				size_t asked = 0;

				if (q->rx_skip) {
					q->rx_skip--;
					return 0;
				}
				m.msg_iovlen = rx_dest(q, v, 64);
				for (size_t i = 0; i < m.msg_iovlen; i++)
					asked += v[i].iov_len;
				r = recvmsg(q->fd, &m, MSG_DONTWAIT);
				if (r > 0) {
					q->rx_got += (uint32_t)r;
					if ((size_t)r < asked)
						q->rx_skip = RX_SKIP;
					continue;
				}
				goto rx_result;
			}
			if (left)
				break; /* receive more into the buffer */
			q->rx_state = q->tail_len ? RX_TAIL : RX_HDR;
			if (q->rx_state == RX_HDR)
				rx_pdu(q);
			continue;
		}
		case RX_TAIL: {
			uint32_t k = q->tail_len - q->tail_got;

			if (k > q->rxb_len)
				k = q->rxb_len;
			memcpy(q->tail + q->tail_got, q->rxb + q->rxb_off, k);
			q->tail_got += k;
			q->rxb_off += k;
			q->rxb_len -= k;
			if (!q->rxb_len)
				q->rxb_off = 0;
			if (q->tail_got < q->tail_len)
				break;
			if (q->p.data_digest && q->l.data_len && !q->rx_orphan &&
			    !rx_digest_ok(q)) {
				conn_fail(q, "data digest error");
				return -EPROTO;
			}
			q->rx_state = RX_HDR;
			rx_pdu(q);
			continue;
		}
		}
		/* the buffer is empty (or holds less than a header): recv() */
		if (q->rx_skip) {
			q->rx_skip--;
			return 0;
		}
		if (q->rxb_off) {
			memmove(q->rxb, q->rxb + q->rxb_off, q->rxb_len);
			q->rxb_off = 0;
		}
		r = recv(q->fd, q->rxb + q->rxb_len, RXB_SIZE - q->rxb_len, MSG_DONTWAIT);
		if (r > 0) {
			if ((uint32_t)r < RXB_SIZE - q->rxb_len)
				q->rx_skip = RX_SKIP;
			q->rxb_len += (uint32_t)r;
			continue;
		}
rx_result:
		if (r == 0) {
			conn_fail(q, "the target closed the connection");
			return -EPIPE;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			q->rx_skip = RX_SKIP - 1;
			return 0;
		}
		if (errno == EINTR)
			continue;
		snprintf(q->why, sizeof(q->why), "recv: %s", strerror(errno));
		conn_fail(q, q->why);
		return -EPIPE;
	}
}

/*
 * Send and receive until @done(q) or @deadline (ms), sleeping in poll(2)
 * between.  For the eh_* handlers and the logout: what ends meanwhile goes
 * to the done list (delivered by the next poll()).  Return 0; -ETIMEDOUT;
 * -EPIPE: the connection failed.
 */
static int wait_for(struct ini_queue *q, bool (*done)(struct ini_queue *q),
		    uint64_t deadline)
{
	for (;;) {
		struct pollfd pf;
		uint64_t now;

		if (q->state != Q_UP)
			return -EPIPE;
		tx_flush(q);
		rx_process(q);
		if (q->state != Q_UP)
			return -EPIPE;
		if (done(q))
			return 0;
		now = now_ms();
		if (now >= deadline)
			return -ETIMEDOUT;
		pf.fd = q->fd;
		pf.events = POLLIN | (q->tx_head ? POLLOUT : 0);
		set_rcvlowat(q, 1); /* a TMF or Logout Response is a BHS */
		poll(&pf, 1, deadline - now > 10 ? 10 : (int)(deadline - now));
		q->rx_skip = 0; /* poll(2) has looked: recv() again */
	}
}

static bool tx_empty(struct ini_queue *q)
{
	return !q->tx_head;
}

static bool tmf_answered(struct ini_queue *q)
{
	return q->tmf_response >= 0;
}

static bool logged_out(struct ini_queue *q)
{
	return q->logout_done;
}

/* Log out of the session (11.14) and close; the commands have ended. */
static void conn_logout(struct ini_queue *q)
{
	uint8_t bhs[ISCSI_BHS_LEN];

	if (q->state != Q_UP)
		return;
	iscsi_logout_init(bhs, ISCSI_LOGOUT_SESSION, ITT_SPECIAL | q->special_itt++,
			  0, q->win.cmdsn, q->win.exp_statsn);
	q->logout_done = false;
	if (!tx_header(q, bhs))
		wait_for(q, logged_out, now_ms() + LOGOUT_WAIT_MS);
	conn_close(q, SAM_STAT_GOOD);
}

/*
 * A connection lost: log in again when commands wait for it, at most
 * once per RETRY_MS; past the reconnect timeout the waiting commands fail
 * (SCSI_HOST_ERROR), and each later one too when the next try fails.
 */
static void reconnect(struct ini_queue *q)
{
	uint64_t now = now_ms();
	char err[256];

	if (!q->wait_head || now < q->next_try)
		return;
	if (!conn_login(q, err, sizeof(err))) {
		qlog(q, "logged in again (same ISID: the target ends the previous session's tasks first, RFC 7143 6.3.5); %s%s",
		     "the commands that were at the target are sent again", "");
		start_cmds(q);
		return;
	}
	q->next_try = now_ms() + RETRY_MS;
	if (!q->down_logged) {
		qlog(q, "cannot log in again: %s%s", err, "");
		q->down_logged = true;
	}
	if (now - q->down_since >= q->h->cfg.reconnect_timeout_ms) {
		while (q->wait_head) {
			struct ini_cmd *c = q->wait_head;

			q->wait_head = c->next;
			cmd_end(q, c, SCSI_HOST_ERROR, SAM_STAT_GOOD);
		}
		q->wait_tail = NULL;
	}
}

/*
 * Keep-alive (RFC 7143 11.18): a connection that has received nothing
 * for noop_interval_ms gets a NOP-Out ping (ITT valid, TTT 0xffffffff,
 * immediate: CmdSN not advanced), whose NOP-In answer the target owes;
 * when nothing at all (the answer or any other PDU) comes within
 * noop_timeout_ms of it, the connection is dead: conn_fail(), as a
 * connection the target closed (commands at the target sent again after
 * a new login).  Any PDU counts as life, as Linux's iscsi does
 * (last_recv): a target busy sending data may answer the ping late.
 * Called from poll() on the queue's thread.  A poll that saw PDUs reads
 * no clock (the busy path): the next poll that sees none stamps last_rx
 * (the coarse clock), at most one poll late.
 */
static void keepalive(struct ini_queue *q)
{
	const struct scsi_iscsi_config *cfg = &q->h->cfg;
	uint8_t bhs[ISCSI_BHS_LEN];
	uint64_t now;
	char why[128];

	if (q->rx_seen) {
		q->rx_seen = false;
		q->rx_stale = true;
		q->ping_out = false;
		return;
	}
	now = coarse_ms();
	if (q->rx_stale) {
		q->rx_stale = false;
		q->last_rx = now;
		return;
	}
	if (q->ping_out) {
		if (now - q->ping_sent < cfg->noop_timeout_ms)
			return;
		q->st.ping_timeouts++;
		snprintf(why, sizeof(why),
			 "no answer to a NOP-Out ping within %u ms (nothing received for %llu ms)",
			 cfg->noop_timeout_ms, (unsigned long long)(now - q->last_rx));
		conn_fail(q, why);
		return;
	}
	if (now - q->last_rx < cfg->noop_interval_ms)
		return;
	iscsi_nop_out_ping_init(bhs, q->h->lun, ITT_SPECIAL | q->special_itt++,
				q->win.cmdsn, q->win.exp_statsn);
	if (tx_header(q, bhs))
		return; /* no memory: tried again at the next poll */
	q->ping_out = true;
	q->ping_sent = now;
	q->st.nop_out_pings++;
}

/* ms until keepalive() has something to do (UINT64_MAX: nothing). */
static uint64_t keepalive_due(const struct ini_queue *q)
{
	const struct scsi_iscsi_config *cfg = &q->h->cfg;
	uint64_t due, now;

	if (!cfg->noop_interval_ms || q->state != Q_UP)
		return UINT64_MAX;
	if (q->rx_seen || q->rx_stale)
		return cfg->noop_interval_ms; /* traffic: a whole interval from now */
	due = q->ping_out ? q->ping_sent + cfg->noop_timeout_ms :
	      q->last_rx + cfg->noop_interval_ms;
	now = coarse_ms();
	return due > now ? due - now : 0;
}

/* ------------------------------------------------------------ template */

static int ini_queuecommand(void *queue, struct scsi_cmnd *sc)
{
	struct ini_queue *q = queue;
	struct ini_cmd *c = cmd_of(sc);
	uint32_t s;

	if (!q->nfree)
		return -EAGAIN;
	s = q->free_slots[--q->nfree];
	c->sc = sc;
	c->slot = (uint16_t)s;
	c->itt = (uint32_t)q->gen[s] << 15 | s;
	c->xfer = sc->xfer_len;
	c->state = C_WAIT;
	c->window_waited = false;
	c->next = NULL;
	q->slot[s] = c;
	if (q->wait_tail)
		q->wait_tail->next = c;
	else
		q->wait_head = c;
	q->wait_tail = c;
	start_cmds(q);
	return 0;
}

static void ini_commit_rqs(void *queue)
{
	tx_flush(queue);
}

static int ini_poll(void *queue)
{
	struct ini_queue *q = queue;

	if (q->state == Q_DOWN)
		reconnect(q);
	if (q->state == Q_UP) {
		tx_flush(q);
		rx_process(q);
		if (q->h->cfg.noop_interval_ms && q->state == Q_UP)
			keepalive(q);
		if (q->logout_asked && !q->nr_sent && q->state == Q_UP) {
			conn_logout(q);
			q->down_since = now_ms();
			q->next_try = q->down_since;
			q->down_logged = false;
		}
		start_cmds(q);
		tx_flush(q);
	}
	return deliver(q);
}

static int ini_wait(void *queue, uint64_t timeout_ns)
{
	struct ini_queue *q = queue;
	uint64_t ka = keepalive_due(q);
	struct timespec ts, t0, t1;
	struct pollfd pf;
	int r;

	if (q->done_head)
		return 0;
	/* no sleep past the next ping or its deadline: poll() acts on them */
	if (ka < UINT64_MAX / 1000000u && ka * 1000000u < timeout_ns)
		timeout_ns = ka * 1000000u;
	ts.tv_sec = (time_t)(timeout_ns / 1000000000u);
	ts.tv_nsec = (long)(timeout_ns % 1000000000u);
	if (q->state != Q_UP) {
		/* a login to try, or nothing to wait on: a short sleep */
		struct timespec ms = { 0, 1000000 };

		nanosleep(timeout_ns < 1000000 ? &ts : &ms, NULL);
		return 0;
	}
	if (q->waited_plain)
		q->coalesce = q->plain_slept && q->ended < q->nr_sent / 4;
	q->ended = 0;
	q->waited_plain = !q->coalesce || q->nr_sent < COALESCE_MIN ||
			  ++q->waits % COALESCE_PROBE == 0;
	if (!q->waited_plain) {
		uint64_t want = q->rx_expect / 4;
		int v = RXB_SIZE;

		while ((uint64_t)v > want)
			v >>= 1;
		set_rcvlowat(q, v ? v : 1);
		if (timeout_ns > COALESCE_NS) {
			ts.tv_sec = 0;
			ts.tv_nsec = COALESCE_NS;
		}
	} else {
		set_rcvlowat(q, 1);
	}
	pf.fd = q->fd;
	pf.events = POLLIN | (q->tx_head ? POLLOUT : 0);
	if (q->waited_plain)
		clock_gettime(CLOCK_MONOTONIC, &t0);
	r = ppoll(&pf, 1, &ts, NULL);
	q->rx_skip = 0; /* ppoll(2) has looked: recv() again */
	if (q->waited_plain) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		q->plain_slept = (t1.tv_sec - t0.tv_sec) * 1000000000LL +
				 (t1.tv_nsec - t0.tv_nsec) >= COALESCE_SLEPT_NS;
	}
	if (r > 0)
		return 0;
	if (r == 0)
		return -ETIME;
	return errno == EINTR ? -EINTR : -errno;
}

/*
 * A Task Management Function, waited for: flush what is queued (a PDU
 * is never cut), send it, and wait for its response (tmf_timeout_ms).
 * Return the response (enum iscsi_tmf_response); -errno.
 */
static int tmf(struct ini_queue *q, uint8_t func, struct ini_cmd *ref)
{
	uint64_t deadline = now_ms() + q->h->cfg.tmf_timeout_ms;
	uint8_t bhs[ISCSI_BHS_LEN];
	int r;

	if (q->state != Q_UP)
		return -ENOTCONN;
	r = wait_for(q, tx_empty, deadline);
	if (r)
		return r;
	q->tmf_itt = ITT_SPECIAL | q->special_itt++;
	q->tmf_response = -1;
	iscsi_tmf_init(bhs, func, q->h->lun, q->tmf_itt,
		       ref ? ref->itt : ISCSI_RSVD_TAG, q->win.cmdsn,
		       q->win.exp_statsn, ref ? ref->cmdsn : q->win.cmdsn);
	r = tx_header(q, bhs);
	if (!r)
		r = wait_for(q, tmf_answered, deadline);
	q->tmf_itt = 0;
	return r ? r : q->tmf_response;
}

static int ini_abort(void *queue, struct scsi_cmnd *sc)
{
	struct ini_queue *q = queue;
	struct ini_cmd *c = cmd_of(sc);
	int r;

	switch (c->state) {
	case C_WAIT:
		/* not at the target: ended here */
		wait_unlink(q, c);
		cmd_end_now(q, c, SCSI_HOST_OK, SAM_STAT_TASK_ABORTED);
		return 0;
	case C_SENT:
		break;
	default:
		return 0; /* ended, or on the done list: it ends by itself */
	}
	q->st.aborts++;
	c->aborting = true;
	r = tmf(q, ISCSI_TMF_ABORT_TASK, c);
	if (c->state != C_SENT)
		return 0; /* its answer came, or the connection went */
	if (r != ISCSI_TMF_RSP_COMPLETE && r != ISCSI_TMF_RSP_NO_TASK)
		return r < 0 ? r : -EIO;
	/* the target ended it and sends nothing more for it (11.6.1) */
	cmd_end_now(q, c, SCSI_HOST_OK, SAM_STAT_TASK_ABORTED);
	return 0;
}

/* After a reset: every command of the queue ends through done now. */
static void end_all(struct ini_queue *q)
{
	uint32_t i;

	deliver(q);
	while (q->wait_head) {
		struct ini_cmd *c = q->wait_head;

		q->wait_head = c->next;
		cmd_end_now(q, c, SCSI_HOST_OK, SAM_STAT_TASK_ABORTED);
	}
	q->wait_tail = NULL;
	for (i = 0; i < q->nslots; i++) {
		struct ini_cmd *c = q->slot[i];

		if (c && c->state == C_SENT)
			cmd_end_now(q, c, SCSI_HOST_OK, SAM_STAT_TASK_ABORTED);
	}
	deliver(q);
}

static int reset(struct ini_queue *q, uint8_t func)
{
	int r = tmf(q, func, NULL);

	if (r != ISCSI_TMF_RSP_COMPLETE)
		return r < 0 ? r : -EIO;
	end_all(q);
	return 0;
}

static int ini_lun_reset(void *queue, uint64_t lun)
{
	struct ini_queue *q = queue;

	(void)lun; /* the disk is one LUN: the target's */
	q->st.lun_resets++;
	return reset(q, ISCSI_TMF_LUN_RESET);
}

static int ini_target_reset(void *queue)
{
	struct ini_queue *q = queue;

	q->st.target_resets++;
	return reset(q, ISCSI_TMF_TARGET_WARM_RESET);
}

/* The host's reset: the connection is dropped and logged in again. */
static void ini_host_reset(void *queue)
{
	struct ini_queue *q = queue;
	char err[256];

	if (q->state == Q_UP) {
		q->st.connection_losses++;
		conn_close(q, SAM_STAT_TASK_ABORTED);
	}
	end_all(q);
	q->down_since = now_ms();
	q->down_logged = false;
	if (conn_login(q, err, sizeof(err))) {
		q->next_try = now_ms() + RETRY_MS;
		qlog(q, "host reset: cannot log in again: %s%s", err, "");
		q->down_logged = true;
	}
}

/* ------------------------------------------------------------ queues */

static void queue_free(struct ini_queue *q)
{
	if (q->fd >= 0)
		close(q->fd);
	tx_drop_all(q);
	while (q->tx_pool) {
		struct tx_pdu *t = q->tx_pool;

		q->tx_pool = t->next;
		free(t);
	}
	free(q->slot);
	free(q->gen);
	free(q->free_slots);
	free(q->rxb);
	free(q->scratch);
	free(q);
}

static int queue_new(struct ini_host *h, uint32_t idx, uint32_t depth,
		     struct ini_queue **out, char *err, size_t errlen)
{
	struct ini_queue *q = calloc(1, sizeof(*q));
	uint32_t i, n = depth < MAX_SLOTS ? depth : MAX_SLOTS;
	int r;

	if (!q)
		return -ENOMEM;
	if (!n)
		n = 1;
	q->h = h;
	q->idx = idx;
	q->fd = -1;
	q->nslots = n;
	q->slot = calloc(n, sizeof(*q->slot));
	q->gen = calloc(n, sizeof(*q->gen));
	q->free_slots = malloc(n * sizeof(*q->free_slots));
	q->rxb = malloc(RXB_SIZE);
	q->scratch_len = h->ours.max_recv_dsl + 8;
	q->scratch = malloc(q->scratch_len);
	if (!q->slot || !q->gen || !q->free_slots || !q->rxb || !q->scratch) {
		queue_free(q);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		q->free_slots[i] = n - 1 - i;
	q->nfree = n;
	memcpy(q->isid, h->isid, 6);
	/* the qualifier: a session per queue (0: the probe's) */
	put_be16(q->isid + 4, (uint16_t)(idx == UINT32_MAX ? 0 : idx + 1));
	r = conn_login(q, err, errlen);
	if (r) {
		queue_free(q);
		return r;
	}
	*out = q;
	return 0;
}

static int ini_init_queue(void *hostdata, uint32_t idx, uint32_t depth,
			  void **queue)
{
	struct ini_host *h = hostdata;
	struct ini_queue *q;
	char err[256];
	int r;

	if (idx == UINT32_MAX && h->stash) {
		/* the session scsi_iscsi_create() logged in */
		*queue = h->stash;
		h->stash = NULL;
		return 0;
	}
	r = queue_new(h, idx, depth, &q, err, sizeof(err));
	if (r) {
		if (!h->cfg.quiet)
			fprintf(stderr, "iscsi: %s: queue %u: %s\n", h->where, idx, err);
		return r;
	}
	if (!h->reported && !h->cfg.quiet) {
		h->reported = true;
		fprintf(stderr, "iscsi: %s: logged in (a session per queue, TSIH 0x%04x for queue %u): "
			"HeaderDigest %s, DataDigest %s, MaxRecvDataSegmentLength %u/%u, "
			"FirstBurstLength %u, MaxBurstLength %u, ImmediateData %s, InitialR2T %s, "
			"MaxOutstandingR2T %u, AuthMethod %s\n",
			h->where, q->tsih, idx, q->p.header_digest ? "CRC32C" : "None",
			q->p.data_digest ? "CRC32C" : "None", q->p.max_recv_dsl, q->peer_mrdsl,
			q->p.first_burst_length, q->p.max_burst_length,
			q->p.immediate_data ? "Yes" : "No", q->p.initial_r2t ? "Yes" : "No",
			q->p.max_outstanding_r2t, q->p.auth_method);
	}
	*queue = q;
	return 0;
}

static void stats_add(struct scsi_iscsi_stats *to, const struct scsi_iscsi_stats *from)
{
	const uint64_t *f = (const uint64_t *)from;
	uint64_t *t = (uint64_t *)to;
	size_t i;

	_Static_assert(sizeof(*to) % sizeof(uint64_t) == 0, "uint64_t counters only");
	for (i = 0; i < sizeof(*to) / sizeof(uint64_t); i++)
		t[i] += f[i];
}

static void ini_exit_queue(void *queue)
{
	struct ini_queue *q = queue;

	deliver(q);
	conn_logout(q);
	stats_add(&q->h->st, &q->st);
	queue_free(q);
}

static void host_free(struct ini_host *h);

static void ini_destroy(void *hostdata)
{
	struct ini_host *h = hostdata;
	const struct scsi_iscsi_stats *s = &h->st;

	if (h->stash)
		ini_exit_queue(h->stash);
	if (h->reported && !h->cfg.quiet)
		fprintf(stderr, "iscsi: %s: closed: %llu logins, %llu failed logins, %llu connections lost, "
			"%llu commands, %llu R2Ts, %llu Data-Out PDUs (%llu unsolicited), "
			"%llu Data-In PDUs (%llu with status), %llu window waits, %llu NOP-In pings answered, "
			"%llu NOP-Out pings sent (%llu unanswered), "
			"%llu aborts, %llu LUN resets, %llu target resets, %llu PDUs in %llu sendmsg calls\n",
			h->where, (unsigned long long)s->logins,
			(unsigned long long)s->login_failures,
			(unsigned long long)s->connection_losses,
			(unsigned long long)s->commands, (unsigned long long)s->r2ts,
			(unsigned long long)(s->solicited_pdus + s->unsolicited_pdus),
			(unsigned long long)s->unsolicited_pdus,
			(unsigned long long)s->data_in_pdus,
			(unsigned long long)s->status_in_data_in,
			(unsigned long long)s->window_waits,
			(unsigned long long)s->nop_in_pings,
			(unsigned long long)s->nop_out_pings,
			(unsigned long long)s->ping_timeouts,
			(unsigned long long)s->aborts, (unsigned long long)s->lun_resets,
			(unsigned long long)s->target_resets,
			(unsigned long long)s->pdus_sent, (unsigned long long)s->send_calls);
	host_free(h);
}

static const struct scsi_host_template ini_template = {
	.name = "iscsi",
	.cmd_size = sizeof(struct ini_cmd),
	.init_queue = ini_init_queue,
	.exit_queue = ini_exit_queue,
	.queuecommand = ini_queuecommand,
	.commit_rqs = ini_commit_rqs,
	.poll = ini_poll,
	.wait = ini_wait,
	.eh_abort_handler = ini_abort,
	.eh_device_reset_handler = ini_lun_reset,
	.eh_target_reset_handler = ini_target_reset,
	.eh_host_reset_handler = ini_host_reset,
	.destroy = ini_destroy,
};

/* ------------------------------------------------------------ creation */

void scsi_iscsi_config_default(struct scsi_iscsi_config *c)
{
	memset(c, 0, sizeof(*c));
	c->max_recv_dsl = 262144;
	c->first_burst_length = 262144;
	c->max_burst_length = 1048576;
	c->immediate_data = true;
	c->initial_r2t = false;
	c->max_outstanding_r2t = 8;
	c->noop_interval_ms = DEF_NOOP_MS;
	c->noop_timeout_ms = DEF_NOOP_MS;
}

int scsi_iscsi_parse_url(const char *url, struct scsi_iscsi_target *t,
			 char *err, size_t errlen)
{
	const char *p = url, *e, *slash;
	size_t n;
	char *end;
	unsigned long v;

	memset(t, 0, sizeof(*t));
	t->port = 3260;
	if (strncmp(p, "iscsi://", 8)) {
		snprintf(err, errlen, "target=%s: not iscsi://HOST[:PORT]/IQN/LUN (the scheme is not iscsi://)", url);
		return -EINVAL;
	}
	p += 8;
	slash = strchr(p, '/');
	if (!slash)
		slash = p + strlen(p); /* iscsi://HOST[:PORT]: discovery, LUN 0 */
	/* HOST: a name, an IPv4 address or [IPv6] */
	if (*p == '[') {
		e = memchr(p, ']', (size_t)(slash - p));
		if (!e) {
			snprintf(err, errlen, "target=%s: HOST: '[' without ']'", url);
			return -EINVAL;
		}
		n = (size_t)(e - p - 1);
		p++;
		e++;
	} else {
		e = memchr(p, ':', (size_t)(slash - p));
		if (!e)
			e = slash;
		n = (size_t)(e - p);
	}
	if (!n || n > SCSI_ISCSI_HOST_MAX) {
		snprintf(err, errlen, "target=%s: HOST: %s", url, n ? "longer than 255 bytes" : "empty");
		return -EINVAL;
	}
	memcpy(t->host, p, n);
	t->host[n] = 0;
	if (*e == ':') {
		errno = 0;
		v = strtoul(e + 1, &end, 10);
		if (end == e + 1 || end != slash || errno || !v || v > 65535) {
			snprintf(err, errlen, "target=%s: PORT: not a number 1..65535", url);
			return -EINVAL;
		}
		t->port = (uint16_t)v;
	} else if (e != slash) {
		snprintf(err, errlen, "target=%s: HOST: unexpected text after ']'", url);
		return -EINVAL;
	}
	/* no IQN (iscsi://HOST[:PORT][/] or iscsi://HOST[:PORT]//LUN): the
	 * one target discovery offers */
	if (!*slash || !slash[1])
		return 0;
	/* IQN: up to the last '/' */
	p = slash + 1;
	e = strrchr(p, '/');
	if (!e) {
		snprintf(err, errlen, "target=%s: IQN or LUN missing (iscsi://HOST[:PORT]/IQN/LUN)", url);
		return -EINVAL;
	}
	n = (size_t)(e - p);
	if (n > SCSI_ISCSI_NAME_MAX) {
		snprintf(err, errlen, "target=%s: IQN: longer than 223 bytes (RFC 7143 4.2.7.1)", url);
		return -EINVAL;
	}
	memcpy(t->iqn, p, n);
	t->iqn[n] = 0;
	for (end = t->iqn; *end; end++)
		if (*end <= ' ' || *end == 0x7f) {
			snprintf(err, errlen, "target=%s: IQN: white space or control characters", url);
			return -EINVAL;
		}
	errno = 0;
	v = strtoul(e + 1, &end, 10);
	if (end == e + 1 || *end || errno || v > SCSI_ISCSI_LUN_MAX) {
		snprintf(err, errlen, "target=%s: LUN: not a number 0..%u", url, SCSI_ISCSI_LUN_MAX);
		return -EINVAL;
	}
	t->lun = v;
	return 0;
}

static int resolve(struct ini_host *h, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	char port[8];
	int r;

	snprintf(port, sizeof(port), "%u", h->cfg.target.port);
	r = getaddrinfo(h->cfg.target.host, port, &hints, &ai);
	if (r) {
		snprintf(err, errlen, "target: HOST %s: %s", h->cfg.target.host, gai_strerror(r));
		return -ENOENT;
	}
	memcpy(&h->addr, ai->ai_addr, ai->ai_addrlen);
	h->addrlen = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

/*
 * The CHAP credentials: @cfg->chap_file, else the environment, else none
 * (*@out NULL).  Return 0; -EINVAL, -EACCES (the file's mode), -ENOMEM
 * with a message in @err.
 */
static int load_chap(const struct scsi_iscsi_config *cfg, struct iscsi_chap **out,
		     char *err, size_t errlen)
{
	const char *u = getenv("BLKSTACK_ISCSI_CHAP_USER");
	const char *sec = getenv("BLKSTACK_ISCSI_CHAP_SECRET");
	const char *tu = getenv("BLKSTACK_ISCSI_CHAP_TARGET_USER");
	const char *ts = getenv("BLKSTACK_ISCSI_CHAP_TARGET_SECRET");
	struct iscsi_chap *c;
	int r = 0;

	*out = NULL;
	if (!cfg->chap_file && !u && !sec && !tu && !ts)
		return 0;
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (cfg->chap_file) {
		r = iscsi_chap_load_as("iscsi_chap_file", cfg->chap_file, c, err, errlen);
		if (!r && c->nr_users != 1) {
			snprintf(err, errlen, "iscsi_chap_file=%s: %u 'initiator NAME SECRET' lines: the initiator answers with one",
				 cfg->chap_file, c->nr_users);
			r = -EINVAL;
		}
	} else if (!u || !sec || !*u) {
		snprintf(err, errlen, "BLKSTACK_ISCSI_CHAP_USER and BLKSTACK_ISCSI_CHAP_SECRET: both or neither");
		r = -EINVAL;
	} else if (!tu != !ts || (tu && !*tu)) {
		snprintf(err, errlen, "BLKSTACK_ISCSI_CHAP_TARGET_USER and BLKSTACK_ISCSI_CHAP_TARGET_SECRET (mutual CHAP): both or neither, and with BLKSTACK_ISCSI_CHAP_USER");
		r = -EINVAL;
	} else if (strlen(u) > ISCSI_CHAP_NAME_MAX || (tu && strlen(tu) > ISCSI_CHAP_NAME_MAX) ||
		   strlen(sec) < ISCSI_CHAP_SECRET_MIN || strlen(sec) > ISCSI_CHAP_SECRET_MAX ||
		   (ts && (strlen(ts) < ISCSI_CHAP_SECRET_MIN || strlen(ts) > ISCSI_CHAP_SECRET_MAX))) {
		snprintf(err, errlen, "BLKSTACK_ISCSI_CHAP_*: names of at most %d bytes, secrets of %d..%d bytes (RFC 7143 12.1.3: at least 96 bits)",
			 ISCSI_CHAP_NAME_MAX, ISCSI_CHAP_SECRET_MIN, ISCSI_CHAP_SECRET_MAX);
		r = -EINVAL;
	} else {
		/* lengths checked: they fit with their NUL */
		memcpy(c->users[0].name, u, strlen(u) + 1);
		memcpy(c->users[0].secret, sec, strlen(sec) + 1);
		c->nr_users = 1;
		if (tu) {
			memcpy(c->target.name, tu, strlen(tu) + 1);
			memcpy(c->target.secret, ts, strlen(ts) + 1);
			c->has_target = true;
		}
	}
	if (r) {
		explicit_bzero(c, sizeof(*c));
		free(c);
		return r;
	}
	*out = c;
	return 0;
}

static void host_free(struct ini_host *h)
{
	if (h->chap) {
		explicit_bzero(h->chap, sizeof(*h->chap));
		free(h->chap);
	}
	free(h);
}

/*
 * A host for @cfg, without a session yet: checks, our offers, the ISID,
 * the credentials, the address.  Return it; NULL with errno and @err.
 */
static struct ini_host *host_new(const struct scsi_iscsi_config *cfg,
				 char *err, size_t errlen)
{
	const struct scsi_iscsi_target *t = &cfg->target;
	struct ini_host *h;
	int r;

	if (!t->host[0] || !t->port) {
		snprintf(err, errlen, "iscsi: no target (target=iscsi://HOST[:PORT]/IQN/LUN)");
		errno = EINVAL;
		return NULL;
	}
	if (t->lun > SCSI_ISCSI_LUN_MAX) {
		snprintf(err, errlen, "iscsi: LUN %llu: at most %u", (unsigned long long)t->lun,
			 SCSI_ISCSI_LUN_MAX);
		errno = EINVAL;
		return NULL;
	}
#define RANGE(f, lo, hi, name) \
	if (cfg->f < (lo) || cfg->f > (hi)) { \
		snprintf(err, errlen, "%s=%u: allowed %u..%u", name, cfg->f, lo, hi); \
		errno = EINVAL; \
		return NULL; \
	}
	RANGE(max_recv_dsl, 512u, 16777215u, "iscsi_max_recv_dsl")
	RANGE(first_burst_length, 512u, 16777215u, "iscsi_first_burst")
	RANGE(max_burst_length, 512u, 16777215u, "iscsi_max_burst")
	RANGE(max_outstanding_r2t, 1u, 65535u, "iscsi_max_r2t")
#undef RANGE
	if (cfg->initiator_name && strlen(cfg->initiator_name) > SCSI_ISCSI_NAME_MAX) {
		snprintf(err, errlen, "iscsi_initiator: longer than 223 bytes (RFC 7143 4.2.7.1)");
		errno = EINVAL;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	h->cfg = *cfg;
	h->cfg.chap_file = NULL; /* not kept: the caller's */
	if (!h->cfg.login_timeout_ms)
		h->cfg.login_timeout_ms = DEF_LOGIN_MS;
	if (!h->cfg.reconnect_timeout_ms)
		h->cfg.reconnect_timeout_ms = DEF_RECONNECT_MS;
	if (!h->cfg.tmf_timeout_ms)
		h->cfg.tmf_timeout_ms = DEF_TMF_MS;
	if (!h->cfg.noop_timeout_ms)
		h->cfg.noop_timeout_ms = DEF_NOOP_MS;
	snprintf(h->initiator, sizeof(h->initiator), "%s",
		 cfg->initiator_name && cfg->initiator_name[0] ? cfg->initiator_name :
		 SCSI_ISCSI_DEFAULT_INITIATOR);
	h->cfg.initiator_name = h->initiator;
	snprintf(h->where, sizeof(h->where), "%s%s%s:%u",
		 strchr(t->host, ':') ? "[" : "", t->host, strchr(t->host, ':') ? "]" : "",
		 t->port);
	iscsi_params_default(&h->ours);
	h->ours.header_digest = cfg->header_digest;
	h->ours.data_digest = cfg->data_digest;
	h->ours.max_connections = 1;
	h->ours.initial_r2t = cfg->initial_r2t;
	h->ours.immediate_data = cfg->immediate_data;
	h->ours.max_recv_dsl = cfg->max_recv_dsl;
	h->ours.max_burst_length = cfg->max_burst_length;
	h->ours.first_burst_length = cfg->first_burst_length;
	h->ours.default_time2wait = 0;  /* nothing to wait for at ERL 0 */
	h->ours.default_time2retain = 0;
	h->ours.max_outstanding_r2t = cfg->max_outstanding_r2t;
	h->ours.error_recovery_level = 0;
	snprintf(h->ours.initiator_name, sizeof(h->ours.initiator_name), "%s", h->initiator);
	/* ISID type 2 (random, RFC 7143 10.12.5): 0x80, 24 random bits in
	 * B and C; the qualifier D names the queue */
	h->isid[0] = 0x80;
	if (getrandom(h->isid + 1, 3, 0) != 3) {
		uint32_t x = (uint32_t)now_ms() ^ (uint32_t)getpid() << 8;

		memcpy(h->isid + 1, &x, 3);
	}
	r = load_chap(cfg, &h->chap, err, errlen);
	if (!r)
		r = resolve(h, err, errlen);
	if (r) {
		host_free(h);
		errno = -r;
		return NULL;
	}
	return h;
}

/* One PDU's header and data (with its padding) into @buf (@max bytes). */
static int recv_pdu(int fd, uint8_t *bhs, uint8_t *buf, uint32_t max,
		    uint32_t *dsl, uint64_t deadline)
{
	struct iscsi_pdu_lens pl;
	int r = recv_all(fd, bhs, ISCSI_BHS_LEN, deadline);

	if (r)
		return r;
	if (iscsi_pdu_check_target(bhs, max, &pl))
		return -EPROTO;
	*dsl = pl.data_len;
	return recv_all(fd, buf, pl.data_len + pl.pad, deadline);
}

#define DISCOVERY_ITT (ITT_SPECIAL | 0x7fff0000u)

/*
 * A discovery session (RFC 7143 4.3, 13.3): log in with
 * SessionType=Discovery (CHAP as configured, no digests), ask
 * SendTargets=All (continued Text Responses asked for the rest), log
 * out.  Fills @out up to @max.  Return: the number of targets offered
 * (may be over @max); -errno with @err.
 */
static int discover(struct ini_host *h, struct scsi_iscsi_discovered *out,
		    unsigned int max, char *err, size_t errlen)
{
	static const uint8_t zero[4];
	static const char ask[] = "SendTargets=All";
	uint64_t deadline = now_ms() + h->cfg.login_timeout_ms;
	struct iscsi_params ours = h->ours;
	struct iscsi_ini_login *l = malloc(sizeof(*l));
	uint32_t max_dsl = h->ours.max_recv_dsl, ttt = ISCSI_RSVD_TAG, dsl;
	uint8_t isid[6], req[ISCSI_BHS_LEN], rsp[ISCSI_BHS_LEN];
	uint8_t *buf = malloc(max_dsl + 4);
	char *text = NULL;
	size_t tlen = 0, pos = 0, kl, vl;
	struct iscsi_window win;
	const char *k, *v;
	unsigned int i, n = 0;
	int fd = -1, r;

	if (!l || !buf) {
		snprintf(err, errlen, "out of memory");
		r = -ENOMEM;
		goto out;
	}
	ours.discovery = true;
	ours.target_name[0] = 0;
	ours.header_digest = false;
	ours.data_digest = false;
	memcpy(isid, h->isid, 6);
	put_be16(isid + 4, 0xffff); /* the queues' are 0 (probe) and 1.. */
	fd = login_fd(h, &ours, isid, DISCOVERY_ITT, l, err, errlen);
	if (fd < 0) {
		r = fd;
		goto out;
	}
	win = l->win;
	iscsi_ini_login_free(l);
	for (i = 0;; i++) {
		uint32_t qlen = i ? 0 : sizeof(ask); /* with its NUL */
		uint8_t op;

		iscsi_text_req_init(req, DISCOVERY_ITT + 1, ttt, win.cmdsn, win.exp_statsn, qlen);
		if ((r = send_all(fd, req, sizeof(req), deadline)) ||
		    (r = send_all(fd, ask, qlen, deadline)) ||
		    (r = send_all(fd, zero, iscsi_pad4(qlen), deadline)) ||
		    (r = recv_pdu(fd, rsp, buf, max_dsl, &dsl, deadline))) {
			snprintf(err, errlen, "SendTargets: %s", r == -ETIMEDOUT ?
				 "no answer within the login timeout" :
				 r == -EPROTO ? "a malformed PDU" : strerror(-r));
			goto out;
		}
		op = bhs_opcode(rsp);
		if (op != ISCSI_OP_TEXT_RSP || get_be32(rsp + BHS_ITT) != DISCOVERY_ITT + 1) {
			snprintf(err, errlen, "SendTargets: the target answered a %s%s",
				 iscsi_opcode_name(rsp[0]), op == ISCSI_OP_REJECT ?
				 " (it refused the Text Request)" : " instead of a Text Response");
			r = -EPROTO;
			goto out;
		}
		win.exp_statsn = get_be32(rsp + BHS_STATSN) + 1;
		iscsi_window_update(&win, rsp);
		if (tlen + dsl > ISCSI_TEXT_MAX) {
			snprintf(err, errlen, "SendTargets: an answer over 64 KiB");
			r = -EPROTO;
			goto out;
		}
		if (dsl) {
			char *t = realloc(text, tlen + dsl + 1);

			if (!t) {
				snprintf(err, errlen, "out of memory");
				r = -ENOMEM;
				goto out;
			}
			text = t;
			memcpy(text + tlen, buf, dsl);
			tlen += dsl;
		}
		if ((rsp[BHS_FLAGS] & ISCSI_FLAG_FINAL) && !(rsp[BHS_FLAGS] & ISCSI_TEXT_C))
			break;
		/* continued (C), or not final: ask for the rest with its TTT */
		ttt = get_be32(rsp + BHS_TTT);
		if (i == 64) {
			snprintf(err, errlen, "SendTargets: the answer does not end");
			r = -EPROTO;
			goto out;
		}
	}
	/* Logout, its answer waited for a little; the session ends anyway */
	iscsi_logout_init(req, ISCSI_LOGOUT_SESSION, DISCOVERY_ITT + 2, 0, win.cmdsn,
			  win.exp_statsn);
	if (!send_all(fd, req, sizeof(req), deadline))
		(void)recv_pdu(fd, rsp, buf, max_dsl, &dsl, now_ms() + LOGOUT_WAIT_MS);
	while ((r = iscsi_text_next(text ? text : "", tlen, &pos, &k, &kl, &v, &vl)) > 0) {
		if (kl == 10 && !memcmp(k, "TargetName", 10)) {
			if (n < max) {
				memset(&out[n], 0, sizeof(out[n]));
				snprintf(out[n].name, sizeof(out[n].name), "%.*s",
					 (int)(vl > SCSI_ISCSI_NAME_MAX ? SCSI_ISCSI_NAME_MAX : vl), v);
			}
			n++;
		} else if (kl == 13 && !memcmp(k, "TargetAddress", 13) && n && n <= max &&
			   out[n - 1].nr_addresses < SCSI_ISCSI_DISCOVER_ADDRESSES) {
			struct scsi_iscsi_discovered *d = &out[n - 1];

			snprintf(d->address[d->nr_addresses++], sizeof(d->address[0]), "%.*s",
				 (int)(vl >= sizeof(d->address[0]) ? sizeof(d->address[0]) - 1 : vl), v);
		}
	}
	if (r < 0) {
		snprintf(err, errlen, "SendTargets: malformed key=value text in the answer");
		goto out;
	}
	r = (int)n;
out:
	if (fd >= 0)
		close(fd);
	free(l);
	free(buf);
	free(text);
	return r;
}

/*
 * No IQN in the URL: the target discovery offers, when there is exactly
 * one; else an error that lists them.
 */
static int pick_target(struct ini_host *h, char *err, size_t errlen)
{
	struct scsi_iscsi_discovered d[8];
	char why[256], list[512] = "";
	size_t used = 0;
	int n, i;

	n = discover(h, d, 8, why, sizeof(why));
	if (n < 0) {
		snprintf(err, errlen, "iscsi: %s: discovery: %s", h->where, why);
		return n;
	}
	if (n == 1) {
		snprintf(h->cfg.target.iqn, sizeof(h->cfg.target.iqn), "%s", d[0].name);
		return 0;
	}
	for (i = 0; i < n && i < 8 && used < sizeof(list); i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
					 i ? ", " : "", d[i].name);
	if (!n)
		snprintf(err, errlen, "iscsi: %s: discovery: the target offers no target to initiator '%s' (SendTargets=All)",
			 h->where, h->initiator);
	else
		snprintf(err, errlen, "iscsi: %s: discovery: %d targets offered, name one (target=iscsi://HOST[:PORT]/IQN/LUN): %s%s",
			 h->where, n, list, n > 8 ? ", ..." : "");
	return -ENXIO;
}

int scsi_iscsi_discover(const struct scsi_iscsi_config *cfg,
			struct scsi_iscsi_discovered *out, unsigned int max,
			char *err, size_t errlen)
{
	struct ini_host *h = host_new(cfg, err, errlen);
	char why[256];
	int n;

	if (!h)
		return -errno;
	n = discover(h, out, max, why, sizeof(why));
	if (n < 0)
		snprintf(err, errlen, "iscsi: %s: discovery: %s", h->where, why);
	host_free(h);
	return n;
}

int scsi_iscsi_create(const struct scsi_iscsi_config *cfg,
		      const struct scsi_host_template **hostt,
		      void **hostdata, char *err, size_t errlen)
{
	const struct scsi_iscsi_target *t;
	struct ini_host *h;
	char why[256];
	int r;

	h = host_new(cfg, err, errlen);
	if (!h)
		return -errno;
	if (!h->cfg.target.iqn[0]) {
		r = pick_target(h, err, errlen);
		if (r) {
			host_free(h);
			return r;
		}
	}
	t = &h->cfg.target;
	snprintf(h->where, sizeof(h->where), "%s%s%s:%u %s LUN %llu",
		 strchr(t->host, ':') ? "[" : "", t->host, strchr(t->host, ':') ? "]" : "",
		 t->port, t->iqn, (unsigned long long)t->lun);
	snprintf(h->ours.target_name, sizeof(h->ours.target_name), "%s", t->iqn);
	iscsi_lun_encode(t->lun, h->lun);
	r = queue_new(h, UINT32_MAX, 1, &h->stash, why, sizeof(why));
	if (r) {
		snprintf(err, errlen, "iscsi: %s: %s", h->where, why);
		host_free(h);
		return r;
	}
	*hostt = &ini_template;
	*hostdata = h;
	return 0;
}

void scsi_iscsi_get_stats(void *hostdata, struct scsi_iscsi_stats *st)
{
	const struct ini_host *h = hostdata;

	*st = h->st;
}
