// SPDX-License-Identifier: MIT
/*
 * The loopback LLD (blkstack/scsi_host.h): hands each command to the SCSI
 * target core (blkstack/scsi_tgt.h) in this process, without copying data:
 * the target reads and writes the request's own iovecs.  Inline, on the
 * submitting thread (each hardware queue has a target queue of its own: no
 * host lock), or with a device thread per queue (thread=true), as
 * nvme_ctrl's thread mode: single-producer single-consumer rings of
 * command pointers each way, task management by mailbox.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "blkstack/scsi_host.h"
#include "blkstack/scsi_tgt.h"

struct lb_host {
	struct scsi_tgt *tgt;
	bool thread;
	bool delayed;           /* the target delays commands (delay, ndelay) */
};

/* Shorter than this to the next delayed command's due time, the device
 * thread spins rather than sleeps (a futex wake-up costs some us) */
#define LB_DELAY_SPIN_NS 20000

/* A ring of commands between a queue's thread and its device thread. */
struct lb_ring {
	_Atomic uint32_t head __attribute__((aligned(64))); /* consumer's */
	_Atomic uint32_t tail __attribute__((aligned(64))); /* producer's */
	uint32_t mask;
	struct lb_cmd **slot;
};

/* Task management asked of the device thread */
enum lb_tmf_op {
	TMF_NONE = 0,
	TMF_ABORT,
	TMF_LUN_RESET,
	TMF_TARGET_RESET,
	TMF_QUEUE_RESET,
};

struct lb_queue {
	struct lb_host *h;
	struct scsi_tgt_queue *tq; /* its thread's: the device thread's */
	/* thread mode */
	bool has_thread;
	struct lb_ring sq, cq;
	pthread_t thread;
	_Atomic bool stop;
	_Atomic int ready;      /* 0 starting, 1 running, < 0 -errno */
	_Atomic int tmf_op;     /* enum lb_tmf_op: set by the queue's thread,
				 * cleared by the device thread */
	struct scsi_tgt_cmd *tmf_cmd;
	uint64_t tmf_lun;
	int tmf_ret;
	/* futex word: 1 while the device thread sleeps until a delayed
	 * command is due (only with a delay: lb_thread_sleep()) */
	_Atomic uint32_t sleeping;
};

/*
 * Per command (the template's cmd_size, scsi_cmd_priv() of its midlayer
 * command, lb_sc()): the target core's command, last (its sense buffer,
 * cold, is its end).  16 bytes in front of it, so that a READ's target
 * command (88 bytes), media command (32) and bio (56) fill three cache
 * lines, not four (callgrind's cache model: one D1 write miss per I/O
 * fewer than with a pointer to the midlayer's command here).
 */
struct lb_cmd {
	struct lb_queue *q;
	int refused;            /* thread mode: scsi_tgt_submit()'s refusal */
	struct scsi_tgt_cmd tc;
};

static inline struct lb_cmd *tc_to_lb(struct scsi_tgt_cmd *tc)
{
	return (struct lb_cmd *)((char *)tc - offsetof(struct lb_cmd, tc));
}

/* The midlayer's command whose private area @lb is (scsi_cmd_priv()). */
static inline struct scsi_cmnd *lb_sc(struct lb_cmd *lb)
{
	return (struct scsi_cmnd *)lb - 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool ring_push(struct lb_ring *r, struct lb_cmd *p)
{
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);

	if (t - atomic_load_explicit(&r->head, memory_order_acquire) > r->mask)
		return false;
	r->slot[t & r->mask] = p;
	atomic_store_explicit(&r->tail, t + 1, memory_order_release);
	return true;
}

static struct lb_cmd *ring_pop(struct lb_ring *r)
{
	uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	struct lb_cmd *p;

	if (h == atomic_load_explicit(&r->tail, memory_order_acquire))
		return NULL;
	p = r->slot[h & r->mask];
	atomic_store_explicit(&r->head, h + 1, memory_order_release);
	return p;
}

static long futex(_Atomic uint32_t *uaddr, int op, uint32_t val,
		  const struct timespec *ts, uint32_t val3)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, val3);
}

/*
 * Wake the device thread if it sleeps (lb_thread_sleep()), after the
 * caller published what it is to see (a command on the ring, a task
 * management function, stop).  The fence orders that store before the
 * load of @sleeping, as lb_thread_sleep() orders its store of @sleeping
 * before its loads: one side sees the other's.  Only with a delay.
 */
static void lb_wake(struct lb_queue *q)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&q->sleeping, memory_order_relaxed) &&
	    atomic_exchange_explicit(&q->sleeping, 0, memory_order_relaxed))
		futex(&q->sleeping, FUTEX_WAKE_PRIVATE, 1, NULL, 0);
}

static int ring_init(struct lb_ring *r, uint32_t size)
{
	r->slot = calloc(size, sizeof(*r->slot));
	r->mask = size - 1;
	return r->slot ? 0 : -ENOMEM;
}

/* The target's answer into the midlayer's command (sense only for CHECK
 * CONDITION: no 252-byte copy per I/O). */
static inline void lb_results(struct lb_cmd *lb)
{
	struct scsi_cmnd *sc = lb_sc(lb);
	struct scsi_tgt_cmd *tc = &lb->tc;

	sc->host_status = SCSI_HOST_OK;
	sc->status = tc->status;
	sc->resid = tc->resid;
	sc->overflow = tc->overflow;
	if (__builtin_expect(tc->status == SAM_STAT_CHECK_CONDITION, 0)) {
		memcpy(scsi_cmd_sense(sc), tc->sense, tc->sense_len);
		sc->sense_len = tc->sense_len;
	} else {
		sc->sense_len = 0;
	}
}

/* The target ended a command, inline: on the queue's thread. */
static void lb_done(struct scsi_tgt_cmd *tc)
{
	struct lb_cmd *lb = tc_to_lb(tc);
	struct scsi_cmnd *sc = lb_sc(lb);

	lb_results(lb);
	sc->done(sc);
}

/* ... on the device thread: hand it back (the ring holds every command of
 * the queue: never full). */
static void lb_thread_done(struct scsi_tgt_cmd *tc)
{
	struct lb_cmd *lb = tc_to_lb(tc);

	lb->refused = 0;
	lb_results(lb);
	ring_push(&lb->q->cq, lb);
}

static void lb_prep(struct lb_queue *q, struct lb_cmd *lb,
		    struct scsi_cmnd *sc)
{
	struct scsi_tgt_cmd *tc = &lb->tc;

	/* only the inputs: scsi_tgt_submit() sets every result */
	lb->q = q;
	tc->lun = sc->lun;
	tc->nexus = 0;
	tc->cdb = sc->cdb;
	tc->cdb_len = sc->cdb_len;
	tc->dir = sc->dir;
	tc->iov = sc->iov;
	tc->iovcnt = sc->iovcnt;
	tc->xfer_len = sc->xfer_len;
	tc->done = q->has_thread ? lb_thread_done : lb_done;
}

static int lb_queuecommand(void *queue, struct scsi_cmnd *sc)
{
	struct lb_queue *q = queue;
	struct lb_cmd *lb = scsi_cmd_priv(sc);

	lb_prep(q, lb, sc);
	if (q->has_thread) {
		if (!ring_push(&q->sq, lb))
			return -EAGAIN;
		if (__builtin_expect(q->h->delayed, 0))
			lb_wake(q);
		return 0;
	}
	/*
	 * The batch's media I/O reaches the backing device as one dispatch
	 * at commit_rqs (lb_commit_rqs()), as an HBA's commands do at its
	 * doorbell: one queue_rq after another on each device, not scsi's
	 * and the backing device's alternating on every command.
	 */
	scsi_tgt_plug(q->tq);
	/* -EAGAIN: no tag at the disk; -EBUSY: host busy (scsi_opts
	 * 0x8000, a busy error rule): done is not called */
	return scsi_tgt_submit(q->tq, &lb->tc);
}

static void lb_commit_rqs(void *queue)
{
	struct lb_queue *q = queue;

	if (!q->has_thread)
		scsi_tgt_unplug(q->tq);
}

static int lb_poll(void *queue)
{
	struct lb_queue *q = queue;
	struct lb_cmd *lb;
	int n = 0;

	if (!q->has_thread)
		return scsi_tgt_poll(q->tq);
	while ((lb = ring_pop(&q->cq))) {
		struct scsi_cmnd *sc = lb_sc(lb);

		if (__builtin_expect(lb->refused != 0, 0)) {
			/* the target refused it on the device thread */
			sc->host_status = lb->refused == -EBUSY || lb->refused == -EAGAIN ?
					  SCSI_HOST_BUSY : SCSI_HOST_ERROR;
			sc->status = SAM_STAT_GOOD;
			sc->sense_len = 0;
		}
		sc->done(sc);
		n++;
	}
	return n;
}

/* ------------------------------------------------ task management */

static int tmf_run(struct lb_queue *q, int op, struct scsi_tgt_cmd *tc,
		   uint64_t lun)
{
	switch (op) {
	case TMF_ABORT:
		return scsi_tgt_abort_task(q->tq, tc);
	case TMF_LUN_RESET:
		return scsi_tgt_lun_reset(q->tq, lun, 0);
	case TMF_TARGET_RESET:
		return scsi_tgt_target_reset(q->tq, 0);
	default:
		scsi_tgt_queue_reset(q->tq);
		return 0;
	}
}

/*
 * A task management function on the queue's target queue: here, or by
 * its device thread, waited for (each function is bounded by the target's
 * tmf_timeout_ms).  What they end comes back through done: inline at once,
 * from the completion ring at the next poll.
 */
static int lb_tmf(struct lb_queue *q, int op, struct scsi_tgt_cmd *tc,
		  uint64_t lun)
{
	if (!q->has_thread)
		return tmf_run(q, op, tc, lun);
	q->tmf_cmd = tc;
	q->tmf_lun = lun;
	atomic_store_explicit(&q->tmf_op, op, memory_order_release);
	if (q->h->delayed)
		lb_wake(q);
	while (atomic_load_explicit(&q->tmf_op, memory_order_acquire) != TMF_NONE)
		sched_yield();
	return q->tmf_ret;
}

static int lb_abort(void *queue, struct scsi_cmnd *sc)
{
	struct lb_cmd *lb = scsi_cmd_priv(sc);
	int ret = lb_tmf(queue, TMF_ABORT, &lb->tc, 0);

	/* -ENOENT: not at the target (it ended, or waits on the ring): it
	 * comes back by itself */
	return ret == -ENOENT ? 0 : ret;
}

static int lb_lun_reset(void *queue, uint64_t lun)
{
	return lb_tmf(queue, TMF_LUN_RESET, NULL, lun);
}

static int lb_target_reset(void *queue)
{
	return lb_tmf(queue, TMF_TARGET_RESET, NULL, 0);
}

static void lb_host_reset(void *queue)
{
	lb_tmf(queue, TMF_QUEUE_RESET, NULL, 0);
}

/* ------------------------------------------------------ device thread */

/*
 * With a delay (delay, ndelay), when the only commands in flight on @q
 * are ones the delay holds (none at the device, none dropped, none on the
 * ring): sleep until the first of them is due, or, with none, until
 * lb_wake() (a new command, a task management function, stop).  Spinning
 * and yielding instead (what the thread does with commands at the device)
 * kept the core from the queue's thread, which spins in its poll for the
 * completion: where the two shared a core, the delayed command's
 * completion waited for the device thread's spin (50 us after every
 * completion) or, yielding, was seen a scheduler slice late (on a loaded
 * 2-CPU machine, ndelay=100us: mean completion latency 2.5 ms, delay=1ms:
 * 4.6 ms).  A thread that wakes from a sleep gets the core at once; a
 * command costs the queue's thread a futex wake-up instead of nothing.
 * Return: true: it slept (or found a reason not to), false: it did not.
 */
static bool lb_thread_sleep(struct lb_queue *q, unsigned int inflight)
{
	struct timespec ts, *tsp = NULL;
	uint64_t due;

	if (scsi_tgt_delay_pending(q->tq, &due) != inflight)
		return false;
	if (inflight) {
		if (due < now_ns() + LB_DELAY_SPIN_NS)
			return false;
		ts.tv_sec = (time_t)(due / 1000000000ull);
		ts.tv_nsec = (long)(due % 1000000000ull);
		tsp = &ts;
	}
	atomic_store_explicit(&q->sleeping, 1, memory_order_seq_cst);
	/* what lb_wake()'s callers publish, seen after @sleeping is set */
	if (atomic_load_explicit(&q->sq.tail, memory_order_seq_cst) ==
	    atomic_load_explicit(&q->sq.head, memory_order_relaxed) &&
	    atomic_load_explicit(&q->tmf_op, memory_order_seq_cst) == TMF_NONE &&
	    !atomic_load_explicit(&q->stop, memory_order_seq_cst))
		futex(&q->sleeping, FUTEX_WAIT_BITSET_PRIVATE, 1, tsp,
		      FUTEX_BITSET_MATCH_ANY);
	atomic_store_explicit(&q->sleeping, 0, memory_order_relaxed);
	return true;
}

/*
 * Takes commands off the submission ring into the target core, polls it,
 * and puts what ended on the completion ring; the queue's thread runs the
 * completion decision when it polls.  Idle it spins 50 us, yields the core
 * until 1 ms (or while commands are in flight), then sleeps 30 us at a
 * time, as nvme_ctrl's thread does.  With a delay, while the only
 * commands in flight are ones the delay holds (or none), it sleeps until
 * the first is due or a command comes (lb_thread_sleep()).
 */
static void *lb_thread(void *arg)
{
	struct lb_queue *q = arg;
	struct lb_cmd *held = NULL; /* refused -EAGAIN: submitted again */
	uint64_t idle_since = 0;
	int ret;

	ret = scsi_tgt_queue_attach(q->h->tgt, &q->tq);
	atomic_store_explicit(&q->ready, ret ? ret : 1, memory_order_release);
	if (ret)
		return NULL;
	/* a delayed command's wake-up on time, not 50 us (the default
	 * timer slack) late: this thread's timers only */
	if (q->h->delayed)
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	while (!atomic_load_explicit(&q->stop, memory_order_acquire)) {
		int op = atomic_load_explicit(&q->tmf_op, memory_order_acquire);
		unsigned int n = 0, inflight;
		struct lb_cmd *p;
		uint64_t now;

		if (op != TMF_NONE) {
			q->tmf_ret = tmf_run(q, op, q->tmf_cmd, q->tmf_lun);
			atomic_store_explicit(&q->tmf_op, TMF_NONE, memory_order_release);
			n++;
		}
		/* what the ring holds reaches the disk as one batch, sent
		 * by scsi_tgt_poll() below */
		scsi_tgt_plug(q->tq);
		while ((p = held ? held : ring_pop(&q->sq))) {
			held = NULL;
			ret = scsi_tgt_submit(q->tq, &p->tc);
			if (ret == -EAGAIN) {
				held = p; /* no tag at the disk: poll first */
				break;
			}
			if (ret) {
				p->refused = ret;
				ring_push(&q->cq, p);
			}
			n++;
		}
		n += (unsigned int)scsi_tgt_poll(q->tq);
		if (n) {
			idle_since = 0;
			continue;
		}
		inflight = atomic_load_explicit(&q->sq.tail, memory_order_relaxed) -
			   atomic_load_explicit(&q->cq.tail, memory_order_relaxed);
		if (q->h->delayed && !held && lb_thread_sleep(q, inflight)) {
			idle_since = 0;
			continue;
		}
		now = now_ns();
		if (!idle_since)
			idle_since = now;
		if (now - idle_since < 50000) {
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#endif
		} else if (now - idle_since < 1000000 || inflight || held) {
			sched_yield();
		} else {
			struct timespec ts = { 0, 30000 };

			nanosleep(&ts, NULL);
		}
	}
	scsi_tgt_queue_detach(q->tq); /* ends what is left, through done */
	return NULL;
}

/* ------------------------------------------------------------- queues */

static int lb_init_queue(void *hostdata, uint32_t idx, uint32_t depth,
			 void **queue)
{
	struct lb_host *h = hostdata;
	struct lb_queue *q = calloc(1, sizeof(*q));
	uint32_t size = 64;
	int ret;

	(void)idx;
	if (!q)
		return -ENOMEM;
	q->h = h;
	if (!h->thread) {
		ret = scsi_tgt_queue_attach(h->tgt, &q->tq);
		if (ret) {
			free(q);
			return ret;
		}
		*queue = q;
		return 0;
	}
	while (size < depth)
		size <<= 1;
	q->has_thread = true;
	if ((ret = ring_init(&q->sq, size)) || (ret = ring_init(&q->cq, size)))
		goto fail;
	ret = -pthread_create(&q->thread, NULL, lb_thread, q);
	if (ret)
		goto fail;
	while (!(ret = atomic_load_explicit(&q->ready, memory_order_acquire)))
		sched_yield();
	if (ret < 0) {
		pthread_join(q->thread, NULL);
		goto fail;
	}
	*queue = q;
	return 0;
fail:
	free(q->sq.slot);
	free(q->cq.slot);
	free(q);
	return ret;
}

static void lb_exit_queue(void *queue)
{
	struct lb_queue *q = queue;

	if (q->has_thread) {
		atomic_store_explicit(&q->stop, true, memory_order_release);
		if (q->h->delayed)
			lb_wake(q);
		pthread_join(q->thread, NULL); /* it detaches its queue */
		free(q->sq.slot);
		free(q->cq.slot);
	} else {
		scsi_tgt_queue_detach(q->tq);
	}
	free(q);
}

static void lb_get_stats(void *hostdata, struct blk_scsi_stats *st)
{
	struct lb_host *h = hostdata;
	struct scsi_tgt_stats ts;

	scsi_tgt_get_stats(h->tgt, &ts);
	st->injected = ts.injected;
	st->unit_attentions = ts.unit_attentions;
}

static void lb_destroy(void *hostdata)
{
	struct lb_host *h = hostdata;

	scsi_tgt_destroy(h->tgt); /* closes the lower device */
	free(h);
}

static const struct scsi_host_template lb_template = {
	.name = "loopback",
	.cmd_size = sizeof(struct lb_cmd),
	.init_queue = lb_init_queue,
	.exit_queue = lb_exit_queue,
	.queuecommand = lb_queuecommand,
	.commit_rqs = lb_commit_rqs,
	.poll = lb_poll,
	.eh_abort_handler = lb_abort,
	.eh_device_reset_handler = lb_lun_reset,
	.eh_target_reset_handler = lb_target_reset,
	.eh_host_reset_handler = lb_host_reset,
	.get_stats = lb_get_stats,
	.destroy = lb_destroy,
};

int scsi_loopback_create(const struct scsi_loopback_config *cfg,
			 const struct scsi_host_template **hostt,
			 void **hostdata, char *err, size_t errlen)
{
	struct scsi_tgt_config tc = { 0 };
	struct blk_dev *lower = cfg->lower;
	struct lb_host *h = calloc(1, sizeof(*h));
	int ret;

	if (!h) {
		blk_dev_close(lower);
		return -ENOMEM;
	}
	if (cfg->tgt)
		tc = *cfg->tgt;
	tc.luns = &lower;
	tc.nr_luns = 1;
	tc.own_luns = true;
	tc.id = 1;
	ret = scsi_tgt_create(&tc, &h->tgt, err, errlen);
	if (ret) {
		blk_dev_close(lower);
		free(h);
		return ret;
	}
	h->thread = cfg->thread;
	h->delayed = tc.delay_ms || tc.ndelay_ns;
	*hostt = &lb_template;
	*hostdata = h;
	return 0;
}
