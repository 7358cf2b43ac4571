// SPDX-License-Identifier: MIT
/*
 * uring driver: the thread-pool engine, for when io_uring is refused
 * (docs/uring.md, "When io_uring is refused: the thread pool").
 *
 * Per hardware queue: a submission list and pool_threads workers.
 * queue_rq() links the request onto a private batch; commit_rqs() splices
 * the batch onto the shared list under the queue's mutex and wakes at most
 * one idle worker, so a busy pool (no idle worker) costs no system call per
 * request: an uncontended mutex is two atomics.  Idle workers sleep on
 * their own futex in a LIFO stack, and more are woken one at a time only
 * while work outruns them (pool_pop_waking()).  A worker performs its request
 * with uring_sync_rq() and completes it through the hctx's completion
 * ring (blk_mq_complete_request_remote()), which has a single producer:
 * workers push under the same mutex, and take their next request in the
 * same critical section, so one lock round trip per request.
 *
 * Waiting (the wait op): the consumer announces that it sleeps (@sleeping)
 * and sleeps on the completion counter @cseq with FUTEX_WAIT; a worker
 * that bumps @cseq and sees @sleeping wakes it.  Both sides use
 * sequentially consistent operations, so either the worker sees the flag
 * or the consumer sees the new count; the futex compares @cseq again in
 * the kernel.  While the consumer spins, workers make no wake-up call.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "blkstack/lock.h"
#include "uring_int.h"

struct pool_queue;

struct pool_worker {
	struct pool_queue *pq;
	struct pool_worker *next_idle;  /* idle stack, then the wake list */
	_Atomic uint32_t wake;          /* futex word: 1 once woken */
	pthread_t thread;
};

struct pool_queue {
	struct uring_dev *ud;
	struct blk_mq_hw_ctx *hctx;
	/* the consumer's side: the dispatching thread, or the hctx lock */
	struct request *batch_head, *batch_tail;
	unsigned int batch_n;
	uint32_t handed;        /* requests given to the workers */
	uint64_t *counter;      /* &ud->queues[idx].pool_rqs (blk_uring_get_stats) */
	uint32_t seen;          /* @cseq at the last poll */

	/* shared with the workers, under @lock */
	_Alignas(64) struct blk_mutex lock;
	struct request *head, *tail;
	struct pool_worker *idle; /* workers asleep, most recent first */
	bool waking;            /* a worker is woken and has not run yet */
	bool stop;

	/* completion notification, lock-free */
	_Alignas(64) _Atomic uint32_t cseq; /* completions pushed */
	_Atomic uint32_t sleeping;          /* the consumer is in FUTEX_WAIT */

	struct pool_worker *workers;
	unsigned int nr_threads;
};

static long futex(_Atomic uint32_t *uaddr, int op, uint32_t val,
		  const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

/*
 * The idle worker to wake (under the lock), or NULL: the most recent idle
 * one, unless a worker is already woken and on its way (waking), whose
 * first act is to wake the next one if work is still queued then.  So
 * workers are added one at a time, only as long as the queue outruns the
 * workers already running: quick requests (the page cache) are drained by
 * one or two, slow ones (a disk) bring in every worker within a few
 * wake-up latencies.  Measured on 65,536 4k reads from /dev/shm, QD32,
 * 32 workers: 3,755 wake-ups and 10,362 context switches, against 63,046
 * and 96,286 waking a worker per queued request, and 15,449 and 37,012
 * with a condition variable signalled per request (docs/uring.md).
 */
static struct pool_worker *pool_pop_waking(struct pool_queue *pq)
{
	struct pool_worker *w = pq->idle;

	if (!w || pq->waking)
		return NULL;
	pq->idle = w->next_idle;
	w->next_idle = NULL;
	pq->waking = true;
	return w;
}

/* Every idle worker, chained through next_idle (stop). */
static struct pool_worker *pool_pop_all(struct pool_queue *pq)
{
	struct pool_worker *list = pq->idle;

	pq->idle = NULL;
	return list;
}

/* Wake the workers of @list (chained through next_idle), lock dropped. */
static void pool_wake(struct pool_worker *list)
{
	while (list) {
		/* read before the store: a woken worker reuses the field */
		struct pool_worker *next = list->next_idle;

		atomic_store(&list->wake, 1);
		futex(&list->wake, FUTEX_WAKE_PRIVATE, 1, NULL);
		list = next;
	}
}

static void *pool_worker(void *arg)
{
	struct pool_worker *self = arg;
	struct pool_queue *pq = self->pq;
	struct uring_dev *ud = pq->ud;

	blk_mutex_lock(&pq->lock);
	for (;;) {
		struct pool_worker *next;
		struct request *rq;
		struct uring_cmd *cmd;
		blk_status_t st;
		bool wake;

		while (!pq->head && !pq->stop) {
			atomic_store_explicit(&self->wake, 0, memory_order_relaxed);
			self->next_idle = pq->idle;
			pq->idle = self;
			blk_mutex_unlock(&pq->lock);
			while (!atomic_load(&self->wake))
				futex(&self->wake, FUTEX_WAIT_PRIVATE, 0, NULL);
			blk_mutex_lock(&pq->lock);
			pq->waking = false; /* only the woken worker was waking */
		}
		/* stop only once the list is empty: nothing is dropped */
		rq = pq->head;
		if (!rq)
			break;
		cmd = blk_mq_rq_to_pdu(rq);
		pq->head = cmd->next;
		if (!pq->head)
			pq->tail = NULL;
		/* more work than hands: bring one more worker, one at a time */
		next = pq->head ? pool_pop_waking(pq) : NULL;
		blk_mutex_unlock(&pq->lock);
		pool_wake(next);

		/* a worker has it: the device stages are the worker's I/O */
		blk_mq_stage(rq, BLK_STAGE_DEVICE);
		st = uring_sync_rq(ud, rq);
		blk_mq_stage(rq, BLK_STAGE_DEVICE_DONE);

		blk_mutex_lock(&pq->lock);
		/* the ring holds every tag of the hctx: full cannot happen */
		while (blk_mq_complete_request_remote(pq->hctx, rq, cmd->gen, st))
			__builtin_ia32_pause();
		atomic_fetch_add(&pq->cseq, 1);
		wake = atomic_load(&pq->sleeping) &&
		       atomic_exchange(&pq->sleeping, 0);
		if (unlikely(wake)) {
			blk_mutex_unlock(&pq->lock);
			futex(&pq->cseq, FUTEX_WAKE_PRIVATE, 1, NULL);
			blk_mutex_lock(&pq->lock);
		}
	}
	blk_mutex_unlock(&pq->lock);
	return NULL;
}

blk_status_t uring_pool_queue_rq(struct blk_mq_hw_ctx *hctx,
				 const struct blk_mq_queue_data *bd)
{
	struct pool_queue *pq = blk_mq_hctx_driver_data(hctx);
	struct request *rq = bd->rq;
	struct uring_cmd *cmd = blk_mq_rq_to_pdu(rq);

	switch (rq->op) {
	case BLK_OP_READ:
	case BLK_OP_WRITE:
	case BLK_OP_FLUSH:
	case BLK_OP_DISCARD:
	case BLK_OP_WRITE_ZEROES:
		break;
	default:
		return BLK_STS_NOTSUPP;
	}
	cmd->gen = rq->gen;
	cmd->next = NULL;
	(*pq->counter)++;
	if (pq->batch_tail)
		((struct uring_cmd *)blk_mq_rq_to_pdu(pq->batch_tail))->next = rq;
	else
		pq->batch_head = rq;
	pq->batch_tail = rq;
	pq->batch_n++;
	return BLK_STS_OK;
}

/* The doorbell: hand the batch over, waking one idle worker at most. */
void uring_pool_commit_rqs(struct blk_mq_hw_ctx *hctx)
{
	struct pool_queue *pq = blk_mq_hctx_driver_data(hctx);
	struct pool_worker *wake;

	if (!pq->batch_n)
		return;
	blk_mutex_lock(&pq->lock);
	if (pq->tail)
		((struct uring_cmd *)blk_mq_rq_to_pdu(pq->tail))->next =
			pq->batch_head;
	else
		pq->head = pq->batch_head;
	pq->tail = pq->batch_tail;
	wake = pool_pop_waking(pq);
	blk_mutex_unlock(&pq->lock);
	pool_wake(wake);
	pq->handed += pq->batch_n;
	pq->batch_head = pq->batch_tail = NULL;
	pq->batch_n = 0;
}

/*
 * The core reaps the completion ring right after this; what is returned
 * is the number of completions the workers pushed since the last poll.
 */
int uring_pool_poll(struct blk_mq_hw_ctx *hctx)
{
	struct pool_queue *pq = blk_mq_hctx_driver_data(hctx);
	uint32_t seq = atomic_load_explicit(&pq->cseq, memory_order_acquire);
	uint32_t n = seq - pq->seen;

	pq->seen = seq;
	return (int)n;
}

int uring_pool_wait(struct blk_mq_hw_ctx *hctx, uint64_t timeout_ns)
{
	struct pool_queue *pq = blk_mq_hctx_driver_data(hctx);
	struct timespec ts = {
		.tv_sec = (time_t)(timeout_ns / 1000000000ull),
		.tv_nsec = (long)(timeout_ns % 1000000000ull),
	};
	long ret = 0;

	uring_pool_commit_rqs(hctx);
	if (atomic_load_explicit(&pq->cseq, memory_order_acquire) != pq->seen)
		return 0;
	if (pq->handed == pq->seen)
		return -ETIME; /* nothing with the workers could wake us */
	atomic_store(&pq->sleeping, 1);
	if (atomic_load(&pq->cseq) == pq->seen)
		ret = futex(&pq->cseq, FUTEX_WAIT_PRIVATE, pq->seen, &ts);
	atomic_store(&pq->sleeping, 0);
	if (ret == 0 || errno == EAGAIN)
		return 0;
	if (errno == ETIMEDOUT)
		return -ETIME;
	return -errno;
}

static void pool_stop(struct pool_queue *pq)
{
	struct pool_worker *wake;
	unsigned int i;

	blk_mutex_lock(&pq->lock);
	pq->stop = true;
	wake = pool_pop_all(pq);
	blk_mutex_unlock(&pq->lock);
	pool_wake(wake);
	for (i = 0; i < pq->nr_threads; i++)
		pthread_join(pq->workers[i].thread, NULL);
	pq->nr_threads = 0;
}

static void pool_free(struct pool_queue *pq)
{
	pool_stop(pq);
	blk_mutex_destroy(&pq->lock);
	free(pq->workers);
	free(pq);
}

int uring_pool_init_hctx(struct blk_mq_hw_ctx *hctx, void *data,
			 unsigned int idx)
{
	struct uring_dev *ud = data;
	unsigned int want = ud->cfg.pool_threads ? ud->cfg.pool_threads :
			    BLK_URING_POOL_THREADS_DEFAULT;
	sigset_t all, old;
	struct pool_queue *pq;
	int ret = 0;

	/* more workers than tags could never all be busy */
	if (want > ud->cfg.queue.queue_depth)
		want = ud->cfg.queue.queue_depth;
	pq = aligned_alloc(64, sizeof(*pq));
	if (!pq)
		return -ENOMEM;
	memset(pq, 0, sizeof(*pq));
	pq->ud = ud;
	pq->hctx = hctx;
	pq->counter = &ud->queues[idx].pool_rqs;
	pq->workers = calloc(want, sizeof(*pq->workers));
	if (!pq->workers) {
		free(pq);
		return -ENOMEM;
	}
	/* spin briefly before sleeping: critical sections are a few loads */
	blk_mutex_init(&pq->lock, "&pool_queue->lock", PTHREAD_MUTEX_ADAPTIVE_NP);
	blk_mq_hctx_set_driver_data(hctx, pq);
	/*
	 * Workers take no signals: the application's handlers run on its
	 * own threads, and a worker's system calls are not interrupted.
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (pq->nr_threads < want) {
		struct pool_worker *w = &pq->workers[pq->nr_threads];

		w->pq = pq;
		ret = -pthread_create(&w->thread, NULL, pool_worker, w);
		if (ret)
			break;
		pq->nr_threads++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		fprintf(stderr,
			"blkstack: uring: %s: cannot start pool thread %u of %u "
			"(queue %u): %s; lower pool_threads= or the number of "
			"hardware queues (a thread or process limit: ulimit -u, "
			"a container's pids limit)\n", ud->path,
			pq->nr_threads + 1, want, idx, strerror(-ret));
		pool_free(pq);
		blk_mq_hctx_set_driver_data(hctx, NULL);
		return ret;
	}
	return 0;
}

/* Nothing is in flight when the device closes; workers drain the list anyway. */
void uring_pool_exit_hctx(struct blk_mq_hw_ctx *hctx, unsigned int idx)
{
	struct pool_queue *pq = blk_mq_hctx_driver_data(hctx);

	if (!pq)
		return;
	pool_free(pq);
	blk_mq_hctx_set_driver_data(hctx, NULL);
}

/* ------------------------------------------------------ engine choice */

const char *uring_refused_cause(int err, int sysctl_disabled, bool seccomp)
{
	/* the sysctl refuses whatever a filter says; a filter answers first */
	if (err == -EPERM) {
		if (sysctl_disabled == 2)
			return "kernel.io_uring_disabled=2";
		if (sysctl_disabled == 1)
			return "kernel.io_uring_disabled=1 and this user is not "
			       "in kernel.io_uring_group";
		if (seccomp)
			return "a seccomp filter";
		return "kernel.io_uring_disabled or a seccomp filter";
	}
	if (err == -ENOSYS)
		return seccomp ? "a seccomp filter, or a kernel before 5.1" :
				 "a kernel without io_uring (before 5.1, or "
				 "CONFIG_IO_URING off)";
	return "an unexpected error";
}

/* The value of the sysctl, or -1 where the kernel has none. */
static int read_io_uring_disabled(void)
{
	FILE *f = fopen("/proc/sys/kernel/io_uring_disabled", "re");
	int v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* Seccomp: 2 in /proc/self/status: a filter is installed. */
static bool under_seccomp_filter(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	bool ret = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Seccomp:", 8)) {
			ret = atoi(line + 8) == 2;
			break;
		}
	fclose(f);
	return ret;
}

void uring_refused_notice(const char *path, int err)
{
	static atomic_bool printed;

	if (atomic_exchange(&printed, true))
		return;
	fprintf(stderr,
		"blkstack: uring: %s: io_uring refused (io_uring_setup: %s: %s); "
		"using the pread/pwrite thread pool (uring_engine=pool)\n",
		path, strerror(-err),
		uring_refused_cause(err, read_io_uring_disabled(),
				    under_seccomp_filter()));
}
