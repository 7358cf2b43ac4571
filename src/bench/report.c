// SPDX-License-Identifier: MIT
/*
 * blkstack bench reports.
 *
 * Text and JSON follow fio's documented output (fio HOWTO, "Interpreting
 * the output" and "JSON output"): the same field names, units and layout,
 * so scripts written for fio read ours.  The matrix is the table layout of
 * seed 001 (IOPS(K), CPU(%), LAT(us), MERGE(K); one row per workload, one
 * column per device).
 *
 * With group_reporting, as in fio, every job thread of a stonewall group
 * (reporting group, groupid) is summed into one entry, whatever the jobs'
 * names; the entry takes the name and options of the group's first job, and
 * that first job's group_reporting decides for the whole group.  Histograms
 * are merged, I/O counts, bytes, CPU times, context switches and faults
 * added.  The runtime is the span of the threads' measured windows, from
 * the earliest start to the latest end (per direction, over the threads
 * that did I/O in it), so IOPS and bandwidth of such an entry are
 * aggregates: the total over the time the threads were running, however
 * staggered their starts.  CPU percentages are per thread (total CPU time
 * over the sum of the threads' runtimes).  The "Run status group" bw and
 * the matrix's IOPS are over the same span.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "blkstack/version.h"
#include "blkstack/lock.h"
#include "bench.h"
#include "log.h"

#define NSEC_PER_USEC 1000ull
#define NSEC_PER_MSEC 1000000ull
#define NSEC_PER_SEC 1000000000ull

typedef unsigned long long ull;

/* fio's default percentile list (percentile_list=) */
static const double clat_pcts[] = {
	1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0,
	95.0, 99.0, 99.5, 99.9, 99.95, 99.99,
};
#define NR_PCTS (sizeof(clat_pcts) / sizeof(clat_pcts[0]))
/* the same as options.c's default of percentile_list= */
#define DEFAULT_PCT_LIST "1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99"


static const char *const ddir_lower[DDIR_NR] = { "read", "write", "trim" };
static const char *const ddir_upper[DDIR_NR] = { "READ", "WRITE", "TRIM" };

/*
 * fio's latency distribution buckets: a bucket is named by its exclusive
 * upper bound; ns and us have the same ten, ms adds 2000 and >=2000.
 */
#define NR_LAT_NS 10
#define NR_LAT_US 10
#define NR_LAT_MS 12
static const char *const lat_keys[NR_LAT_MS] = {
	"2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
	"2000", ">=2000",
};
static const uint64_t lat_bounds[NR_LAT_MS - 1] = {
	2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000,
};

/* fio's IO depth buckets, and its submit and complete buckets */
#define NR_DEPTHS BENCH_DEPTH_NR
static const char *const depth_keys[NR_DEPTHS] = {
	"1", "2", "4", "8", "16", "32", ">=64",
};
static const char *const batch_keys[NR_DEPTHS] = {
	"0", "4", "8", "16", "32", "64", ">=64",
};

struct lat_dist {
	double ns[NR_LAT_NS]; /* percent of I/Os; one with any at least 0.01 */
	double us[NR_LAT_US];
	double ms[NR_LAT_MS];
	double ns_all;        /* the nsec buckets together, percent */
};

/* fio's stat_calc_lat(): a bucket that has any is at least 0.01 % */
static double lat_pct(double cnt, double total)
{
	double p = cnt * 100.0 / total;

	return cnt > 0 && p < 0.01 ? 0.01 : p;
}

/*
 * One entry of a report: a job thread as the engine left it, or the sum of
 * a group_reporting group.
 */
struct rep_ent {
	const struct bench_job_result *j; /* r->jobs[i] or @sum */
	struct bench_job_result *sum;     /* owned; group_reporting only */
	uint64_t thread_ns;               /* summed thread runtimes: CPU% base */
};

struct rep {
	struct rep_ent *ents;
	unsigned int nr;
};

/* ---- small helpers ---- */

/* --count_instructions=perf: the process's instructions over the run's I/Os. */
static double run_insn_per_io(const struct bench_run_result *r)
{
	uint64_t ios = 0;
	unsigned int i;
	int d;

	for (i = 0; i < r->nr_jobs; i++)
		for (d = 0; d < DDIR_NR; d++)
			ios += r->jobs[i].dir[d].ios;
	return ios ? (double)r->instructions / (double)ios : 0.0;
}

static double safe_div(double a, double b)
{
	return b > 0 ? a / b : 0.0;
}

static uint64_t ns_to_ms(uint64_t ns)
{
	return (ns + NSEC_PER_MSEC / 2) / NSEC_PER_MSEC;
}

/*
 * A runtime in ms as the reports show it: fio rounds each runtime up
 * (backend.c update_runtime()), so that a run under 1 ms is 1 ms, never
 * 0 (terse's bw and iops, fio's integer divisions by it, were then 0).
 */
static uint64_t run_ms(uint64_t ns)
{
	uint64_t ms = ns_to_ms(ns);

	return ns && !ms ? 1 : ms;
}

static uint64_t hist_min(const struct blk_hist *h)
{
	return h->count ? h->min : 0;
}

/*
 * The entry's percentile list (percentile_list=) and the decimals of its
 * text labels; fio's default list for results built without options.
 */
static const double *job_pcts(const struct bench_job_result *j,
			      unsigned int *nr, unsigned int *prec)
{
	if (j && j->opts && j->opts->pct_nr) {
		*nr = j->opts->pct_nr;
		*prec = j->opts->pct_precision;
		return j->opts->pct;
	}
	*nr = NR_PCTS;
	*prec = 2;
	return clat_pcts;
}

/* Which latencies list percentiles: fio's, and none of one it disabled. */
enum { PCT_SLAT, PCT_CLAT, PCT_LAT };

static bool job_pct_on(const struct bench_job_result *j, int kind)
{
	const struct bench_job_opts *o = j ? j->opts : NULL;

	if (!o)
		return kind == PCT_CLAT;
	switch (kind) {
	case PCT_SLAT:
		return o->slat_percentiles && !o->disable_slat;
	case PCT_CLAT:
		return !o->clat_pct_off && !o->disable_clat;
	default:
		return o->lat_percentiles && !o->disable_lat;
	}
}

/* unified_rw_reporting= of an entry (BENCH_UNIFIED_*) */
static unsigned int job_unified(const struct bench_job_result *j)
{
	return j->opts ? j->opts->unified_rw : BENCH_UNIFIED_NONE;
}

static unsigned int job_threads(const struct bench_job_result *j)
{
	return j->nr_threads ? j->nr_threads : 1;
}

static unsigned int job_iodepth(const struct bench_job_result *j)
{
	return j->opts && j->opts->iodepth ? j->opts->iodepth : 1;
}

/*
 * fio's latency fields (stat.c): the target in ns, the window in us, the
 * percentile, and the depth latency_target= found (iodepth without one)
 */
static uint64_t job_lat_target(const struct bench_job_result *j)
{
	return j->opts ? j->opts->latency_target_ns : 0;
}

static uint64_t job_lat_window(const struct bench_job_result *j)
{
	return j->opts ? j->opts->latency_window_ns / 1000 : 0;
}

static double job_lat_pct(const struct bench_job_result *j)
{
	return j->opts ? j->opts->latency_percentile : 100.0;
}

static unsigned int job_lat_depth(const struct bench_job_result *j)
{
	return j->latency_depth ? j->latency_depth : job_iodepth(j);
}

/*
 * The job's error as fio reports it (stat.c): the one that ended it, else
 * under continue_on_error the first it went on past (the exit status
 * stays 0 then, as fio's).
 */
static int job_errno(const struct bench_job_result *j)
{
	if (!j->error && j->opts && j->opts->continue_on_error)
		return j->first_error;
	return j->error < 0 ? -j->error : j->error;
}

/*
 * A direction's runtime, as fio keeps one per direction: the job's window,
 * and for reads the verify phase too (a write job's reads are all verify
 * reads, so their rate is over the verify phase alone).
 */
static uint64_t dir_runtime(const struct bench_job_result *j, int d)
{
	return j->dir[d].runtime_ns ? j->dir[d].runtime_ns : j->runtime_ns;
}

/*
 * A direction's measured window in absolute bench-clock ns; [0, runtime]
 * for results built without windows (they then all start together).
 */
static void dir_window(const struct bench_job_result *j, int d,
		       uint64_t *start, uint64_t *end)
{
	*start = j->window_end_ns ? j->dir[d].start_ns : 0;
	*end = *start + dir_runtime(j, d);
}

/* The job's whole window, likewise. */
static void job_window(const struct bench_job_result *j, uint64_t *start,
		       uint64_t *end)
{
	if (j->window_end_ns) {
		*start = j->window_start_ns;
		*end = j->window_end_ns;
	} else {
		*start = 0;
		*end = j->runtime_ns;
	}
}

static bool job_did_io(const struct bench_job_result *j)
{
	int d;

	for (d = 0; d < DDIR_NR; d++)
		if (j->dir[d].ios)
			return true;
	return false;
}

/* Per-direction rates: 0 for a direction that did no I/O. */
static double dir_iops(const struct bench_job_result *j, int d)
{
	if (!j->dir[d].ios)
		return 0.0;
	return safe_div((double)j->dir[d].ios, (double)dir_runtime(j, d) / 1e9);
}

static double dir_bw(const struct bench_job_result *j, int d)
{
	if (!j->dir[d].ios)
		return 0.0;
	return safe_div((double)j->dir[d].bytes, (double)dir_runtime(j, d) / 1e9);
}

/*
 * hist_merge() - blk_hist_merge() that also copes with a destination that
 * was zero-filled rather than blk_hist_init()ed (min 0 with no samples).
 */
static void hist_merge(struct blk_hist *dst, const struct blk_hist *src)
{
	if (!src->count)
		return;
	if (!dst->count)
		blk_hist_init(dst);
	blk_hist_merge(dst, src);
}

/*
 * fmt_num_sig() - fio-style number (its num2str()) with at most @sig
 * digits, the decimal point counted: "4512k", "17.2Gi", "410k" at 4.
 * @binary selects powers of 1024 (KiB, MiB) over powers of 1000 (k, M);
 * @unit is appended ("B/s", "B" or "").
 */
static const char *fmt_num_sig(char *buf, size_t len, double v, bool binary,
			       const char *unit, unsigned int sig)
{
	static const char *const bin[] = { "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
	static const char *const dec[] = { "", "k", "M", "G", "T", "P", "E" };
	double base = binary ? 1024.0 : 1000.0;
	double top = pow(10.0, sig) - 0.5;
	unsigned int k = 0, digits;
	int prec;

	if (!(v >= 0) || isinf(v))
		v = 0;
	while (v >= top && k < 6) {
		v /= base;
		k++;
	}
	if (!k) {
		snprintf(buf, len, "%.0f%s", v, unit);
		return buf;
	}
	/* decimals: what the integer part leaves of @sig, less the point */
	for (digits = 1, prec = (int)sig - 2; prec > 0 &&
	     v >= pow(10.0, digits) - 0.5 * pow(10.0, -prec); digits++)
		prec--;
	if (prec < 0)
		prec = 0;
	snprintf(buf, len, "%.*f%s%s", prec, v, binary ? bin[k] : dec[k], unit);
	return buf;
}

/* fmt_num_sig() at fio's default significant_figures=4 */
static const char *fmt_num(char *buf, size_t len, double v, bool binary,
			   const char *unit)
{
	return fmt_num_sig(buf, len, v, binary, unit, 4);
}

/* significant_figures= of an entry (fio's default 4 without options) */
static unsigned int job_sig(const struct bench_job_opts *o)
{
	return o && o->sig_figs ? o->sig_figs : 4;
}

/*
 * A rate of the normal output in bytes per second: in B/s, or with
 * unit_base=1 in bit/s, at the entry's significant_figures.
 */
static const char *fmt_rate(char *buf, size_t len, double bps, bool binary,
			    const struct bench_job_opts *o)
{
	if (o && o->unit_base == 1)
		return fmt_num_sig(buf, len, bps * 8.0, binary, "bit/s",
				   job_sig(o));
	return fmt_num_sig(buf, len, bps, binary, "B/s", job_sig(o));
}

/* fio's size/time strings for "job options" */
static const char *fmt_size(char *buf, size_t len, uint64_t v)
{
	static const char sfx[] = "kMGTP";
	int i = -1;

	while (v && !(v & 1023) && i < 4) {
		v >>= 10;
		i++;
	}
	if (i < 0)
		snprintf(buf, len, "%llu", (ull)v);
	else
		snprintf(buf, len, "%llu%c", (ull)v, sfx[i]);
	return buf;
}

static const char *fmt_time(char *buf, size_t len, uint64_t ns)
{
	/* runtime= and ramp_time= default to seconds */
	if (!(ns % NSEC_PER_SEC))
		snprintf(buf, len, "%llu", (ull)(ns / NSEC_PER_SEC));
	else if (!(ns % NSEC_PER_MSEC))
		snprintf(buf, len, "%llums", (ull)(ns / NSEC_PER_MSEC));
	else
		snprintf(buf, len, "%lluus", (ull)((ns + 500) / NSEC_PER_USEC));
	return buf;
}

struct lat_unit {
	const char *name;
	uint64_t div;
};

static const struct lat_unit lat_units[] = {
	{ "nsec", 1 },
	{ "usec", NSEC_PER_USEC },
	{ "msec", NSEC_PER_MSEC },
};
#define NR_LAT_UNITS (sizeof(lat_units) / sizeof(lat_units[0]))

/*
 * lat_line_unit() - unit of a "clat (usec): min=..., max=..., avg=..." line.
 * Like fio's display_lat() (nsec_to_usec(), nsec_to_msec()), go up one unit
 * only while min, max and mean all reach 1000 of the current one, so that a
 * single slow outlier cannot turn a line of short latencies into "min=0,
 * avg=0.00".  fio also asks the same of the standard deviation; this
 * doesn't, so a constant latency still moves to the larger unit.
 */
static struct lat_unit lat_line_unit(uint64_t min, uint64_t max, double mean)
{
	unsigned int i = 0;

	while (i + 1 < NR_LAT_UNITS) {
		uint64_t next = lat_units[i + 1].div;

		if (min < next || max < next || mean < (double)next)
			break;
		i++;
	}
	return lat_units[i];
}

/*
 * pct_unit() - unit of the "clat percentiles" block, from the smallest and
 * largest value listed, as fio's show_clat_percentiles() picks it: usec when
 * the smallest is over 2000 ns and the largest over 99999 ns, msec when the
 * smallest is over 2000 us and the largest over 99999 us, nsec otherwise.
 * The smallest listed value is then at least 2 of the unit, never [0].
 */
static struct lat_unit pct_unit(uint64_t minv, uint64_t maxv)
{
	if (minv > 2000 * NSEC_PER_USEC && maxv > 99999 * NSEC_PER_USEC)
		return lat_units[2];
	if (minv > 2000 && maxv > 99999)
		return lat_units[1];
	return lat_units[0];
}

/* @ns in @u, rounded to the nearest integer */
static uint64_t lat_in_unit(uint64_t ns, struct lat_unit u)
{
	return u.div > 1 ? (ns + u.div / 2) / u.div : ns;
}

static unsigned int lat_index(uint64_t v, unsigned int nr_bounds)
{
	unsigned int i;

	for (i = 0; i < nr_bounds; i++)
		if (v < lat_bounds[i])
			return i;
	return nr_bounds;
}

/*
 * lat_dist_add() - spread a histogram over fio's latency buckets.  Each
 * histogram bucket counts at its midpoint, clamped to the exact min and
 * max, which is how blk_hist_percentile() reads it too.
 */
static void lat_dist_add(double cnt[NR_LAT_NS + NR_LAT_US + NR_LAT_MS],
			 const struct blk_hist *h)
{
	unsigned int b;

	if (!h->count)
		return;
	for (b = 0; b < BLK_HIST_BUCKETS; b++) {
		uint64_t lo, hi, v;

		if (!h->buckets[b])
			continue;
		lo = blk_hist_bucket_low(b);
		hi = b + 1 < BLK_HIST_BUCKETS ? blk_hist_bucket_low(b + 1) - 1 :
						UINT64_MAX;
		v = lo + (hi - lo) / 2;
		if (v < h->min)
			v = h->min;
		if (v > h->max)
			v = h->max;
		if (v < NSEC_PER_USEC)
			cnt[lat_index(v, NR_LAT_NS)] += (double)h->buckets[b];
		else if (v < NSEC_PER_MSEC)
			cnt[NR_LAT_NS + lat_index(v / NSEC_PER_USEC, NR_LAT_US)] +=
				(double)h->buckets[b];
		else
			cnt[NR_LAT_NS + NR_LAT_US +
			    lat_index(v / NSEC_PER_MSEC, NR_LAT_MS - 1)] +=
				(double)h->buckets[b];
	}
}

/*
 * Latency distribution of all directions of a job, in percent of I/Os.  As
 * in fio (its io_u_lat_n/u/m counters), it is of the completion latency,
 * clat, although fio labels it "lat".
 */
static void job_lat_dist(const struct bench_job_result *j, struct lat_dist *ld)
{
	double cnt[NR_LAT_NS + NR_LAT_US + NR_LAT_MS] = { 0 };
	double total = 0;
	unsigned int i;
	int d;

	memset(ld, 0, sizeof(*ld));
	if (!j->lat_valid)
		return;
	for (d = 0; d < DDIR_NR; d++)
		lat_dist_add(cnt, &j->dir[d].clat);
	for (i = 0; i < NR_LAT_NS + NR_LAT_US + NR_LAT_MS; i++)
		total += cnt[i];
	if (!total)
		return;
	for (i = 0; i < NR_LAT_NS; i++) {
		ld->ns[i] = lat_pct(cnt[i], total);
		ld->ns_all += cnt[i] * 100.0 / total;
	}
	for (i = 0; i < NR_LAT_US; i++)
		ld->us[i] = lat_pct(cnt[NR_LAT_NS + i], total);
	for (i = 0; i < NR_LAT_MS; i++)
		ld->ms[i] = lat_pct(cnt[NR_LAT_NS + NR_LAT_US + i], total);
}

/*
 * fio's stat_calc_dist(): each bucket in percent of the map's total, and
 * a bucket that has any at least 0.1 %.
 */
static void depth_dist(const uint64_t *map, double *pct)
{
	uint64_t total = 0;
	unsigned int i;

	for (i = 0; i < NR_DEPTHS; i++)
		total += map[i];
	for (i = 0; i < NR_DEPTHS; i++) {
		pct[i] = total ? (double)map[i] * 100.0 / (double)total : 0.0;
		if (map[i] && pct[i] < 0.1)
			pct[i] = 0.1;
	}
}

/*
 * fio's sum_stat(..., pure_sum): a group's (or the directions') samples
 * added as fio adds them, min to min, max to max, mean to mean, the
 * counts and squares too: the group's rate as the sum of its members'.
 */
static void sample_sum(struct bench_sample_stat *dst,
		       const struct bench_sample_stat *src)
{
	if (!src->n)
		return;
	if (!dst->n) {
		*dst = *src;
		return;
	}
	dst->min += src->min;
	dst->max += src->max;
	dst->n += src->n;
	dst->mean += src->mean;
	dst->m2 += src->m2;
}

/* fio's calc_lat() of samples: min, max, mean, stddev; false for none */
static bool sample_calc(const struct bench_sample_stat *s, uint64_t *min,
			uint64_t *max, double *mean, double *dev)
{
	if (!s->n) {
		*min = *max = 0;
		*mean = *dev = 0.0;
		return false;
	}
	*min = s->min;
	*max = s->max;
	*mean = s->mean;
	*dev = s->n > 1 ? sqrt(s->m2 / (double)(s->n - 1)) : 0.0;
	return true;
}

/* fio's convert_agg_kbytes_percent(): @mean KiB/s of the group's @agg B/s */
static double agg_pct(double agg, double mean)
{
	double p = 100.0;

	if (agg > 1024) {
		p = (double)(int64_t)mean * 100.0 / (agg / 1024.0);
		if (p > 100.0)
			p = 100.0;
	}
	return p;
}

/*
 * fio's IO depths of @j: the depth each I/O went at with iodepth_low=
 * (j->depth_hist, counted I/O by I/O as the queue refills), else each
 * submitted batch's I/Os at the depth after it (j->depth_map)
 */
static const uint64_t *depth_counts(const struct bench_job_result *j)
{
	return j->depth_hist_on ? j->depth_hist : j->depth_map;
}

/* ---- entries: job threads, or group_reporting sums ---- */

/*
 * Merge window [@ss, @se] of a thread into [@ds, @de]: their span when
 * both did I/O, the one that did when only one did, and when neither did,
 * @ds with the longer length (windows of threads that did no I/O, such as
 * one that failed to start, must not stretch the span).
 */
static void window_merge(bool dst_io, bool src_io, uint64_t *ds, uint64_t *de,
			 uint64_t ss, uint64_t se)
{
	if (dst_io && src_io) {
		if (ss < *ds)
			*ds = ss;
		if (se > *de)
			*de = se;
	} else if (src_io) {
		*ds = ss;
		*de = se;
	} else if (!dst_io && se - ss > *de - *ds) {
		*de = *ds + (se - ss);
	}
}

/*
 * group_reporting: @src's per-priority stats into @dst's, by value (fio's
 * clat_prio_stats_copy()); @dst's are its own copy (rep_build()).
 */
static void prio_add(struct bench_job_result *dst,
		     const struct bench_job_result *src)
{
	unsigned int d, i, k;

	if (!src->prio)
		return;
	if (!dst->prio) {
		dst->prio = calloc(1, sizeof(*dst->prio));
		if (!dst->prio)
			return;	/* the per-priority lines are then left out */
	}
	for (d = 0; d < 2; d++)
		for (i = 0; i < src->prio->nr[d]; i++) {
			struct bench_prio_stats *p = dst->prio;

			for (k = 0; k < p->nr[d]; k++)
				if (p->val[d][k] == src->prio->val[d][i])
					break;
			if (k == p->nr[d]) {
				if (k == BENCH_PRIO_MAX)
					continue;
				p->val[d][p->nr[d]++] = src->prio->val[d][i];
				blk_hist_init(&p->clat[d][k]);
			}
			hist_merge(&p->clat[d][k], &src->prio->clat[d][i]);
		}
}

static void job_add(struct bench_job_result *dst,
		    const struct bench_job_result *src)
{
	uint64_t ds, de, ss, se;
	int d;

	dst->latency_depth = src->latency_depth;	/* fio: the last thread's */
	if (!dst->total_err)
		dst->first_error = src->first_error;
	dst->total_err += src->total_err;
	dst->zone_resets += src->zone_resets;
	for (d = 0; d < DDIR_NR; d++) {
		/*
		 * the span of the windows of the threads that did I/O in this
		 * direction (of all of them while none did)
		 */
		dir_window(dst, d, &ds, &de);
		dir_window(src, d, &ss, &se);
		window_merge(dst->dir[d].ios != 0, src->dir[d].ios != 0,
			     &ds, &de, ss, se);
		dst->dir[d].start_ns = ds;
		dst->dir[d].runtime_ns = de - ds;
		dst->dir[d].ios += src->dir[d].ios;
		dst->dir[d].bytes += src->dir[d].bytes;
		dst->dir[d].errors += src->dir[d].errors;
		hist_merge(&dst->dir[d].slat, &src->dir[d].slat);
		hist_merge(&dst->dir[d].clat, &src->dir[d].clat);
		hist_merge(&dst->dir[d].lat, &src->dir[d].lat);
		sample_sum(&dst->bw_samples[d], &src->bw_samples[d]);
		sample_sum(&dst->iops_samples[d], &src->iops_samples[d]);
	}
	prio_add(dst, src);
	hist_merge(&dst->sync_lat, &src->sync_lat);
	dst->sync_ios += src->sync_ios;
	/* likewise for the whole window, over the threads that did any I/O */
	job_window(dst, &ds, &de);
	job_window(src, &ss, &se);
	window_merge(job_did_io(dst), job_did_io(src), &ds, &de, ss, se);
	dst->window_start_ns = ds;
	dst->window_end_ns = de;
	dst->runtime_ns = de - ds;
	dst->usr_cpu_s += src->usr_cpu_s;
	dst->sys_cpu_s += src->sys_cpu_s;
	dst->ctx_switches += src->ctx_switches;
	dst->minf += src->minf;
	dst->majf += src->majf;
	if (!dst->error && src->error) {
		dst->error = src->error;
		memcpy(dst->errmsg, src->errmsg, sizeof(dst->errmsg));
	}
	dst->lat_valid |= src->lat_valid;
	if (src->verify && !dst->verify)
		dst->verify_method = src->verify_method;
	dst->verify |= src->verify;
	dst->verify_blocks += src->verify_blocks;
	dst->verify_mismatches += src->verify_mismatches;
	dst->verify_backlog_blocks += src->verify_backlog_blocks;
	dst->verify_trims += src->verify_trims;
	dst->verify_trim_zero += src->verify_trim_zero;
	if (src->verify_ns > dst->verify_ns)
		dst->verify_ns = src->verify_ns;
	dst->wait.spins += src->wait.spins;
	dst->wait.sleeps += src->wait.sleeps;
	dst->wait.probes += src->wait.probes;
	dst->wait.chose_spin += src->wait.chose_spin;
	dst->wait.contended += src->wait.contended;
	dst->nr_threads += job_threads(src);
	dst->depth_hist_on |= src->depth_hist_on;
	for (d = 0; d < NR_DEPTHS; d++) {
		dst->depth_hist[d] += src->depth_hist[d];
		dst->depth_map[d] += src->depth_map[d];
		dst->submit_map[d] += src->submit_map[d];
		dst->complete_map[d] += src->complete_map[d];
	}
}

static void rep_free(struct rep *rep)
{
	unsigned int i;

	for (i = 0; i < rep->nr; i++) {
		if (rep->ents[i].sum)
			free(rep->ents[i].sum->prio);
		free(rep->ents[i].sum);
	}
	free(rep->ents);
	rep->ents = NULL;
	rep->nr = 0;
}

static bool job_group_reporting(const struct bench_job_result *j)
{
	return j->opts && j->opts->group_reporting;
}

/*
 * group_reporting of @j's stonewall group: that of the group's first job
 * thread, so that the whole group is either one entry or one per thread.
 */
static bool group_reporting_of(const struct bench_run_result *r,
			       const struct bench_job_result *j)
{
	unsigned int i;

	for (i = 0; i < r->nr_jobs; i++)
		if (r->jobs[i].groupid == j->groupid)
			return job_group_reporting(&r->jobs[i]);
	return job_group_reporting(j);
}

static int rep_build(struct rep *rep, const struct bench_run_result *r)
{
	unsigned int i, k;

	rep->nr = 0;
	rep->ents = calloc(r->nr_jobs ? r->nr_jobs : 1, sizeof(*rep->ents));
	if (!rep->ents)
		return -ENOMEM;
	for (i = 0; i < r->nr_jobs; i++) {
		const struct bench_job_result *j = &r->jobs[i];
		struct rep_ent *e;

		/* stats=0: fio leaves the job out of its report */
		if (j->opts && j->opts->stats_off)
			continue;
		if (!group_reporting_of(r, j)) {
			e = &rep->ents[rep->nr++];
			e->j = j;
			e->thread_ns = j->runtime_ns;
			continue;
		}
		/* fio's reporting group is the groupid alone, not the name */
		for (k = 0; k < rep->nr; k++) {
			e = &rep->ents[k];
			if (e->sum && e->sum->groupid == j->groupid)
				break;
		}
		if (k < rep->nr) {
			job_add(rep->ents[k].sum, j);
			rep->ents[k].thread_ns += j->runtime_ns;
			continue;
		}
		e = &rep->ents[rep->nr];
		e->sum = malloc(sizeof(*e->sum));
		if (!e->sum) {
			rep_free(rep);
			return -ENOMEM;
		}
		memcpy(e->sum, j, sizeof(*j));
		/* its own copy: job_add() adds the other threads' into it */
		e->sum->prio = NULL;
		prio_add(e->sum, j);
		e->sum->nr_threads = job_threads(j);
		e->j = e->sum;
		e->thread_ns = j->runtime_ns;
		rep->nr++;
	}
	return 0;
}

/*
 * Aggregate bandwidth of a group in one direction: fio's run status "bw",
 * the group's bytes over the span of its entries' windows.
 */
struct group_dir {
	uint64_t bytes;
	uint64_t ios;
	uint64_t min_run_ns, max_run_ns;
	uint64_t span_start, span_end;
	double min_bw, max_bw;
	bool any;
};

static void group_dir_stats(const struct rep *rep, unsigned int groupid, int d,
			    struct group_dir *g)
{
	unsigned int i;

	memset(g, 0, sizeof(*g));
	for (i = 0; i < rep->nr; i++) {
		const struct bench_job_result *j = rep->ents[i].j;
		uint64_t ws, we;
		double bw;

		if (j->groupid != groupid || !j->dir[d].ios)
			continue;
		bw = dir_bw(j, d);
		dir_window(j, d, &ws, &we);
		window_merge(g->any, true, &g->span_start, &g->span_end, ws, we);
		g->bytes += j->dir[d].bytes;
		g->ios += j->dir[d].ios;
		if (!g->any || dir_runtime(j, d) < g->min_run_ns)
			g->min_run_ns = dir_runtime(j, d);
		if (!g->any || dir_runtime(j, d) > g->max_run_ns)
			g->max_run_ns = dir_runtime(j, d);
		if (!g->any || bw < g->min_bw)
			g->min_bw = bw;
		if (!g->any || bw > g->max_bw)
			g->max_bw = bw;
		g->any = true;
	}
}

/*
 * The group's directions summed (unified_rw_reporting=): each entry's
 * bytes over its whole window, the group's over the span of theirs.
 */
static void group_mixed_stats(const struct rep *rep, unsigned int groupid,
			      struct group_dir *g)
{
	unsigned int i;
	int d;

	memset(g, 0, sizeof(*g));
	for (i = 0; i < rep->nr; i++) {
		const struct bench_job_result *j = rep->ents[i].j;
		uint64_t ws, we, bytes = 0, ios = 0;
		double bw;

		for (d = 0; d < DDIR_NR; d++) {
			bytes += j->dir[d].bytes;
			ios += j->dir[d].ios;
		}
		if (j->groupid != groupid || !ios)
			continue;
		job_window(j, &ws, &we);
		bw = safe_div((double)bytes, (double)(we - ws) / 1e9);
		window_merge(g->any, true, &g->span_start, &g->span_end, ws, we);
		g->bytes += bytes;
		g->ios += ios;
		if (!g->any || we - ws < g->min_run_ns)
			g->min_run_ns = we - ws;
		if (!g->any || we - ws > g->max_run_ns)
			g->max_run_ns = we - ws;
		if (!g->any || bw < g->min_bw)
			g->min_bw = bw;
		if (!g->any || bw > g->max_bw)
			g->max_bw = bw;
		g->any = true;
	}
}

static double group_agg_bw(const struct group_dir *g)
{
	return safe_div((double)g->bytes,
			(double)(g->span_end - g->span_start) / 1e9);
}

/* ---- text ---- */

static void text_lat(FILE *f, const char *label, const struct blk_hist *h)
{
	uint64_t min, max;
	struct lat_unit u;
	double mean;

	if (!h->count)
		return;
	min = hist_min(h);
	max = h->max;
	mean = blk_hist_mean(h);
	u = lat_line_unit(min, max, mean);
	/* min and max truncated to the unit, as fio divides them */
	fprintf(f, "%s (%s): min=%llu, max=%llu, avg=%.2f, stdev=%.2f\n",
		label, u.name, (ull)(min / u.div), (ull)(max / u.div),
		mean / (double)u.div, blk_hist_stddev(h) / (double)u.div);
}

/* fio's minimum width of a percentile value: "[  123]" */
#define PCT_MIN_WIDTH 5

static void text_percentiles(FILE *f, const struct blk_hist *h,
			     const char *label,
			     const struct bench_job_result *j);

/* fio 3.33 prints per-priority stats when two or more had I/Os */
static bool prio_shown(const struct bench_prio_stats *ps, int d)
{
	unsigned int i, n = 0;

	if (!ps || d > DDIR_WRITE)
		return false;
	for (i = 0; i < ps->nr[d]; i++)
		n += ps->clat[d][i].count != 0;
	return n >= 2;
}

/*
 * fio 3.33's per-priority lines (stat.c show_ddir_status()): "clat prio
 * C/L (usec): min=..." after the lat line, and a "clat prio C/L (P% of
 * IOs) percentiles" block after the clat percentiles, for each priority
 * with I/Os.
 */
static void text_prio(FILE *f, const struct bench_job_result *j, int d,
		      bool pct)
{
	const struct bench_prio_stats *ps = j->prio;
	unsigned int i;
	uint64_t total = 0;
	char name[64];

	for (i = 0; i < ps->nr[d]; i++)
		total += ps->clat[d][i].count;
	for (i = 0; i < ps->nr[d]; i++) {
		const struct blk_hist *h = &ps->clat[d][i];

		if (!h->count)
			continue;
		if (pct) {
			snprintf(name, sizeof(name), "clat prio %u/%u (%.2f%% of IOs)",
				 IOPRIO_PRIO_CLASS(ps->val[d][i]),
				 IOPRIO_PRIO_LEVEL(ps->val[d][i]),
				 100.0 * (double)h->count / (double)total);
			text_percentiles(f, h, name, j);
		} else {
			snprintf(name, sizeof(name), "    clat prio %u/%u",
				 IOPRIO_PRIO_CLASS(ps->val[d][i]),
				 IOPRIO_PRIO_LEVEL(ps->val[d][i]));
			text_lat(f, name, h);
		}
	}
}

/*
 * "    clat percentiles (nsec):" and its lines (@label: slat, clat, lat),
 * at the entry's percentile_list=, the labels with its precision.
 */
static void text_percentiles(FILE *f, const struct blk_hist *h,
			     const char *label,
			     const struct bench_job_result *j)
{
	uint64_t v[BENCH_PCT_MAX], minv = UINT64_MAX, maxv = 0;
	unsigned int i, per_line, nr, prec;
	const double *pcts = job_pcts(j, &nr, &prec);
	struct lat_unit u;
	int width;

	if (!h->count)
		return;
	for (i = 0; i < nr; i++) {
		v[i] = blk_hist_percentile(h, pcts[i]);
		if (v[i] < minv)
			minv = v[i];
		if (v[i] > maxv)
			maxv = v[i];
	}
	u = pct_unit(minv, maxv);
	/* as in fio: at least five wide, wider for the widest value */
	width = snprintf(NULL, 0, "%llu", (ull)lat_in_unit(maxv, u));
	if (width < PCT_MIN_WIDTH)
		width = PCT_MIN_WIDTH;
	/*
	 * fio's wrapping: four a line at width 5 or 6 with two decimals,
	 * fewer when wider
	 */
	per_line = (80 - 7) / (prec + 10 + (unsigned int)width);
	if (!per_line)
		per_line = 1;
	fprintf(f, "    %s percentiles (%s):\n", label, u.name);
	for (i = 0; i < nr; i++) {
		if (!(i % per_line))
			fputs("     |", f);
		fprintf(f, " %*.*fth=[%*llu]", (int)prec + 3, (int)prec, pcts[i],
			width, (ull)lat_in_unit(v[i], u));
		if (i == nr - 1)
			fputc('\n', f);
		else if (i % per_line == per_line - 1)
			fputs(",\n", f);
		else
			fputc(',', f);
	}
}

/* The window's mean of steady state samples, fio's: over all dur_s slots. */
static uint64_t ss_mean(const struct bench_ss_result *ss, const uint64_t *v)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; v && i < ss->nr; i++)
		sum += v[i];
	return ss->dur_s ? sum / ss->dur_s : 0;
}

/* @name: the direction's, or "mixed" for unified_rw_reporting's sum */
/*
 * fio's "   bw (  KiB/s): min=..." and "   iops        : min=..." lines
 * of a direction's samples; @agg: the group's bandwidth (B/s) for per=.
 */
static void text_samples(FILE *f, const struct bench_job_result *j, int d,
			 double agg)
{
	const struct bench_job_opts *o = j->opts;
	bool bits = o && o->unit_base == 1;
	double kb = o && o->kb_base == 1000 ? 1000.0 : 1024.0;
	const char *unit = bits ? "kbit" : kb == 1024.0 ? "KiB" : "kB";
	double mean, dev, mn, mx, per;
	uint64_t a, b;

	if (sample_calc(&j->bw_samples[d], &a, &b, &mean, &dev)) {
		per = agg_pct(agg, mean);
		mn = (double)a;
		mx = (double)b;
		if (bits) {
			mn *= 8.0;
			mx *= 8.0;
			mean *= 8.0;
			dev *= 8.0;
		}
		if (mean > kb * kb) {
			mn /= kb;
			mx /= kb;
			mean /= kb;
			dev /= kb;
			unit = bits ? "Mibit" : "MiB";
		}
		fprintf(f, "   bw (%5s/s): min=%5llu, max=%5llu, per=%3.2f%%, avg=%5.02f, stdev=%5.02f, samples=%llu\n",
			unit, (ull)mn, (ull)mx, per, mean, dev,
			(ull)j->bw_samples[d].n);
	}
	if (sample_calc(&j->iops_samples[d], &a, &b, &mean, &dev))
		fprintf(f, "   iops        : min=%5llu, max=%5llu, avg=%5.02f, stdev=%5.02f, samples=%llu\n",
			(ull)a, (ull)b, mean, dev, (ull)j->iops_samples[d].n);
}

static void text_dir(FILE *f, const struct rep *rep,
		     const struct bench_job_result *j, int d, const char *name)
{
	struct group_dir g;
	const struct bench_dir_stats *s = &j->dir[d];
	char iops[32], bw[32], bwd[32], io[32], zr[40] = "";
	double rate = dir_bw(j, d);
	unsigned int sig = job_sig(j->opts);

	/* fio's zbd_write_status(): every write line, zoned or not */
	if (d == DDIR_WRITE)
		snprintf(zr, sizeof(zr), "; %llu zone resets", (ull)j->zone_resets);
	fprintf(f, "  %s: IOPS=%s, BW=%s (%s)(%s/%llumsec)%s\n", name,
		fmt_num_sig(iops, sizeof(iops), dir_iops(j, d), false, "", sig),
		fmt_rate(bw, sizeof(bw), rate, true, j->opts),
		fmt_rate(bwd, sizeof(bwd), rate, false, j->opts),
		fmt_num_sig(io, sizeof(io), (double)s->bytes, true, "B", sig),
		(ull)run_ms(dir_runtime(j, d)), zr);
	if (j->lat_valid) {
		text_lat(f, "    slat", &s->slat);
		text_lat(f, "    clat", &s->clat);
		text_lat(f, "     lat", &s->lat);
		if (prio_shown(j->prio, d))
			text_prio(f, j, d, false);
		/* fio's order: slat, clat, lat */
		if (job_pct_on(j, PCT_SLAT))
			text_percentiles(f, &s->slat, "slat", j);
		if (job_pct_on(j, PCT_CLAT))
			text_percentiles(f, &s->clat, "clat", j);
		if (job_pct_on(j, PCT_LAT))
			text_percentiles(f, &s->lat, "lat", j);
		if (prio_shown(j->prio, d))
			text_prio(f, j, d, true);
	}
	if (!strcmp(name, "mixed"))
		group_mixed_stats(rep, j->groupid, &g);
	else
		group_dir_stats(rep, j->groupid, d, &g);
	text_samples(f, j, d, group_agg_bw(&g));
}

/*
 * unified_rw_reporting=mixed|both: @j's directions summed into @m's
 * first (fio's sum_thread_stats() into index 0): I/Os, bytes and
 * histograms added, the runtime the longest direction's.  The others are
 * left empty.  @m is heap memory of the caller's (histograms are large).
 */
static void job_mixed(struct bench_job_result *m,
		      const struct bench_job_result *j)
{
	struct bench_dir_stats *md = &m->dir[0];
	uint64_t s0 = 0, e0 = 0;
	bool any = false;
	int d;

	memcpy(m, j, sizeof(*m));
	memset(m->dir, 0, sizeof(m->dir));
	memset(m->bw_samples, 0, sizeof(m->bw_samples));
	memset(m->iops_samples, 0, sizeof(m->iops_samples));
	blk_hist_init(&md->slat);
	blk_hist_init(&md->clat);
	blk_hist_init(&md->lat);
	for (d = 0; d < DDIR_NR; d++) {
		const struct bench_dir_stats *s = &j->dir[d];
		uint64_t ws, we;

		if (!s->ios)
			continue;
		dir_window(j, d, &ws, &we);
		if (!any || we - ws > e0 - s0) {
			s0 = ws;
			e0 = we;
		}
		any = true;
		md->ios += s->ios;
		md->bytes += s->bytes;
		md->errors += s->errors;
		hist_merge(&md->slat, &s->slat);
		hist_merge(&md->clat, &s->clat);
		hist_merge(&md->lat, &s->lat);
		sample_sum(&m->bw_samples[0], &j->bw_samples[d]);
		sample_sum(&m->iops_samples[0], &j->iops_samples[d]);
	}
	md->start_ns = s0;
	md->runtime_ns = e0 - s0;
	if (!any)
		md->runtime_ns = j->runtime_ns;
}

/* "  lat (usec)   : 2=0.01%, 4=12.50%, ...", five a line, as fio wraps */
static void text_lat_dist(FILE *f, const char *unit, const double *pct,
			  unsigned int nr)
{
	unsigned int i, n = 0;

	for (i = 0; i < nr; i++) {
		if (pct[i] <= 0)
			continue;
		if (!(n % 5))
			fprintf(f, "%s  lat (%s)   : ", n ? "\n" : "", unit);
		else
			fputs(", ", f);
		/* like fio, a bucket that has samples never reads 0.00% */
		fprintf(f, "%s=%.2f%%", lat_keys[i], pct[i] < 0.01 ? 0.01 : pct[i]);
		n++;
	}
	if (n)
		fputc('\n', f);
}

/*
 * stage_timers=1: an entry's stage statistics, its thread's or, for a
 * group_reporting sum, its group's threads' merged.  NULL when off;
 * free with stages_put().
 */
static struct blk_stage_stats *ent_stages(const struct bench_run_result *r,
					  const struct rep_ent *e)
{
	struct blk_stage_stats *st = NULL;
	unsigned int i;

	for (i = 0; i < r->nr_jobs; i++) {
		const struct bench_job_result *j = &r->jobs[i];

		if (!j->stages)
			continue;
		if (e->sum ? !(group_reporting_of(r, j) && j->groupid == e->sum->groupid) :
			     j != e->j)
			continue;
		if (!st) {
			st = malloc(sizeof(*st));
			if (!st)
				return NULL;
			blk_stage_stats_init(st, 0, 0, 0);
		}
		blk_stage_stats_merge(st, j->stages);
	}
	return st;
}

static void stages_put(struct blk_stage_stats *st)
{
	if (st) {
		blk_stage_stats_free(st);
		free(st);
	}
}

static void text_stages(FILE *f, const struct bench_run_result *r,
			const struct rep_ent *e)
{
	struct blk_stage_stats *st = ent_stages(r, e);
	unsigned int i;
	size_t k;

	if (!st)
		return;
	fprintf(f, "  stages (ns)  : %-22s %10s %10s %8s %8s %8s %8s %10s\n",
		"interval", "count", "mean", "min", "p50", "p99", "p99.9", "max");
	for (i = 0; i < BLK_STAGE_NR_INTERVALS; i++) {
		const struct blk_hist *h = &st->interval[i];
		char name[32];

		snprintf(name, sizeof(name), "%s->%s", blk_stage_name(i),
			 blk_stage_name(i + 1));
		fprintf(f, "                 %-22s %10llu %10.1f %8llu %8llu %8llu %8llu %10llu\n",
			name, (ull)h->count, blk_hist_mean(h), (ull)hist_min(h),
			(ull)blk_hist_percentile(h, 50.0),
			(ull)blk_hist_percentile(h, 99.0),
			(ull)blk_hist_percentile(h, 99.9), (ull)h->max);
	}
	if (st->has_window) {
		fprintf(f, "  stage windows: %s->%s, %llu ms windows, %zu closed\n",
			blk_stage_name(st->win_from), blk_stage_name(st->win_to),
			(ull)(st->window_ns / 1000000), st->nr_windows);
		for (k = 0; k < st->nr_windows; k++) {
			const struct blk_stage_window *w = &st->windows[k];

			fprintf(f, "   print_timings: cum_time=%llu ns, count=%llu, avg=%llu ns\n",
				(ull)w->cum_ns, (ull)w->count,
				(ull)(w->count ? w->cum_ns / w->count : 0));
		}
	}
	stages_put(st);
}

static void text_job(FILE *f, const struct bench_run_result *r,
		     const struct rep *rep, const struct rep_ent *e)
{
	const struct bench_job_result *j = e->j;
	double thread_s = (double)e->thread_ns / 1e9;
	double dist[NR_DEPTHS];
	struct lat_dist ld;
	unsigned int i;
	int d;

	fprintf(f, "%s: (groupid=%u, jobs=%u): err=%2d: dev=%s", j->name,
		j->groupid, job_threads(j), job_errno(j), r->dev);
	if (r->clocksource[0])
		fprintf(f, ", clocksource=%.*s", (int)sizeof(r->clocksource),
			r->clocksource);
	fputc('\n', f);
	if (j->opts && j->opts->description[0])
		fprintf(f, "  Description  : [%s]\n", j->opts->description);
	if (j->error)
		fprintf(f, "  error: %s\n",
			j->errmsg[0] ? j->errmsg : strerror(job_errno(j)));
	if (job_unified(j) != BENCH_UNIFIED_MIXED)
		for (d = 0; d < DDIR_NR; d++)
			if (j->dir[d].ios)
				text_dir(f, rep, j, d, ddir_lower[d]);
	if (job_unified(j) != BENCH_UNIFIED_NONE) {
		struct bench_job_result *m = malloc(sizeof(*m));

		if (m) {
			job_mixed(m, j);
			if (m->dir[0].ios)
				text_dir(f, rep, m, 0, "mixed");
			free(m);
		} else {
			fputs("  mixed: out of memory for the report\n", f);
		}
	}
	job_lat_dist(j, &ld);
	text_lat_dist(f, "nsec", ld.ns, NR_LAT_NS);
	text_lat_dist(f, "usec", ld.us, NR_LAT_US);
	text_lat_dist(f, "msec", ld.ms, NR_LAT_MS);
	/* fio's show_thread_status_normal(): the sync latencies */
	if (j->sync_lat.count) {
		fputs("  fsync/fdatasync/sync_file_range:\n", f);
		text_lat(f, "    sync", &j->sync_lat);
		text_percentiles(f, &j->sync_lat, "sync", j);
	}
	if (j->opts && j->opts->continue_on_error)
		fprintf(f, "     errors    : total=%llu, first_error=%d/<%s>\n",
			(unsigned long long)j->total_err, j->first_error,
			strerror(j->first_error));
	fprintf(f, "  cpu          : usr=%.2f%%, sys=%.2f%%, ctx=%llu, majf=%llu, minf=%llu\n",
		safe_div(j->usr_cpu_s * 100.0, thread_s),
		safe_div(j->sys_cpu_s * 100.0, thread_s),
		(ull)j->ctx_switches, (ull)j->majf, (ull)j->minf);
	depth_dist(depth_counts(j), dist);
	fputs("  IO depths    :", f);
	for (i = 0; i < NR_DEPTHS; i++)
		fprintf(f, " %s=%.1f%%%s", depth_keys[i], dist[i],
			i == NR_DEPTHS - 1 ? "\n" : ",");
	depth_dist(j->submit_map, dist);
	fputs("     submit    :", f);
	for (i = 0; i < NR_DEPTHS; i++)
		fprintf(f, " %s=%.1f%%%s", batch_keys[i], dist[i],
			i == NR_DEPTHS - 1 ? "\n" : ",");
	depth_dist(j->complete_map, dist);
	fputs("     complete  :", f);
	for (i = 0; i < NR_DEPTHS; i++)
		fprintf(f, " %s=%.1f%%%s", batch_keys[i], dist[i],
			i == NR_DEPTHS - 1 ? "\n" : ",");
	fprintf(f, "     issued rwts: total=%llu,%llu,%llu,%llu short=0,0,0,0 dropped=0,0,0,0\n",
		(ull)(j->dir[DDIR_READ].ios + j->dir[DDIR_READ].errors),
		(ull)(j->dir[DDIR_WRITE].ios + j->dir[DDIR_WRITE].errors),
		(ull)(j->dir[DDIR_TRIM].ios + j->dir[DDIR_TRIM].errors),
		(ull)j->sync_ios);
	fprintf(f, "     latency   : target=%llu, window=%llu, percentile=%.2f%%, depth=%u\n",
		(ull)job_lat_target(j), (ull)job_lat_window(j),
		job_lat_pct(j), job_lat_depth(j));
	if (j->ss.on && j->opts) {
		/* fio's show_ss_normal() */
		char bw[32], bwd[32], iops[32];
		double bwm = (double)ss_mean(&j->ss, j->ss.bw);

		fprintf(f, "  steadystate  : attained=%s, bw=%s (%s), iops=%s, %s%s=%.3f%s\n",
			j->ss.attained ? "yes" : "no",
			fmt_num(bw, sizeof(bw), bwm, true, "B/s"),
			fmt_num(bwd, sizeof(bwd), bwm, false, "B/s"),
			fmt_num(iops, sizeof(iops), (double)ss_mean(&j->ss, j->ss.iops), false, ""),
			j->opts->ss_bw ? "bw" : "iops",
			j->opts->ss_slope ? " slope" : " mean dev",
			j->ss.criterion, j->opts->ss_pct ? "%" : "");
	}
	if (j->verify)
		fprintf(f, "  verify       : %s, %llu blocks verified, %llu mismatches\n",
			bench_verify_name(j->verify_method),
			(ull)j->verify_blocks, (ull)j->verify_mismatches);
	if (j->verify_trims)
		fprintf(f, "  verify trim  : %llu blocks trimmed, %llu of them read back and checked for zeros\n",
			(ull)j->verify_trims,
			(ull)(j->verify_trim_zero));
	text_stages(f, r, e);
	fputc('\n', f);
}

static void text_group_line(FILE *f, const char *name,
			    const struct group_dir *g,
			    const struct bench_job_opts *o)
{
	char a[32], b[32], c[32], e[32], g1[32], g2[32], i1[32], i2[32];
	unsigned int sig = job_sig(o);
	double agg = group_agg_bw(g);

	fprintf(f, "%7s: bw=%s (%s), %s-%s (%s-%s), io=%s (%s), run=%llu-%llumsec\n",
		name,
		fmt_rate(a, sizeof(a), agg, true, o),
		fmt_rate(b, sizeof(b), agg, false, o),
		fmt_rate(c, sizeof(c), g->min_bw, true, o),
		fmt_rate(e, sizeof(e), g->max_bw, true, o),
		fmt_rate(g1, sizeof(g1), g->min_bw, false, o),
		fmt_rate(g2, sizeof(g2), g->max_bw, false, o),
		fmt_num_sig(i1, sizeof(i1), (double)g->bytes, true, "B", sig),
		fmt_num_sig(i2, sizeof(i2), (double)g->bytes, false, "B", sig),
		(ull)run_ms(g->min_run_ns), (ull)run_ms(g->max_run_ns));
}

/*
 * The group's report options are its first entry's, as fio takes them
 * from the group's job (significant_figures, unit_base); the directions
 * are summed when any entry asks (fio ORs unified_rw_reporting).
 */
static void text_group(FILE *f, const struct rep *rep, unsigned int groupid)
{
	const struct bench_job_opts *o = NULL;
	unsigned int i, unified = BENCH_UNIFIED_NONE;
	struct group_dir g;
	bool mixed_any = false;
	int d;

	for (i = 0; i < rep->nr; i++) {
		const struct bench_job_result *j = rep->ents[i].j;

		if (j->groupid != groupid)
			continue;
		if (!o)
			o = j->opts;
		unified |= job_unified(j);
	}
	fprintf(f, "Run status group %u (all jobs):\n", groupid);
	if (unified != BENCH_UNIFIED_MIXED)
		for (d = 0; d < DDIR_NR; d++) {
			group_dir_stats(rep, groupid, d, &g);
			if (g.any)
				text_group_line(f, ddir_upper[d], &g, o);
		}
	if (unified != BENCH_UNIFIED_NONE) {
		group_mixed_stats(rep, groupid, &g);
		/*
		 * both: fio's show_mixed_group_stats() gives the range of
		 * the directions' entry bandwidths (the lowest direction's
		 * lowest to the highest's highest), not of the sums
		 */
		for (d = 0; unified == BENCH_UNIFIED_BOTH && d < DDIR_NR; d++) {
			struct group_dir gd;

			group_dir_stats(rep, groupid, d, &gd);
			if (!gd.any)
				continue;
			if (!mixed_any || gd.min_bw < g.min_bw)
				g.min_bw = gd.min_bw;
			if (!mixed_any || gd.max_bw > g.max_bw)
				g.max_bw = gd.max_bw;
			mixed_any = true;
		}
		if (g.any)
			text_group_line(f, "MIXED", &g, o);
	}
}

static uint64_t disk_in_queue(const struct blk_disk_stats *st)
{
	uint64_t q = 0;
	int i;

	/*
	 * /proc/diskstats' weighted time in queue is the sum of the
	 * requests' times in flight, which is what ticks_ms adds up.
	 */
	for (i = 0; i < BLK_STAT_NR_DIRS; i++)
		q += st->ticks_ms[i];
	return q;
}

/*
 * disk_util=: the device's disk stats are reported unless every job of
 * the run set disk_util=0 (fio reports the disks of the jobs that keep
 * it; blkstack's jobs of a run share one device).
 */
static bool run_disk_util(const struct bench_run_result *r)
{
	unsigned int i;

	for (i = 0; i < r->nr_jobs; i++)
		if (!r->jobs[i].opts || !r->jobs[i].opts->disk_util_off)
			return true;
	return !r->nr_jobs;
}

static double disk_util(const struct bench_run_result *r)
{
	double u = safe_div((double)r->disk.io_ticks_ms * 100.0,
			    (double)r->wall_ns / 1e6);

	return u > 100.0 ? 100.0 : u;
}

void bench_report_text(FILE *f, const struct bench_opts *o,
		       const struct bench_run_result *r)
{
	const struct blk_disk_stats *st = &r->disk;
	struct rep rep;
	unsigned int i, k;

	if (rep_build(&rep, r)) {
		fprintf(f, "%s: out of memory for the report\n", r->dev);
		return;
	}
	for (i = 0; i < rep.nr; i++)
		text_job(f, r, &rep, &rep.ents[i]);
	/* one run status block per stonewall group, in order of appearance */
	for (i = 0; i < rep.nr; i++) {
		unsigned int gid = rep.ents[i].j->groupid;

		for (k = 0; k < i; k++)
			if (rep.ents[k].j->groupid == gid)
				break;
		if (k == i)
			text_group(f, &rep, gid);
	}
	if (!run_disk_util(r))
		goto out;
	fprintf(f, "\nDisk stats (read/write):\n");
	fprintf(f, "  %s: ios=%llu/%llu, merge=%llu/%llu, ticks=%llu/%llu, in_queue=%llu, util=%.2f%%",
		r->dev, (ull)st->ios[BLK_STAT_READ], (ull)st->ios[BLK_STAT_WRITE],
		(ull)st->merges[BLK_STAT_READ], (ull)st->merges[BLK_STAT_WRITE],
		(ull)st->ticks_ms[BLK_STAT_READ], (ull)st->ticks_ms[BLK_STAT_WRITE],
		(ull)disk_in_queue(st), disk_util(r));
	/* discards only when the run did any, as /proc/diskstats' fields 12-15 */
	if (st->ios[BLK_STAT_DISCARD])
		fprintf(f, ", trim_ios=%llu, trim_merge=%llu, trim_ticks=%llu",
			(ull)st->ios[BLK_STAT_DISCARD],
			(ull)st->merges[BLK_STAT_DISCARD],
			(ull)st->ticks_ms[BLK_STAT_DISCARD]);
	fputc('\n', f);
	fprintf(f, "  %s: requeues=%llu, timeouts=%llu, queue_runs=%llu, errors=%llu, core lat avg=%.2fus\n",
		r->dev, (ull)st->requeues, (ull)st->timeouts,
		(ull)st->queue_runs, (ull)st->errors,
		r->core_lat_mean_ns / 1000.0);
out:
	if (r->has_insn)
		fprintf(f, "  %s: instructions per I/O: %.1f (user space, the whole process during the run, perf_event_open)\n",
			r->dev, run_insn_per_io(r));
	rep_free(&rep);
}

/* ---- terse ---- */

/* min, max, mean, stddev in us, as fio's show_ddir_status_terse() */
static void terse_lat(FILE *f, const struct blk_hist *h, bool valid)
{
	if (valid && h->count)
		fprintf(f, ";%llu;%llu;%f;%f", (ull)(hist_min(h) / 1000),
			(ull)(h->max / 1000), blk_hist_mean(h) / 1000.0,
			blk_hist_stddev(h) / 1000.0);
	else
		fprintf(f, ";%llu;%llu;%f;%f", 0ull, 0ull, 0.0, 0.0);
}

/*
 * One direction of a terse line (fio's show_ddir_status_terse()): KiB,
 * KiB/s, IOPS, runtime ms; slat, clat; 20 percentile fields of lat (with
 * lat_percentiles) or clat ("P%=us", "0%=0" past the list); lat; bw
 * min, max, agg %, mean, dev of the samples (KiB/s; version 5: their
 * count, and iops min, max, mean, dev, samples).
 */
static void terse_dir(FILE *f, const struct rep *rep,
		      const struct bench_job_result *j, int d, bool mixed,
		      unsigned int ver)
{
	const struct bench_dir_stats *s = &j->dir[d];
	uint64_t runt = s->ios ? run_ms(dir_runtime(j, d)) : 0;
	uint64_t bw = 0, iops = 0;
	const struct blk_hist *ph = NULL;
	unsigned int i, nr = 0, prec;
	const double *pcts = job_pcts(j, &nr, &prec);
	struct group_dir g;
	uint64_t mn, mx;
	double mean, dev, agg;

	if (runt) {
		bw = 1000 * s->bytes / runt / 1024;
		iops = 1000 * s->ios / runt;
	}
	fprintf(f, ";%llu;%llu;%llu;%llu", (ull)(s->bytes >> 10), (ull)bw,
		(ull)iops, (ull)runt);
	terse_lat(f, &s->slat, j->lat_valid);
	terse_lat(f, &s->clat, j->lat_valid);
	if (job_pct_on(j, PCT_LAT))
		ph = &s->lat;
	else if (job_pct_on(j, PCT_CLAT))
		ph = &s->clat;
	for (i = 0; i < BENCH_PCT_MAX; i++) {
		/* fio lists the percentiles, of 0 without samples */
		if (!ph || i >= nr)
			fputs(";0%=0", f);
		else
			fprintf(f, ";%f%%=%llu", pcts[i],
				(ull)(j->lat_valid && ph->count ?
				      blk_hist_percentile(ph, pcts[i]) / 1000 : 0));
	}
	terse_lat(f, &s->lat, j->lat_valid);
	if (mixed)
		group_mixed_stats(rep, j->groupid, &g);
	else
		group_dir_stats(rep, j->groupid, d, &g);
	agg = group_agg_bw(&g);
	if (sample_calc(&j->bw_samples[d], &mn, &mx, &mean, &dev))
		fprintf(f, ";%llu;%llu;%f%%;%f;%f", (ull)mn, (ull)mx,
			agg_pct(agg, mean), mean, dev);
	else
		fprintf(f, ";%llu;%llu;%f%%;%f;%f", 0ull, 0ull, 0.0, 0.0, 0.0);
	if (ver == 5) {
		fprintf(f, ";%llu", (ull)j->bw_samples[d].n);
		sample_calc(&j->iops_samples[d], &mn, &mx, &mean, &dev);
		fprintf(f, ";%llu;%llu;%f;%f;%llu", (ull)mn, (ull)mx, mean, dev,
			(ull)j->iops_samples[d].n);
	}
}

void bench_report_terse(FILE *f, const struct bench_opts *o,
			const struct bench_run_result *r)
{
	const struct blk_disk_stats *st = &r->disk;
	unsigned int ver = o && o->terse_version ? o->terse_version : 3;
	struct rep rep;
	unsigned int i, k;

	if (rep_build(&rep, r)) {
		fprintf(f, "%s: out of memory for the report\n", r->dev);
		return;
	}
	for (i = 0; i < rep.nr; i++) {
		const struct bench_job_result *j = rep.ents[i].j;
		double thread_s = (double)rep.ents[i].thread_ns / 1e9;
		unsigned int unified = job_unified(j);
		double dist[NR_DEPTHS];
		struct lat_dist ld;

		fprintf(f, "%u;blkstack-%s;%s;%u;%d", ver, BLKSTACK_VERSION,
			j->name, j->groupid, job_errno(j));
		if (unified == BENCH_UNIFIED_NONE || unified == BENCH_UNIFIED_BOTH) {
			terse_dir(f, &rep, j, DDIR_READ, false, ver);
			terse_dir(f, &rep, j, DDIR_WRITE, false, ver);
			if (ver >= 4)
				terse_dir(f, &rep, j, DDIR_TRIM, false, ver);
		}
		if (unified != BENCH_UNIFIED_NONE) {
			struct bench_job_result *m = malloc(sizeof(*m));

			if (!m) {
				fprintf(f, "\n%s: out of memory for the report\n",
					r->dev);
				break;
			}
			job_mixed(m, j);
			terse_dir(f, &rep, m, 0, true, ver);
			free(m);
		}
		fprintf(f, ";%f%%;%f%%;%llu;%llu;%llu",
			safe_div(j->usr_cpu_s * 100.0, thread_s),
			safe_div(j->sys_cpu_s * 100.0, thread_s),
			(ull)j->ctx_switches, (ull)j->majf, (ull)j->minf);
		depth_dist(depth_counts(j), dist);
		for (k = 0; k < NR_DEPTHS; k++)
			fprintf(f, ";%3.1f%%", dist[k]);
		/* fio keeps terse's fields: the nsec buckets go in the first usec one */
		job_lat_dist(j, &ld);
		for (k = 0; k < NR_LAT_US; k++)
			fprintf(f, ";%3.2f%%", ld.us[k] + (k ? 0.0 : ld.ns_all));
		for (k = 0; k < NR_LAT_MS; k++)
			fprintf(f, ";%3.2f%%", ld.ms[k]);
		if (run_disk_util(r))
			fprintf(f, ";%s;%llu;%llu;%llu;%llu;%llu;%llu;%llu;%3.2f%%",
				r->dev, (ull)st->ios[BLK_STAT_READ],
				(ull)st->ios[BLK_STAT_WRITE],
				(ull)st->merges[BLK_STAT_READ],
				(ull)st->merges[BLK_STAT_WRITE],
				(ull)st->ticks_ms[BLK_STAT_READ],
				(ull)st->ticks_ms[BLK_STAT_WRITE],
				(ull)disk_in_queue(st), disk_util(r));
		if (j->opts && j->opts->continue_on_error)
			fprintf(f, ";%llu;%d", (ull)j->total_err, j->first_error);
		if (j->opts && j->opts->description[0])
			fprintf(f, ";%s", j->opts->description);
		fputc('\n', f);
	}
	rep_free(&rep);
}

/* ---- JSON ---- */

/*
 * Builders record an allocation failure in @oom and carry on: jansson's
 * *_set_new() and *_append_new() take NULL values and free on error, so the
 * document is checked once at the end.
 */
struct jctx {
	bool oom;
	bool plus;	/* json+: clat bins */
};

static void jset(struct jctx *c, json_t *obj, const char *key, json_t *v)
{
	if (json_object_set_new(obj, key, v))
		c->oom = true;
}

static void jint(struct jctx *c, json_t *obj, const char *key, uint64_t v)
{
	jset(c, obj, key, json_integer((json_int_t)v));
}

static void jreal(struct jctx *c, json_t *obj, const char *key, double v)
{
	/* jansson refuses NaN and infinities */
	jset(c, obj, key, json_real(isfinite(v) ? v : 0.0));
}

static void jstr(struct jctx *c, json_t *obj, const char *key, const char *s)
{
	jset(c, obj, key, json_string(s));
}

static void jstrf(struct jctx *c, json_t *obj, const char *key, ull v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu", v);
	jstr(c, obj, key, buf);
}

static void jappend(struct jctx *c, json_t *arr, json_t *v)
{
	if (json_array_append_new(arr, v))
		c->oom = true;
}

/*
 * fio's "steadystate" object (stat.c of fio 3.33): the criterion as fio
 * prints it, and the window's samples oldest first, as many as ss_dur has
 * seconds (0 where none was taken yet).
 */
static json_t *json_ss(struct jctx *c, const struct bench_job_result *j)
{
	const struct bench_ss_result *ss = &j->ss;
	const struct bench_job_opts *jo = j->opts;
	json_t *o = json_object(), *data = json_object();
	json_t *iops = json_array(), *bw = json_array();
	char buf[64];
	unsigned int i;

	snprintf(buf, sizeof(buf), "%s%s:%f%s", jo->ss_bw ? "bw" : "iops",
		 jo->ss_slope ? "_slope" : "", (float)jo->ss_limit,
		 jo->ss_pct ? "%" : "");
	jstr(c, o, "ss", buf);
	jint(c, o, "duration", ss->dur_s);
	jint(c, o, "attained", ss->attained);
	snprintf(buf, sizeof(buf), "%f%s", (float)ss->criterion,
		 jo->ss_pct ? "%" : "");
	jstr(c, o, "criterion", buf);
	jreal(c, o, "max_deviation", ss->deviation);
	jreal(c, o, "slope", ss->slope);
	for (i = 0; i < ss->dur_s; i++) {
		bool have = ss->iops && i < ss->nr;

		jappend(c, iops, json_integer(have ? (json_int_t)ss->iops[i] : 0));
		jappend(c, bw, json_integer(have ? (json_int_t)ss->bw[i] : 0));
	}
	jint(c, data, "bw_mean", ss_mean(ss, ss->bw));
	jint(c, data, "iops_mean", ss_mean(ss, ss->iops));
	jset(c, data, "iops", iops);
	jset(c, data, "bw", bw);
	jset(c, o, "data", data);
	return o;
}

/*
 * {"min","max","mean","stddev","N"} in ns, and with @pct "percentile" at
 * @j's percentile_list= (fio's keys: "%f" of each)
 */
static json_t *json_lat(struct jctx *c, const struct blk_hist *h, bool valid,
			bool pct, const struct bench_job_result *j)
{
	json_t *o = json_object(), *p;
	bool have = valid && h && h->count;
	unsigned int i, nr, prec;
	const double *pcts = job_pcts(j, &nr, &prec);
	char key[32];

	jint(c, o, "min", have ? hist_min(h) : 0);
	jint(c, o, "max", have ? h->max : 0);
	jreal(c, o, "mean", have ? blk_hist_mean(h) : 0.0);
	jreal(c, o, "stddev", have ? blk_hist_stddev(h) : 0.0);
	jint(c, o, "N", have ? h->count : 0);
	/* fio leaves "percentile" out when there are no samples */
	if (pct && have) {
		p = json_object();
		for (i = 0; i < nr; i++) {
			snprintf(key, sizeof(key), "%f", pcts[i]);
			jint(c, p, key, blk_hist_percentile(h, pcts[i]));
		}
		jset(c, o, "percentile", p);
	}
	return o;
}

/*
 * json+: fio's clat bins of entry @e in direction @d, {"midpoint ns":
 * count} for the bins that are not empty; the threads of a
 * group_reporting entry summed; @d -1: every direction summed (fio's
 * unified_rw_reporting mixed object).  NULL when no thread kept them.
 */
static json_t *json_bins(struct jctx *c, const struct bench_run_result *r,
			 const struct rep_ent *e, int d)
{
	uint64_t *sum;
	json_t *o;
	unsigned int i, k;
	bool any = false;
	char key[32];

	sum = calloc(BENCH_PLAT_NR, sizeof(*sum));
	if (!sum) {
		c->oom = true;
		return NULL;
	}
	for (i = 0; i < r->nr_jobs * DDIR_NR; i++) {
		const struct bench_job_result *t = &r->jobs[i / DDIR_NR];
		int dd = (int)(i % DDIR_NR);
		const uint64_t *p;

		if (d >= 0 ? dd != d : !t->dir[dd].ios)
			continue;
		p = bench_log_plat(t->log, (unsigned int)dd);
		if (!p || (e->sum ? t->groupid != e->sum->groupid : t != e->j))
			continue;
		any = true;
		for (k = 0; k < BENCH_PLAT_NR; k++)
			sum[k] += p[k];
	}
	if (!any) {
		free(sum);
		return NULL;
	}
	o = json_object();
	for (k = 0; k < BENCH_PLAT_NR; k++) {
		if (!sum[k])
			continue;
		snprintf(key, sizeof(key), "%" PRIu64, bench_plat_value(k));
		jint(c, o, key, sum[k]);
	}
	free(sum);
	return o;
}

/*
 * Direction @d of @j: @j is the entry @e's own, or with
 * unified_rw_reporting= its directions summed (job_mixed(), d 0), whose
 * json+ bins are those of every direction summed, as fio's
 */
static json_t *json_dir(struct jctx *c, const struct bench_run_result *r,
			const struct rep *rep, const struct rep_ent *e,
			const struct bench_job_result *j, int d)
{
	const struct bench_dir_stats *s = &j->dir[d];
	json_t *o = json_object();
	double bw = dir_bw(j, d), iops = dir_iops(j, d);
	uint64_t bw_kib = (uint64_t)(bw / 1024.0);
	struct group_dir g;
	bool active = s->ios != 0;

	if (j != e->j)
		group_mixed_stats(rep, j->groupid, &g);
	else
		group_dir_stats(rep, j->groupid, d, &g);
	jint(c, o, "io_bytes", s->bytes);
	jint(c, o, "io_kbytes", s->bytes / 1024);
	jint(c, o, "bw_bytes", (uint64_t)bw);
	jint(c, o, "bw", bw_kib);
	jreal(c, o, "iops", iops);
	jint(c, o, "runtime", active ? run_ms(dir_runtime(j, d)) : 0);
	/* fio's total_ios: the I/Os issued, those that failed too */
	jint(c, o, "total_ios", s->ios + s->errors);
	jint(c, o, "short_ios", 0);
	jint(c, o, "drop_ios", 0);
	jset(c, o, "slat_ns", json_lat(c, &s->slat, j->lat_valid,
				       job_pct_on(j, PCT_SLAT), j));
	{
		json_t *clat = json_lat(c, &s->clat, j->lat_valid,
					job_pct_on(j, PCT_CLAT), j);

		/* json+: fio leaves "bins" out of a direction without I/O */
		if (c->plus && j->lat_valid && s->clat.count &&
		    job_pct_on(j, PCT_CLAT)) {
			json_t *bins = json_bins(c, r, e, j == e->j ? d : -1);

			if (bins)
				jset(c, clat, "bins", bins);
		}
		jset(c, o, "clat_ns", clat);
	}
	jset(c, o, "lat_ns", json_lat(c, &s->lat, j->lat_valid,
				      job_pct_on(j, PCT_LAT), j));
	/*
	 * fio 3.33 (stat.c add_ddir_status_json()): "prios", per priority
	 * with I/Os, its class, level and clat_ns, when two or more had I/Os
	 */
	if (j->lat_valid && prio_shown(j->prio, d)) {
		json_t *arr = json_array();
		unsigned int i;

		for (i = 0; i < j->prio->nr[d]; i++) {
			const struct blk_hist *h = &j->prio->clat[d][i];
			json_t *po;

			if (!h->count)
				continue;
			po = json_object();
			jint(c, po, "prioclass", IOPRIO_PRIO_CLASS(j->prio->val[d][i]));
			jint(c, po, "prio", IOPRIO_PRIO_LEVEL(j->prio->val[d][i]));
			jset(c, po, "clat_ns", json_lat(c, h, true, true, j));
			if (json_array_append_new(arr, po))
				c->oom = true;
		}
		jset(c, o, "prios", arr);
	}
	/*
	 * fio's bw_* (KiB/s) and iops_* from the samples of each
	 * bwavgtime/iopsavgtime window (job_sample()); all 0 without any (a
	 * run shorter than one window).  bw_agg is, as in fio, the mean's
	 * share of its group's aggregate bandwidth, in percent.
	 */
	{
		uint64_t mn, mx;
		double mean, dev;
		bool any = sample_calc(&j->bw_samples[d], &mn, &mx, &mean, &dev);

		jint(c, o, "bw_min", mn);
		jint(c, o, "bw_max", mx);
		jreal(c, o, "bw_agg", any ? agg_pct(group_agg_bw(&g), mean) : 0.0);
		jreal(c, o, "bw_mean", mean);
		jreal(c, o, "bw_dev", dev);
		jint(c, o, "bw_samples", j->bw_samples[d].n);
		sample_calc(&j->iops_samples[d], &mn, &mx, &mean, &dev);
		jint(c, o, "iops_min", mn);
		jint(c, o, "iops_max", mx);
		jreal(c, o, "iops_mean", mean);
		jreal(c, o, "iops_stddev", dev);
		jint(c, o, "iops_samples", j->iops_samples[d].n);
	}
	return o;
}

static json_t *json_job_opts(struct jctx *c, const struct bench_job_result *j)
{
	const struct bench_job_opts *jo = j->opts;
	json_t *o = json_object();
	char buf[32];

	/* like fio, every value is a string */
	jstr(c, o, "name", j->name);
	if (!jo)
		return o;
	jstr(c, o, "rw", bench_rw_name(jo->rw));
	jstr(c, o, "bs", fmt_size(buf, sizeof(buf), jo->bs));
	jstrf(c, o, "iodepth", jo->iodepth);
	if (jo->iodepth_batch)
		jstrf(c, o, "iodepth_batch", jo->iodepth_batch);
	jstrf(c, o, "numjobs", jo->numjobs);
	if (jo->size)
		jstr(c, o, "size", fmt_size(buf, sizeof(buf), jo->size));
	if (jo->offset)
		jstr(c, o, "offset", fmt_size(buf, sizeof(buf), jo->offset));
	if (jo->offset_increment)
		jstr(c, o, "offset_increment",
		     fmt_size(buf, sizeof(buf), jo->offset_increment));
	if (jo->io_size)
		jstr(c, o, "io_size", fmt_size(buf, sizeof(buf), jo->io_size));
	if (jo->runtime_ns)
		jstr(c, o, "runtime", fmt_time(buf, sizeof(buf), jo->runtime_ns));
	if (jo->ramp_time_ns)
		jstr(c, o, "ramp_time", fmt_time(buf, sizeof(buf), jo->ramp_time_ns));
	if (jo->ss_dur_ns) {
		jstr(c, o, "steadystate", jo->ss_spec);
		jstr(c, o, "steadystate_duration",
		     fmt_time(buf, sizeof(buf), jo->ss_dur_ns));
		if (jo->ss_ramp_ns)
			jstr(c, o, "steadystate_ramp_time",
			     fmt_time(buf, sizeof(buf), jo->ss_ramp_ns));
	}
	if (jo->time_based)
		jstr(c, o, "time_based", "1");
	if (jo->rw == RW_RW || jo->rw == RW_RANDRW)
		jstrf(c, o, "rwmixread", jo->rwmixread);
	if (jo->norandommap)
		jstr(c, o, "norandommap", "1");
	if (!jo->randrepeat)
		jstr(c, o, "randrepeat", "0");
	if (jo->allrandrepeat)
		jstr(c, o, "allrandrepeat", "1");
	if (jo->loops > 1)
		jstrf(c, o, "loops", jo->loops);
	if (jo->gtod_reduce)
		jstr(c, o, "gtod_reduce", "1");
	if (jo->disable_lat)
		jstr(c, o, "disable_lat", "1");
	if (jo->disable_clat)
		jstr(c, o, "disable_clat", "1");
	if (jo->disable_slat)
		jstr(c, o, "disable_slat", "1");
	if (jo->disable_bw)
		jstr(c, o, "disable_bw_measurement", "1");
	if (jo->clat_pct_off)
		jstr(c, o, "clat_percentiles", "0");
	if (jo->lat_percentiles)
		jstr(c, o, "lat_percentiles", "1");
	if (jo->slat_percentiles)
		jstr(c, o, "slat_percentiles", "1");
	if (jo->percentile_list[0] &&
	    strcmp(jo->percentile_list, DEFAULT_PCT_LIST))
		jstr(c, o, "percentile_list", jo->percentile_list);
	if (jo->sig_figs && jo->sig_figs != 4)
		jstrf(c, o, "significant_figures", jo->sig_figs);
	if (jo->unified_rw)
		jstr(c, o, "unified_rw_reporting",
		     jo->unified_rw == BENCH_UNIFIED_MIXED ? "mixed" : "both");
	if (jo->unit_base)
		jstrf(c, o, "unit_base", jo->unit_base);
	if (jo->stats_off)
		jstr(c, o, "stats", "0");
	if (jo->disk_util_off)
		jstr(c, o, "disk_util", "0");
	if (jo->group_reporting)
		jstr(c, o, "group_reporting", "1");
	if (jo->clocksource == CLK_GETTIME)
		jstr(c, o, "clocksource", "clock_gettime");
	else if (jo->clocksource == CLK_CPU)
		jstr(c, o, "clocksource", "cpu");
	if (jo->stonewall)
		jstr(c, o, "stonewall", "1");
	if (jo->verify != VERIFY_NONE) {
		jstr(c, o, "verify", bench_verify_name(jo->verify));
		if (jo->verify_pattern[0])
			jstr(c, o, "verify_pattern", jo->verify_pattern);
		if (jo->verify_interval && jo->verify_interval != jo->bs)
			jstrf(c, o, "verify_interval", jo->verify_interval);
		if (jo->verify_offset)
			jstrf(c, o, "verify_offset", jo->verify_offset);
		if (jo->verify_backlog)
			jstrf(c, o, "verify_backlog", jo->verify_backlog);
		if (jo->verify_backlog_batch)
			jstrf(c, o, "verify_backlog_batch", jo->verify_backlog_batch);
		if (jo->verify_fatal)
			jstr(c, o, "verify_fatal", "1");
		if (jo->verify_dump)
			jstr(c, o, "verify_dump", jo->verify_dump == 2 ? "1" : "0");
		if (!jo->do_verify)
			jstr(c, o, "do_verify", "0");
		if (jo->verify_only)
			jstr(c, o, "verify_only", "1");
		if (strcmp(jo->verify_dump_dir, ".") && jo->verify_dump_dir[0])
			jstr(c, o, "verify_dump_dir", jo->verify_dump_dir);
	}
	return o;
}

static json_t *json_lat_map(struct jctx *c, const double *pct, unsigned int nr)
{
	json_t *o = json_object();
	unsigned int i;

	for (i = 0; i < nr; i++)
		jreal(c, o, lat_keys[i], pct[i]);
	return o;
}

static json_t *json_blkstack(struct jctx *c, const struct bench_run_result *r,
			     const struct bench_job_result *j)
{
	const struct blk_disk_stats *st = &r->disk;
	double wall_s = (double)r->wall_ns / 1e9;
	json_t *o = json_object(), *m = json_object();

	jstr(c, o, "dev", r->dev);
	jstr(c, o, "workload", r->workload);
	jstr(c, o, "clocksource", r->clocksource);
	jint(c, o, "threads", job_threads(j));
	/* zonemode=zbd: fio's nr_zone_resets, which only its text prints */
	if (j->opts && j->opts->zonemode == BENCH_ZONE_ZBD)
		jint(c, o, "zone_resets", j->zone_resets);
	jint(c, m, "read", st->merges[BLK_STAT_READ]);
	jint(c, m, "write", st->merges[BLK_STAT_WRITE]);
	jint(c, m, "trim", st->merges[BLK_STAT_DISCARD]);
	jset(c, o, "merges", m);
	m = json_object();
	jint(c, m, "read", st->ios[BLK_STAT_READ]);
	jint(c, m, "write", st->ios[BLK_STAT_WRITE]);
	jint(c, m, "trim", st->ios[BLK_STAT_DISCARD]);
	jint(c, m, "flush", st->ios[BLK_STAT_FLUSH]);
	jset(c, o, "requests", m);
	jreal(c, o, "reqs_per_s", bench_run_reqs(r));
	jint(c, o, "requeues", st->requeues);
	jint(c, o, "timeouts", st->timeouts);
	jint(c, o, "queue_runs", st->queue_runs);
	jint(c, o, "errors", st->errors);
	jreal(c, o, "core_lat_mean_ns", r->core_lat_mean_ns);
	/* whole process over the run, percent of wall time (100 = one core) */
	jreal(c, o, "proc_usr_cpu", safe_div(r->proc_usr_s * 100.0, wall_s));
	jreal(c, o, "proc_sys_cpu", safe_div(r->proc_sys_s * 100.0, wall_s));
	jint(c, o, "wall_ns", r->wall_ns);
	jreal(c, o, "cpu_pct", bench_run_cpu_pct(r));
	if (r->has_insn)
		jreal(c, o, "instructions_per_io", run_insn_per_io(r));
	if (r->has_uring) {
		json_t *u = json_object();

		jstr(c, u, "engine", r->uring.pool ? "pool" : "io_uring");
		jint(c, u, "ring_requests", r->uring.ring_rqs);
		jint(c, u, "inline_requests", r->uring.inline_rqs);
		jint(c, u, "pool_requests", r->uring.pool_rqs);
		jint(c, u, "inline_given_up", r->uring.inline_given_up);
		jint(c, u, "cancels", r->uring.cancels);
		jint(c, u, "cancels_hit", r->uring.cancels_hit);
		jint(c, u, "cancels_running", r->uring.cancels_running);
		jint(c, u, "cancels_missed", r->uring.cancels_missed);
		jint(c, u, "cancelled", r->uring.cancelled);
		jint(c, u, "file_nowait", r->uring.nowait);
		jint(c, u, "setup_flags", r->uring.setup_flags);
		jset(c, o, "uring", u);
	}
	if (r->others_cpus >= 0)
		jreal(c, o, "others_cpu", r->others_cpus);
	if (r->has_scsi) {
		static const char *const keys[16] = {
			"NO SENSE", "RECOVERED ERROR", "NOT READY", "MEDIUM ERROR",
			"HARDWARE ERROR", "ILLEGAL REQUEST", "UNIT ATTENTION",
			"DATA PROTECT", "BLANK CHECK", "VENDOR SPECIFIC",
			"COPY ABORTED", "ABORTED COMMAND", "RESERVED C",
			"VOLUME OVERFLOW", "MISCOMPARE", "COMPLETED",
		};
		const struct blk_scsi_stats *ss = &r->scsi;
		json_t *v = json_object(), *cm = json_object(), *sk = json_object();
		unsigned int k;

		jint(c, cm, "read", ss->reads);
		jint(c, cm, "write", ss->writes);
		jint(c, cm, "synchronize_cache", ss->flushes);
		jint(c, cm, "unmap", ss->unmaps);
		jint(c, cm, "write_same", ss->write_sames);
		jset(c, v, "commands", cm);
		jint(c, v, "check_conditions", ss->check_conditions);
		for (k = 0; k < 16; k++)
			if (ss->sense_keys[k])
				jint(c, sk, keys[k], ss->sense_keys[k]);
		jset(c, v, "sense_keys", sk);
		jint(c, v, "retries", ss->retries);
		jint(c, v, "busy", ss->busy);
		jint(c, v, "injected", ss->injected);
		jint(c, v, "unit_attentions", ss->unit_attentions);
		{
			const struct blk_scsi_info *si = &r->scsi_info;
			json_t *in = json_object();

			json_object_set_new(in, "vendor", json_string(si->vendor));
			json_object_set_new(in, "product", json_string(si->product));
			json_object_set_new(in, "revision", json_string(si->revision));
			json_object_set_new(in, "serial", json_string(si->serial));
			json_object_set_new(in, "naa", json_string(si->naa));
			jint(c, in, "rotation_rate", si->rotation_rate);
			jint(c, in, "luns", si->nr_luns);
			json_object_set_new(in, "write_protected",
					    json_boolean(si->write_protected));
			jset(c, v, "inquiry", in);
		}
		jint(c, v, "partial", ss->partial);
		jint(c, v, "cdb_fallbacks", ss->cdb_fallbacks);
		jint(c, v, "delayed_retries", ss->delayed_retries);
		jint(c, v, "refused_too_long", ss->refused_too_long);
		jint(c, v, "split", ss->split);
		{
			json_t *rc = json_object();

			jint(c, rc, "6", ss->rw_cdb[0]);
			jint(c, rc, "10", ss->rw_cdb[1]);
			jint(c, rc, "16", ss->rw_cdb[2]);
			jset(c, v, "rw_cdb", rc);
		}
		{
			json_t *eh = json_object();

			jint(c, eh, "timeouts", ss->timeouts);
			jint(c, eh, "aborts", ss->aborts);
			jint(c, eh, "aborts_failed", ss->aborts_failed);
			jint(c, eh, "lun_resets", ss->lun_resets);
			jint(c, eh, "lun_resets_failed", ss->lun_resets_failed);
			jint(c, eh, "target_resets", ss->target_resets);
			jint(c, eh, "target_resets_failed", ss->target_resets_failed);
			jint(c, eh, "host_resets", ss->host_resets);
			jint(c, eh, "tasks_aborted", ss->tasks_aborted);
			jset(c, v, "error_handling", eh);
		}
		jint(c, v, "blocked", ss->blocked);
		jint(c, v, "budget_busy", ss->budget_busy);
		if (ss->host_lock) {
			json_t *hl = json_object();

			jint(c, hl, "acquisitions", ss->host_lock);
			jint(c, hl, "contended", ss->host_lock_contended);
			jint(c, hl, "wait_ns", ss->host_lock_wait_ns);
			jint(c, hl, "queue_kicks", ss->queue_kicks);
			jset(c, v, "host_lock", hl);
		}
		if (ss->stage_count) {
			json_t *sg = json_object();

			jint(c, sg, "count", ss->stage_count);
			jint(c, sg, "total_ns", ss->stage_ns);
			jreal(c, sg, "mean_ns", (double)ss->stage_ns / (double)ss->stage_count);
			jset(c, v, "completion_stage", sg);
		}
		jset(c, o, "scsi", v);
	}
	if (r->has_nvme) {
		const struct blk_nvme_stats *ns = &r->nvme;
		json_t *v = json_object();

		jint(c, v, "sq_doorbells", ns->sq_doorbells);
		jint(c, v, "cq_doorbells", ns->cq_doorbells);
		jint(c, v, "cqes", ns->cqes);
		jint(c, v, "prp_lists", ns->prp_lists);
		jint(c, v, "bounced", ns->bounced);
		jint(c, v, "timeouts", ns->timeouts);
		jint(c, v, "aborts", ns->aborts);
		jint(c, v, "resets", ns->resets);
		jint(c, v, "requeued", ns->requeued);
		jint(c, v, "retried", ns->retried);
		jint(c, v, "failed_retries", ns->failed_retries);
		jint(c, v, "errors", ns->errors);
		jset(c, o, "nvme", v);
	}
	{
		json_t *w = json_object();

		jint(c, w, "spins", j->wait.spins);
		jint(c, w, "sleeps", j->wait.sleeps);
		jint(c, w, "probes", j->wait.probes);
		jint(c, w, "chose_spin", j->wait.chose_spin);
		jint(c, w, "contended", j->wait.contended);
		jreal(c, w, "last_gain", j->wait.last_gain);
		jset(c, o, "completion_wait", w);
	}
	if (j->verify) {
		json_t *v = json_object();

		jstr(c, v, "type", bench_verify_name(j->verify_method));
		jint(c, v, "blocks_verified", j->verify_blocks);
		jint(c, v, "mismatches", j->verify_mismatches);
		if (j->verify_backlog_blocks)
			jint(c, v, "backlog_blocks", j->verify_backlog_blocks);
		if (j->verify_trims) {
			jint(c, v, "trimmed_blocks", j->verify_trims);
			jint(c, v, "trimmed_zero_checked", j->verify_trim_zero);
		}
		jset(c, o, "verify", v);
	}
	return o;
}

/* stage_timers=1: "stages" (one entry per interval) and "stage_windows". */
static void json_stages(struct jctx *c, json_t *o,
			const struct bench_run_result *r, const struct rep_ent *e)
{
	struct blk_stage_stats *st = ent_stages(r, e);
	json_t *arr;
	unsigned int i;
	size_t k;

	if (!st)
		return;
	arr = json_array();
	for (i = 0; i < BLK_STAGE_NR_INTERVALS; i++) {
		const struct blk_hist *h = &st->interval[i];
		json_t *v = json_object();
		char name[32];

		snprintf(name, sizeof(name), "%s->%s", blk_stage_name(i),
			 blk_stage_name(i + 1));
		jstr(c, v, "name", name);
		jstr(c, v, "from", blk_stage_name(i));
		jstr(c, v, "to", blk_stage_name(i + 1));
		jint(c, v, "count", h->count);
		jreal(c, v, "mean_ns", blk_hist_mean(h));
		jint(c, v, "min_ns", hist_min(h));
		jint(c, v, "p50_ns", blk_hist_percentile(h, 50.0));
		jint(c, v, "p99_ns", blk_hist_percentile(h, 99.0));
		jint(c, v, "p99.9_ns", blk_hist_percentile(h, 99.9));
		jint(c, v, "max_ns", h->max);
		jappend(c, arr, v);
	}
	jset(c, o, "stages", arr);
	if (st->has_window) {
		json_t *w = json_object(), *wl = json_array();

		jstr(c, w, "from", blk_stage_name(st->win_from));
		jstr(c, w, "to", blk_stage_name(st->win_to));
		jint(c, w, "window_ns", st->window_ns);
		for (k = 0; k < st->nr_windows; k++) {
			const struct blk_stage_window *sw = &st->windows[k];
			json_t *v = json_object();

			jint(c, v, "cum_time_ns", sw->cum_ns);
			jint(c, v, "count", sw->count);
			jint(c, v, "avg_ns", sw->count ? sw->cum_ns / sw->count : 0);
			jappend(c, wl, v);
		}
		jset(c, w, "windows", wl);
		jset(c, o, "stage_windows", w);
	}
	stages_put(st);
}

static json_t *json_job(struct jctx *c, const struct bench_run_result *r,
			const struct rep *rep, const struct rep_ent *e)
{
	const struct bench_job_result *j = e->j;
	double thread_s = (double)e->thread_ns / 1e9;
	double dist[NR_DEPTHS];
	unsigned int i;
	json_t *o = json_object(), *sync, *dl;
	struct lat_dist ld;
	int d;

	jstr(c, o, "jobname", j->name);
	jint(c, o, "groupid", j->groupid);
	jint(c, o, "error", (uint64_t)job_errno(j));
	/* fio: with continue_on_error, the errors the job went on past */
	if (j->opts && j->opts->continue_on_error) {
		jint(c, o, "total_err", j->total_err);
		jint(c, o, "first_error", (uint64_t)j->first_error);
	}
	jint(c, o, "eta", 0);
	jint(c, o, "elapsed", (r->wall_ns + NSEC_PER_SEC / 2) / NSEC_PER_SEC);
	jset(c, o, "job options", json_job_opts(c, j));
	if (job_unified(j) != BENCH_UNIFIED_MIXED) {
		for (d = 0; d < DDIR_NR; d++)
			jset(c, o, ddir_lower[d], json_dir(c, r, rep, e, j, d));
		sync = json_object();
		jint(c, sync, "total_ios", j->sync_ios);
		jset(c, sync, "lat_ns", json_lat(c, &j->sync_lat, true, true, j));
		jset(c, o, "sync", sync);
	}
	/* fio's "mixed": in place of the directions, or after them (both) */
	if (job_unified(j) != BENCH_UNIFIED_NONE) {
		struct bench_job_result *m = malloc(sizeof(*m));

		if (m) {
			job_mixed(m, j);
			jset(c, o, "mixed", json_dir(c, r, rep, e, m, 0));
			free(m);
		} else {
			c->oom = true;
		}
	}
	jint(c, o, "job_runtime", ns_to_ms(e->thread_ns));
	jreal(c, o, "usr_cpu", safe_div(j->usr_cpu_s * 100.0, thread_s));
	jreal(c, o, "sys_cpu", safe_div(j->sys_cpu_s * 100.0, thread_s));
	jint(c, o, "ctx", j->ctx_switches);
	jint(c, o, "majf", j->majf);
	jint(c, o, "minf", j->minf);
	/* fio's IO depths, submit and complete, from the engine's counts */
	depth_dist(depth_counts(j), dist);
	dl = json_object();
	for (i = 0; i < NR_DEPTHS; i++)
		jreal(c, dl, depth_keys[i], dist[i]);
	jset(c, o, "iodepth_level", dl);
	depth_dist(j->submit_map, dist);
	dl = json_object();
	for (i = 0; i < NR_DEPTHS; i++)
		jreal(c, dl, batch_keys[i], dist[i]);
	jset(c, o, "iodepth_submit", dl);
	depth_dist(j->complete_map, dist);
	dl = json_object();
	for (i = 0; i < NR_DEPTHS; i++)
		jreal(c, dl, batch_keys[i], dist[i]);
	jset(c, o, "iodepth_complete", dl);
	job_lat_dist(j, &ld);
	jset(c, o, "latency_ns", json_lat_map(c, ld.ns, NR_LAT_NS));
	jset(c, o, "latency_us", json_lat_map(c, ld.us, NR_LAT_US));
	jset(c, o, "latency_ms", json_lat_map(c, ld.ms, NR_LAT_MS));
	jint(c, o, "latency_depth", job_lat_depth(j));
	jint(c, o, "latency_target", job_lat_target(j));
	jreal(c, o, "latency_percentile", job_lat_pct(j));
	jint(c, o, "latency_window", job_lat_window(j));
	if (j->opts && j->opts->description[0])
		jstr(c, o, "desc", j->opts->description);
	if (j->ss.on && j->opts)
		jset(c, o, "steadystate", json_ss(c, j));
	jset(c, o, "blkstack", json_blkstack(c, r, j));
	json_stages(c, o, r, e);
	return o;
}

static json_t *json_global(struct jctx *c, const struct bench_opts *o,
			   const struct bench_run_result *runs,
			   unsigned int nr_runs)
{
	const struct bench_dev_opts *d;
	json_t *g = json_object();
	char buf[BENCH_MAX_DEVS * 17 + 1] = "";
	size_t len = 0;
	unsigned int i;

	/* the clock is chosen once per process: the first run's */
	if (nr_runs && runs[0].clocksource[0])
		jstr(c, g, "clocksource", runs[0].clocksource);
	if (!o)
		return g;
	d = &o->dev;
	for (i = 0; i < d->nr_devs && i < BENCH_MAX_DEVS; i++)
		len += snprintf(buf + len, sizeof(buf) - len, "%s%.16s",
				i ? "," : "", d->devs[i]);
	jstr(c, g, "dev", buf);
	jstr(c, g, "elevator", d->p.elevator[0] ? d->p.elevator : "none");
	jstrf(c, g, "nr_hw_queues", d->p.nr_hw_queues);
	jstrf(c, g, "hw_queue_depth", d->p.hw_queue_depth);
	jstrf(c, g, "shared_tags", d->p.shared_tags);
	jstrf(c, g, "logical_block_size", d->p.logical_block_size);
	jstrf(c, g, "max_sectors", d->p.max_sectors);
	jstrf(c, g, "max_segments", d->p.max_segments);
	if (d->p.dev_size)
		jstr(c, g, "dev_size", fmt_size(buf, sizeof(buf), d->p.dev_size));
	jstrf(c, g, "iostats", d->p.iostats);
	jstrf(c, g, "run_batch", d->p.run_batch);
	jstrf(c, g, "rq_timeout", d->p.rq_timeout_ms);
	jstrf(c, g, "irqmode", d->p.irqmode);
	jstrf(c, g, "completion_nsec", d->p.completion_nsec);
	if (d->p.spin_nsec)
		jstrf(c, g, "spin_nsec", d->p.spin_nsec);
	jstrf(c, g, "memory_backed", d->p.memory_backed);
	if (d->p.fail_every)
		jstrf(c, g, "fail_every", d->p.fail_every);
	if (d->p.timeout_every)
		jstrf(c, g, "timeout_every", d->p.timeout_every);
	if (d->p.requeue_every)
		jstrf(c, g, "requeue_every", d->p.requeue_every);
	if (d->p.lower[0])
		jstr(c, g, "lower", d->p.lower);
	return g;
}

static json_t *json_disk_util(struct jctx *c, const struct bench_run_result *r)
{
	const struct blk_disk_stats *st = &r->disk;
	json_t *o = json_object();

	jstr(c, o, "name", r->dev);
	jint(c, o, "read_ios", st->ios[BLK_STAT_READ]);
	jint(c, o, "write_ios", st->ios[BLK_STAT_WRITE]);
	jint(c, o, "read_sectors", st->sectors[BLK_STAT_READ]);
	jint(c, o, "write_sectors", st->sectors[BLK_STAT_WRITE]);
	jint(c, o, "read_merges", st->merges[BLK_STAT_READ]);
	jint(c, o, "write_merges", st->merges[BLK_STAT_WRITE]);
	jint(c, o, "read_ticks", st->ticks_ms[BLK_STAT_READ]);
	jint(c, o, "write_ticks", st->ticks_ms[BLK_STAT_WRITE]);
	jint(c, o, "trim_ios", st->ios[BLK_STAT_DISCARD]);
	jint(c, o, "trim_merges", st->merges[BLK_STAT_DISCARD]);
	jint(c, o, "trim_ticks", st->ticks_ms[BLK_STAT_DISCARD]);
	jint(c, o, "in_queue", disk_in_queue(st));
	jreal(c, o, "util", disk_util(r));
	return o;
}

static json_t *json_layout(struct jctx *c, const struct bench_layout *l)
{
	static const char *const state[] = {
		[BENCH_LAYOUT_WRITTEN] = "written",
		[BENCH_LAYOUT_NO_DATA] = "no data",
		[BENCH_LAYOUT_KEPT] = "kept",
	};
	json_t *o = json_object();

	jstr(c, o, "dev", l->dev);
	if (l->filename)
		jstr(c, o, "filename", l->filename);
	if (!l->reason) {
		jstr(c, o, "state", "not reached");
		return o;
	}
	jstr(c, o, "state", state[l->state]);
	jstr(c, o, "reason", l->reason);
	jint(c, o, "bytes", l->bytes);
	if (l->state == BENCH_LAYOUT_WRITTEN) {
		jint(c, o, "bs", l->bs);
		jint(c, o, "requests", l->requests);
		jset(c, o, "verify", json_boolean(l->verify));
		jset(c, o, "flushed", json_boolean(l->flushed));
		jint(c, o, "time_ns", l->ns);
		if (l->interrupted)
			jset(c, o, "interrupted", json_true());
	}
	if (l->settles) {
		jint(c, o, "write_row_flushes", l->settles);
		jint(c, o, "write_row_flush_ns", l->settle_ns);
	}
	return o;
}

static json_t *bench_json_lockstat(struct jctx *c);

int bench_report_json(FILE *f, const struct bench_opts *o,
		      const struct bench_run_result *runs, unsigned int nr_runs)
{
	return bench_report_json_layout(f, o, runs, nr_runs, NULL, 0);
}

int bench_report_json_layout(FILE *f, const struct bench_opts *o,
			     const struct bench_run_result *runs,
			     unsigned int nr_runs,
			     const struct bench_layout *layouts,
			     unsigned int nr_layouts)
{
	struct jctx c = { .oom = false,
			  .plus = o && o->output_format == OUT_JSON_PLUS };
	json_t *root, *jobs, *du;
	struct timespec ts;
	char tbuf[64] = "";
	unsigned int n, i;
	time_t now;

	clock_gettime(CLOCK_REALTIME, &ts);
	now = ts.tv_sec;
	if (ctime_r(&now, tbuf))
		tbuf[strcspn(tbuf, "\n")] = '\0';

	root = json_object();
	jstr(&c, root, "fio version", "blkstack-" BLKSTACK_VERSION " (fio-compatible)");
	jint(&c, root, "timestamp", (uint64_t)now);
	jint(&c, root, "timestamp_ms",
	     (uint64_t)now * 1000 + (uint64_t)ts.tv_nsec / NSEC_PER_MSEC);
	jstr(&c, root, "time", tbuf);
	jset(&c, root, "global options", json_global(&c, o, runs, nr_runs));
	if (layouts) {
		json_t *la = json_array();

		for (i = 0; i < nr_layouts; i++)
			jappend(&c, la, json_layout(&c, &layouts[i]));
		jset(&c, root, "layout", la);
	}
	jobs = json_array();
	du = json_array();
	/* borrowed references: the arrays stay valid while root holds them */
	jset(&c, root, "jobs", json_incref(jobs));
	jset(&c, root, "disk_util", json_incref(du));
	for (n = 0; n < nr_runs && !c.oom; n++) {
		struct rep rep;

		if (rep_build(&rep, &runs[n])) {
			c.oom = true;
			break;
		}
		for (i = 0; i < rep.nr; i++)
			jappend(&c, jobs, json_job(&c, &runs[n], &rep, &rep.ents[i]));
		if (run_disk_util(&runs[n]))
			jappend(&c, du, json_disk_util(&c, &runs[n]));
		rep_free(&rep);
	}
	json_decref(jobs);
	json_decref(du);
	if (o && o->lock_stats)
		jset(&c, root, "lock_stat", bench_json_lockstat(&c));
	if (c.oom || !root) {
		json_decref(root);
		return -ENOMEM;
	}
	if (json_dumpf(root, f, JSON_INDENT(2))) {
		json_decref(root);
		return -EIO;
	}
	json_decref(root);
	fputc('\n', f);
	return 0;
}

/* ---- lock profile (--lock_stats=1) ---- */

/* The classes' counters as /proc/lock_stat has them, ns. */
static json_t *bench_json_lockstat(struct jctx *c)
{
	size_t n = blk_lockstat_read(NULL, 0), i;
	struct blk_lockstat *s = calloc(n ? n : 1, sizeof(*s));
	json_t *arr = json_array();

	if (!s) {
		c->oom = true;
		return arr;
	}
	n = blk_lockstat_read(s, n);
	for (i = 0; i < n; i++) {
		json_t *v = json_object();

		jstr(c, v, "name", s[i].name);
		jint(c, v, "con_bounces", s[i].con_bounces);
		jint(c, v, "contentions", s[i].contentions);
		jint(c, v, "waittime_min_ns", s[i].wait_min_ns);
		jint(c, v, "waittime_max_ns", s[i].wait_max_ns);
		jint(c, v, "waittime_total_ns", s[i].wait_total_ns);
		jint(c, v, "acq_bounces", s[i].acq_bounces);
		jint(c, v, "acquisitions", s[i].acquisitions);
		jappend(c, arr, v);
	}
	free(s);
	return arr;
}

/* ---- matrix ---- */

double bench_run_iops(const struct bench_run_result *r)
{
	uint64_t ios = 0, start = 0, end = 0, ws, we;
	bool any = false;
	unsigned int i;
	int d;

	/*
	 * all I/Os over the span of the windows of the threads that did I/O:
	 * threads that ran one after another do not add up as if at once
	 */
	for (i = 0; i < r->nr_jobs; i++) {
		const struct bench_job_result *j = &r->jobs[i];

		if (!job_did_io(j))
			continue;
		for (d = 0; d < DDIR_NR; d++)
			ios += j->dir[d].ios;
		job_window(j, &ws, &we);
		window_merge(any, true, &start, &end, ws, we);
		any = true;
	}
	return safe_div((double)ios, (double)(end - start) / 1e9);
}

double bench_run_cpu_pct(const struct bench_run_result *r)
{
	return safe_div((r->proc_usr_s + r->proc_sys_s) * 100.0,
			(double)r->wall_ns / 1e9);
}

double bench_run_lat_us(const struct bench_run_result *r)
{
	double sum = 0, count = 0;
	unsigned int i;
	int d;

	/*
	 * The mean of the merged total-latency (lat) histograms: sums over
	 * counts.  Not clat: on devices that complete inline (null with
	 * irqmode=0, ram) the device's work happens during submission, before
	 * the issue timestamp, and clat would leave it out.
	 */
	for (i = 0; i < r->nr_jobs; i++) {
		if (!r->jobs[i].lat_valid)
			continue;
		for (d = 0; d < DDIR_NR; d++) {
			sum += r->jobs[i].dir[d].lat.sum;
			count += (double)r->jobs[i].dir[d].lat.count;
		}
	}
	return safe_div(sum, count) / 1000.0;
}

double bench_run_merges(const struct bench_run_result *r)
{
	uint64_t m = 0;
	int i;

	for (i = 0; i < BLK_STAT_NR_DIRS; i++)
		m += r->disk.merges[i];
	return (double)m / 1000.0;
}

double bench_run_reqs(const struct bench_run_result *r)
{
	uint64_t reqs = 0, bios = 0;
	int d;

	/*
	 * Requests are counted by the device over the whole cell (ramp and
	 * drain included), bios by the jobs over their windows: the device's
	 * requests per bio, times the jobs' bio rate, is its request rate
	 * over the same window as IOPS.  A merged bio joins a request
	 * instead of making one, so the device saw ios + merges bios.
	 * Flushes carry no data and no bio the jobs count.
	 */
	for (d = BLK_STAT_READ; d <= BLK_STAT_DISCARD; d++) {
		reqs += r->disk.ios[d];
		bios += r->disk.ios[d] + r->disk.merges[d];
	}
	return safe_div(bench_run_iops(r) * (double)reqs, (double)bios);
}

uint64_t bench_run_verified(const struct bench_run_result *r)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < r->nr_jobs; i++)
		n += r->jobs[i].verify_blocks;
	return n;
}

static double run_kiops(const struct bench_run_result *r)
{
	return bench_run_iops(r) / 1000.0;
}

static double run_kreqs(const struct bench_run_result *r)
{
	return bench_run_reqs(r) / 1000.0;
}

static double run_kverified(const struct bench_run_result *r)
{
	return (double)bench_run_verified(r) / 1000.0;
}

static const struct {
	const char *name;
	double (*value)(const struct bench_run_result *r);
} matrix_metrics[] = {
	{ "IOPS(K)", run_kiops },
	{ "REQS(K)", run_kreqs },
	{ "CPU(%)", bench_run_cpu_pct },
	{ "LAT(us)", bench_run_lat_us },
	{ "MERGE(K)", bench_run_merges },
};

#define MATRIX_LABEL_W 10
#define MATRIX_COL_W 8
#define MATRIX_MIN_RULE 39

static void matrix_rule(FILE *f, unsigned int width)
{
	unsigned int i;

	for (i = 0; i < width; i++)
		fputc('-', f);
	fputc('\n', f);
}

static void matrix_table(FILE *f, const char *name,
			 double (*value)(const struct bench_run_result *r),
			 const struct bench_run_result *runs,
			 unsigned int nr_rows, unsigned int nr_devs,
			 unsigned int width)
{
	unsigned int row, d;

	matrix_rule(f, width);
	fprintf(f, "%-*s", MATRIX_LABEL_W, name);
	for (d = 0; d < nr_devs; d++)
		fprintf(f, "%s| %*s", d ? " " : "", MATRIX_COL_W, runs[d].dev);
	fputc('\n', f);
	matrix_rule(f, width);
	for (row = 0; row < nr_rows; row++) {
		const struct bench_run_result *rr = &runs[row * nr_devs];

		fprintf(f, "%-*s", MATRIX_LABEL_W, nr_devs ? rr->workload : "");
		for (d = 0; d < nr_devs; d++)
			fprintf(f, "%s| %*.2f", d ? " " : "", MATRIX_COL_W,
				value(&rr[d]));
		fputc('\n', f);
		matrix_rule(f, width);
	}
}

/*
 * A cell's figures are the device's only when the process had the CPU it
 * asked for.  Name the cell where the machine came closest to saturation
 * (other processes' CPUs plus the cell's own, over the machine's) when that
 * reaches 90 %: there the jobs waited for a CPU, as CPU(%) shows.
 */
#define MATRIX_SATURATED 0.9
/* ... and only where others took a quarter CPU or more: a cell that fills
 * the machine by itself (uring's buffered writes, io-wq workers on every
 * CPU) was not kept from anything (the note once said "other processes
 * kept up to 0.00 of the 2 CPUs busy" there) */
#define MATRIX_OTHERS_MIN 0.25

static void matrix_note_others(FILE *f, const struct bench_run_result *runs,
			       unsigned int nr)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	const struct bench_run_result *worst = NULL;
	double worst_load = 0;
	unsigned int i;

	if (ncpu <= 0)
		return;
	for (i = 0; i < nr; i++) {
		double load;

		if (!runs[i].nr_jobs || runs[i].others_cpus < MATRIX_OTHERS_MIN)
			continue;
		load = (runs[i].others_cpus + bench_run_cpu_pct(&runs[i]) / 100.0) /
		       (double)ncpu;
		if (load > worst_load) {
			worst_load = load;
			worst = &runs[i];
		}
	}
	if (!worst || worst_load < MATRIX_SATURATED)
		return;
	fprintf(f, "\nnote: other processes kept up to %.2f of the %ld CPUs "
		   "busy (%s %s): cells got less CPU than they asked for (see "
		   "CPU(%%)), so their figures follow the machine's load\n",
		worst->others_cpus, ncpu, worst->dev, worst->workload);
}

void bench_report_matrix(FILE *f, const struct bench_run_result *runs,
			 unsigned int nr_rows, unsigned int nr_devs)
{
	unsigned int m, i, d, width = MATRIX_LABEL_W;
	enum bench_verify method = VERIFY_NONE;
	char vnote[96] = "";
	bool verify = false;

	/* "label     |    dev0 |    dev1": label, then "| %8s" per column */
	for (d = 0; d < nr_devs; d++) {
		size_t l = strlen(runs[d].dev);

		width += (d ? 1 : 0) + 2 + (l > MATRIX_COL_W ? l : MATRIX_COL_W);
	}
	if (width < MATRIX_MIN_RULE)
		width = MATRIX_MIN_RULE;
	for (i = 0; i < nr_rows * nr_devs; i++)
		for (d = 0; d < runs[i].nr_jobs; d++)
			if (runs[i].jobs[d].verify && !verify) {
				verify = true;
				method = runs[i].jobs[d].verify_method;
			}
	if (verify)
		snprintf(vnote, sizeof(vnote),
			 "; VERIFY(K): blocks read and checked (verify=%s), thousands",
			 bench_verify_name(method));

	for (m = 0; m < sizeof(matrix_metrics) / sizeof(matrix_metrics[0]); m++)
		matrix_table(f, matrix_metrics[m].name, matrix_metrics[m].value,
			     runs, nr_rows, nr_devs, width);
	if (verify)
		matrix_table(f, "VERIFY(K)", run_kverified, runs, nr_rows,
			     nr_devs, width);
	fprintf(f, "\nIOPS(K): bios completed per second, thousands; "
		   "REQS(K): requests the device completed per second, "
		   "thousands (merged bios ride in one request, so REQS < IOPS "
		   "where bios merge); CPU(%%): process user+system CPU time / "
		   "wall time x 100 (100 = one core busy); LAT(us): mean "
		   "latency of all I/Os, from the I/O being prepared to its "
		   "completion being reaped (fio's lat); MERGE(K): bios merged "
		   "into requests, thousands%s\n",
		vnote);
	matrix_note_others(f, runs, nr_rows * nr_devs);
}

void bench_report_layout(FILE *f, const struct bench_layout *l,
			 unsigned int nr)
{
	char bytes[32], bs[32];
	unsigned int i;

	for (i = 0; i < nr; i++, l++) {
		fprintf(f, "layout: %s", l->dev);
		if (l->filename)
			fprintf(f, " %s", l->filename);
		fprintf(f, ": %s", l->reason ? l->reason : "not reached");
		if (!l->reason) {
			fputc('\n', f);
			continue;
		}
		switch (l->state) {
		case BENCH_LAYOUT_WRITTEN:
			fprintf(f, ", %s written before the read rows (%s blocks%s%s%s%s, %.2f s)%s\n",
				bench_fmt_bytes(bytes, sizeof(bytes), l->bytes),
				bench_fmt_bytes(bs, sizeof(bs), l->bs),
				!l->verify ? "" :
				l->verify_method == VERIFY_PATTERN ? " of the pattern" :
				" with ", !l->verify || l->verify_method == VERIFY_PATTERN ? "" :
				bench_verify_name(l->verify_method),
				!l->verify || l->verify_method == VERIFY_PATTERN ? "" : " headers",
				l->flushed ? ", flushed" : "",
				(double)l->ns / 1e9,
				l->interrupted ? ", interrupted" : "");
			break;
		case BENCH_LAYOUT_NO_DATA:
			fprintf(f, ", not laid out: its reads return no written data\n");
			break;
		case BENCH_LAYOUT_KEPT:
			fprintf(f, ", not laid out: the read rows read its %s as it is\n",
				bench_fmt_bytes(bytes, sizeof(bytes), l->bytes));
			break;
		}
		if (l->settles)
			fprintf(f, "layout: %s: flushed after each write row, outside the cells (%u, %.2f s)\n",
				l->dev, l->settles, (double)l->settle_ns / 1e9);
	}
}
