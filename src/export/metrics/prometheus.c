// SPDX-License-Identifier: MIT
/*
 * The registry as Prometheus text exposition format 0.0.4
 * (prometheus.io/docs/instrumenting/exposition_formats): one "# HELP" and
 * "# TYPE" per family, then all of its samples; histograms as cumulative
 * _bucket{le=...} samples ending at +Inf, _sum and _count.  docs/metrics.md
 * lists the families.
 *
 * The counters are copied first (blk_metrics_snapshot(), under the
 * registry's mutex) and formatted afterwards, so connections opening or
 * closing never wait for the text.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blkstack/version.h"
#include "registry.h"

static const char *const proto_name[BLK_METRICS_NR_PROTOS] = { "nbd", "iscsi" };
static const char *const dir_name[BLK_METRICS_NR_DIRS] = { "read", "write", "other" };
/* blk_metrics_bounds_ns in seconds, as le= label values */
static const char *const le_name[BLK_METRICS_NR_BOUNDS] = {
	"1e-06", "2e-06", "5e-06", "1e-05", "2e-05", "5e-05",
	"0.0001", "0.0002", "0.0005", "0.001", "0.002", "0.005",
	"0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10",
};
/* enum blk_stat_dir */
static const char *const disk_dir[BLK_STAT_NR_DIRS] = { "read", "write", "discard", "flush" };

/* A label value: backslash, double quote and line feed escaped. */
static void esc(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\')
			fputs("\\\\", f);
		else if (*v == '"')
			fputs("\\\"", f);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

static void family(FILE *f, const char *name, const char *type,
		   const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One series of a request family: an export's totals or a connection. */
struct series {
	const struct blk_metrics_snap_export *e;
	const struct blk_metrics_snap_conn *c;   /* NULL: the export's */
	enum blk_metrics_proto proto;
	const struct blk_metrics_counters *n;
	uint64_t inflight;
};

static void labels(FILE *f, const struct series *s)
{
	fprintf(f, "proto=\"%s\",export=\"", proto_name[s->proto]);
	esc(f, s->e->name);
	fputc('"', f);
	if (s->c) {
		fprintf(f, ",conn=\"%lu\",peer=\"", s->c->id);
		esc(f, s->c->peer);
		fputc('"', f);
	}
}

static uint64_t dir_count(const struct blk_metrics_counters *n, unsigned int d)
{
	uint64_t sum = 0;
	unsigned int b;

	for (b = 0; b < BLK_METRICS_NR_BUCKETS; b++)
		sum += n->lat[d][b];
	return sum;
}

static uint64_t dir_bytes(const struct blk_metrics_counters *n, unsigned int d)
{
	return n->bytes[d];
}

static uint64_t dir_errors(const struct blk_metrics_counters *n, unsigned int d)
{
	return n->errors[d];
}

/*
 * A counter family PREFIX_SUFFIX with one sample per series and direction
 * (the first @ndirs of read, write, other), its value from @val.
 */
static void dir_counter(FILE *f, const char *prefix, const char *suffix,
			const char *what, const char *whose,
			const struct series *s, unsigned int nr, unsigned int ndirs,
			uint64_t (*val)(const struct blk_metrics_counters *, unsigned int))
{
	char name[96], help[192];
	unsigned int i, d;

	snprintf(name, sizeof(name), "%s_%s", prefix, suffix);
	snprintf(help, sizeof(help), "%s, %s.", what, whose);
	family(f, name, "counter", help);
	for (i = 0; i < nr; i++)
		for (d = 0; d < ndirs; d++) {
			fprintf(f, "%s{", name);
			labels(f, &s[i]);
			fprintf(f, ",dir=\"%s\"} %llu\n", dir_name[d],
				(unsigned long long)val(s[i].n, d));
		}
}

/* The request families over @nr series, names starting with @prefix. */
static void request_families(FILE *f, const char *prefix, const char *whose,
			     const struct series *s, unsigned int nr)
{
	char name[96], help[192];
	unsigned int i, d, b;

	dir_counter(f, prefix, "requests_total", "Requests answered, by class (read, write, other)",
		    whose, s, nr, BLK_METRICS_NR_DIRS, dir_count);
	dir_counter(f, prefix, "bytes_total",
		    "Payload bytes of successful reads (sent) and writes (received)",
		    whose, s, nr, BLK_METRICS_OTHER, dir_bytes);
	dir_counter(f, prefix, "errors_total", "Requests answered with an error",
		    whose, s, nr, BLK_METRICS_NR_DIRS, dir_errors);

	snprintf(name, sizeof(name), "%s_request_duration_seconds", prefix);
	snprintf(help, sizeof(help),
		 "Request latency from its arrival to its answer handed to the socket, %s.",
		 whose);
	family(f, name, "histogram", help);
	for (i = 0; i < nr; i++)
		for (d = 0; d < BLK_METRICS_NR_DIRS; d++) {
			uint64_t cum = 0;

			for (b = 0; b < BLK_METRICS_NR_BUCKETS; b++) {
				cum += s[i].n->lat[d][b];
				fprintf(f, "%s_bucket{", name);
				labels(f, &s[i]);
				fprintf(f, ",dir=\"%s\",le=\"%s\"} %llu\n",
					dir_name[d],
					b < BLK_METRICS_NR_BOUNDS ? le_name[b] : "+Inf",
					(unsigned long long)cum);
			}
			fprintf(f, "%s_sum{", name);
			labels(f, &s[i]);
			fprintf(f, ",dir=\"%s\"} %.9f\n", dir_name[d],
				(double)s[i].n->lat_sum_ns[d] / 1e9);
			fprintf(f, "%s_count{", name);
			labels(f, &s[i]);
			fprintf(f, ",dir=\"%s\"} %llu\n", dir_name[d],
				(unsigned long long)cum);
		}

	snprintf(name, sizeof(name), "%s_inflight_requests", prefix);
	snprintf(help, sizeof(help), "Requests received and not yet answered, %s.",
		 whose);
	family(f, name, "gauge", help);
	for (i = 0; i < nr; i++) {
		fprintf(f, "%s{", name);
		labels(f, &s[i]);
		fprintf(f, "} %llu\n", (unsigned long long)s[i].inflight);
	}
}

static void export_families(FILE *f, const struct series *s, unsigned int nr)
{
	unsigned int i;

	request_families(f, "blkstack_export", "per export (connections open and ended)",
			 s, nr);
	family(f, "blkstack_export_connections", "gauge",
	       "Connections open now (iSCSI: sessions that reached the full feature phase; one per LUN of the target they use).");
	for (i = 0; i < nr; i++) {
		fputs("blkstack_export_connections{", f);
		labels(f, &s[i]);
		fprintf(f, "} %u\n", s[i].e->live[s[i].proto]);
	}
	family(f, "blkstack_export_connections_opened_total", "counter",
	       "Connections opened since the start.");
	for (i = 0; i < nr; i++) {
		fputs("blkstack_export_connections_opened_total{", f);
		labels(f, &s[i]);
		fprintf(f, "} %llu\n",
			(unsigned long long)s[i].e->opened[s[i].proto]);
	}
}

/* A block core family: one sample per export (and per direction). */
static void disk_family(FILE *f, const struct blk_metrics_snap *sn,
			const struct blk_disk_stats *ds, const char *name,
			const char *type, const char *help, size_t off,
			unsigned int ndirs, double scale)
{
	unsigned int i, d;

	family(f, name, type, help);
	for (i = 0; i < sn->nr_exp; i++) {
		const uint64_t *v = (const uint64_t *)((const char *)&ds[i] + off);

		for (d = 0; d < (ndirs ? ndirs : 1); d++) {
			fprintf(f, "%s{export=\"", name);
			esc(f, sn->exp[i].name);
			if (ndirs)
				fprintf(f, "\",dir=\"%s", disk_dir[d]);
			if (scale >= 1.0) /* counts, or 512-byte sectors as bytes */
				fprintf(f, "\"} %llu\n",
					(unsigned long long)(v[d] * (uint64_t)scale));
			else
				fprintf(f, "\"} %.3f\n", (double)v[d] * scale);
		}
	}
}

#define DS(field) offsetof(struct blk_disk_stats, field)

static void disk_families(FILE *f, const struct blk_metrics_snap *sn,
			  const struct blk_disk_stats *ds)
{
	disk_family(f, sn, ds, "blkstack_disk_completed_total", "counter",
		    "Block core: requests completed per direction (/proc/diskstats fields 1, 5, 12, 16).",
		    DS(ios), BLK_STAT_NR_DIRS, 1.0);
	disk_family(f, sn, ds, "blkstack_disk_merged_total", "counter",
		    "Block core: bios merged into another request (fields 2, 6, 13).",
		    DS(merges), BLK_STAT_DISCARD + 1, 1.0);
	disk_family(f, sn, ds, "blkstack_disk_bytes_total", "counter",
		    "Block core: bytes transferred, 512 x sectors (fields 3, 7, 14).",
		    DS(sectors), BLK_STAT_DISCARD + 1, 512.0);
	disk_family(f, sn, ds, "blkstack_disk_time_seconds_total", "counter",
		    "Block core: sum of request latencies, ms resolution (fields 4, 8, 15, 17).",
		    DS(ticks_ms), BLK_STAT_NR_DIRS, 1e-3);
	disk_family(f, sn, ds, "blkstack_disk_inflight_requests", "gauge",
		    "Block core: requests dispatched to the driver and not completed (field 9 split).",
		    DS(in_flight), 2, 1.0);
	disk_family(f, sn, ds, "blkstack_disk_io_time_seconds_total", "counter",
		    "Block core: time with at least one request in flight, ms resolution (field 10).",
		    DS(io_ticks_ms), 0, 1e-3);
	disk_family(f, sn, ds, "blkstack_disk_requeues_total", "counter",
		    "Block core: requests requeued (driver busy or asked).",
		    DS(requeues), 0, 1.0);
	disk_family(f, sn, ds, "blkstack_disk_timeouts_total", "counter",
		    "Block core: requests whose deadline passed.",
		    DS(timeouts), 0, 1.0);
	disk_family(f, sn, ds, "blkstack_disk_queue_runs_total", "counter",
		    "Block core: dispatch runs of the hardware queues.",
		    DS(queue_runs), 0, 1.0);
	disk_family(f, sn, ds, "blkstack_disk_errors_total", "counter",
		    "Block core: requests completed with an error status.",
		    DS(errors), 0, 1.0);
}

int blk_metrics_render(struct blk_metrics *m, char **buf, size_t *len)
{
	struct blk_metrics_snap sn;
	struct blk_disk_stats *ds = NULL;
	struct series *es = NULL, *cs = NULL;
	unsigned int i, p, ne = 0;
	FILE *f;
	int ret = -ENOMEM;

	*buf = NULL;
	*len = 0;
	if (blk_metrics_snapshot(m, &sn))
		return -ENOMEM;
	ds = calloc(sn.nr_exp ? sn.nr_exp : 1, sizeof(*ds));
	es = calloc(sn.nr_exp * BLK_METRICS_NR_PROTOS + 1, sizeof(*es));
	cs = calloc(sn.nr_conn + 1, sizeof(*cs));
	if (!ds || !es || !cs)
		goto out;
	for (i = 0; i < sn.nr_exp; i++) {
		blk_dev_get_stats(sn.exp[i].dev, &ds[i]);
		for (p = 0; p < BLK_METRICS_NR_PROTOS; p++)
			if (sn.exp[i].protos & (1u << p))
				es[ne++] = (struct series){
					.e = &sn.exp[i], .proto = p,
					.n = &sn.exp[i].total[p],
					.inflight = sn.exp[i].inflight[p] };
	}
	for (i = 0; i < sn.nr_conn; i++)
		cs[i] = (struct series){ .e = &sn.exp[sn.conn[i].exp],
					 .c = &sn.conn[i],
					 .proto = sn.conn[i].proto,
					 .n = &sn.conn[i].c,
					 .inflight = sn.conn[i].inflight };
	f = open_memstream(buf, len);
	if (!f)
		goto out;
	family(f, "blkstack_build_info", "gauge", "blkstack's version.");
	fprintf(f, "blkstack_build_info{version=\"%s\"} 1\n", BLKSTACK_VERSION);
	export_families(f, es, ne);
	request_families(f, "blkstack_connection", "per open connection", cs,
			 sn.nr_conn);
	disk_families(f, &sn, ds);
	if (ferror(f)) {
		fclose(f);
		free(*buf);
		*buf = NULL;
		*len = 0;
		goto out;
	}
	if (fclose(f)) {
		free(*buf);
		*buf = NULL;
		*len = 0;
		goto out;
	}
	ret = 0;
out:
	free(ds);
	free(es);
	free(cs);
	blk_metrics_snap_free(&sn);
	return ret;
}
