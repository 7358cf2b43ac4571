// SPDX-License-Identifier: MIT
/*
 * Unit tests for the bench reports (src/bench/report.c): fio's text and
 * JSON layouts and seed 001's matrix, from hand-built run results.  JSON is
 * parsed back with jansson and checked field by field under fio's names.
 *
 * bench_rw_name() lives in options.c; a weak copy with the same names lets
 * this test link without it.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "bench/bench.h"
#include "blkstack/version.h"

#define NS_PER_SEC 1000000000ull

__attribute__((weak)) const char *bench_rw_name(enum bench_rw rw)
{
	static const char *const names[] = {
		[RW_READ] = "read", [RW_WRITE] = "write",
		[RW_RANDREAD] = "randread", [RW_RANDWRITE] = "randwrite",
		[RW_RW] = "rw", [RW_RANDRW] = "randrw",
		[RW_TRIM] = "trim", [RW_RANDTRIM] = "randtrim",
	};

	if ((unsigned int)rw >= sizeof(names) / sizeof(names[0]))
		return "unknown";
	return names[rw];
}

/* ---- fixtures ---- */

static void job_opts(struct bench_job_opts *jo, const char *name,
		     enum bench_rw rw, unsigned int iodepth)
{
	memset(jo, 0, sizeof(*jo));
	snprintf(jo->name, sizeof(jo->name), "%s", name);
	jo->rw = rw;
	jo->bs = 4096;
	jo->iodepth = iodepth;
	jo->numjobs = 1;
	jo->runtime_ns = 2 * NS_PER_SEC;
	jo->time_based = true;
	jo->randrepeat = true;
	jo->rwmixread = 50;
	jo->loops = 1;
}

static void job_init(struct bench_job_result *j,
		     const struct bench_job_opts *jo, unsigned int jobnum)
{
	int d;

	memset(j, 0, sizeof(*j));
	snprintf(j->name, sizeof(j->name), "%s", jo->name);
	j->opts = jo;
	j->jobnum = jobnum;
	j->nr_threads = 1;
	j->lat_valid = true;
	for (d = 0; d < DDIR_NR; d++) {
		blk_hist_init(&j->dir[d].slat);
		blk_hist_init(&j->dir[d].clat);
		blk_hist_init(&j->dir[d].lat);
	}
}

/*
 * Fill a direction with @ios I/Os of 4 KiB: clat takes the values
 * clat_base + i for i in [0, ios), slat a constant 20 ns, lat the sum.
 */
static void fill_dir(struct bench_dir_stats *s, uint64_t ios, uint64_t clat_base)
{
	uint64_t i;

	s->ios += ios;
	s->bytes += ios * 4096;
	for (i = 0; i < ios; i++) {
		blk_hist_add(&s->slat, 20);
		blk_hist_add(&s->clat, clat_base + i);
		blk_hist_add(&s->lat, clat_base + i + 20);
	}
}

static struct bench_job_result *jobs_alloc(unsigned int n)
{
	struct bench_job_result *j = calloc(n, sizeof(*j));

	assert_non_null(j);
	return j;
}

static void run_init(struct bench_run_result *r, const char *dev,
		     const char *workload, struct bench_job_result *jobs,
		     unsigned int nr_jobs)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->dev, sizeof(r->dev), "%s", dev);
	snprintf(r->workload, sizeof(r->workload), "%s", workload);
	snprintf(r->clocksource, sizeof(r->clocksource), "cpu");
	r->jobs = jobs;
	r->nr_jobs = nr_jobs;
	r->wall_ns = 2 * NS_PER_SEC;
	r->proc_usr_s = 1.5;
	r->proc_sys_s = 0.5;
	r->disk.ios[BLK_STAT_READ] = 900;
	r->disk.ios[BLK_STAT_WRITE] = 7;
	r->disk.merges[BLK_STAT_READ] = 100;
	r->disk.merges[BLK_STAT_WRITE] = 3;
	r->disk.merges[BLK_STAT_DISCARD] = 2;
	r->disk.ticks_ms[BLK_STAT_READ] = 40;
	r->disk.ticks_ms[BLK_STAT_WRITE] = 2;
	r->disk.io_ticks_ms = 1000;
	r->disk.requeues = 11;
	r->disk.timeouts = 12;
	r->disk.queue_runs = 13;
	r->disk.errors = 14;
	r->core_lat_mean_ns = 1234.0;
}

/* One randread job on "null": 1000 reads in 2 s, clat 500..1499 ns. */
struct fixture {
	struct bench_opts o;
	struct bench_run_result run;
	struct bench_job_result *jobs;
};

static struct fixture *fixture_one(void)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct bench_job_result *j;

	assert_non_null(fx);
	snprintf(fx->o.dev.devs[0], sizeof(fx->o.dev.devs[0]), "null");
	snprintf(fx->o.dev.devs[1], sizeof(fx->o.dev.devs[1]), "ram");
	fx->o.dev.nr_devs = 2;
	snprintf(fx->o.dev.p.elevator, sizeof(fx->o.dev.p.elevator), "mq-deadline");
	fx->o.dev.p.nr_hw_queues = 4;
	fx->o.nr_jobs = 1;
	job_opts(&fx->o.jobs[0], "randread", RW_RANDREAD, 32);
	fx->jobs = jobs_alloc(1);
	j = &fx->jobs[0];
	job_init(j, &fx->o.jobs[0], 0);
	fill_dir(&j->dir[DDIR_READ], 1000, 500);
	/* the engine's counts: 1000 I/Os at depth 32, in 40 batches of 25
	 * submitted, reaped 990 times by one and 10 times by 100 */
	j->depth_map[5] = 1000;
	j->submit_map[4] = 40;
	j->complete_map[1] = 990;
	j->complete_map[6] = 10;
	/* four 500 ms samples: 1900, 2100, 2000, 2000 KiB/s (475 .. 525 IOPS) */
	j->bw_samples[DDIR_READ] = (struct bench_sample_stat){
		.n = 4, .min = 1900, .max = 2100, .mean = 2000.0, .m2 = 20000.0 };
	j->iops_samples[DDIR_READ] = (struct bench_sample_stat){
		.n = 4, .min = 475, .max = 525, .mean = 500.0, .m2 = 1250.0 };
	j->runtime_ns = 2 * NS_PER_SEC;
	j->usr_cpu_s = 1.0;
	j->sys_cpu_s = 0.25;
	j->ctx_switches = 42;
	j->minf = 30;
	j->majf = 1;
	run_init(&fx->run, "null", "", fx->jobs, 1);
	return fx;
}

static void fixture_free(struct fixture *fx)
{
	free(fx->jobs);
	free(fx);
}

/* ---- capture helpers ---- */

static char *capture_text(const struct bench_opts *o,
			  const struct bench_run_result *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	bench_report_text(f, o, r);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static char *capture_matrix(const struct bench_run_result *runs,
			    unsigned int rows, unsigned int devs)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	bench_report_matrix(f, runs, rows, devs);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static json_t *capture_json(const struct bench_opts *o,
			    const struct bench_run_result *runs, unsigned int n)
{
	json_error_t jerr;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_t *root;

	assert_non_null(f);
	assert_int_equal(bench_report_json(f, o, runs, n), 0);
	assert_int_equal(fclose(f), 0);
	assert_true(len > 0 && buf[len - 1] == '\n');
	root = json_loads(buf, 0, &jerr);
	if (!root)
		fail_msg("bad JSON at line %d: %s", jerr.line, jerr.text);
	free(buf);
	return root;
}

/* json_t at a path of object keys, NULL-terminated */
static json_t *jget(json_t *o, ...)
{
	const char *key;
	va_list ap;

	va_start(ap, o);
	while (o && (key = va_arg(ap, const char *)))
		o = json_object_get(o, key);
	va_end(ap);
	if (!o)
		fail_msg("missing JSON field");
	return o;
}

static json_int_t jgeti(json_t *v)
{
	if (!json_is_integer(v))
		fail_msg("not an integer");
	return json_integer_value(v);
}

static double jgetr(json_t *v)
{
	if (!json_is_real(v))
		fail_msg("not a real");
	return json_real_value(v);
}

static const char *jgets(json_t *v)
{
	if (!json_is_string(v))
		fail_msg("not a string");
	return json_string_value(v);
}

static void assert_close(double a, double b)
{
	if (fabs(a - b) > 1e-6 * (fabs(b) > 1 ? fabs(b) : 1))
		fail_msg("%.9g != %.9g", a, b);
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("\"%s\" not in:\n%s", needle, hay);
}

static void assert_not_contains(const char *hay, const char *needle)
{
	if (strstr(hay, needle))
		fail_msg("\"%s\" unexpectedly in:\n%s", needle, hay);
}

/*
 * The first "clat percentiles (unit):" block at or after @t: its unit and
 * its 17 values as printed.  Returns the text after the block.
 */
#define NR_TEXT_PCTS 17
static const char *parse_pcts(const char *t, char unit[8],
			      unsigned long long v[NR_TEXT_PCTS])
{
	const char *p = strstr(t, "    clat percentiles (");
	char *end;
	int i;

	if (!p)
		fail_msg("no clat percentiles in:\n%s", t);
	if (sscanf(p, "    clat percentiles (%7[a-z]):", unit) != 1)
		fail_msg("bad percentiles header in:\n%s", p);
	for (i = 0; i < NR_TEXT_PCTS; i++) {
		p = strstr(p, "th=[");
		if (!p)
			fail_msg("percentile %d missing", i);
		p += 4;
		while (*p == ' ')
			p++;
		v[i] = strtoull(p, &end, 10);
		if (end == p || *end != ']')
			fail_msg("bad percentile value at: %.20s", p);
		p = end;
	}
	return p;
}

/* The value printed after @key ("avg=") on the line starting with @line. */
static double line_field(const char *t, const char *line, const char *key)
{
	const char *p = strstr(t, line), *q;

	if (!p)
		fail_msg("\"%s\" not in:\n%s", line, t);
	q = strstr(p, key);
	if (!q || memchr(p, '\n', (size_t)(q - p)))
		fail_msg("no %s on line \"%s\"", key, line);
	return strtod(q + strlen(key), NULL);
}

/* ns in a percentile unit, rounded to the nearest integer */
static unsigned long long in_unit(uint64_t ns, uint64_t div)
{
	return (ns + div / 2) / div;
}

/* ---- JSON ---- */

static void test_json_top_level(void **state)
{
	struct fixture *fx = fixture_one();
	json_t *root = capture_json(&fx->o, &fx->run, 1), *g, *du;

	assert_string_equal(jgets(jget(root, "fio version", NULL)),
			    "blkstack-" BLKSTACK_VERSION " (fio-compatible)");
	assert_string_equal(BLKSTACK_VERSION, "0.1.0");
	assert_string_equal(jgets(jget(root, "fio version", NULL)),
			    "blkstack-0.1.0 (fio-compatible)");
	assert_true(jgeti(jget(root, "timestamp", NULL)) > 1500000000);
	assert_true(jgeti(jget(root, "timestamp_ms", NULL)) / 1000 >=
		    jgeti(jget(root, "timestamp", NULL)));
	assert_true(strlen(jgets(jget(root, "time", NULL))) > 10);
	assert_null(strchr(jgets(jget(root, "time", NULL)), '\n'));
	g = jget(root, "global options", NULL);
	assert_string_equal(jgets(jget(g, "dev", NULL)), "null,ram");
	assert_string_equal(jgets(jget(g, "elevator", NULL)), "mq-deadline");
	assert_string_equal(jgets(jget(g, "nr_hw_queues", NULL)), "4");
	assert_string_equal(jgets(jget(g, "clocksource", NULL)), "cpu");
	assert_int_equal(json_array_size(jget(root, "jobs", NULL)), 1);
	du = jget(root, "disk_util", NULL);
	assert_int_equal(json_array_size(du), 1);
	du = json_array_get(du, 0);
	assert_string_equal(jgets(jget(du, "name", NULL)), "null");
	assert_int_equal(jgeti(jget(du, "read_ios", NULL)), 900);
	assert_int_equal(jgeti(jget(du, "write_ios", NULL)), 7);
	assert_int_equal(jgeti(jget(du, "read_merges", NULL)), 100);
	assert_int_equal(jgeti(jget(du, "write_merges", NULL)), 3);
	assert_int_equal(jgeti(jget(du, "read_ticks", NULL)), 40);
	assert_int_equal(jgeti(jget(du, "write_ticks", NULL)), 2);
	assert_int_equal(jgeti(jget(du, "in_queue", NULL)), 42);
	/* no discards, but the fields are always there */
	assert_int_equal(jgeti(jget(du, "trim_ios", NULL)), 0);
	assert_int_equal(jgeti(jget(du, "trim_merges", NULL)), 2);
	assert_int_equal(jgeti(jget(du, "trim_ticks", NULL)), 0);
	/* 1000 ms busy of 2000 ms */
	assert_close(jgetr(jget(du, "util", NULL)), 50.0);
	json_decref(root);

	/* a run that discarded: trim counters, in_queue includes their ticks */
	fx->run.disk.ios[BLK_STAT_DISCARD] = 5;
	fx->run.disk.ticks_ms[BLK_STAT_DISCARD] = 3;
	root = capture_json(&fx->o, &fx->run, 1);
	du = json_array_get(jget(root, "disk_util", NULL), 0);
	assert_int_equal(jgeti(jget(du, "trim_ios", NULL)), 5);
	assert_int_equal(jgeti(jget(du, "trim_merges", NULL)), 2);
	assert_int_equal(jgeti(jget(du, "trim_ticks", NULL)), 3);
	assert_int_equal(jgeti(jget(du, "read_ios", NULL)), 900);
	assert_int_equal(jgeti(jget(du, "in_queue", NULL)), 45);
	json_decref(root);

	/* the first run's clock; none known, no key */
	fx->run.clocksource[0] = '\0';
	root = capture_json(&fx->o, &fx->run, 1);
	assert_null(json_object_get(jget(root, "global options", NULL),
				    "clocksource"));
	json_decref(root);
	snprintf(fx->run.clocksource, sizeof(fx->run.clocksource),
		 "clock_gettime");
	root = capture_json(&fx->o, &fx->run, 1);
	assert_string_equal(jgets(jget(root, "global options", "clocksource",
				       NULL)), "clock_gettime");
	json_decref(root);
	fixture_free(fx);
}

static void test_json_job_fields(void **state)
{
	struct fixture *fx = fixture_one();
	const struct blk_hist *clat = &fx->jobs[0].dir[DDIR_READ].clat;
	const struct blk_hist *lat = &fx->jobs[0].dir[DDIR_READ].lat;
	json_t *root = capture_json(&fx->o, &fx->run, 1);
	json_t *job = json_array_get(jget(root, "jobs", NULL), 0);
	json_t *rd = jget(job, "read", NULL), *pct, *bk, *jo;

	assert_string_equal(jgets(jget(job, "jobname", NULL)), "randread");
	assert_int_equal(jgeti(jget(job, "groupid", NULL)), 0);
	assert_int_equal(jgeti(jget(job, "error", NULL)), 0);
	assert_int_equal(jgeti(jget(job, "eta", NULL)), 0);
	assert_int_equal(jgeti(jget(job, "elapsed", NULL)), 2);
	jo = jget(job, "job options", NULL);
	assert_string_equal(jgets(jget(jo, "name", NULL)), "randread");
	assert_string_equal(jgets(jget(jo, "rw", NULL)), "randread");
	assert_string_equal(jgets(jget(jo, "bs", NULL)), "4k");
	assert_string_equal(jgets(jget(jo, "iodepth", NULL)), "32");
	assert_string_equal(jgets(jget(jo, "numjobs", NULL)), "1");
	assert_string_equal(jgets(jget(jo, "runtime", NULL)), "2");

	/* 1000 x 4 KiB in 2 s */
	assert_close(jgetr(jget(rd, "iops", NULL)), 500.0);
	assert_int_equal(jgeti(jget(rd, "io_bytes", NULL)), 4096000);
	assert_int_equal(jgeti(jget(rd, "io_kbytes", NULL)), 4000);
	assert_int_equal(jgeti(jget(rd, "bw_bytes", NULL)), 2048000);
	assert_int_equal(jgeti(jget(rd, "bw", NULL)), 2000);
	assert_int_equal(jgeti(jget(rd, "runtime", NULL)), 2000);
	assert_int_equal(jgeti(jget(rd, "total_ios", NULL)), 1000);
	assert_int_equal(jgeti(jget(rd, "short_ios", NULL)), 0);
	assert_int_equal(jgeti(jget(rd, "drop_ios", NULL)), 0);
	/* fio's bw_* and iops_* from the samples: stddev over n - 1 */
	assert_int_equal(jgeti(jget(rd, "bw_min", NULL)), 1900);
	assert_int_equal(jgeti(jget(rd, "bw_max", NULL)), 2100);
	assert_close(jgetr(jget(rd, "bw_agg", NULL)), 100.0);
	assert_close(jgetr(jget(rd, "bw_mean", NULL)), 2000.0);
	assert_close(jgetr(jget(rd, "bw_dev", NULL)), sqrt(20000.0 / 3));
	assert_int_equal(jgeti(jget(rd, "bw_samples", NULL)), 4);
	assert_int_equal(jgeti(jget(rd, "iops_min", NULL)), 475);
	assert_int_equal(jgeti(jget(rd, "iops_max", NULL)), 525);
	assert_close(jgetr(jget(rd, "iops_mean", NULL)), 500.0);
	assert_close(jgetr(jget(rd, "iops_stddev", NULL)), sqrt(1250.0 / 3));
	assert_int_equal(jgeti(jget(rd, "iops_samples", NULL)), 4);
	/* a direction without samples: all 0, as fio's */
	assert_int_equal(jgeti(jget(job, "write", "bw_samples", NULL)), 0);
	assert_close(jgetr(jget(job, "write", "bw_agg", NULL)), 0.0);

	/* latencies in ns, exact min/max/mean, N */
	assert_int_equal(jgeti(jget(rd, "slat_ns", "min", NULL)), 20);
	assert_int_equal(jgeti(jget(rd, "slat_ns", "max", NULL)), 20);
	assert_int_equal(jgeti(jget(rd, "slat_ns", "N", NULL)), 1000);
	assert_int_equal(jgeti(jget(rd, "clat_ns", "min", NULL)), 500);
	assert_int_equal(jgeti(jget(rd, "clat_ns", "max", NULL)), 1499);
	assert_close(jgetr(jget(rd, "clat_ns", "mean", NULL)), 999.5);
	assert_close(jgetr(jget(rd, "clat_ns", "stddev", NULL)),
		     blk_hist_stddev(clat));
	assert_int_equal(jgeti(jget(rd, "clat_ns", "N", NULL)), 1000);
	assert_close(jgetr(jget(rd, "lat_ns", "mean", NULL)), 1019.5);
	assert_close(jgetr(jget(rd, "lat_ns", "mean", NULL)), blk_hist_mean(lat));
	assert_null(json_object_get(jget(rd, "lat_ns", NULL), "percentile"));
	pct = jget(rd, "clat_ns", "percentile", NULL);
	assert_int_equal(json_object_size(pct), 17);
	assert_int_equal(jgeti(jget(pct, "50.000000", NULL)),
			 blk_hist_percentile(clat, 50));
	/* the median of 500..1499 is ~999; buckets are within 3.1% */
	assert_true(labs((long)jgeti(jget(pct, "50.000000", NULL)) - 999) < 32);
	assert_int_equal(jgeti(jget(pct, "1.000000", NULL)),
			 blk_hist_percentile(clat, 1));
	assert_int_equal(jgeti(jget(pct, "99.990000", NULL)),
			 blk_hist_percentile(clat, 99.99));
	assert_int_equal(jgeti(jget(pct, "99.500000", NULL)),
			 blk_hist_percentile(clat, 99.5));

	/* directions without I/O: zeros, no percentiles */
	assert_int_equal(jgeti(jget(job, "write", "total_ios", NULL)), 0);
	assert_int_equal(jgeti(jget(job, "write", "runtime", NULL)), 0);
	assert_int_equal(jgeti(jget(job, "write", "clat_ns", "N", NULL)), 0);
	assert_int_equal(jgeti(jget(job, "write", "clat_ns", "min", NULL)), 0);
	assert_null(json_object_get(jget(job, "write", "clat_ns", NULL),
				    "percentile"));
	assert_int_equal(jgeti(jget(job, "trim", "io_bytes", NULL)), 0);
	assert_int_equal(jgeti(jget(job, "sync", "total_ios", NULL)), 0);
	assert_int_equal(jgeti(jget(job, "sync", "lat_ns", "N", NULL)), 0);

	/* CPU: thread time over the 2 s runtime */
	assert_int_equal(jgeti(jget(job, "job_runtime", NULL)), 2000);
	assert_close(jgetr(jget(job, "usr_cpu", NULL)), 50.0);
	assert_close(jgetr(jget(job, "sys_cpu", NULL)), 12.5);
	assert_int_equal(jgeti(jget(job, "ctx", NULL)), 42);
	assert_int_equal(jgeti(jget(job, "majf", NULL)), 1);
	assert_int_equal(jgeti(jget(job, "minf", NULL)), 30);

	/* fio's depth maps from the engine's counts, in percent */
	assert_close(jgetr(jget(job, "iodepth_level", "32", NULL)), 100.0);
	assert_close(jgetr(jget(job, "iodepth_level", "1", NULL)), 0.0);
	assert_close(jgetr(jget(job, "iodepth_level", ">=64", NULL)), 0.0);
	assert_close(jgetr(jget(job, "iodepth_submit", "32", NULL)), 100.0);
	assert_close(jgetr(jget(job, "iodepth_submit", "0", NULL)), 0.0);
	assert_close(jgetr(jget(job, "iodepth_complete", "4", NULL)), 99.0);
	assert_close(jgetr(jget(job, "iodepth_complete", ">=64", NULL)), 1.0);

	/* blkstack's own object */
	bk = jget(job, "blkstack", NULL);
	assert_string_equal(jgets(jget(bk, "dev", NULL)), "null");
	assert_string_equal(jgets(jget(bk, "workload", NULL)), "");
	assert_string_equal(jgets(jget(bk, "clocksource", NULL)), "cpu");
	assert_int_equal(jgeti(jget(bk, "merges", "read", NULL)), 100);
	assert_int_equal(jgeti(jget(bk, "merges", "write", NULL)), 3);
	assert_int_equal(jgeti(jget(bk, "merges", "trim", NULL)), 2);
	assert_int_equal(jgeti(jget(bk, "requests", "read", NULL)), 900);
	assert_int_equal(jgeti(jget(bk, "requests", "write", NULL)), 7);
	assert_int_equal(jgeti(jget(bk, "requests", "trim", NULL)), 0);
	assert_int_equal(jgeti(jget(bk, "requests", "flush", NULL)), 0);
	/* 500 bios/s, 907 requests for 1012 bios */
	assert_close(jgetr(jget(bk, "reqs_per_s", NULL)), 500.0 * 907 / 1012);
	assert_close(jgetr(jget(bk, "others_cpu", NULL)), 0.0);
	assert_int_equal(jgeti(jget(bk, "requeues", NULL)), 11);
	assert_int_equal(jgeti(jget(bk, "timeouts", NULL)), 12);
	assert_int_equal(jgeti(jget(bk, "queue_runs", NULL)), 13);
	assert_int_equal(jgeti(jget(bk, "errors", NULL)), 14);
	assert_close(jgetr(jget(bk, "core_lat_mean_ns", NULL)), 1234.0);
	assert_close(jgetr(jget(bk, "proc_usr_cpu", NULL)), 75.0);
	assert_close(jgetr(jget(bk, "proc_sys_cpu", NULL)), 25.0);
	assert_int_equal(jgeti(jget(bk, "wall_ns", NULL)), 2 * NS_PER_SEC);
	assert_close(jgetr(jget(bk, "cpu_pct", NULL)), 100.0);
	json_decref(root);
	fixture_free(fx);
}

static double map_sum(json_t *m)
{
	const char *k;
	json_t *v;
	double s = 0;

	json_object_foreach(m, k, v)
		s += jgetr(v);
	return s;
}

static void test_json_latency_buckets(void **state)
{
	struct fixture *fx = fixture_one();
	struct bench_job_result *j = &fx->jobs[0];
	json_t *root, *job;
	int i;

	/*
	 * replace the read latencies: clat 2 at 300 ns, 1 at 1.5 us, 1 at
	 * 5 ms.  As in fio, the distribution is of clat: the total latencies,
	 * all 30 us here, play no part.
	 */
	job_init(j, &fx->o.jobs[0], 0);
	j->runtime_ns = 2 * NS_PER_SEC;
	j->dir[DDIR_READ].ios = 4;
	j->dir[DDIR_READ].bytes = 4 * 4096;
	for (i = 0; i < 2; i++)
		blk_hist_add(&j->dir[DDIR_READ].clat, 300);
	blk_hist_add(&j->dir[DDIR_READ].clat, 1500);
	blk_hist_add(&j->dir[DDIR_READ].clat, 5000000);
	blk_hist_add_n(&j->dir[DDIR_READ].lat, 30000, 4);
	root = capture_json(&fx->o, &fx->run, 1);
	job = json_array_get(jget(root, "jobs", NULL), 0);
	assert_close(jgetr(jget(job, "latency_ns", "500", NULL)), 50.0);
	assert_close(jgetr(jget(job, "latency_ns", "250", NULL)), 0.0);
	assert_close(jgetr(jget(job, "latency_us", "2", NULL)), 25.0);
	assert_close(jgetr(jget(job, "latency_ms", "10", NULL)), 25.0);
	assert_close(jgetr(jget(job, "latency_ms", ">=2000", NULL)), 0.0);
	assert_close(jgetr(jget(job, "latency_us", "50", NULL)), 0.0);
	assert_int_equal(json_object_size(jget(job, "latency_ns", NULL)), 10);
	assert_int_equal(json_object_size(jget(job, "latency_us", NULL)), 10);
	assert_int_equal(json_object_size(jget(job, "latency_ms", NULL)), 12);
	assert_close(map_sum(jget(job, "latency_ns", NULL)) +
		     map_sum(jget(job, "latency_us", NULL)) +
		     map_sum(jget(job, "latency_ms", NULL)), 100.0);
	json_decref(root);

	/* the regular fixture: 500..1499 ns clat, all in ns/us */
	fixture_free(fx);
	fx = fixture_one();
	root = capture_json(&fx->o, &fx->run, 1);
	job = json_array_get(jget(root, "jobs", NULL), 0);
	assert_close(map_sum(jget(job, "latency_ns", NULL)) +
		     map_sum(jget(job, "latency_us", NULL)), 100.0);
	assert_close(map_sum(jget(job, "latency_ms", NULL)), 0.0);
	json_decref(root);
	fixture_free(fx);
}

static void test_json_lat_invalid(void **state)
{
	struct fixture *fx = fixture_one();
	json_t *root, *job;

	fx->jobs[0].lat_valid = false;
	root = capture_json(&fx->o, &fx->run, 1);
	job = json_array_get(jget(root, "jobs", NULL), 0);
	/* counts are still reported; latencies are zero with N=0 */
	assert_int_equal(jgeti(jget(job, "read", "total_ios", NULL)), 1000);
	assert_int_equal(jgeti(jget(job, "read", "clat_ns", "N", NULL)), 0);
	assert_int_equal(jgeti(jget(job, "read", "clat_ns", "max", NULL)), 0);
	assert_close(jgetr(jget(job, "read", "lat_ns", "mean", NULL)), 0.0);
	assert_int_equal(jgeti(jget(job, "read", "slat_ns", "N", NULL)), 0);
	assert_null(json_object_get(jget(job, "read", "clat_ns", NULL),
				    "percentile"));
	assert_close(map_sum(jget(job, "latency_ns", NULL)) +
		     map_sum(jget(job, "latency_us", NULL)) +
		     map_sum(jget(job, "latency_ms", NULL)), 0.0);
	json_decref(root);
	fixture_free(fx);
}

static void test_json_error(void **state)
{
	struct fixture *fx = fixture_one();
	json_t *root;

	fx->jobs[0].error = -EIO;
	snprintf(fx->jobs[0].errmsg, sizeof(fx->jobs[0].errmsg), "read at 4096: IOERR");
	root = capture_json(&fx->o, &fx->run, 1);
	assert_int_equal(jgeti(jget(json_array_get(jget(root, "jobs", NULL), 0),
				    "error", NULL)), EIO);
	json_decref(root);
	fixture_free(fx);
}

static void test_json_two_runs(void **state)
{
	struct fixture *a = fixture_one(), *b = fixture_one();
	struct bench_run_result runs[2];
	json_t *root, *jobs;

	runs[0] = a->run;
	runs[1] = b->run;
	snprintf(runs[1].dev, sizeof(runs[1].dev), "ram");
	runs[1].disk.merges[BLK_STAT_READ] = 777;
	root = capture_json(&a->o, runs, 2);
	jobs = jget(root, "jobs", NULL);
	assert_int_equal(json_array_size(jobs), 2);
	assert_string_equal(jgets(jget(json_array_get(jobs, 0), "blkstack", "dev", NULL)),
			    "null");
	assert_string_equal(jgets(jget(json_array_get(jobs, 1), "blkstack", "dev", NULL)),
			    "ram");
	assert_int_equal(jgeti(jget(json_array_get(jobs, 1), "blkstack", "merges",
				    "read", NULL)), 777);
	assert_int_equal(json_array_size(jget(root, "disk_util", NULL)), 2);
	assert_string_equal(jgets(jget(json_array_get(jget(root, "disk_util", NULL), 1),
				       "name", NULL)), "ram");
	json_decref(root);
	fixture_free(a);
	fixture_free(b);
}

/* Two threads of one job (numjobs=2), plus the same pair on its own. */
static struct fixture *fixture_two_threads(bool group_reporting)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct bench_job_result *j;
	unsigned int t;

	assert_non_null(fx);
	snprintf(fx->o.dev.devs[0], sizeof(fx->o.dev.devs[0]), "null");
	fx->o.dev.nr_devs = 1;
	fx->o.nr_jobs = 1;
	job_opts(&fx->o.jobs[0], "mixed", RW_RANDRW, 4);
	fx->o.jobs[0].numjobs = 2;
	fx->o.jobs[0].group_reporting = group_reporting;
	fx->jobs = jobs_alloc(2);
	for (t = 0; t < 2; t++) {
		j = &fx->jobs[t];
		job_init(j, &fx->o.jobs[0], t);
		fill_dir(&j->dir[DDIR_READ], 1000 * (t + 1), 1000);
		fill_dir(&j->dir[DDIR_WRITE], 500, 3000);
		j->depth_map[2] = 1000 * (t + 1) + 500;
		j->submit_map[1] = 100;
		j->complete_map[1] = 100;
		/* each thread's reads at 4000 KiB/s, writes at 2000 / (t + 1) */
		j->bw_samples[DDIR_READ] = (struct bench_sample_stat){
			.n = t + 1, .min = 4000, .max = 4000, .mean = 4000.0 };
		j->bw_samples[DDIR_WRITE] = (struct bench_sample_stat){
			.n = t + 1, .min = 2000 / (t + 1), .max = 2000 / (t + 1),
			.mean = 2000.0 / (t + 1) };
		j->runtime_ns = (t + 1) * NS_PER_SEC; /* 1 s and 2 s */
		j->usr_cpu_s = 0.5;
		j->sys_cpu_s = 0.25;
		j->ctx_switches = 10;
		j->minf = 3;
	}
	run_init(&fx->run, "null", "", fx->jobs, 2);
	return fx;
}

/*
 * percentile_list=, lat_percentiles=, slat_percentiles=,
 * clat_percentiles=0 and disable_lat=: which latency objects list
 * percentiles, under fio's "%f" keys of the list; the text's blocks.
 */
static void test_report_percentile_options(void **state)
{
	struct fixture *fx = fixture_two_threads(true);
	struct bench_job_opts *jo = &fx->o.jobs[0];
	json_t *root, *rd, *pct;
	char *t;

	(void)state;
	jo->pct[0] = 50.0;
	jo->pct[1] = 99.5;
	jo->pct_nr = 2;
	jo->pct_precision = 1;
	jo->lat_percentiles = true;
	jo->slat_percentiles = true;
	root = capture_json(&fx->o, &fx->run, 1);
	rd = jget(json_array_get(jget(root, "jobs", NULL), 0), "read", NULL);
	pct = jget(rd, "lat_ns", "percentile", NULL);
	assert_int_equal(json_object_size(pct), 2);
	/* reads' lat is clat + 20: 1000..1999 and 1000..2999 */
	assert_true(jgeti(jget(pct, "50.000000", NULL)) > 1000);
	assert_true(jgeti(jget(pct, "99.500000", NULL)) > 2900);
	assert_int_equal(json_object_size(jget(rd, "clat_ns", "percentile", NULL)), 2);
	assert_int_equal(jgeti(jget(rd, "slat_ns", "percentile", "50.000000", NULL)), 20);
	assert_null(json_object_get(jget(rd, "clat_ns", "percentile", NULL),
				    "1.000000"));
	json_decref(root);
	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "    slat percentiles (nsec):\n     | 50.0th=[   20], 99.5th=[   20]\n");
	assert_contains(t, "    clat percentiles (");
	assert_contains(t, "     lat (usec): min=1, max=3");
	assert_contains(t, "    lat percentiles (");
	free(t);

	/* clat_percentiles=0, and lat_percentiles under disable_lat: none */
	jo->clat_pct_off = true;
	jo->disable_lat = true;
	root = capture_json(&fx->o, &fx->run, 1);
	rd = jget(json_array_get(jget(root, "jobs", NULL), 0), "read", NULL);
	assert_null(json_object_get(jget(rd, "clat_ns", NULL), "percentile"));
	assert_null(json_object_get(jget(rd, "lat_ns", NULL), "percentile"));
	assert_non_null(json_object_get(jget(rd, "slat_ns", NULL), "percentile"));
	json_decref(root);
	t = capture_text(&fx->o, &fx->run);
	assert_not_contains(t, "clat percentiles");
	assert_not_contains(t, "    lat percentiles");
	free(t);
	fixture_free(fx);
}

/*
 * unified_rw_reporting=: "mixed" sums the directions (I/Os, bytes,
 * latencies) in place of read/write/trim/sync, or after them with both;
 * the text's "mixed:" and "MIXED:" lines; significant_figures= and
 * unit_base=1 in the text.
 */
static void test_report_unified(void **state)
{
	struct fixture *fx = fixture_two_threads(true);
	struct bench_job_opts *jo = &fx->o.jobs[0];
	json_t *root, *job, *mx;
	char *t;

	(void)state;
	jo->unified_rw = BENCH_UNIFIED_MIXED;
	root = capture_json(&fx->o, &fx->run, 1);
	job = json_array_get(jget(root, "jobs", NULL), 0);
	assert_null(json_object_get(job, "read"));
	assert_null(json_object_get(job, "write"));
	assert_null(json_object_get(job, "sync"));
	mx = jget(job, "mixed", NULL);
	assert_int_equal(jgeti(jget(mx, "total_ios", NULL)), 4000);
	assert_int_equal(jgeti(jget(mx, "io_bytes", NULL)), 4000 * 4096);
	assert_int_equal(jgeti(jget(mx, "clat_ns", "N", NULL)), 4000);
	assert_int_equal(jgeti(jget(mx, "clat_ns", "max", NULL)), 3499);
	assert_int_equal(jgeti(jget(mx, "runtime", NULL)), 2000);
	json_decref(root);
	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "  mixed: IOPS=2000, BW=8000KiB/s (8192kB/s)(15.6MiB/2000msec)\n");
	assert_not_contains(t, "  read:");
	assert_contains(t, "  MIXED: bw=8000KiB/s");
	assert_not_contains(t, "   READ:");
	free(t);

	jo->unified_rw = BENCH_UNIFIED_BOTH;
	jo->sig_figs = 6;
	jo->unit_base = 1;
	root = capture_json(&fx->o, &fx->run, 1);
	job = json_array_get(jget(root, "jobs", NULL), 0);
	assert_int_equal(jgeti(jget(job, "read", "total_ios", NULL)), 3000);
	assert_int_equal(jgeti(jget(job, "mixed", "total_ios", NULL)), 4000);
	json_decref(root);
	t = capture_text(&fx->o, &fx->run);
	/* 6000 KiB/s = 49152000 bit/s: 48000 Kibit/s, 49152 kbit/s */
	assert_contains(t, "  read: IOPS=1500, BW=48000Kibit/s (49152kbit/s)(12000KiB/2000msec)\n");
	assert_contains(t, "  mixed: IOPS=2000, BW=64000Kibit/s");
	assert_contains(t, "   READ: bw=48000Kibit/s");
	assert_contains(t, "  MIXED: bw=64000Kibit/s");
	free(t);
	fixture_free(fx);
}

/* stats=0 leaves the job out; disk_util=0 the device's disk stats. */
static void test_report_stats_disk_util(void **state)
{
	struct fixture *fx = fixture_two_threads(false);
	json_t *root;
	char *t;

	(void)state;
	fx->o.jobs[0].disk_util_off = true;
	root = capture_json(&fx->o, &fx->run, 1);
	assert_int_equal(json_array_size(jget(root, "jobs", NULL)), 2);
	assert_int_equal(json_array_size(jget(root, "disk_util", NULL)), 0);
	json_decref(root);
	t = capture_text(&fx->o, &fx->run);
	assert_not_contains(t, "Disk stats");
	assert_contains(t, "Run status group 0");
	free(t);

	fx->o.jobs[0].stats_off = true;
	root = capture_json(&fx->o, &fx->run, 1);
	assert_int_equal(json_array_size(jget(root, "jobs", NULL)), 0);
	json_decref(root);
	t = capture_text(&fx->o, &fx->run);
	assert_not_contains(t, "mixed: (groupid");
	free(t);
	fixture_free(fx);
}

static void test_json_group_reporting(void **state)
{
	struct fixture *fx = fixture_two_threads(true);
	json_t *root = capture_json(&fx->o, &fx->run, 1);
	json_t *jobs = jget(root, "jobs", NULL), *job;

	assert_int_equal(json_array_size(jobs), 1);
	job = json_array_get(jobs, 0);
	assert_string_equal(jgets(jget(job, "jobname", NULL)), "mixed");
	assert_int_equal(jgeti(jget(job, "read", "total_ios", NULL)), 3000);
	assert_int_equal(jgeti(jget(job, "write", "total_ios", NULL)), 1000);
	assert_int_equal(jgeti(jget(job, "read", "io_bytes", NULL)), 3000 * 4096);
	/* aggregate: all I/Os over the longest runtime */
	assert_int_equal(jgeti(jget(job, "read", "runtime", NULL)), 2000);
	assert_close(jgetr(jget(job, "read", "iops", NULL)), 1500.0);
	assert_close(jgetr(jget(job, "write", "iops", NULL)), 500.0);
	assert_int_equal(jgeti(jget(job, "read", "clat_ns", "N", NULL)), 3000);
	assert_int_equal(jgeti(jget(job, "read", "clat_ns", "min", NULL)), 1000);
	assert_int_equal(jgeti(jget(job, "read", "clat_ns", "max", NULL)), 2999);
	/* per-thread CPU: 1.0 s user over 3 s of thread runtime */
	assert_int_equal(jgeti(jget(job, "job_runtime", NULL)), 3000);
	assert_close(jgetr(jget(job, "usr_cpu", NULL)), 100.0 / 3.0);
	assert_close(jgetr(jget(job, "sys_cpu", NULL)), 50.0 / 3.0);
	assert_int_equal(jgeti(jget(job, "ctx", NULL)), 20);
	assert_int_equal(jgeti(jget(job, "minf", NULL)), 6);
	assert_int_equal(jgeti(jget(job, "blkstack", "threads", NULL)), 2);
	assert_close(jgetr(jget(job, "read", "bw_agg", NULL)), 100.0);
	json_decref(root);
	fixture_free(fx);

	/* without group_reporting: one object per thread */
	fx = fixture_two_threads(false);
	root = capture_json(&fx->o, &fx->run, 1);
	jobs = jget(root, "jobs", NULL);
	assert_int_equal(json_array_size(jobs), 2);
	assert_int_equal(jgeti(jget(json_array_get(jobs, 1), "read", "total_ios",
				    NULL)), 2000);
	assert_close(jgetr(jget(json_array_get(jobs, 0), "read", "iops", NULL)),
		     1000.0);
	/* thread 0: 4000 KiB/s of the group's 12000 KiB over 2 s */
	assert_close(jgetr(jget(json_array_get(jobs, 0), "read", "bw_agg", NULL)),
		     200.0 / 3.0);
	json_decref(root);
	fixture_free(fx);
}

/*
 * Two job sections: "readers" (numjobs=2, reads) and "writers" (one
 * thread, writes), group_reporting as given for each, "writers" in group
 * 1 when @stonewall.
 */
static struct fixture *fixture_two_jobs(bool gr_readers, bool gr_writers,
					bool stonewall)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct bench_job_result *j;
	unsigned int t;

	assert_non_null(fx);
	snprintf(fx->o.dev.devs[0], sizeof(fx->o.dev.devs[0]), "null");
	fx->o.dev.nr_devs = 1;
	fx->o.nr_jobs = 2;
	job_opts(&fx->o.jobs[0], "readers", RW_RANDREAD, 8);
	fx->o.jobs[0].numjobs = 2;
	fx->o.jobs[0].group_reporting = gr_readers;
	job_opts(&fx->o.jobs[1], "writers", RW_WRITE, 8);
	fx->o.jobs[1].group_reporting = gr_writers;
	fx->o.jobs[1].stonewall = stonewall;
	fx->jobs = jobs_alloc(3);
	for (t = 0; t < 3; t++) {
		j = &fx->jobs[t];
		job_init(j, &fx->o.jobs[t / 2], t % 2);
		j->groupid = t == 2 && stonewall;
		if (t < 2)
			fill_dir(&j->dir[DDIR_READ], 1000, 1000);
		else
			fill_dir(&j->dir[DDIR_WRITE], 2000, 5000);
		j->runtime_ns = NS_PER_SEC;
		j->usr_cpu_s = 0.5;
		j->ctx_switches = 1;
	}
	run_init(&fx->run, "null", "", fx->jobs, 3);
	return fx;
}

/*
 * fio's reporting group is the stonewall group alone: with group_reporting
 * every job of the group is one entry, named after the first job, whatever
 * the other jobs are called.
 */
static void test_group_reporting_across_names(void **state)
{
	struct fixture *fx = fixture_two_jobs(true, true, false);
	json_t *root = capture_json(&fx->o, &fx->run, 1), *jobs, *job;
	char *t, *p;

	jobs = jget(root, "jobs", NULL);
	assert_int_equal(json_array_size(jobs), 1);
	job = json_array_get(jobs, 0);
	assert_string_equal(jgets(jget(job, "jobname", NULL)), "readers");
	assert_int_equal(jgeti(jget(job, "read", "total_ios", NULL)), 2000);
	assert_int_equal(jgeti(jget(job, "write", "total_ios", NULL)), 2000);
	assert_int_equal(jgeti(jget(job, "write", "clat_ns", "min", NULL)), 5000);
	assert_int_equal(jgeti(jget(job, "blkstack", "threads", NULL)), 3);
	assert_int_equal(jgeti(jget(job, "job_runtime", NULL)), 3000);
	assert_int_equal(jgeti(jget(job, "ctx", NULL)), 3);
	json_decref(root);
	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "readers: (groupid=0, jobs=3): err= 0:");
	assert_not_contains(t, "writers:");
	p = strstr(t, "readers: (");
	assert_null(strstr(p + 1, "readers: ("));
	assert_contains(t, "  read: IOPS=2000,");
	assert_contains(t, "  write: IOPS=2000,");
	assert_contains(t, "     issued rwts: total=2000,2000,0,0");
	free(t);
	fixture_free(fx);

	/* the first job of the group decides for all of it */
	fx = fixture_two_jobs(true, false, false);
	root = capture_json(&fx->o, &fx->run, 1);
	assert_int_equal(json_array_size(jget(root, "jobs", NULL)), 1);
	json_decref(root);
	fixture_free(fx);
	fx = fixture_two_jobs(false, true, false);
	root = capture_json(&fx->o, &fx->run, 1);
	jobs = jget(root, "jobs", NULL);
	assert_int_equal(json_array_size(jobs), 3);
	assert_string_equal(jgets(jget(json_array_get(jobs, 2), "jobname", NULL)),
			    "writers");
	json_decref(root);
	fixture_free(fx);

	/* a stonewall makes two reporting groups: one entry each */
	fx = fixture_two_jobs(true, true, true);
	root = capture_json(&fx->o, &fx->run, 1);
	jobs = jget(root, "jobs", NULL);
	assert_int_equal(json_array_size(jobs), 2);
	job = json_array_get(jobs, 0);
	assert_string_equal(jgets(jget(job, "jobname", NULL)), "readers");
	assert_int_equal(jgeti(jget(job, "groupid", NULL)), 0);
	assert_int_equal(jgeti(jget(job, "read", "total_ios", NULL)), 2000);
	assert_int_equal(jgeti(jget(job, "write", "total_ios", NULL)), 0);
	assert_int_equal(jgeti(jget(job, "blkstack", "threads", NULL)), 2);
	job = json_array_get(jobs, 1);
	assert_string_equal(jgets(jget(job, "jobname", NULL)), "writers");
	assert_int_equal(jgeti(jget(job, "groupid", NULL)), 1);
	assert_int_equal(jgeti(jget(job, "write", "total_ios", NULL)), 2000);
	json_decref(root);
	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "readers: (groupid=0, jobs=2): err= 0:");
	assert_contains(t, "writers: (groupid=1, jobs=1): err= 0:");
	free(t);
	fixture_free(fx);
}

/* ---- text ---- */

static void test_text_basic(void **state)
{
	struct fixture *fx = fixture_one();
	char *t = capture_text(&fx->o, &fx->run);

	assert_contains(t, "randread: (groupid=0, jobs=1): err= 0: dev=null, clocksource=cpu\n");
	/* 500 IOPS, 2000 KiB/s = 2048 kB/s, 4000 KiB in 2000 ms */
	assert_contains(t, "  read: IOPS=500, BW=2000KiB/s (2048kB/s)(4000KiB/2000msec)\n");
	assert_contains(t, "    slat (nsec): min=20, max=20, avg=20.00, stdev=0.00\n");
	assert_contains(t, "    clat (nsec): min=500, max=1499, avg=999.50, stdev=");
	assert_contains(t, "     lat (nsec): min=520, max=1519, avg=1019.50, stdev=");
	assert_contains(t, "    clat percentiles (nsec):\n");
	assert_contains(t, "     |  1.00th=[");
	assert_contains(t, "], 10.00th=[");
	assert_contains(t, "], 20.00th=[");
	assert_contains(t, "],\n     | 30.00th=[");
	assert_contains(t, "     | 99.99th=[");
	/* fio's sample lines, after the percentiles */
	assert_contains(t, "]\n   bw (  KiB/s): min= 1900, max= 2100, per=100.00%, avg=2000.00, stdev=81.65, samples=4\n"
			   "   iops        : min=  475, max=  525, avg=500.00, stdev=20.41, samples=4\n");
	assert_contains(t, "  cpu          : usr=50.00%, sys=12.50%, ctx=42, majf=1, minf=30\n");
	assert_contains(t, "  IO depths    : 1=0.0%, 2=0.0%, 4=0.0%, 8=0.0%, 16=0.0%, 32=100.0%, >=64=0.0%\n");
	assert_contains(t, "     submit    : 0=0.0%, 4=0.0%, 8=0.0%, 16=0.0%, 32=100.0%, 64=0.0%, >=64=0.0%\n");
	assert_contains(t, "     complete  : 0=0.0%, 4=99.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=1.0%\n");
	assert_contains(t, "     issued rwts: total=1000,0,0,0");
	assert_contains(t, "  lat (nsec)   : ");
	assert_contains(t, "Run status group 0 (all jobs):\n");
	assert_contains(t, "   READ: bw=2000KiB/s (2048kB/s), 2000KiB/s-2000KiB/s (2048kB/s-2048kB/s), io=4000KiB (4096kB), run=2000-2000msec\n");
	assert_not_contains(t, "  write:");
	assert_not_contains(t, "WRITE:");
	assert_contains(t, "Disk stats (read/write):\n");
	assert_contains(t, "  null: ios=900/7, merge=100/3, ticks=40/2, in_queue=42, util=50.00%\n");
	assert_contains(t, "  null: requeues=11, timeouts=12, queue_runs=13, errors=14, core lat avg=1.23us\n");
	assert_not_contains(t, "trim_");
	assert_not_contains(t, "error:");
	free(t);
	fixture_free(fx);
}

/* The header names the clock; without one known, nothing is added. */
static void test_text_clocksource(void **state)
{
	struct fixture *fx = fixture_one();
	char *t;

	snprintf(fx->run.clocksource, sizeof(fx->run.clocksource),
		 "clock_gettime");
	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "randread: (groupid=0, jobs=1): err= 0: dev=null, clocksource=clock_gettime\n");
	free(t);
	fx->run.clocksource[0] = '\0';
	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "randread: (groupid=0, jobs=1): err= 0: dev=null\n");
	assert_not_contains(t, "clocksource");
	free(t);
	fixture_free(fx);
}

/* A run that discarded: trim counters appended to the disk stats line. */
static void test_text_disk_trim(void **state)
{
	struct fixture *fx = fixture_one();
	char *t;

	fx->run.disk.ios[BLK_STAT_DISCARD] = 5;
	fx->run.disk.ticks_ms[BLK_STAT_DISCARD] = 3;
	t = capture_text(&fx->o, &fx->run);
	/* in_queue is the sum of all directions' ticks: 40 + 2 + 3 */
	assert_contains(t, "  null: ios=900/7, merge=100/3, ticks=40/2, in_queue=45, util=50.00%, trim_ios=5, trim_merge=2, trim_ticks=3\n");
	free(t);
	fixture_free(fx);
}


static void test_text_percentile_values(void **state)
{
	struct fixture *fx = fixture_one();
	const struct blk_hist *clat = &fx->jobs[0].dir[DDIR_READ].clat;
	char *t = capture_text(&fx->o, &fx->run), want[64];
	unsigned long long p50 = blk_hist_percentile(clat, 50);
	unsigned long long p9999 = blk_hist_percentile(clat, 99.99);

	/* 500..1499 ns: nsec, values right-aligned at fio's minimum width 5 */
	assert_true(p9999 >= 1000 && p9999 <= 9999);
	assert_contains(t, "    clat percentiles (nsec):\n");
	snprintf(want, sizeof(want), ", 50.00th=[%5llu], ", p50);
	assert_contains(t, want);
	snprintf(want, sizeof(want), "     | 99.99th=[ %llu]\n", p9999);
	assert_contains(t, want);
	/* 1st percentile of 500..1499 has three digits: two spaces */
	snprintf(want, sizeof(want), "     |  1.00th=[  %llu],",
		 (unsigned long long)blk_hist_percentile(clat, 1));
	assert_contains(t, want);
	free(t);
	fixture_free(fx);
}

/* A randread job whose read direction holds only what the test adds. */
static struct fixture *fixture_empty_read(void)
{
	struct fixture *fx = fixture_one();
	struct bench_job_result *j = &fx->jobs[0];

	job_init(j, &fx->o.jobs[0], 0);
	j->runtime_ns = 2 * NS_PER_SEC;
	j->dir[DDIR_READ].ios = 1000;
	j->dir[DDIR_READ].bytes = 1000 * 4096;
	return fx;
}

/*
 * min/max/avg lines: up one unit (nsec -> usec -> msec) only while min, max
 * and mean all reach 1000 of the current unit; min and max truncated,
 * avg and stdev with two decimals.
 */
static void test_text_units(void **state)
{
	struct fixture *fx = fixture_one();
	struct bench_dir_stats *s = &fx->jobs[0].dir[DDIR_READ];
	char *t, want[128];
	int i;

	/* long outliers don't move a line whose min is under 1 us */
	blk_hist_add(&s->clat, 50000);
	blk_hist_add(&s->lat, 20000000);
	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "    slat (nsec): min=20, max=20, avg=20.00, stdev=0.00\n");
	assert_contains(t, "    clat (nsec): min=500, max=50000, avg=");
	assert_contains(t, "     lat (nsec): min=520, max=20000000, avg=");
	assert_not_contains(t, "(usec): min=0,");
	assert_not_contains(t, "(msec): min=0,");
	assert_close(line_field(t, "     lat (nsec)", "avg="),
		     round(blk_hist_mean(&s->lat) * 100) / 100);
	free(t);
	fixture_free(fx);

	/* everything at or over 1 us: usec; stdev plays no part (0 here) */
	fx = fixture_empty_read();
	s = &fx->jobs[0].dir[DDIR_READ];
	blk_hist_add_n(&s->slat, 20000, 1000);
	for (i = 0; i < 1000; i++)
		blk_hist_add(&s->clat, 2000 + i);
	blk_hist_add_n(&s->lat, 1000, 1000);
	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "    slat (usec): min=20, max=20, avg=20.00, stdev=0.00\n");
	snprintf(want, sizeof(want),
		 "    clat (usec): min=2, max=2, avg=2.50, stdev=%.2f\n",
		 blk_hist_stddev(&s->clat) / 1000.0);
	assert_contains(t, want);
	/* exactly 1000 ns is enough */
	assert_contains(t, "     lat (usec): min=1, max=1, avg=1.00, stdev=0.00\n");
	free(t);
	fixture_free(fx);

	/* 999 ns is not */
	fx = fixture_empty_read();
	s = &fx->jobs[0].dir[DDIR_READ];
	blk_hist_add_n(&s->clat, 999, 999);
	blk_hist_add(&s->clat, 5000000);
	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "    clat (nsec): min=999, max=5000000, avg=");
	free(t);
	fixture_free(fx);

	/* msec only once min, max and mean reach 1 ms */
	fx = fixture_empty_read();
	s = &fx->jobs[0].dir[DDIR_READ];
	blk_hist_add_n(&s->clat, 1500000, 500);
	blk_hist_add_n(&s->clat, 2500000, 500);
	blk_hist_add_n(&s->lat, 999999, 1);
	blk_hist_add_n(&s->lat, 20000000, 999);
	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "    clat (msec): min=1, max=2, avg=2.00, stdev=0.50\n");
	/* min 999.999 us: stays in usec, max 20000 us */
	assert_contains(t, "     lat (usec): min=999, max=20000, avg=");
	free(t);
	fixture_free(fx);
}

/*
 * The "lat (nsec/usec/msec)" distribution is of clat, as in fio: clat 3 x
 * 300 ns and 1 x 5 us, total latency 30 us for all four.
 */
static void test_text_lat_dist_is_clat(void **state)
{
	struct fixture *fx = fixture_empty_read();
	struct bench_dir_stats *s = &fx->jobs[0].dir[DDIR_READ];
	char *t;

	s->ios = 4;
	s->bytes = 4 * 4096;
	blk_hist_add_n(&s->clat, 300, 3);
	blk_hist_add(&s->clat, 5000);
	blk_hist_add_n(&s->lat, 30000, 4);
	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "  lat (nsec)   : 500=75.00%\n");
	assert_contains(t, "  lat (usec)   : 10=25.00%\n");
	assert_not_contains(t, "50=");
	assert_not_contains(t, "lat (msec)");
	free(t);
	fixture_free(fx);
}

/*
 * clat percentiles: fio's show_clat_percentiles() rule, from the smallest
 * and the largest value listed: usec when the smallest is over 2000 ns and
 * the largest over 99999 ns, msec when over 2000 us and 99999 us, nsec
 * otherwise.  Values are rounded to the unit and padded to the widest, at
 * least five characters.
 */
static void check_pct_block(const struct blk_hist *h, const char *t,
			    const char *unit, uint64_t div)
{
	static const double pcts[NR_TEXT_PCTS] = {
		1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0,
		95.0, 99.0, 99.5, 99.9, 99.95, 99.99,
	};
	unsigned long long v[NR_TEXT_PCTS];
	char got[8];
	int i;

	parse_pcts(t, got, v);
	assert_string_equal(got, unit);
	for (i = 0; i < NR_TEXT_PCTS; i++) {
		assert_int_equal(v[i], in_unit(blk_hist_percentile(h, pcts[i]), div));
		assert_true(v[i] > 0);
	}
}

static void test_text_percentile_units(void **state)
{
	struct fixture *fx = fixture_empty_read();
	struct blk_hist *clat = &fx->jobs[0].dir[DDIR_READ].clat;
	char *t, want[64];

	/* 3 us .. 150 us: usec */
	blk_hist_add_n(clat, 3000, 500);
	blk_hist_add_n(clat, 7600, 400);
	blk_hist_add_n(clat, 150000, 100);
	t = capture_text(&fx->o, &fx->run);
	check_pct_block(clat, t, "usec", 1000);
	/* 7600 ns lands in a bucket whose midpoint is 7615 ns: rounds up */
	assert_int_equal(blk_hist_percentile(clat, 60), 7615);
	assert_contains(t, "60.00th=[    8]");
	/* width 5 although the widest, 150, has three digits */
	assert_contains(t, "|  1.00th=[    3],");
	free(t);
	fixture_free(fx);

	/* 3 us .. 50 us: smallest over 2000 ns but largest under 100 us: nsec */
	fx = fixture_empty_read();
	clat = &fx->jobs[0].dir[DDIR_READ].clat;
	blk_hist_add_n(clat, 3000, 900);
	blk_hist_add_n(clat, 50000, 100);
	t = capture_text(&fx->o, &fx->run);
	check_pct_block(clat, t, "nsec", 1);
	assert_contains(t, "|  1.00th=[ 3000],");
	/* bucket midpoints: the 50 us samples read 49663 */
	snprintf(want, sizeof(want), "| 99.99th=[%llu]\n",
		 (unsigned long long)blk_hist_percentile(clat, 99.99));
	assert_contains(t, want);
	free(t);
	fixture_free(fx);

	/*
	 * 1.5 us .. 1.07 s: smallest under 2000 ns, nsec however long the
	 * tail (2^30 ns starts a bucket, so it reads back exactly)
	 */
	fx = fixture_empty_read();
	clat = &fx->jobs[0].dir[DDIR_READ].clat;
	blk_hist_add_n(clat, 1500, 900);
	blk_hist_add_n(clat, 1ull << 30, 100);
	t = capture_text(&fx->o, &fx->run);
	check_pct_block(clat, t, "nsec", 1);
	/* ten digits wide: three a line, as fio wraps */
	assert_contains(t, "|  1.00th=[      1500],  5.00th=[      1500], 10.00th=[      1500],\n"
			   "     | 20.00th=[");
	assert_contains(t, "     | 99.95th=[1073741824], 99.99th=[1073741824]\n");
	free(t);
	fixture_free(fx);

	/* 3 ms .. 134 ms (2^27 ns, a bucket's first value): msec */
	fx = fixture_empty_read();
	clat = &fx->jobs[0].dir[DDIR_READ].clat;
	blk_hist_add_n(clat, 3000000, 900);
	blk_hist_add_n(clat, 1ull << 27, 100);
	t = capture_text(&fx->o, &fx->run);
	check_pct_block(clat, t, "msec", 1000000);
	assert_contains(t, "|  1.00th=[    3],");
	assert_contains(t, "| 99.99th=[  134]\n");
	free(t);
	fixture_free(fx);

	/* 3 ms .. 33.5 ms (2^25 ns): largest under 100 ms, usec */
	fx = fixture_empty_read();
	clat = &fx->jobs[0].dir[DDIR_READ].clat;
	blk_hist_add_n(clat, 3000000, 900);
	blk_hist_add_n(clat, 1ull << 25, 100);
	t = capture_text(&fx->o, &fx->run);
	check_pct_block(clat, t, "usec", 1000);
	assert_contains(t, "|  1.00th=[ 3000],");
	assert_contains(t, "| 99.99th=[33554]\n");
	free(t);
	fixture_free(fx);
}

/*
 * Regression: one 10 ms outlier among 100..399 ns completions used to pick
 * msec/usec from the max alone and print "avg=0.00" and percentiles of
 * [0].  The lines stay in nsec and every listed value is non-zero.
 */
static void test_text_units_small_values_not_rounded_to_zero(void **state)
{
	struct fixture *fx = fixture_empty_read();
	struct bench_dir_stats *s = &fx->jobs[0].dir[DDIR_READ];
	unsigned long long v[NR_TEXT_PCTS];
	char *t, unit[8], want[128];
	double avg;
	int i;

	for (i = 0; i < 1000; i++) {
		blk_hist_add(&s->slat, 40 + i % 20);
		blk_hist_add(&s->clat, 100 + i % 300);
		blk_hist_add(&s->lat, 150 + i % 300);
	}
	/* 1001 samples: the outlier is the 99.99th percentile itself */
	blk_hist_add(&s->slat, 10000000);
	blk_hist_add(&s->clat, 10000000);
	blk_hist_add(&s->lat, 10000000);
	s->ios = 1001;
	t = capture_text(&fx->o, &fx->run);

	assert_not_contains(t, "avg=0.00");
	assert_contains(t, "    slat (nsec): min=40, max=10000000, avg=");
	assert_contains(t, "    clat (nsec): min=100, max=10000000, avg=");
	assert_contains(t, "     lat (nsec): min=150, max=10000000, avg=");
	avg = line_field(t, "    clat (nsec)", "avg=");
	assert_true(avg >= 100);
	assert_close(avg, round(blk_hist_mean(&s->clat) * 100) / 100);
	snprintf(want, sizeof(want), ", stdev=%.2f\n", blk_hist_stddev(&s->clat));
	assert_contains(t, want);

	parse_pcts(t, unit, v);
	assert_true(!strcmp(unit, "nsec") || !strcmp(unit, "usec"));
	assert_string_equal(unit, "nsec");
	for (i = 0; i < NR_TEXT_PCTS; i++)
		assert_true(v[i] > 0);
	assert_true(v[0] >= 100 && v[0] < 400);
	assert_int_equal(v[0], blk_hist_percentile(&s->clat, 1));
	/* 99.9th is the last below the outlier (rank 1000 of 1001) */
	assert_true(v[14] >= 100 && v[14] < 400);
	assert_int_equal(v[15], 10000000);
	assert_int_equal(v[16], 10000000);
	assert_not_contains(t, "[0]");
	assert_not_contains(t, " 0]");
	free(t);
	fixture_free(fx);

	/*
	 * The shape of a null-device run: most completions in a few hundred
	 * ns, a 0.1% tail at 24..51 us.  nsec, five wide.
	 */
	fx = fixture_empty_read();
	s = &fx->jobs[0].dir[DDIR_READ];
	blk_hist_add_n(&s->clat, 150, 5000);
	blk_hist_add_n(&s->clat, 250, 4890);
	blk_hist_add_n(&s->clat, 24000, 100);
	blk_hist_add_n(&s->clat, 51000, 10);
	s->ios = 10000;
	t = capture_text(&fx->o, &fx->run);
	check_pct_block(&s->clat, t, "nsec", 1);
	snprintf(want, sizeof(want), "|  1.00th=[  %llu],",
		 (unsigned long long)blk_hist_percentile(&s->clat, 1));
	assert_contains(t, want);
	snprintf(want, sizeof(want), "| 99.99th=[%llu]\n",
		 (unsigned long long)blk_hist_percentile(&s->clat, 99.99));
	assert_contains(t, want);
	assert_contains(t, "    clat (nsec): min=150, max=51000, avg=");
	free(t);
	fixture_free(fx);
}

static void test_text_fio_numbers(void **state)
{
	struct fixture *fx = fixture_one();
	struct bench_job_result *j = &fx->jobs[0];
	char *t;

	/* 4512345 IOPS over 1 s; 18.5e9 B/s = 17.2 GiB/s */
	j->runtime_ns = NS_PER_SEC;
	j->dir[DDIR_READ].ios = 4512345;
	j->dir[DDIR_READ].bytes = 18500000000ull;
	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "  read: IOPS=4512k, BW=17.2GiB/s (18.5GB/s)(17.2GiB/1000msec)\n");
	free(t);

	/* 45123 IOPS, 176 MiB/s */
	j->dir[DDIR_READ].ios = 45123;
	j->dir[DDIR_READ].bytes = 45123ull * 4096;
	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "  read: IOPS=45.1k, BW=176MiB/s (185MB/s)(176MiB/1000msec)\n");
	free(t);

	/*
	 * 81.1 GiB/s steps up to GiB, never "83046MiB/s" or "81.1kMiB/s",
	 * in the job's line and the group's
	 */
	j->dir[DDIR_READ].ios = 21260288;
	j->dir[DDIR_READ].bytes = 87080461926ull;
	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "  read: IOPS=21.3M, BW=81.1GiB/s (87.1GB/s)(81.1GiB/1000msec)\n");
	assert_contains(t, "   READ: bw=81.1GiB/s (87.1GB/s), 81.1GiB/s-81.1GiB/s (87.1GB/s-87.1GB/s), io=81.1GiB (87.1GB), run=1000-1000msec\n");
	assert_not_contains(t, "kMiB");
	assert_not_contains(t, "kGiB");
	free(t);

	/* just past 9999 MiB/s: 9.77 GiB/s */
	j->dir[DDIR_READ].bytes = 10485235712ull; /* 9999.5 MiB */
	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "BW=9.77GiB/s (10.5GB/s)");
	free(t);
	fixture_free(fx);
}

static void test_text_lat_invalid(void **state)
{
	struct fixture *fx = fixture_one();
	char *t;

	fx->jobs[0].lat_valid = false;
	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "  read: IOPS=500,");
	assert_not_contains(t, "slat");
	assert_not_contains(t, "clat");
	assert_not_contains(t, " lat (");
	assert_not_contains(t, "percentiles");
	assert_contains(t, "  cpu          :");
	free(t);
	fixture_free(fx);
}

static void test_text_error(void **state)
{
	struct fixture *fx = fixture_one();
	char *t;

	fx->jobs[0].error = -EIO;
	snprintf(fx->jobs[0].errmsg, sizeof(fx->jobs[0].errmsg),
		 "read at offset 4096: IOERR");
	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "randread: (groupid=0, jobs=1): err= 5: dev=null, clocksource=cpu\n"
			   "  error: read at offset 4096: IOERR\n");
	free(t);

	/* no message: strerror */
	fx->jobs[0].errmsg[0] = '\0';
	fx->jobs[0].error = -EINVAL;
	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "err=22: dev=null, clocksource=cpu\n");
	assert_contains(t, "  error: Invalid argument\n");
	free(t);
	fixture_free(fx);
}

static void test_text_group_reporting(void **state)
{
	struct fixture *fx = fixture_two_threads(true);
	char *t, *p;

	/* zonemode=zbd's resets: summed over the group, on the write line */
	fx->jobs[0].zone_resets = 3;
	fx->jobs[1].zone_resets = 4;
	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "mixed: (groupid=0, jobs=2): err= 0: dev=null, clocksource=cpu\n");
	p = strstr(t, "mixed: (");
	assert_null(strstr(p + 1, "mixed: ("));
	/* 3000 reads, 1000 writes over the longest runtime (2 s) */
	assert_contains(t, "  read: IOPS=1500, BW=6000KiB/s (6144kB/s)(11.7MiB/2000msec)\n");
	/* fio's zbd_write_status(): "; N zone resets" on every write line */
	assert_contains(t, "  write: IOPS=500, BW=2000KiB/s (2048kB/s)(4000KiB/2000msec); 7 zone resets\n");
	/* min, max and mean all at least 1 us: usec, min and max truncated */
	assert_contains(t, "    clat (usec): min=1, max=2,");
	assert_contains(t, "    clat (usec): min=3, max=3, avg=3.25,");
	assert_contains(t, "    slat (nsec): min=20, max=20,");
	assert_contains(t, "  cpu          : usr=33.33%, sys=16.67%, ctx=20, majf=0, minf=6\n");
	assert_contains(t, "     issued rwts: total=3000,1000,0,0");
	assert_contains(t, "  IO depths    : 1=0.0%, 2=0.0%, 4=100.0%,");
	assert_contains(t, "   READ: bw=6000KiB/s (6144kB/s), 6000KiB/s-6000KiB/s (6144kB/s-6144kB/s), io=11.7MiB (12.3MB), run=2000-2000msec\n");
	assert_contains(t, "  WRITE: bw=2000KiB/s");
	free(t);
	fixture_free(fx);

	/* without it: two sections, and the run status spans both threads */
	fx = fixture_two_threads(false);
	t = capture_text(&fx->o, &fx->run);
	p = strstr(t, "mixed: (groupid=0, jobs=1)");
	assert_non_null(p);
	assert_non_null(strstr(p + 1, "mixed: (groupid=0, jobs=1)"));
	assert_contains(t, "  read: IOPS=1000, BW=4000KiB/s");
	/* 12000 KiB over 2 s; threads at 4000 and 4000 KiB/s; 1000-2000 ms */
	assert_contains(t, "   READ: bw=6000KiB/s (6144kB/s), 4000KiB/s-4000KiB/s (4096kB/s-4096kB/s), io=11.7MiB (12.3MB), run=1000-2000msec\n");
	free(t);
	fixture_free(fx);
}

static void test_text_groups(void **state)
{
	struct fixture *fx = fixture_two_threads(false);
	char *t;

	/* stonewall: the second thread in group 1 */
	fx->jobs[1].groupid = 1;
	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "mixed: (groupid=1, jobs=1)");
	assert_contains(t, "Run status group 0 (all jobs):\n"
			   "   READ: bw=4000KiB/s");
	assert_contains(t, "Run status group 1 (all jobs):\n"
			   "   READ: bw=4000KiB/s (4096kB/s), 4000KiB/s-4000KiB/s (4096kB/s-4096kB/s), io=8000KiB (8192kB), run=2000-2000msec\n");
	free(t);
	fixture_free(fx);
}

static void test_text_util_capped(void **state)
{
	struct fixture *fx = fixture_one();
	char *t;

	fx->run.disk.io_ticks_ms = 5000; /* more than the 2 s wall time */
	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "util=100.00%\n");
	free(t);
	fixture_free(fx);
}

/* ---- matrix and totals ---- */

static void test_run_totals(void **state)
{
	struct fixture *fx = fixture_two_threads(false);

	/*
	 * all I/Os over the span of the windows: without windows, the
	 * threads start together, so (1000 + 500 + 2000 + 500) over 2 s
	 */
	assert_close(bench_run_iops(&fx->run), 2000.0);
	/* (1.5 + 0.5) s CPU over 2 s wall */
	assert_close(bench_run_cpu_pct(&fx->run), 100.0);
	/*
	 * mean total latency (lat, clat + 20 ns) of all I/Os: reads
	 * 1020..2019 (1000), 1020..3019 (2000), writes 3020..3519 twice
	 */
	assert_close(bench_run_lat_us(&fx->run),
		     (1000 * 1519.5 + 2000 * 2019.5 + 1000 * 3269.5) / 4000 / 1000);
	/* 100 + 3 + 2 merges */
	assert_close(bench_run_merges(&fx->run), 0.105);
	/*
	 * the device's requests per bio, 907 requests for 907 + 105 bios,
	 * times the bio rate
	 */
	assert_close(bench_run_reqs(&fx->run), 2000.0 * 907 / 1012);
	/* a flush request carries no bio the jobs counted */
	fx->run.disk.ios[BLK_STAT_FLUSH] = 50;
	assert_close(bench_run_reqs(&fx->run), 2000.0 * 907 / 1012);
	fx->jobs[0].lat_valid = false;
	fx->jobs[1].lat_valid = false;
	assert_close(bench_run_lat_us(&fx->run), 0.0);
	fx->run.wall_ns = 0;
	assert_close(bench_run_cpu_pct(&fx->run), 0.0);
	fixture_free(fx);
}

/*
 * Threads whose measured windows do not overlap (many threads started
 * staggered on few CPUs) must not add up as if they ran at once: group
 * IOPS, the run status bw and the matrix IOPS are totals over the span
 * from the earliest window start to the latest window end.  Before, each
 * was the total over the longest thread runtime (or a sum of per-thread
 * rates), which made 256 threads of 10 ms on 2 vCPUs report 633M IOPS.
 */
static void set_window(struct bench_job_result *j, uint64_t start, uint64_t len)
{
	int d;

	j->window_start_ns = start;
	j->window_end_ns = start + len;
	j->runtime_ns = len;
	for (d = 0; d < DDIR_NR; d++) {
		j->dir[d].start_ns = start;
		j->dir[d].runtime_ns = len;
	}
}

static void test_group_iops_staggered_windows(void **state)
{
	struct fixture *fx = fixture_two_threads(true);
	json_t *root, *job;
	char *t;

	/* thread 0 runs 10..11 s, thread 1 11..13 s: a 3 s span */
	set_window(&fx->jobs[0], 10 * NS_PER_SEC, NS_PER_SEC);
	set_window(&fx->jobs[1], 11 * NS_PER_SEC, 2 * NS_PER_SEC);
	root = capture_json(&fx->o, &fx->run, 1);
	job = json_array_get(jget(root, "jobs", NULL), 0);
	assert_int_equal(jgeti(jget(job, "read", "runtime", NULL)), 3000);
	assert_close(jgetr(jget(job, "read", "iops", NULL)), 3000.0 / 3.0);
	assert_close(jgetr(jget(job, "write", "iops", NULL)), 1000.0 / 3.0);
	/* per-thread CPU still over the threads' summed runtimes */
	assert_int_equal(jgeti(jget(job, "job_runtime", NULL)), 3000);
	json_decref(root);
	t = capture_text(&fx->o, &fx->run);
	/* 3000 reads of 4 KiB over 3 s */
	assert_contains(t, "  read: IOPS=1000, BW=4000KiB/s (4096kB/s)(11.7MiB/3000msec)\n");
	assert_contains(t, "   READ: bw=4000KiB/s (4096kB/s), 4000KiB/s-4000KiB/s");
	free(t);
	/* the matrix: 4000 I/Os over 3 s, not 1500/s + 1250/s */
	assert_close(bench_run_iops(&fx->run), 4000.0 / 3.0);
	fixture_free(fx);

	/* per-thread entries keep their own rates; the group's bw is over the span */
	fx = fixture_two_threads(false);
	set_window(&fx->jobs[0], 10 * NS_PER_SEC, NS_PER_SEC);
	set_window(&fx->jobs[1], 11 * NS_PER_SEC, 2 * NS_PER_SEC);
	root = capture_json(&fx->o, &fx->run, 1);
	job = json_array_get(jget(root, "jobs", NULL), 0);
	assert_close(jgetr(jget(job, "read", "iops", NULL)), 1000.0);
	assert_int_equal(jgeti(jget(job, "read", "runtime", NULL)), 1000);
	/* thread 0: 4000 KiB/s of the group's 12000 KiB over 3 s */
	assert_close(jgetr(jget(job, "read", "bw_agg", NULL)), 100.0);
	job = json_array_get(jget(root, "jobs", NULL), 1);
	assert_close(jgetr(jget(job, "read", "iops", NULL)), 1000.0);
	json_decref(root);
	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "   READ: bw=4000KiB/s (4096kB/s), 4000KiB/s-4000KiB/s (4096kB/s-4096kB/s), io=11.7MiB (12.3MB), run=1000-2000msec\n");
	free(t);
	fixture_free(fx);
}

/*
 * A thread that did no I/O (one that could not start) has no window; it
 * must not stretch the span back to 0.
 */
static void test_group_window_ignores_idle_thread(void **state)
{
	struct fixture *fx = fixture_two_threads(true);
	json_t *root, *job;
	int d;

	set_window(&fx->jobs[0], 10 * NS_PER_SEC, NS_PER_SEC);
	for (d = 0; d < DDIR_NR; d++) {
		fx->jobs[1].dir[d].ios = 0;
		fx->jobs[1].dir[d].bytes = 0;
	}
	fx->jobs[1].runtime_ns = 0;
	root = capture_json(&fx->o, &fx->run, 1);
	job = json_array_get(jget(root, "jobs", NULL), 0);
	assert_int_equal(jgeti(jget(job, "read", "runtime", NULL)), 1000);
	assert_close(jgetr(jget(job, "read", "iops", NULL)), 1000.0);
	json_decref(root);
	assert_close(bench_run_iops(&fx->run), 1500.0);
	fixture_free(fx);
}

static void test_matrix(void **state)
{
	static const char *const rows[] = { "read", "randread" };
	struct bench_job_result *jobs = jobs_alloc(4);
	struct bench_job_opts jo;
	struct bench_run_result runs[4];
	unsigned int row, d;
	char *t;

	job_opts(&jo, "m", RW_READ, 32);
	for (row = 0; row < 2; row++) {
		for (d = 0; d < 2; d++) {
			struct bench_run_result *r = &runs[row * 2 + d];
			struct bench_job_result *j = &jobs[row * 2 + d];

			job_init(j, &jo, 0);
			j->runtime_ns = NS_PER_SEC;
			/* IOPS(K) 8798.59 / 1234.56 / ... */
			j->dir[DDIR_READ].ios = d ? 1234560 : 8798590;
			j->dir[DDIR_READ].ios += row;
			/*
			 * LAT(us) is of total latency: an inline device
			 * spends its time before the issue timestamp, so
			 * clat (150 ns) is far below lat
			 */
			blk_hist_add_n(&j->dir[DDIR_READ].clat, 150, 10);
			blk_hist_add_n(&j->dir[DDIR_READ].lat, 2150 + row * 5000, 10);
			run_init(r, d ? "ram" : "null", rows[row], j, 1);
			r->wall_ns = NS_PER_SEC;
			r->proc_usr_s = 0.1543;
			r->proc_sys_s = 0;
			r->disk.merges[BLK_STAT_READ] = d ? 9064090 : 8798590;
			/* half the bios merged: REQS(K) is half of IOPS(K) */
			r->disk.ios[BLK_STAT_READ] = r->disk.merges[BLK_STAT_READ];
			r->disk.ios[BLK_STAT_WRITE] = 0;
			r->disk.merges[BLK_STAT_WRITE] = 0;
			r->disk.merges[BLK_STAT_DISCARD] = 0;
		}
	}
	t = capture_matrix(runs, 2, 2);
	assert_contains(t, "---------------------------------------\n"
			   "IOPS(K)   |     null |      ram\n"
			   "---------------------------------------\n"
			   "read      |  8798.59 |  1234.56\n"
			   "---------------------------------------\n"
			   "randread  |  8798.59 |  1234.56\n"
			   "---------------------------------------\n");
	assert_contains(t, "---------------------------------------\n"
			   "REQS(K)   |     null |      ram\n"
			   "---------------------------------------\n"
			   "read      |  4399.30 |   617.28\n"
			   "---------------------------------------\n"
			   "randread  |  4399.30 |   617.28\n"
			   "---------------------------------------\n");
	assert_contains(t, "CPU(%)    |     null |      ram\n");
	assert_contains(t, "read      |    15.43 |    15.43\n");
	assert_contains(t, "LAT(us)   |     null |      ram\n");
	assert_contains(t, "read      |     2.15 |     2.15\n");
	assert_contains(t, "randread  |     7.15 |     7.15\n");
	assert_contains(t, "MERGE(K)  |     null |      ram\n");
	assert_contains(t, "read      |  8798.59 |  9064.09\n");
	/* the tables in order, then the legend after a blank line */
	assert_true(strstr(t, "IOPS(K)") < strstr(t, "REQS(K)  "));
	assert_true(strstr(t, "REQS(K)  ") < strstr(t, "CPU(%)  "));
	assert_true(strstr(t, "CPU(%)  ") < strstr(t, "LAT(us)  "));
	assert_true(strstr(t, "LAT(us)  ") < strstr(t, "MERGE(K)  "));
	assert_contains(t, "---\n\nIOPS(K): bios completed per second, thousands; "
			   "REQS(K): requests the device completed per second, thousands");
	assert_contains(t, "; CPU(%): process user+system CPU time / wall time x 100");
	/* no cell verified: no VERIFY(K) table */
	assert_not_contains(t, "VERIFY(K)");
	assert_contains(t, "; LAT(us): mean latency of all I/Os, from the I/O being "
			   "prepared to its completion being reaped (fio's lat); ");
	assert_not_contains(t, "clat");
	assert_contains(t, "MERGE(K): bios merged into requests, thousands\n");
	free(t);
	/* a cell that verified: the VERIFY(K) table, and its legend */
	jobs[1].verify = true;
	jobs[1].verify_method = VERIFY_CRC32C;
	jobs[1].verify_blocks = 2500;
	t = capture_matrix(runs, 2, 2);
	assert_contains(t, "VERIFY(K) |     null |      ram\n"
			   "---------------------------------------\n"
			   "read      |     0.00 |     2.50\n");
	assert_true(strstr(t, "MERGE(K)  ") < strstr(t, "VERIFY(K) "));
	assert_contains(t, "; VERIFY(K): blocks read and checked (verify=crc32c), thousands\n");
	assert_not_contains(t, "note: other processes");
	free(t);
	/* a cell that fills the machine by itself (its own CPU(%) at 2 CPUs
	 * worth, others 0.1): no note (regression: it said "other processes
	 * kept up to 0.00 of the 2 CPUs busy" of uring randwrite's io-wq) */
	runs[3].others_cpus = 0.1;
	{
		double usr = runs[3].proc_usr_s;

		runs[3].proc_usr_s = 1e6;
		t = capture_matrix(runs, 2, 2);
		assert_not_contains(t, "note: other processes");
		free(t);
		runs[3].proc_usr_s = usr;
	}
	/* other processes kept the machine's CPUs busy during a cell: a note names it */
	runs[3].others_cpus = 1e6;
	t = capture_matrix(runs, 2, 2);
	assert_contains(t, "\nnote: other processes kept up to 1000000.00 of the ");
	assert_contains(t, " CPUs busy (ram randread): cells got less CPU than they asked for");
	free(t);
	free(jobs);
}

/* The layout lines above the matrix and the JSON "layout" array. */
static void test_matrix_layout(void **state)
{
	struct bench_layout l[3];
	json_error_t jerr;
	json_t *root, *a;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	memset(l, 0, sizeof(l));
	snprintf(l[0].dev, sizeof(l[0].dev), "null");
	l[0].state = BENCH_LAYOUT_NO_DATA;
	l[0].reason = "stores no data";
	snprintf(l[1].dev, sizeof(l[1].dev), "ram");
	l[1].state = BENCH_LAYOUT_WRITTEN;
	l[1].reason = "new device";
	l[1].bytes = 1ull << 30;
	l[1].bs = 4096;
	l[1].verify = true;
	l[1].verify_method = VERIFY_CRC32C;
	l[1].requests = 8192;
	l[1].ns = 420000000;
	snprintf(l[2].dev, sizeof(l[2].dev), "uring");
	l[2].filename = "/tmp/x.img";
	l[2].state = BENCH_LAYOUT_KEPT;
	l[2].reason = "file holds data";
	l[2].bytes = 512ull << 20;

	f = open_memstream(&buf, &len);
	assert_non_null(f);
	bench_report_layout(f, l, 3);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(buf,
		"layout: null: stores no data, not laid out: its reads return no written data\n"
		"layout: ram: new device, 1 GiB written before the read rows (4 KiB blocks with crc32c headers, 0.42 s)\n"
		"layout: uring /tmp/x.img: file holds data, not laid out: the read rows read its 512 MiB as it is\n");
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(bench_report_json_layout(f, NULL, NULL, 0, l, 3), 0);
	assert_int_equal(fclose(f), 0);
	root = json_loads(buf, 0, &jerr);
	free(buf);
	assert_non_null(root);
	a = json_object_get(root, "layout");
	assert_int_equal(json_array_size(a), 3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(a, 0), "state")),
			    "no data");
	assert_string_equal(json_string_value(json_object_get(json_array_get(a, 1), "state")),
			    "written");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(a, 1), "bytes")),
			 1ull << 30);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(a, 1), "time_ns")),
			 420000000);
	assert_true(json_is_true(json_object_get(json_array_get(a, 1), "verify")));
	assert_string_equal(json_string_value(json_object_get(json_array_get(a, 2), "filename")),
			    "/tmp/x.img");
	assert_string_equal(json_string_value(json_object_get(json_array_get(a, 2), "reason")),
			    "file holds data");
	/* only what was written has a time */
	assert_null(json_object_get(json_array_get(a, 2), "time_ns"));
	json_decref(root);
}

/*
 * verify=: a write job of two threads, each 2 s of writes and then a 0.5 s
 * verify phase that read back its 1000 blocks; thread 1 found 3 bad ones.
 */
static struct fixture *fixture_verify(bool group_reporting)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	unsigned int t;

	assert_non_null(fx);
	snprintf(fx->o.dev.devs[0], sizeof(fx->o.dev.devs[0]), "ram");
	fx->o.dev.nr_devs = 1;
	fx->o.nr_jobs = 1;
	job_opts(&fx->o.jobs[0], "vw", RW_RANDWRITE, 8);
	fx->o.jobs[0].numjobs = 2;
	fx->o.jobs[0].group_reporting = group_reporting;
	fx->o.jobs[0].verify = VERIFY_CRC32C;
	fx->o.jobs[0].do_verify = true;
	fx->o.jobs[0].offset_increment = 4 << 20;
	snprintf(fx->o.jobs[0].verify_dump_dir,
		 sizeof(fx->o.jobs[0].verify_dump_dir), "/tmp/d");
	fx->jobs = jobs_alloc(2);
	for (t = 0; t < 2; t++) {
		struct bench_job_result *j = &fx->jobs[t];

		job_init(j, &fx->o.jobs[0], t);
		fill_dir(&j->dir[DDIR_WRITE], 1000, 1000);
		fill_dir(&j->dir[DDIR_READ], 1000, 500);
		j->dir[DDIR_WRITE].runtime_ns = 2 * NS_PER_SEC;
		j->dir[DDIR_TRIM].runtime_ns = 2 * NS_PER_SEC;
		j->dir[DDIR_READ].runtime_ns = NS_PER_SEC / 2;
		j->runtime_ns = 2 * NS_PER_SEC + NS_PER_SEC / 2;
		j->verify = true;
		j->verify_method = VERIFY_CRC32C;
		j->verify_blocks = 1000;
		j->verify_mismatches = t ? 3 : 0;
		j->verify_ns = NS_PER_SEC / 2;
		j->usr_cpu_s = 1.25;
	}
	run_init(&fx->run, "ram", "", fx->jobs, 2);
	return fx;
}

static void test_verify_report(void **state)
{
	struct fixture *fx = fixture_verify(false);
	json_t *root = capture_json(&fx->o, &fx->run, 1), *job;
	char *t;

	job = json_array_get(jget(root, "jobs", NULL), 1);
	assert_string_equal(jgets(jget(job, "blkstack", "verify", "type", NULL)),
			    "crc32c");
	assert_int_equal(jgeti(jget(job, "blkstack", "verify", "blocks_verified",
				    NULL)), 1000);
	assert_int_equal(jgeti(jget(job, "blkstack", "verify", "mismatches",
				    NULL)), 3);
	/* fio's per-direction runtime: the verify phase is the reads' */
	assert_int_equal(jgeti(jget(job, "read", "runtime", NULL)), 500);
	assert_close(jgetr(jget(job, "read", "iops", NULL)), 2000.0);
	assert_int_equal(jgeti(jget(job, "write", "runtime", NULL)), 2000);
	assert_close(jgetr(jget(job, "write", "iops", NULL)), 500.0);
	assert_int_equal(jgeti(jget(job, "job_runtime", NULL)), 2500);
	assert_close(jgetr(jget(job, "usr_cpu", NULL)), 50.0);
	assert_string_equal(jgets(jget(job, "job options", "verify", NULL)),
			    "crc32c");
	assert_string_equal(jgets(jget(job, "job options", "offset_increment",
				       NULL)), "4M");
	assert_string_equal(jgets(jget(job, "job options", "verify_dump_dir",
				       NULL)), "/tmp/d");
	assert_null(json_object_get(jget(job, "job options", NULL), "do_verify"));
	json_decref(root);

	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "  verify       : crc32c, 1000 blocks verified, 0 mismatches\n");
	assert_contains(t, "  verify       : crc32c, 1000 blocks verified, 3 mismatches\n");
	assert_contains(t, "  read: IOPS=2000, BW=8000KiB/s (8192kB/s)(4000KiB/500msec)\n");
	assert_contains(t, "  write: IOPS=500, BW=2000KiB/s (2048kB/s)(4000KiB/2000msec); 0 zone resets\n");
	assert_contains(t, "run=500-500msec\n");
	assert_contains(t, "run=2000-2000msec\n");
	free(t);
	fixture_free(fx);

	/* group_reporting sums the counts */
	fx = fixture_verify(true);
	root = capture_json(&fx->o, &fx->run, 1);
	job = json_array_get(jget(root, "jobs", NULL), 0);
	assert_int_equal(jgeti(jget(job, "blkstack", "verify", "blocks_verified",
				    NULL)), 2000);
	assert_int_equal(jgeti(jget(job, "blkstack", "verify", "mismatches",
				    NULL)), 3);
	assert_int_equal(jgeti(jget(job, "read", "runtime", NULL)), 500);
	assert_close(jgetr(jget(job, "read", "iops", NULL)), 4000.0);
	json_decref(root);
	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "  verify       : crc32c, 2000 blocks verified, 3 mismatches\n");
	free(t);
	fixture_free(fx);

	/* another method: its name, and the verify options given */
	fx = fixture_verify(false);
	fx->o.jobs[0].verify = VERIFY_META;
	snprintf(fx->o.jobs[0].verify_pattern,
		 sizeof(fx->o.jobs[0].verify_pattern), "0xaa%%o");
	fx->o.jobs[0].verify_interval = 512;
	fx->o.jobs[0].verify_offset = 100;
	fx->o.jobs[0].verify_backlog = 16;
	fx->o.jobs[0].verify_fatal = true;
	fx->o.jobs[0].verify_dump = 2;
	fx->jobs[0].verify_method = VERIFY_META;
	fx->jobs[1].verify_method = VERIFY_META;
	root = capture_json(&fx->o, &fx->run, 1);
	job = json_array_get(jget(root, "jobs", NULL), 0);
	assert_string_equal(jgets(jget(job, "blkstack", "verify", "type", NULL)),
			    "meta");
	assert_string_equal(jgets(jget(job, "job options", "verify", NULL)),
			    "meta");
	assert_string_equal(jgets(jget(job, "job options", "verify_pattern",
				       NULL)), "0xaa%o");
	assert_string_equal(jgets(jget(job, "job options", "verify_interval",
				       NULL)), "512");
	assert_string_equal(jgets(jget(job, "job options", "verify_offset",
				       NULL)), "100");
	assert_string_equal(jgets(jget(job, "job options", "verify_backlog",
				       NULL)), "16");
	assert_string_equal(jgets(jget(job, "job options", "verify_fatal",
				       NULL)), "1");
	assert_string_equal(jgets(jget(job, "job options", "verify_dump",
				       NULL)), "1");
	json_decref(root);
	t = capture_text(&fx->o, &fx->run);
	assert_contains(t, "  verify       : meta, 1000 blocks verified, 3 mismatches\n");
	free(t);
	fixture_free(fx);

	/* no verify: no verify line or object */
	fx = fixture_one();
	root = capture_json(&fx->o, &fx->run, 1);
	job = json_array_get(jget(root, "jobs", NULL), 0);
	assert_null(json_object_get(jget(job, "blkstack", NULL), "verify"));
	assert_null(json_object_get(jget(job, "job options", NULL), "verify"));
	json_decref(root);
	t = capture_text(&fx->o, &fx->run);
	assert_not_contains(t, "verify");
	free(t);
	fixture_free(fx);
}

/*
 * verify=: a write job's reads are its verify phase, which starts after
 * the writes; the group's read window spans the threads' verify phases.
 */
static void test_group_window_verify_reads(void **state)
{
	struct fixture *fx = fixture_verify(true);
	json_t *root, *job;
	unsigned int t;

	/*
	 * thread 0 writes 10..12 s and verifies 12..12.5 s; thread 1 starts
	 * 1 s later: reads span 12..13.5 s, writes 10..13 s
	 */
	for (t = 0; t < 2; t++) {
		struct bench_job_result *j = &fx->jobs[t];
		uint64_t s = (10 + t) * NS_PER_SEC;

		j->window_start_ns = s;
		j->window_end_ns = s + 2 * NS_PER_SEC + NS_PER_SEC / 2;
		j->dir[DDIR_WRITE].start_ns = s;
		j->dir[DDIR_TRIM].start_ns = s;
		j->dir[DDIR_READ].start_ns = s + 2 * NS_PER_SEC;
	}
	root = capture_json(&fx->o, &fx->run, 1);
	job = json_array_get(jget(root, "jobs", NULL), 0);
	assert_int_equal(jgeti(jget(job, "read", "runtime", NULL)), 1500);
	assert_close(jgetr(jget(job, "read", "iops", NULL)), 2000.0 / 1.5);
	assert_int_equal(jgeti(jget(job, "write", "runtime", NULL)), 3000);
	assert_close(jgetr(jget(job, "write", "iops", NULL)), 2000.0 / 3.0);
	json_decref(root);
	fixture_free(fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_top_level),
		cmocka_unit_test(test_json_job_fields),
		cmocka_unit_test(test_json_latency_buckets),
		cmocka_unit_test(test_json_lat_invalid),
		cmocka_unit_test(test_json_error),
		cmocka_unit_test(test_json_two_runs),
		cmocka_unit_test(test_json_group_reporting),
		cmocka_unit_test(test_group_reporting_across_names),
		cmocka_unit_test(test_text_basic),
		cmocka_unit_test(test_text_clocksource),
		cmocka_unit_test(test_text_disk_trim),
		cmocka_unit_test(test_text_lat_dist_is_clat),
		cmocka_unit_test(test_text_percentile_values),
		cmocka_unit_test(test_text_units),
		cmocka_unit_test(test_text_percentile_units),
		cmocka_unit_test(test_text_units_small_values_not_rounded_to_zero),
		cmocka_unit_test(test_text_fio_numbers),
		cmocka_unit_test(test_text_lat_invalid),
		cmocka_unit_test(test_text_error),
		cmocka_unit_test(test_text_group_reporting),
		cmocka_unit_test(test_text_groups),
		cmocka_unit_test(test_text_util_capped),
		cmocka_unit_test(test_run_totals),
		cmocka_unit_test(test_group_iops_staggered_windows),
		cmocka_unit_test(test_group_window_ignores_idle_thread),
		cmocka_unit_test(test_group_window_verify_reads),
		cmocka_unit_test(test_matrix),
		cmocka_unit_test(test_matrix_layout),
		cmocka_unit_test(test_verify_report),
		cmocka_unit_test(test_report_percentile_options),
		cmocka_unit_test(test_report_unified),
		cmocka_unit_test(test_report_stats_disk_util),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
