// SPDX-License-Identifier: MIT
/*
 * Metrics registry: exports, the connections counting into them, and the
 * copy a scrape takes - see blkstack/metrics.h.
 *
 * The mutex guards the lists and the ended-connection totals.  It is
 * taken when a connection opens or closes and while a scrape copies the
 * counters (a few hundred loads per connection), never by a request: a
 * connection only stores into its own struct blk_metrics_conn.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

const uint64_t blk_metrics_bounds_ns[BLK_METRICS_NR_BOUNDS] = {
	1000, 2000, 5000,                               /* 1 us */
	10000, 20000, 50000,
	100000, 200000, 500000,
	1000000, 2000000, 5000000,                      /* 1 ms */
	10000000, 20000000, 50000000,
	100000000, 200000000, 500000000,
	1000000000, 2000000000, 5000000000, 10000000000 /* 1 s .. 10 s */
};

#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)

int blk_metrics_create(struct blk_metrics **out)
{
	struct blk_metrics *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	blk_mutex_init(&m->lock, "&metrics->lock", -1);
	m->exports_tail = &m->exports;
	*out = m;
	return 0;
}

void blk_metrics_destroy(struct blk_metrics *m)
{
	struct blk_metrics_export *e, *n;

	if (!m)
		return;
	for (e = m->exports; e; e = n) {
		n = e->next;
		free(e->name);
		free(e);
	}
	blk_mutex_destroy(&m->lock);
	free(m);
}

int blk_metrics_export_add(struct blk_metrics *m, const char *name,
			   struct blk_dev *dev, unsigned int protos,
			   struct blk_metrics_export **out)
{
	struct blk_metrics_export *e;

	if (!protos || protos >> BLK_METRICS_NR_PROTOS)
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->name = strdup(name);
	if (!e->name) {
		free(e);
		return -ENOMEM;
	}
	e->m = m;
	e->dev = dev;
	e->protos = protos;
	blk_mutex_lock(&m->lock);
	e->idx = m->nr_exports;
	*m->exports_tail = e;
	m->exports_tail = &e->next;
	m->nr_exports++;
	blk_mutex_unlock(&m->lock);
	*out = e;
	return 0;
}

int blk_metrics_conn_open(struct blk_metrics_export *ex,
			  enum blk_metrics_proto proto, unsigned long id,
			  const char *peer, struct blk_metrics_conn **out)
{
	struct blk_metrics *m;
	struct blk_metrics_conn *mc;

	*out = NULL;
	if (!ex)
		return 0;
	m = ex->m;
	mc = aligned_alloc(64, sizeof(*mc));
	if (!mc)
		return -ENOMEM;
	memset(mc, 0, sizeof(*mc));
	mc->exp = ex;
	mc->proto = proto;
	mc->id = id;
	snprintf(mc->peer, sizeof(mc->peer), "%s", peer ? peer : "");
	blk_mutex_lock(&m->lock);
	mc->next = m->conns;
	m->conns = mc;
	m->nr_conns++;
	ex->opened[proto]++;
	ex->live[proto]++;
	blk_mutex_unlock(&m->lock);
	*out = mc;
	return 0;
}

/* @dst += @src, @src read with relaxed loads (its writer may still run). */
static void counters_add(struct blk_metrics_counters *dst,
			 const struct blk_metrics_counters *src)
{
	const uint64_t *s = (const uint64_t *)src;
	uint64_t *d = (uint64_t *)dst;
	size_t i;

	for (i = 0; i < sizeof(*src) / sizeof(uint64_t); i++)
		d[i] += LOAD(&s[i]);
}

void blk_metrics_conn_close(struct blk_metrics_conn *mc)
{
	struct blk_metrics_export *ex;
	struct blk_metrics_conn **pp;
	struct blk_metrics *m;

	if (!mc)
		return;
	ex = mc->exp;
	m = ex->m;
	blk_mutex_lock(&m->lock);
	for (pp = &m->conns; *pp; pp = &(*pp)->next)
		if (*pp == mc) {
			*pp = mc->next;
			break;
		}
	m->nr_conns--;
	/* in one critical section with the unlink: a scrape sees the
	 * connection or the totals it went into, never both or neither */
	counters_add(&ex->ended[mc->proto], &mc->c);
	ex->live[mc->proto]--;
	blk_mutex_unlock(&m->lock);
	free(mc);
}

int blk_metrics_snapshot(struct blk_metrics *m, struct blk_metrics_snap *s)
{
	struct blk_metrics_export *e;
	struct blk_metrics_conn *mc;
	unsigned int i, p;

	memset(s, 0, sizeof(*s));
	blk_mutex_lock(&m->lock);
	s->exp = calloc(m->nr_exports ? m->nr_exports : 1, sizeof(*s->exp));
	s->conn = calloc(m->nr_conns ? m->nr_conns : 1, sizeof(*s->conn));
	if (!s->exp || !s->conn) {
		blk_mutex_unlock(&m->lock);
		blk_metrics_snap_free(s);
		return -ENOMEM;
	}
	for (e = m->exports, i = 0; e; e = e->next, i++) {
		struct blk_metrics_snap_export *x = &s->exp[i];

		x->name = e->name;
		x->dev = e->dev;
		x->protos = e->protos;
		for (p = 0; p < BLK_METRICS_NR_PROTOS; p++) {
			x->total[p] = e->ended[p];
			x->opened[p] = e->opened[p];
			x->live[p] = e->live[p];
		}
	}
	s->nr_exp = i;
	/* oldest first: the list is newest first */
	i = m->nr_conns;
	for (mc = m->conns; mc; mc = mc->next) {
		struct blk_metrics_snap_conn *y = &s->conn[--i];
		unsigned int k = mc->exp->idx;

		counters_add(&y->c, &mc->c);
		y->inflight = LOAD(&mc->inflight);
		y->exp = k;
		y->proto = mc->proto;
		y->id = mc->id;
		memcpy(y->peer, mc->peer, sizeof(y->peer));
		counters_add(&s->exp[k].total[mc->proto], &y->c);
		s->exp[k].inflight[mc->proto] += y->inflight;
	}
	s->nr_conn = m->nr_conns;
	blk_mutex_unlock(&m->lock);
	return 0;
}

void blk_metrics_snap_free(struct blk_metrics_snap *s)
{
	free(s->exp);
	free(s->conn);
	memset(s, 0, sizeof(*s));
}
