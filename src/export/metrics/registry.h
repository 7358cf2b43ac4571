/* SPDX-License-Identifier: MIT */
/*
 * The metrics registry's insides, shared by registry.c (exports,
 * connections, the copy a scrape formats) and prometheus.c (the text).
 * Not installed.
 */
#ifndef BLKSTACK_METRICS_REGISTRY_H
#define BLKSTACK_METRICS_REGISTRY_H

#include <pthread.h>

#include "blkstack/lock.h"
#include "blkstack/metrics.h"

struct blk_metrics_export {
	struct blk_metrics *m;
	struct blk_metrics_export *next;
	char *name;
	struct blk_dev *dev;
	unsigned int idx;               /* order of blk_metrics_export_add() */
	unsigned int protos;            /* 1u << enum blk_metrics_proto served */
	/* under m->lock: connections that ended, added up */
	struct blk_metrics_counters ended[BLK_METRICS_NR_PROTOS];
	uint64_t opened[BLK_METRICS_NR_PROTOS];
	unsigned int live[BLK_METRICS_NR_PROTOS];
};

struct blk_metrics {
	struct blk_mutex lock;          /* the lists; never taken per request */
	struct blk_metrics_export *exports, **exports_tail;
	unsigned int nr_exports;
	struct blk_metrics_conn *conns; /* open connections, newest first */
	unsigned int nr_conns;
};

/* One export as a scrape saw it: totals of ended and live connections. */
struct blk_metrics_snap_export {
	const char *name;
	struct blk_dev *dev;
	unsigned int protos;
	struct blk_metrics_counters total[BLK_METRICS_NR_PROTOS];
	uint64_t inflight[BLK_METRICS_NR_PROTOS];
	uint64_t opened[BLK_METRICS_NR_PROTOS];
	unsigned int live[BLK_METRICS_NR_PROTOS];
};

/* One open connection as a scrape saw it. */
struct blk_metrics_snap_conn {
	struct blk_metrics_counters c;
	uint64_t inflight;
	unsigned int exp;               /* index into the exports */
	enum blk_metrics_proto proto;
	unsigned long id;
	char peer[80];
};

struct blk_metrics_snap {
	struct blk_metrics_snap_export *exp;
	unsigned int nr_exp;
	struct blk_metrics_snap_conn *conn;
	unsigned int nr_conn;
};

/*
 * blk_metrics_snapshot() - copy every counter (relaxed loads) under the
 * registry's mutex.  Return: 0 or -ENOMEM.  blk_metrics_snap_free()
 * releases it.
 */
int blk_metrics_snapshot(struct blk_metrics *m, struct blk_metrics_snap *s);
void blk_metrics_snap_free(struct blk_metrics_snap *s);

#endif /* BLKSTACK_METRICS_REGISTRY_H */
