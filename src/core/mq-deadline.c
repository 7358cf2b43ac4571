// SPDX-License-Identifier: MIT
/*
 * mq-deadline I/O scheduler, per hardware queue.
 *
 * Behaviour (Documentation/block/deadline-iosched.rst):
 *  - Requests are kept per direction (READ; WRITE, DISCARD, WRITE_ZEROES)
 *    in a tree sorted by offset and in a FIFO ordered by arrival, each with
 *    a deadline (read_expire, write_expire).
 *  - Requests go out in batches of one direction in increasing offset
 *    order; a batch ends after fifo_batch requests or when no request lies
 *    above the last one.  Deadlines are only looked at between batches, so
 *    a batch is never broken up by an expiry (that is what limits seeks).
 *  - A new batch prefers reads, but once reads have been preferred
 *    writes_starved times while writes waited, a write batch goes.
 *  - Within the chosen direction the batch starts at the FIFO head when
 *    that has expired, or when nothing lies above the direction's last
 *    position; otherwise it carries on upwards from that position.
 *  - Flushes carry no data and have no position: they bypass sorting and
 *    go out first, in arrival order.
 *
 * Storage: the tree and FIFO links do not fit the 32 bytes of
 * rq->elv_priv, so each hctx has an array of nodes indexed by the
 * scheduler tag (rq->internal_tag).  Nothing is allocated on the hot path.
 *
 * I/O priorities (Linux's mq-deadline since 5.14, dd_per_prio): each
 * class (RT; BE, and requests without a class; IDLE) has its own trees and
 * FIFOs per direction.  Dispatch serves RT before BE before IDLE, the
 * batching above within the class served; first, though, a BE or IDLE
 * request that has waited prio_aging_expire (10 s) goes out, so that no
 * class starves for good.  Unlike Linux, a lower class is not held back
 * while a higher one has requests in flight (Linux counts completions,
 * dd_queued(); blkstack's elevators see no completions): only queued
 * ones are looked at.  Requests of different priorities never merge
 * (merge.c), so each class's trees see only their own merges.
 *
 * Besides the sort tree keyed by start, each direction has a second tree
 * keyed by end: a back merge needs "the request that ends where this bio
 * starts", which the start-sorted tree cannot answer exactly when queued
 * requests overlap (the kernel uses a hash for this).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/tree.h>

#include "blk-mq.h"
#include "mq-deadline.h"

enum { DD_READ = 0, DD_WRITE = 1, DD_DIR_NR = 2 };
/* Linux's enum dd_prio */
enum { DD_RT_PRIO = 0, DD_BE_PRIO = 1, DD_IDLE_PRIO = 2, DD_PRIO_NR = 3 };

/* Linux's ioprio_class_to_prio[]: no class (and the invalid ones) is BE */
static const uint8_t dd_class_prio[8] = {
	DD_BE_PRIO, DD_RT_PRIO, DD_BE_PRIO, DD_IDLE_PRIO,
	DD_BE_PRIO, DD_BE_PRIO, DD_BE_PRIO, DD_BE_PRIO,
};

static inline unsigned int dd_prio_of(uint16_t ioprio)
{
	return dd_class_prio[IOPRIO_PRIO_CLASS(ioprio)];
}

struct dd_node {
	RB_ENTRY(dd_node) sort_link;   /* keyed by (start, seq) */
	RB_ENTRY(dd_node) end_link;    /* keyed by (end, seq) */
	TAILQ_ENTRY(dd_node) fifo_link;
	struct request *rq;
	/*
	 * Keys are cached here rather than read from rq: the merge helpers
	 * change rq->offset and rq->data_len while the node is still in the
	 * trees, and the trees must stay ordered by what they were built on.
	 */
	uint64_t start;
	uint64_t end;
	uint64_t seq;                  /* insertion order: ties in both trees */
	struct dd_dir *d;              /* its class's and direction's trees */
	uint8_t dir;
	uint8_t prio;                  /* DD_*_PRIO */
	bool queued;
};

RB_HEAD(dd_sort_tree, dd_node);
RB_HEAD(dd_end_tree, dd_node);
TAILQ_HEAD(dd_fifo, dd_node);

struct dd_dir {
	struct dd_sort_tree sort;
	struct dd_end_tree by_end;
	struct dd_fifo fifo;
	unsigned int nr_queued;
	/* end of the last request dispatched in this direction */
	uint64_t latest_pos;
};

struct dd_tunables {
	uint64_t expire_ns[DD_DIR_NR];
	uint64_t prio_aging_ns;
	unsigned int writes_starved;
	unsigned int fifo_batch;
	bool front_merges;
};

struct deadline_data {
	struct dd_dir dir[DD_PRIO_NR][DD_DIR_NR];
	struct rq_list bypass;         /* flushes, FIFO, dispatched first */
	unsigned int last_dir;         /* direction of the current batch */
	unsigned int last_prio;        /* class of the current batch */
	unsigned int batching;         /* sent in this batch; UINT_MAX: none */
	unsigned int starved;          /* read batches while writes waited */
	unsigned int nr_prio[DD_PRIO_NR]; /* requests queued per class */
	unsigned int prio_mask;        /* bit p: class p has requests queued */
	uint64_t next_seq;
	struct dd_tunables t;
	struct mq_deadline_stats stats;
	unsigned int nr_nodes;
	struct dd_node *nodes;         /* indexed by rq->internal_tag */
};

static int dd_sort_cmp(const struct dd_node *a, const struct dd_node *b)
{
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return 0;
}

static int dd_end_cmp(const struct dd_node *a, const struct dd_node *b)
{
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return 0;
}

/*
 * Not RB_GENERATE_STATIC: libbsd leaves __unused undefined (glibc uses
 * the name for struct members), so spell the attribute out.
 */
#define DD_RB_ATTR __attribute__((__unused__)) static
RB_GENERATE_INTERNAL(dd_sort_tree, dd_node, sort_link, dd_sort_cmp, DD_RB_ATTR)
RB_GENERATE_INTERNAL(dd_end_tree, dd_node, end_link, dd_end_cmp, DD_RB_ATTR)

/* Flushes are not sorted; every other even op is a read, odd a write. */
static inline unsigned int dd_op_dir(unsigned int op)
{
	return op & 1 ? DD_WRITE : DD_READ;
}

static inline struct deadline_data *dd_of(struct blk_mq_hw_ctx *hctx)
{
	return hctx->sched_data;
}

/* First request of @d starting at or above @pos, in sort order. */
static struct dd_node *dd_first_from(struct dd_dir *d, uint64_t pos)
{
	struct dd_node key = { .start = pos, .seq = 0 };

	return RB_NFIND(dd_sort_tree, &d->sort, &key);
}

/* First request of @d ending at or above @pos, in end order. */
static struct dd_node *dd_first_ending_from(struct dd_dir *d, uint64_t pos)
{
	struct dd_node key = { .end = pos, .seq = 0 };

	return RB_NFIND(dd_end_tree, &d->by_end, &key);
}

static void dd_add(struct deadline_data *dd, struct dd_node *n)
{
	struct dd_dir *d = n->d;

	/* seq is unique, so neither insert can find a duplicate */
	RB_INSERT(dd_sort_tree, &d->sort, n);
	RB_INSERT(dd_end_tree, &d->by_end, n);
	TAILQ_INSERT_TAIL(&d->fifo, n, fifo_link);
	d->nr_queued++;
	dd->nr_prio[n->prio]++;
	dd->prio_mask |= 1u << n->prio;
	n->queued = true;
}

static void dd_del(struct deadline_data *dd, struct dd_node *n)
{
	struct dd_dir *d = n->d;

	RB_REMOVE(dd_sort_tree, &d->sort, n);
	RB_REMOVE(dd_end_tree, &d->by_end, n);
	TAILQ_REMOVE(&d->fifo, n, fifo_link);
	d->nr_queued--;
	if (!--dd->nr_prio[n->prio])
		dd->prio_mask &= ~(1u << n->prio);
	n->queued = false;
}

/* rq->offset changed (front merge): re-key the node in the sort tree. */
static void dd_rekey_start(struct deadline_data *dd, struct dd_node *n)
{
	struct dd_dir *d = n->d;

	RB_REMOVE(dd_sort_tree, &d->sort, n);
	n->start = n->rq->offset;
	RB_INSERT(dd_sort_tree, &d->sort, n);
}

/* rq's end moved (back merge): re-key the node in the end tree. */
static void dd_rekey_end(struct deadline_data *dd, struct dd_node *n)
{
	struct dd_dir *d = n->d;

	RB_REMOVE(dd_end_tree, &d->by_end, n);
	n->end = n->rq->offset + n->rq->data_len;
	RB_INSERT(dd_end_tree, &d->by_end, n);
}

/*
 * Merge queued @next into queued @n (n ends where next starts) and free
 * next.  The merged request inherits the earlier deadline and FIFO place,
 * so merging never lets an I/O wait longer than its own deadline.
 */
static void dd_merge_queued(struct blk_mq_hw_ctx *hctx,
			    struct deadline_data *dd, struct dd_node *n,
			    struct dd_node *next)
{
	struct dd_dir *d = n->d;

	if (next->rq->fifo_time_ns < n->rq->fifo_time_ns) {
		n->rq->fifo_time_ns = next->rq->fifo_time_ns;
		TAILQ_REMOVE(&d->fifo, n, fifo_link);
		TAILQ_INSERT_BEFORE(next, n, fifo_link);
	}
	/* blk_mq_merge_requests() frees next: unlink it first */
	dd_del(dd, next);
	blk_mq_merge_requests(hctx, n->rq, next->rq);
	next->rq = NULL;
	dd_rekey_end(dd, n);
	dd->stats.rq_merges++;
}

/* After @n grew at its end: absorb a queued request that now follows it. */
static void dd_merge_following(struct blk_mq_hw_ctx *hctx,
			       struct deadline_data *dd, struct dd_node *n)
{
	struct dd_dir *d = n->d;
	struct dd_node *m;

	for (m = dd_first_from(d, n->end); m && m->start == n->end;
	     m = RB_NEXT(dd_sort_tree, &d->sort, m)) {
		if (m != n && blk_rq_merge_ok_rq(hctx->dev, n->rq, m->rq)) {
			dd_merge_queued(hctx, dd, n, m);
			return;
		}
	}
}

/* After @n grew at its start: merge it into a queued request before it. */
static void dd_merge_preceding(struct blk_mq_hw_ctx *hctx,
			       struct deadline_data *dd, struct dd_node *n)
{
	struct dd_dir *d = n->d;
	struct dd_node *p;

	for (p = dd_first_ending_from(d, n->start); p && p->end == n->start;
	     p = RB_NEXT(dd_end_tree, &d->by_end, p)) {
		if (p != n && blk_rq_merge_ok_rq(hctx->dev, p->rq, n->rq)) {
			dd_merge_queued(hctx, dd, p, n);
			return;
		}
	}
}

static bool dd_bio_merge(struct blk_mq_hw_ctx *hctx, struct blk_bio *bio)
{
	struct deadline_data *dd = dd_of(hctx);
	uint64_t bio_end = bio->bi_offset + bio->bi_size;
	struct dd_dir *d;
	struct dd_node *n;

	if (bio->bi_op == BLK_OP_FLUSH || !bio->bi_size)
		return false;
	/* only its own class's requests can take it (same ioprio) */
	d = &dd->dir[dd_prio_of(bio->bi_ioprio)][dd_op_dir(bio->bi_op)];
	if (!d->nr_queued)
		return false;

	/*
	 * Back merges first: they are the common case (sequential streams)
	 * and leave the request's sort key alone.  Several queued requests
	 * may end at the same place (different ops, FUA): try each.
	 */
	for (n = dd_first_ending_from(d, bio->bi_offset);
	     n && n->end == bio->bi_offset;
	     n = RB_NEXT(dd_end_tree, &d->by_end, n)) {
		if (blk_try_merge(hctx->dev, n->rq, bio) != ELEVATOR_BACK_MERGE)
			continue;
		blk_rq_merge_bio(n->rq, bio, ELEVATOR_BACK_MERGE);
		blk_mq_account_merge(blk_current_ctx, bio->bi_op);
		dd->stats.back_merges++;
		dd_rekey_end(dd, n);
		dd_merge_following(hctx, dd, n);
		return true;
	}

	if (!dd->t.front_merges)
		return false;
	for (n = dd_first_from(d, bio_end); n && n->start == bio_end;
	     n = RB_NEXT(dd_sort_tree, &d->sort, n)) {
		if (blk_try_merge(hctx->dev, n->rq, bio) !=
		    ELEVATOR_FRONT_MERGE)
			continue;
		blk_rq_merge_bio(n->rq, bio, ELEVATOR_FRONT_MERGE);
		blk_mq_account_merge(blk_current_ctx, bio->bi_op);
		dd->stats.front_merges++;
		dd_rekey_start(dd, n);
		dd_merge_preceding(hctx, dd, n);
		return true;
	}
	return false;
}

static void dd_insert_one(struct blk_mq_hw_ctx *hctx, struct deadline_data *dd,
			  struct request *rq)
{
	struct dd_node *n, *p;
	struct dd_dir *d;
	unsigned int dir, prio;

	if (rq->op == BLK_OP_FLUSH) {
		rq_list_add_tail(&dd->bypass, rq);
		return;
	}
	/*
	 * Without a scheduler tag (or with one whose node is still queued,
	 * which would be a core bug) there is no node to keep the request
	 * in.  The core always allocates one with an elevator set; should
	 * that ever fail, dispatching unsorted beats losing the request.
	 */
	if (unlikely(rq->internal_tag < 0 ||
		     (unsigned int)rq->internal_tag >= dd->nr_nodes ||
		     dd->nodes[rq->internal_tag].queued)) {
		dd->stats.untracked++;
		rq_list_add_tail(&dd->bypass, rq);
		return;
	}

	dir = dd_op_dir(rq->op);
	prio = dd_prio_of(blk_rq_ioprio(rq));
	d = &dd->dir[prio][dir];
	dd->stats.inserted[dir]++;
	rq->fifo_time_ns = hctx->elv_now_ns + dd->t.expire_ns[dir];

	/*
	 * A request that continues a queued one (requests from different
	 * plugs or ctxs of one stream) joins it instead of taking a slot.
	 * The queued one arrived earlier, so its deadline is the one to keep.
	 */
	for (p = dd_first_ending_from(d, rq->offset); p && p->end == rq->offset;
	     p = RB_NEXT(dd_end_tree, &d->by_end, p)) {
		if (!blk_rq_merge_ok_rq(hctx->dev, p->rq, rq))
			continue;
		blk_mq_merge_requests(hctx, p->rq, rq);
		dd->stats.insert_merges++;
		dd_rekey_end(dd, p);
		dd_merge_following(hctx, dd, p);
		return;
	}

	n = &dd->nodes[rq->internal_tag];
	n->rq = rq;
	n->start = rq->offset;
	n->end = rq->offset + rq->data_len;
	n->seq = dd->next_seq++;
	n->dir = (uint8_t)dir;
	n->prio = (uint8_t)prio;
	n->d = d;
	dd_add(dd, n);
	/* it may also precede a queued request: absorb that one */
	dd_merge_following(hctx, dd, n);
}

static void dd_insert_requests(struct blk_mq_hw_ctx *hctx, struct rq_list *list)
{
	struct deadline_data *dd = dd_of(hctx);
	struct request *rq;

	while ((rq = rq_list_pop(list)))
		dd_insert_one(hctx, dd, rq);
}

static inline bool dd_fifo_expired(struct deadline_data *dd, unsigned int prio,
				   unsigned int dir, uint64_t now)
{
	struct dd_node *head = TAILQ_FIRST(&dd->dir[prio][dir].fifo);

	return head && head->rq->fifo_time_ns <= now;
}

/*
 * Linux's dd_dispatch_prio_aged_requests(): the oldest BE or IDLE request
 * that was inserted prio_aging_expire ago or more (its FIFO time less its
 * direction's expiry), reads before writes; NULL when none.
 */
static struct dd_node *dd_aged(struct deadline_data *dd, uint64_t now)
{
	unsigned int prio, dir;

	for (prio = DD_BE_PRIO; prio < DD_PRIO_NR; prio++)
		for (dir = 0; dir < DD_DIR_NR; dir++) {
			struct dd_node *head = TAILQ_FIRST(&dd->dir[prio][dir].fifo);

			if (head && head->rq->fifo_time_ns + dd->t.prio_aging_ns <=
					    now + dd->t.expire_ns[dir])
				return head;
		}
	return NULL;
}

static struct request *dd_dispatch_request(struct blk_mq_hw_ctx *hctx)
{
	struct deadline_data *dd = dd_of(hctx);
	struct request *rq;
	struct dd_node *n;
	unsigned int dir, prio;
	bool reads, writes;

	rq = rq_list_pop(&dd->bypass);
	if (rq) {
		dd->stats.bypass_dispatched++;
		return rq;
	}

	/*
	 * A BE or IDLE request that waited prio_aging_expire goes first;
	 * only looked for when two classes or more wait, as Linux does.
	 */
	if (unlikely(dd->prio_mask & (dd->prio_mask - 1))) {
		n = dd_aged(dd, hctx->elv_now_ns);
		if (n) {
			dd->stats.prio_aged++;
			dir = n->dir;
			prio = n->prio;
			dd->last_dir = dir;
			dd->last_prio = prio;
			dd->batching = 0;
			goto dispatch;
		}
	}

	/* The highest class with queued requests is served. */
	if (!dd->prio_mask)
		return NULL;
	prio = (unsigned int)__builtin_ctz(dd->prio_mask);

	/* Inside a batch of that class: keep going up in the same direction. */
	dir = dd->last_dir;
	if (dd->batching < dd->t.fifo_batch && dd->last_prio == prio) {
		n = dd_first_from(&dd->dir[prio][dir],
				  dd->dir[prio][dir].latest_pos);
		if (n)
			goto dispatch;
	}

	/* A new batch: reads first, unless writes have waited long enough. */
	reads = dd->dir[prio][DD_READ].nr_queued;
	writes = dd->dir[prio][DD_WRITE].nr_queued;
	if (reads && !(writes && dd->starved >= dd->t.writes_starved)) {
		if (writes)
			dd->starved++;
		dir = DD_READ;
	} else {
		if (reads)
			dd->stats.starved_write_batches++;
		dd->starved = 0;
		dir = DD_WRITE;
	}

	/*
	 * An expired FIFO head goes first; so does the oldest request when
	 * nothing lies above the last position (the sweep restarts where
	 * the longest waiting request is, rather than at offset 0).
	 */
	if (dd_fifo_expired(dd, prio, dir, hctx->elv_now_ns)) {
		n = TAILQ_FIRST(&dd->dir[prio][dir].fifo);
		dd->stats.fifo_expired[dir]++;
	} else {
		n = dd_first_from(&dd->dir[prio][dir],
				  dd->dir[prio][dir].latest_pos);
		if (!n)
			n = TAILQ_FIRST(&dd->dir[prio][dir].fifo);
	}
	dd->last_dir = dir;
	dd->last_prio = prio;
	dd->batching = 0;

dispatch:
	dd->batching++;
	dd->dir[prio][dir].latest_pos = n->end;
	dd->stats.dispatched[dir]++;
	dd->stats.dispatched_prio[prio]++;
	dd_del(dd, n);
	rq = n->rq;
	n->rq = NULL;
	return rq;
}

static bool dd_has_work(struct blk_mq_hw_ctx *hctx)
{
	struct deadline_data *dd = dd_of(hctx);

	return dd->bypass.count || dd->prio_mask;
}

/*
 * Node array size: every scheduler tag this hctx can see.  The core may
 * set sched_tags only after init_hctx, so fall back to the configured
 * nr_requests (whole set when shared) and its documented default.
 */
static unsigned int dd_nr_nodes(struct blk_mq_hw_ctx *hctx)
{
	const struct blk_dev_config *cfg = &hctx->dev->cfg;
	unsigned int nr = cfg->nr_requests;

	if (!nr)
		nr = 2 * (cfg->queue_depth ? cfg->queue_depth : 64);
	if (cfg->shared_tags && cfg->nr_hw_queues > 1)
		nr *= cfg->nr_hw_queues;
	if (hctx->sched_tags && hctx->sched_tags->nr_tags > nr)
		nr = hctx->sched_tags->nr_tags;
	return nr;
}

static int dd_init_hctx(struct blk_mq_hw_ctx *hctx)
{
	struct deadline_data *dd;
	unsigned int i;

	dd = calloc(1, sizeof(*dd));
	if (!dd)
		return -ENOMEM;
	dd->nr_nodes = dd_nr_nodes(hctx);
	dd->nodes = calloc(dd->nr_nodes, sizeof(*dd->nodes));
	if (!dd->nodes) {
		free(dd);
		return -ENOMEM;
	}
	for (i = 0; i < DD_PRIO_NR * DD_DIR_NR; i++) {
		struct dd_dir *d = &dd->dir[i / DD_DIR_NR][i % DD_DIR_NR];

		RB_INIT(&d->sort);
		RB_INIT(&d->by_end);
		TAILQ_INIT(&d->fifo);
	}
	rq_list_init(&dd->bypass);
	/* no batch yet: the first dispatch chooses a direction */
	dd->last_dir = DD_READ;
	dd->batching = UINT_MAX;
	dd->t.expire_ns[DD_READ] = DD_READ_EXPIRE_MS * 1000000ull;
	dd->t.expire_ns[DD_WRITE] = DD_WRITE_EXPIRE_MS * 1000000ull;
	dd->t.prio_aging_ns = DD_PRIO_AGING_EXPIRE_MS * 1000000ull;
	dd->t.writes_starved = DD_WRITES_STARVED;
	dd->t.fifo_batch = DD_FIFO_BATCH;
	dd->t.front_merges = DD_FRONT_MERGES;
	hctx->sched_data = dd;
	return 0;
}

static void dd_exit_hctx(struct blk_mq_hw_ctx *hctx)
{
	struct deadline_data *dd = dd_of(hctx);

	if (!dd)
		return;
	free(dd->nodes);
	free(dd);
	hctx->sched_data = NULL;
}

const struct elevator_type elv_mq_deadline = {
	.name = "mq-deadline",
	.init_hctx = dd_init_hctx,
	.exit_hctx = dd_exit_hctx,
	.bio_merge = dd_bio_merge,
	.insert_requests = dd_insert_requests,
	.dispatch_request = dd_dispatch_request,
	.has_work = dd_has_work,
};

static struct deadline_data *dd_checked(struct blk_mq_hw_ctx *hctx)
{
	if (!hctx || hctx->elv != &elv_mq_deadline)
		return NULL;
	return hctx->sched_data;
}

int mq_deadline_set_tunable(struct blk_mq_hw_ctx *hctx, const char *name,
			    uint64_t value)
{
	struct deadline_data *dd = dd_checked(hctx);

	if (!dd || !name)
		return -EINVAL;
	if (!strcmp(name, "read_expire") || !strcmp(name, "write_expire")) {
		if (value > INT_MAX)
			return -EINVAL;
		dd->t.expire_ns[name[0] == 'r' ? DD_READ : DD_WRITE] =
			value * 1000000ull;
	} else if (!strcmp(name, "prio_aging_expire")) {
		if (value > INT_MAX)
			return -EINVAL;
		dd->t.prio_aging_ns = value * 1000000ull;
	} else if (!strcmp(name, "writes_starved")) {
		if (value > INT_MAX)
			return -EINVAL;
		dd->t.writes_starved = (unsigned int)value;
	} else if (!strcmp(name, "fifo_batch")) {
		if (value > INT_MAX)
			return -EINVAL;
		dd->t.fifo_batch = (unsigned int)value;
	} else if (!strcmp(name, "front_merges")) {
		if (value > 1)
			return -EINVAL;
		dd->t.front_merges = value;
	} else {
		return -ENOENT;
	}
	return 0;
}

int mq_deadline_get_tunable(struct blk_mq_hw_ctx *hctx, const char *name,
			    uint64_t *value)
{
	struct deadline_data *dd = dd_checked(hctx);

	if (!dd || !name || !value)
		return -EINVAL;
	if (!strcmp(name, "read_expire"))
		*value = dd->t.expire_ns[DD_READ] / 1000000ull;
	else if (!strcmp(name, "write_expire"))
		*value = dd->t.expire_ns[DD_WRITE] / 1000000ull;
	else if (!strcmp(name, "prio_aging_expire"))
		*value = dd->t.prio_aging_ns / 1000000ull;
	else if (!strcmp(name, "writes_starved"))
		*value = dd->t.writes_starved;
	else if (!strcmp(name, "fifo_batch"))
		*value = dd->t.fifo_batch;
	else if (!strcmp(name, "front_merges"))
		*value = dd->t.front_merges;
	else
		return -ENOENT;
	return 0;
}

int mq_deadline_get_stats(struct blk_mq_hw_ctx *hctx,
			  struct mq_deadline_stats *st)
{
	struct deadline_data *dd = dd_checked(hctx);

	if (!dd || !st)
		return -EINVAL;
	*st = dd->stats;
	return 0;
}
