/* SPDX-License-Identifier: MIT */
/*
 * Request coalescing for one NBD connection: the server's counterpart of
 * NVMe interrupt coalescing (NVMe 2.0 Base 5.27.1.5, Aggregation Time),
 * applied to the receive side.
 *
 * A client at queue depth answers each reply it reads with a new request.
 * A server that sleeps in recv() is woken by every one of those sends: one
 * wake-up, one context switch and one small batch per request, and the
 * client's send() pays for the wake-up too.  Instead, after a turn that
 * received several requests, the connection thread sleeps on a timer (the
 * client's sends then wake nobody) and reads everything that arrived.
 *
 * The sleep adapts per connection, on one signal: whether the client
 * ran out of work during the sleep (for a Unix socket, exactly: SIOCOUTQ,
 * the bytes the peer has not yet read, is 0).
 * Not drained: the client was still busy, the sleep cost it nothing, and
 * the next one is 1/16 longer.  Drained: the client may have idled, and
 * the next sleep is 3/4 as long.  The sleep thus hovers just under the
 * time the client takes to read a batch (its queue depth times its time
 * per request).  A client at low queue depth (fewer than
 * BLK_NBD_COALESCE_MIN_BATCH requests a turn) is never made to wait, and
 * a connection whose client runs dry even at the shortest sleep (a
 * shallow queue, or timers coarser than its pace) stops coalescing for
 * BLK_NBD_COALESCE_BACKOFF_TURNS turns.
 *
 * Over TCP that signal does not exist (SIOCOUTQ counts bytes not yet
 * acknowledged, not bytes the application has not read); the caller uses
 * receive timestamps instead: a client whose requests stopped arriving
 * well before the wake-up had nothing left to do.
 *
 * Pure arithmetic on caller-supplied times: no clock, no system call, so
 * tests can drive it with any client model.  Context: the connection's own
 * thread; no locking.
 */
#ifndef BLKSTACK_NBD_COALESCE_H
#define BLKSTACK_NBD_COALESCE_H

#include <stdbool.h>
#include <stdint.h>

/* coalesce only after a turn that received at least this many requests */
#define BLK_NBD_COALESCE_MIN_BATCH 4
/* the first sleep, and the floor of the adapted one (ns) */
#define BLK_NBD_COALESCE_START_NS 20000
#define BLK_NBD_COALESCE_MIN_NS 5000
/* turns without coalescing after the client ran dry at the floor */
#define BLK_NBD_COALESCE_BACKOFF_TURNS 512

struct blk_nbd_coalesce {
	uint64_t max_ns;        /* cap on one sleep; 0: coalescing off */
	uint64_t target_ns;     /* the next sleep */
	unsigned int backoff;   /* turns left without coalescing */
	/* statistics, for the connection's log line and tests */
	uint64_t sleeps;        /* coalescing sleeps taken */
	uint64_t dry;           /* sleeps after which the client had drained */
	uint64_t gathered;      /* requests received right after a sleep */
};

/**
 * blk_nbd_coalesce_init() - set up a connection's coalescing state.
 * @co: state to initialise.
 * @max_us: longest sleep in microseconds (0 disables coalescing).
 */
void blk_nbd_coalesce_init(struct blk_nbd_coalesce *co, unsigned int max_us);

/**
 * blk_nbd_coalesce_wait() - how long to sleep before the next receive.
 * @co: the connection's state.
 * @last_batch: requests received in the turn that just ended (complete
 *	requests whose headers arrived).
 * Call only when the connection is otherwise idle: no device I/O in flight,
 * no reply waiting to be sent, room to receive.
 * Return: nanoseconds to sleep, or 0 to receive (and block) at once.
 */
uint64_t blk_nbd_coalesce_wait(struct blk_nbd_coalesce *co,
			       unsigned int last_batch);

/**
 * blk_nbd_coalesce_update() - learn from a sleep that was taken.
 * @co: the connection's state.
 * @arrived: requests received right after it.
 * @drained: the client may have run out of work during the sleep: it had
 *	read every reply sent before it, or its requests filled enough of a
 *	socket buffer that its send() may have blocked (the caller decides).
 */
void blk_nbd_coalesce_update(struct blk_nbd_coalesce *co, unsigned int arrived,
			     bool drained);

#endif
