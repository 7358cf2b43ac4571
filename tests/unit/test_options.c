// SPDX-License-Identifier: MIT
/*
 * Unit tests for bench option parsing: value syntax, the error categories,
 * the command line's job structure and fio job files.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/fio_opts.h"
#include "bench/options.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NS_PER_SEC 1000000000ULL

static char tmpdir[] = "/tmp/test_options.XXXXXX";
static char errbuf[512];

static int group_setup(void **state)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
	char path[512];
	struct dirent *de;
	DIR *d = opendir(tmpdir);

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmpdir, de->d_name);
		unlink(path);
	}
	closedir(d);
	return rmdir(tmpdir);
}

/* Write @len bytes of @text to @name in the temp dir; a static path. */
static const char *write_file_n(const char *name, const char *text,
				size_t len)
{
	static char path[4][512];
	static int slot;
	char *p = path[slot++ % 4];
	FILE *f;

	snprintf(p, sizeof(path[0]), "%s/%s", tmpdir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	return p;
}

static const char *write_file(const char *name, const char *text)
{
	return write_file_n(name, text, strlen(text));
}

static int parse(struct bench_opts *o, int argc, const char **argv)
{
	bench_opts_init(o);
	errbuf[0] = '\0';
	return bench_parse_args(o, argc, (char **)argv, errbuf,
				sizeof(errbuf));
}

static int set(struct bench_opts *o, struct bench_job_opts *j,
	       const char *name, const char *val)
{
	errbuf[0] = '\0';
	return bench_set_option(o, j, name, val, errbuf, sizeof(errbuf));
}

/*
 * fio's report options: percentile_list= sorted with its precision, its
 * limits (20 entries, (0, 100]) named in the errors; the inverted
 * booleans; unified_rw_reporting='s old spellings.
 */
static void test_report_options(void **state)
{
	struct bench_opts o;
	struct bench_job_opts j;

	(void)state;
	bench_opts_init(&o);
	bench_job_defaults(&j);
	/* fio's default list */
	assert_int_equal(j.pct_nr, 17);
	assert_int_equal(j.pct_precision, 2);
	assert_true(j.pct[0] == 1.0 && j.pct[16] == 99.99);
	assert_false(j.clat_pct_off);
	assert_false(j.stats_off);
	assert_false(j.disk_util_off);
	assert_int_equal(j.sig_figs, 4);
	assert_int_equal(j.unified_rw, BENCH_UNIFIED_NONE);

	assert_int_equal(set(&o, &j, "percentile_list", "99.999:50:5"), 0);
	assert_int_equal(j.pct_nr, 3);
	assert_true(j.pct[0] == 5.0 && j.pct[1] == 50.0 && j.pct[2] == 99.999);
	assert_int_equal(j.pct_precision, 3);
	assert_string_equal(j.percentile_list, "99.999:50:5");
	assert_int_equal(set(&o, &j, "percentile_list", "50"), 0);
	assert_int_equal(j.pct_nr, 1);
	assert_int_equal(j.pct_precision, 0);
	assert_int_equal(set(&o, &j, "percentile_list",
			     "1:2:3:4:5:6:7:8:9:10:11:12:13:14:15:16:17:18:19:20"), 0);
	assert_int_equal(j.pct_nr, 20);
	assert_int_equal(set(&o, &j, "percentile_list",
			     "1:2:3:4:5:6:7:8:9:10:11:12:13:14:15:16:17:18:19:20:21"),
			 -EINVAL);
	assert_non_null(strstr(errbuf, "more than 20"));
	assert_int_equal(j.pct_nr, 20); /* unchanged on error */
	assert_int_equal(set(&o, &j, "percentile_list", "50:100.5"), -EINVAL);
	assert_non_null(strstr(errbuf, "(0, 100]"));
	assert_int_equal(set(&o, &j, "percentile_list", "0:50"), -EINVAL);
	assert_int_equal(set(&o, &j, "percentile_list", "50::90"), -EINVAL);
	assert_non_null(strstr(errbuf, "entry 2"));
	assert_int_equal(set(&o, &j, "percentile_list", "fifty"), -EINVAL);

	assert_int_equal(set(&o, &j, "clat_percentiles", "0"), 0);
	assert_true(j.clat_pct_off);
	assert_int_equal(set(&o, &j, "stats", "0"), 0);
	assert_true(j.stats_off);
	assert_int_equal(set(&o, &j, "disk_util", "0"), 0);
	assert_true(j.disk_util_off);
	assert_int_equal(set(&o, &j, "disk_util", "1"), 0);
	assert_false(j.disk_util_off);
	assert_int_equal(set(&o, &j, "unified_rw_reporting", "1"), 0);
	assert_int_equal(j.unified_rw, BENCH_UNIFIED_MIXED);
	assert_int_equal(set(&o, &j, "unified_rw_reporting", "both"), 0);
	assert_int_equal(j.unified_rw, BENCH_UNIFIED_BOTH);
	assert_int_equal(set(&o, &j, "unified_rw_reporting", "sum"), -EINVAL);
	assert_int_equal(set(&o, &j, "significant_figures", "11"), -EINVAL);
	assert_int_equal(set(&o, &j, "significant_figures", "6"), 0);
	assert_int_equal(j.sig_figs, 6);
	assert_int_equal(set(&o, &j, "unit_base", "1"), 0);
	assert_int_equal(j.unit_base, 1);
	assert_int_equal(set(&o, &j, "unit_base", "2"), -EINVAL);
}

/* prio=, prioclass=, cmdprio_*=: fio's ranges and cmdprio_bssplit's parse */
static void test_prio_options(void **state)
{
	struct bench_opts o;
	struct bench_job_opts j;

	(void)state;
	bench_opts_init(&o);
	bench_job_defaults(&j);
	assert_false(j.ioprio_given);
	assert_int_equal(set(&o, &j, "prio", "7"), 0);
	assert_true(j.ioprio_given);
	assert_int_equal(j.ioprio, 7);
	assert_int_equal(set(&o, &j, "prio", "8"), -EINVAL);
	assert_int_equal(set(&o, &j, "prioclass", "4"), -EINVAL);
	assert_int_equal(set(&o, &j, "cmdprio_percentage", "20"), 0);
	assert_int_equal(j.cmdprio_pct[0], 20);
	assert_int_equal(j.cmdprio_pct[1], 20);
	assert_int_equal(set(&o, &j, "cmdprio_percentage", "10,30"), 0);
	assert_int_equal(j.cmdprio_pct[0], 10);
	assert_int_equal(j.cmdprio_pct[1], 30);
	assert_int_equal(set(&o, &j, "cmdprio_class", "0"), -EINVAL);
	assert_int_equal(set(&o, &j, "cmdprio_class", ",3"), 0);
	assert_int_equal(j.cmdprio_class[0], 0);
	assert_int_equal(j.cmdprio_class[1], 3);
	/* sorted by size, zero shares dropped; CLASS/LEVEL; one list per direction */
	assert_int_equal(set(&o, &j, "cmdprio_bssplit",
			     "1024k/0:64k/25/1/1:4k/10:64k/75/3/2,1024k/50/0/9"), 0);
	assert_true(j.cmdprio_bssplit_on);
	assert_int_equal(j.cmdprio_bs_nr[0], 3);
	assert_int_equal(j.cmdprio_bs[0][0], 4096);
	assert_int_equal(j.cmdprio_bs_prio[0][0], -1);
	assert_int_equal(j.cmdprio_bs[0][1], 65536);
	assert_int_equal(j.cmdprio_bs_pct[0][1], 25);
	assert_int_equal(j.cmdprio_bs_prio[0][1], IOPRIO_PRIO_VALUE(1, 1));
	assert_int_equal(j.cmdprio_bs_prio[0][2], IOPRIO_PRIO_VALUE(3, 2));
	/* fio: class 0 is BE, a level over 7 is 7 */
	assert_int_equal(j.cmdprio_bs_nr[1], 1);
	assert_int_equal(j.cmdprio_bs_prio[1][0], IOPRIO_PRIO_VALUE(2, 7));
	assert_int_equal(set(&o, &j, "cmdprio_bssplit", "64k/60:64k/50"), -EINVAL);
	assert_int_equal(set(&o, &j, "cmdprio_bssplit", "64k/25/1"), -EINVAL);
	assert_int_equal(set(&o, &j, "cmdprio_bssplit", "64k/x"), -EINVAL);
	assert_int_equal(set(&o, &j, "log_prio", "1"), 0);
	assert_true(j.log_prio);
}

static void test_defaults(void **state)
{
	struct bench_opts o;
	struct bench_job_opts j;

	bench_opts_init(&o);
	assert_int_equal(o.dev.nr_devs, 0);
	assert_int_equal(o.dev.p.dev_size, 0);
	assert_int_equal(o.dev.p.logical_block_size, 512);
	assert_int_equal(o.dev.p.max_sectors, 2560);
	assert_int_equal(o.dev.p.max_segments, 128);
	assert_int_equal(o.dev.p.nr_hw_queues, 0);
	assert_int_equal(o.dev.p.hw_queue_depth, 256);
	assert_false(o.dev.p.shared_tags);
	assert_string_equal(o.dev.p.elevator, "none");
	assert_true(o.dev.p.iostats);
	assert_int_equal(o.dev.p.run_batch, 1);
	assert_int_equal(o.dev.p.rq_timeout_ms, 30000);
	assert_int_equal(o.dev.p.irqmode, 0);
	assert_int_equal(o.dev.p.completion_nsec, 10000);
	assert_false(o.dev.p.memory_backed);
	assert_int_equal(o.dev.p.fail_every, 0);
	assert_int_equal(o.nr_jobs, 0);
	assert_int_equal(o.output_format, OUT_NORMAL);
	assert_string_equal(o.output, "");
	assert_false(o.matrix);

	bench_job_defaults(&j);
	assert_string_equal(j.name, "");
	assert_int_equal(j.rw, RW_READ);
	assert_false(j.has_rw);
	assert_int_equal(j.bs, 4096);
	assert_int_equal(j.iodepth, 1);
	assert_int_equal(j.iodepth_batch, 0);
	assert_int_equal(j.numjobs, 1);
	assert_int_equal(j.size, 0);
	assert_int_equal(j.runtime_ns, 0);
	assert_false(j.time_based);
	assert_int_equal(j.rwmixread, 50);
	assert_true(j.randrepeat);
	assert_int_equal(j.randseed, 0x89);
	assert_int_equal(j.loops, 1);
	assert_int_equal(j.clocksource, CLK_AUTO);
	assert_int_equal(j.stonewall, 0);
}

static void test_parse_size(void **state)
{
	static const struct {
		const char *s;
		uint64_t v;
	} good[] = {
		{ "0", 0 }, { "512", 512 }, { "4k", 4096 }, { "4K", 4096 },
		{ "4kb", 4096 }, { "4KB", 4096 }, { "1M", 1 << 20 },
		{ "1m", 1 << 20 }, { "1g", 1ULL << 30 }, { "2t", 2ULL << 40 },
		{ "1p", 1ULL << 50 }, { "4096b", 4096 }, { "0x200", 512 },
		/* fio's kb_base=1024 compatibility: the IEC spelling is SI. */
		{ "1KiB", 1000 }, { "1mi", 1000000 },
		{ "18446744073709551615", UINT64_MAX },
	};
	static const char *const bad[] = {
		"", "4x", "-1", "+1", " 4k", "4k ", "k", "4kk", "4kbb", "0x",
		"0x1k", "1.5g",
		/* too large and a bad suffix: the syntax is what is wrong */
		"99999999999999999999x", "0x1ffffffffffffffffk",
	};
	/* Good syntax, more than 64 bits. */
	static const char *const overflow[] = {
		"18446744073709551616", "16777216t", "16385p",
		"0x10000000000000000", "99999999999999999999k",
	};
	uint64_t v;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good); i++) {
		v = 12345;
		assert_int_equal(bench_parse_size(good[i].s, &v), 0);
		assert_int_equal(v, good[i].v);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		v = 12345;
		assert_int_equal(bench_parse_size(bad[i], &v), -EINVAL);
		assert_int_equal(v, 12345);
	}
	for (i = 0; i < ARRAY_SIZE(overflow); i++) {
		v = 12345;
		assert_int_equal(bench_parse_size(overflow[i], &v), -ERANGE);
		assert_int_equal(v, 12345);
	}
	assert_int_equal(bench_parse_size(NULL, &v), -EINVAL);
}

static void test_parse_time(void **state)
{
	static const struct {
		const char *s;
		uint64_t v;
	} good[] = {
		{ "5", 5 * NS_PER_SEC }, { "0", 0 }, { "500ms", 500000000 },
		{ "500msec", 500000000 }, { "2m", 120 * NS_PER_SEC },
		{ "2min", 120 * NS_PER_SEC }, { "3s", 3 * NS_PER_SEC },
		{ "3sec", 3 * NS_PER_SEC }, { "1h", 3600 * NS_PER_SEC },
		{ "1d", 86400 * NS_PER_SEC }, { "10us", 10000 },
		{ "10usec", 10000 }, { "7ns", 7 }, { "2MS", 2000000 },
	};
	static const char *const bad[] = {
		"", "5x", "-1", "ms", "5 s", "1.5s", "0x10", "5mss",
		"99999999999999999999x",
	};
	static const char *const overflow[] = {
		"18446744073709551615s", "999999999999h", "99999999999d",
		"99999999999999999999",
	};
	uint64_t v;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good); i++) {
		v = 12345;
		assert_int_equal(bench_parse_time(good[i].s, NS_PER_SEC, &v), 0);
		assert_int_equal(v, good[i].v);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(bench_parse_time(bad[i], NS_PER_SEC, &v),
				 -EINVAL);
	for (i = 0; i < ARRAY_SIZE(overflow); i++) {
		v = 12345;
		assert_int_equal(bench_parse_time(overflow[i], NS_PER_SEC, &v),
				 -ERANGE);
		assert_int_equal(v, 12345);
	}
	/* The largest value, to the nanosecond. */
	assert_int_equal(bench_parse_time("18446744073709551615ns",
					  NS_PER_SEC, &v), 0);
	assert_int_equal(v, UINT64_MAX);
	/* The default unit only applies without a unit. */
	assert_int_equal(bench_parse_time("30", 1000000, &v), 0);
	assert_int_equal(v, 30000000);
	assert_int_equal(bench_parse_time("30s", 1000000, &v), 0);
	assert_int_equal(v, 30 * NS_PER_SEC);
	assert_int_equal(bench_parse_time("1", 0, &v), -EINVAL);
}

static void test_set_values(void **state)
{
	struct bench_opts o;
	struct bench_job_opts j;

	bench_opts_init(&o);
	bench_job_defaults(&j);
	assert_int_equal(set(&o, &j, "rw", "randrw"), 0);
	assert_int_equal(j.rw, RW_RANDRW);
	assert_true(j.has_rw);
	assert_int_equal(set(&o, &j, "readwrite", "readwrite"), 0);
	assert_int_equal(j.rw, RW_RW);
	assert_int_equal(set(&o, &j, "bs", "16M"), 0);
	assert_int_equal(j.bs, 16 << 20);
	assert_int_equal(set(&o, &j, "blocksize", "512"), 0);
	assert_int_equal(j.bs, 512);
	assert_int_equal(set(&o, &j, "iodepth", "65536"), 0);
	assert_int_equal(j.iodepth, 65536);
	assert_int_equal(set(&o, &j, "iodepth_batch_submit", "8"), 0);
	assert_int_equal(j.iodepth_batch, 8);
	assert_int_equal(set(&o, &j, "size", "1g"), 0);
	assert_int_equal(j.size, 1ULL << 30);
	assert_int_equal(set(&o, &j, "io_limit", "4m"), 0);
	assert_int_equal(j.io_size, 4 << 20);
	assert_int_equal(set(&o, &j, "runtime", "5"), 0);
	assert_int_equal(j.runtime_ns, 5 * NS_PER_SEC);
	assert_int_equal(set(&o, &j, "timeout", "500ms"), 0);
	assert_int_equal(j.runtime_ns, 500000000);
	assert_int_equal(set(&o, &j, "ramp_time", "2m"), 0);
	assert_int_equal(j.ramp_time_ns, 120 * NS_PER_SEC);
	assert_int_equal(set(&o, &j, "randseed", "0xdeadbeefcafe"), 0);
	assert_int_equal(j.randseed, 0xdeadbeefcafeULL);
	assert_int_equal(set(&o, &j, "clocksource", "cpu"), 0);
	assert_int_equal(j.clocksource, CLK_CPU);
	assert_int_equal(set(&o, &j, "disable_clat", NULL), 0);
	assert_true(j.disable_clat);
	assert_false(j.disable_lat);
	assert_int_equal(set(&o, &j, "disable_slat", "1"), 0);
	assert_true(j.disable_slat);
	assert_int_equal(set(&o, &j, "disable_bw", "1"), 0);
	assert_true(j.disable_bw);
	assert_int_equal(set(&o, &j, "wait_for_previous", NULL), 0);
	assert_int_equal(j.stonewall, 1);
	assert_int_equal(set(&o, &j, "name", "seqread"), 0);
	assert_string_equal(j.name, "seqread");

	/* Device options land in o->dev, whatever job is passed. */
	assert_int_equal(set(&o, &j, "hw_queue_depth", "64"), 0);
	assert_int_equal(o.dev.p.hw_queue_depth, 64);
	assert_int_equal(set(&o, NULL, "submit_queues", "4"), 0);
	assert_int_equal(o.dev.p.nr_hw_queues, 4);
	assert_int_equal(set(&o, &j, "ioscheduler", "mq-deadline"), 0);
	assert_string_equal(o.dev.p.elevator, "mq-deadline");
	assert_int_equal(set(&o, &j, "rq_timeout", "5000"), 0);
	assert_int_equal(o.dev.p.rq_timeout_ms, 5000);
	assert_int_equal(set(&o, &j, "rq_timeout", "2s"), 0);
	assert_int_equal(o.dev.p.rq_timeout_ms, 2000);
	assert_int_equal(set(&o, &j, "completion_nsec", "10us"), 0);
	assert_int_equal(o.dev.p.completion_nsec, 10000);
	assert_int_equal(set(&o, &j, "logical_block_size", "4k"), 0);
	assert_int_equal(o.dev.p.logical_block_size, 4096);
	assert_int_equal(set(&o, &j, "fail_every", "1000"), 0);
	assert_int_equal(o.dev.p.fail_every, 1000);
}

static void test_bool_options(void **state)
{
	struct bench_opts o;
	struct bench_job_opts j;

	bench_opts_init(&o);
	bench_job_defaults(&j);
	assert_int_equal(set(&o, &j, "time_based", NULL), 0);
	assert_true(j.time_based);
	assert_int_equal(set(&o, &j, "time_based", "0"), 0);
	assert_false(j.time_based);
	assert_int_equal(set(&o, &j, "time_based", "1"), 0);
	assert_true(j.time_based);
	assert_int_equal(set(&o, &j, "time_based", "2"), -EINVAL);
	assert_string_equal(errbuf, "time_based=2: bad boolean, allowed 0|1");
	assert_int_equal(set(&o, &j, "randrepeat", "0"), 0);
	assert_false(j.randrepeat);
	assert_int_equal(set(&o, &j, "iostats", "0"), 0);
	assert_false(o.dev.p.iostats);
	assert_int_equal(set(&o, &j, "group_reporting", NULL), 0);
	assert_true(j.group_reporting);

	/* Accepted for fio compatibility, no effect. */
	assert_int_equal(set(&o, &j, "thread", NULL), 0);
	assert_int_equal(set(&o, &j, "thread", "1"), 0);
	assert_int_equal(set(&o, &j, "description", "a test job"), 0);
	assert_string_equal(j.description, "a test job");	/* printed in the reports */
	assert_string_equal(j.name, "");
}

static void test_rwmixwrite(void **state)
{
	struct bench_opts o;
	struct bench_job_opts j;

	bench_opts_init(&o);
	bench_job_defaults(&j);
	assert_int_equal(set(&o, &j, "rwmixwrite", "30"), 0);
	assert_int_equal(j.rwmixread, 70);
	assert_int_equal(set(&o, &j, "rwmixwrite", "0"), 0);
	assert_int_equal(j.rwmixread, 100);
	assert_int_equal(set(&o, &j, "rwmixread", "20"), 0);
	assert_int_equal(j.rwmixread, 20);
	assert_int_equal(set(&o, &j, "rwmixwrite", "101"), -EINVAL);
	assert_string_equal(errbuf, "rwmixwrite=101: out of range, allowed 0..100");
	assert_int_equal(j.rwmixread, 20);
}

static void test_errors(void **state)
{
	struct bench_opts o;
	struct bench_job_opts j;

	bench_opts_init(&o);
	bench_job_defaults(&j);

	/* Unknown. */
	assert_int_equal(set(&o, &j, "foo", "1"), -ENOENT);
	assert_string_equal(errbuf, "unknown option 'foo'");
	assert_int_equal(set(&o, &j, "iodepth-batch", "1"), -ENOENT);
	assert_string_equal(errbuf,
			    "unknown option 'iodepth-batch' (did you mean 'iodepth_batch'?)");
	assert_int_equal(set(&o, &j, "output-format", "json"), -ENOENT);
	assert_non_null(strstr(errbuf, "only valid on the command line"));

	/* fio options we do not implement. */
	assert_int_equal(set(&o, &j, "lockfile", "1"), -EOPNOTSUPP);
	assert_string_equal(errbuf,
			    "option 'lockfile' is a fio option that blkstack bench does not support: file and file-system management: blkstack issues block requests to its own devices");
	assert_int_equal(set(&o, &j, "offset_align", "4k"), -EOPNOTSUPP);
	assert_string_equal(errbuf,
			    "option 'offset_align' is a fio option that blkstack bench does not support: a workload option blkstack bench does not implement yet");
	/* an engine's option names its engines */
	assert_int_equal(set(&o, &j, "hostname", "x"), -EOPNOTSUPP);
	assert_string_equal(errbuf,
			    "option 'hostname' is a fio option that blkstack bench does not support: an option of ioengine=libhdfs/net/rdma, an engine blkstack refuses");
	assert_int_equal(set(&o, &j, "hipri", NULL), -EOPNOTSUPP);
	assert_string_equal(errbuf,
			    "option 'hipri' is a fio option that blkstack bench does not support: an option of ioengine=io_uring/sg/sync/xnvme that blkstack's uring driver does not implement");

	/* Typos: the nearest known name, fio's included. */
	assert_int_equal(set(&o, &j, "iodpeth", "4"), -ENOENT);
	assert_string_equal(errbuf, "unknown option 'iodpeth' (did you mean 'iodepth'?)");
	assert_int_equal(set(&o, &j, "bsplit", "4k/100"), -ENOENT);
	assert_string_equal(errbuf, "unknown option 'bsplit' (did you mean 'bssplit'?)");
	assert_int_equal(set(&o, &j, "random_distribtion", "zipf"), -ENOENT);
	assert_string_equal(errbuf,
			    "unknown option 'random_distribtion' (did you mean 'random_distribution'?)");
	assert_int_equal(set(&o, &j, "xyzzy", "1"), -ENOENT);
	assert_string_equal(errbuf, "unknown option 'xyzzy'");

	/* fio's engines: mapped or refused by name. */
	assert_int_equal(set(&o, &j, "ioengine", "libaio"), 0);
	assert_string_equal(j.ioengine, "libaio");
	assert_false(j.engine_sync);
	assert_int_equal(set(&o, &j, "ioengine", "psync"), 0);
	assert_true(j.engine_sync);
	assert_int_equal(set(&o, &j, "ioengine", "rbd"), -EOPNOTSUPP);
	assert_string_equal(errbuf,
			    "ioengine=rbd: a fio engine blkstack bench does not support: network or distributed storage: blkstack's media are its own block devices");
	assert_int_equal(set(&o, &j, "ioengine", "external:/x.so"), -EOPNOTSUPP);
	assert_int_equal(set(&o, &j, "ioengine", "libaoi"), -EINVAL);
	assert_string_equal(errbuf,
			    "ioengine=libaoi: not a fio engine, allowed sync|psync|vsync|pvsync|pvsync2|libaio|io_uring|posixaio|null|cpp_null");
	assert_string_equal(j.ioengine, "psync");

	/* fio values we do not implement. */
	assert_int_equal(set(&o, &j, "rw", "trimwrite"), -EOPNOTSUPP);
	/* fio's per-direction bs=R,W[,T]: "a,b" is reads a, writes and trims b */
	assert_int_equal(set(&o, &j, "bs", "4k,8k"), 0);
	assert_true(j.bs_ddir);
	assert_int_equal(j.bs, 4096);
	assert_int_equal(j.bsd_fixed[0], 4096);
	assert_int_equal(j.bsd_fixed[1], 8192);
	assert_int_equal(j.bsd_fixed[2], 8192);
	assert_int_equal(set(&o, &j, "bs", ",16k,"), 0);
	assert_int_equal(j.bsd_fixed[0], 4096);
	assert_int_equal(j.bsd_fixed[1], 16384);
	assert_int_equal(j.bsd_fixed[2], 4096);
	assert_int_equal(set(&o, &j, "bs", "4k,8k,8k,8k"), -EINVAL);
	assert_non_null(strstr(errbuf, "more than 3 values"));
	assert_int_equal(set(&o, &j, "bs", "4k,1000"), -EINVAL);
	assert_int_equal(set(&o, &j, "bs", "4k"), 0);
	assert_int_equal(j.bsd_fixed[1], 0);
	assert_int_equal(set(&o, &j, "size", "50%"), 0);
	assert_int_equal(j.size_pct, 50);
	assert_int_equal(set(&o, &j, "offset", "10%"), 0);
	assert_int_equal(j.offset_pct, 10);
	assert_int_equal(set(&o, &j, "clocksource", "gettimeofday"), -EOPNOTSUPP);
	assert_int_equal(j.rw, RW_READ);
	assert_int_equal(j.bs, 4096);

	/* Out of range, naming the allowed range. */
	assert_int_equal(set(&o, &j, "iodepth", "0"), -EINVAL);
	assert_string_equal(errbuf, "iodepth=0: out of range, allowed 1..65536");
	assert_int_equal(set(&o, &j, "iodepth", "65537"), -EINVAL);
	assert_int_equal(set(&o, &j, "numjobs", "1025"), -EINVAL);
	assert_string_equal(errbuf, "numjobs=1025: out of range, allowed 1..1024");
	assert_int_equal(set(&o, &j, "bs", "32M"), -EINVAL);
	assert_string_equal(errbuf, "bs=32M: out of range, allowed 512..16M");
	assert_int_equal(set(&o, &j, "blocksize", "256"), -EINVAL);
	assert_string_equal(errbuf, "blocksize=256: out of range, allowed 512..16M");
	assert_int_equal(set(&o, &j, "bs", "1000"), -EINVAL);
	assert_string_equal(errbuf, "bs=1000: not a multiple of 512");
	assert_int_equal(set(&o, &j, "loops", "0"), -EINVAL);
	assert_int_equal(set(&o, &j, "hw_queue_depth", "0"), -EINVAL);
	assert_string_equal(errbuf,
			    "hw_queue_depth=0: out of range, allowed 1..65536");
	assert_int_equal(set(&o, &j, "rq_timeout", "2h"), -EINVAL);
	assert_string_equal(errbuf, "rq_timeout=2h: out of range, allowed 1ms..1h");
	assert_int_equal(set(&o, &j, "rq_timeout", "1500us"), -EINVAL);
	assert_string_equal(errbuf, "rq_timeout=1500us: not a whole number of ms, allowed 1ms..1h");
	assert_int_equal(set(&o, &j, "completion_nsec", "2s"), -EINVAL);
	assert_string_equal(errbuf,
			    "completion_nsec=2s: out of range, allowed 0..1s");
	assert_int_equal(set(&o, &j, "logical_block_size", "1536"), -EINVAL);
	assert_string_equal(errbuf, "logical_block_size=1536: not a power of 2");
	assert_int_equal(set(&o, &j, "irqmode", "3"), -EINVAL);
	assert_int_equal(set(&o, &j, "max_sectors", "4"), -EINVAL);
	assert_string_equal(errbuf, "max_sectors=4: out of range, allowed 8..65536");

	/* Bad values. */
	assert_int_equal(set(&o, &j, "iodepth", "4x"), -EINVAL);
	assert_string_equal(errbuf,
			    "iodepth=4x: not a number (a whole number with an optional k/m/g/t/p suffix), allowed 1..65536");
	assert_int_equal(set(&o, &j, "iodepth", "-1"), -EINVAL);
	assert_int_equal(set(&o, &j, "iodepth", "99999999999999999999"), -EINVAL);
	assert_string_equal(errbuf,
			    "iodepth=99999999999999999999: out of range, allowed 1..65536");
	assert_int_equal(set(&o, &j, "iodepth", "4294967297"), -EINVAL);
	assert_non_null(strstr(errbuf, "out of range"));
	assert_int_equal(set(&o, &j, "runtime", "5x"), -EINVAL);
	assert_string_equal(errbuf,
			    "runtime=5x: not a time (a whole number with an optional unit ns/us/ms/s/m/h/d, s without one), allowed 0..2^64-1ns");
	assert_int_equal(set(&o, &j, "rw", "sequential"), -EINVAL);
	assert_string_equal(errbuf,
			    "rw=sequential: bad value, allowed read|write|randread|randwrite|rw|readwrite|randrw|trim|randtrim");
	assert_int_equal(set(&o, &j, "elevator", "kyber"), -EOPNOTSUPP);
	assert_non_null(strstr(errbuf, "allowed none|mq-deadline"));
	assert_int_equal(set(&o, &j, "elevator", "foo"), -EINVAL);
	assert_string_equal(o.dev.p.elevator, "none");
	assert_int_equal(j.iodepth, 1);

	/* Missing value: the message says what to give. */
	assert_int_equal(set(&o, &j, "iodepth", NULL), -EINVAL);
	assert_string_equal(errbuf,
			    "option 'iodepth' needs a value: a number (a whole number with an optional k/m/g/t/p suffix), allowed 1..65536");
	assert_int_equal(set(&o, &j, "rw", ""), -EINVAL);
	assert_string_equal(errbuf,
			    "option 'rw' needs a value, allowed read|write|randread|randwrite|rw|readwrite|randrw|trim|randtrim");
	assert_int_equal(set(&o, &j, "time_based", ""), -EINVAL);
	assert_string_equal(errbuf, "option 'time_based' needs a value, allowed 0|1");

	/* Too long a name. */
	assert_int_equal(set(&o, &j, "name",
			     "0123456789012345678901234567890123456789012345678901234567890123"),
			 -EINVAL);
	assert_non_null(strstr(errbuf, "too long, at most 63"));
}

/* Every number, size and time error says the form and what is allowed. */
static void test_number_errors(void **state)
{
	static const struct {
		const char *name, *val, *msg;
	} cases[] = {
		{ "iodepth", "abc",
		  "iodepth=abc: not a number (a whole number with an optional k/m/g/t/p suffix), allowed 1..65536" },
		{ "iodepth", "-1",
		  "iodepth=-1: negative, allowed 1..65536" },
		{ "iodepth", "1.5",
		  "iodepth=1.5: not a number (a whole number with an optional k/m/g/t/p suffix), allowed 1..65536" },
		{ "iodepth", "4kk",
		  "iodepth=4kk: not a number (a whole number with an optional k/m/g/t/p suffix), allowed 1..65536" },
		{ "bs", "4x",
		  "bs=4x: not a size (a whole number with an optional k/m/g/t/p suffix), allowed 512..16M" },
		{ "size", "1.5g",
		  "size=1.5g: not a size (a whole number with an optional k/m/g/t/p suffix), allowed 0..2^64-1" },
		{ "fail_every", "4kk",
		  "fail_every=4kk: not a number (a whole number with an optional k/m/g/t/p suffix), allowed 0..2^64-1" },
		{ "rq_timeout", "abc",
		  "rq_timeout=abc: not a time (a whole number with an optional unit ns/us/ms/s/m/h/d, ms without one), allowed 1ms..1h" },
		{ "completion_nsec", "-5",
		  "completion_nsec=-5: negative, allowed 0..1s" },
		/* Past 64 bits: the maximum, in the unit given. */
		{ "runtime", "99999999999d",
		  "runtime=99999999999d: overflows 64 bits, the maximum is 213503d" },
		{ "runtime", "99999999999999999999",
		  "runtime=99999999999999999999: overflows 64 bits, the maximum is 18446744073s" },
		{ "ramp_time", "99999999999999999999ms",
		  "ramp_time=99999999999999999999ms: overflows 64 bits, the maximum is 18446744073709ms" },
		{ "size", "16385p",
		  "size=16385p: overflows 64 bits, the maximum is 16383p" },
		{ "fail_every", "99999999999999999999",
		  "fail_every=99999999999999999999: overflows 64 bits, the maximum is 18446744073709551615" },
		/* A bounded option: its range says it. */
		{ "rq_timeout", "99999999999d",
		  "rq_timeout=99999999999d: out of range, allowed 1ms..1h" },
		{ "bs", "99999999999999999999",
		  "bs=99999999999999999999: out of range, allowed 512..16M" },
	};
	struct bench_opts o;
	struct bench_job_opts j;
	size_t i;

	bench_opts_init(&o);
	bench_job_defaults(&j);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		assert_int_equal(set(&o, &j, cases[i].name, cases[i].val),
				 -EINVAL);
		assert_string_equal(errbuf, cases[i].msg);
	}
	/* Nothing was stored. */
	assert_int_equal(j.iodepth, 1);
	assert_int_equal(j.runtime_ns, 0);
	assert_int_equal(o.dev.p.fail_every, 0);
}

/* An empty value gets what the option allows, whatever its type. */
static void test_empty_value_errors(void **state)
{
	static const struct {
		const char *name, *msg;
	} cases[] = {
		{ "bs",
		  "option 'bs' needs a value: a size (a whole number with an optional k/m/g/t/p suffix), allowed 512..16M" },
		{ "runtime",
		  "option 'runtime' needs a value: a time (a whole number with an optional unit ns/us/ms/s/m/h/d, s without one), allowed 0..2^64-1ns" },
		{ "elevator", "option 'elevator' needs a value, allowed none|mq-deadline" },
		{ "dev",
		  "option 'dev' needs a value, allowed a comma-separated list of null|ram|uring|nvme" },
		{ "name", "option 'name' needs a value: text, at most 63 characters" },
		{ "filename",
		  "option 'filename' needs a value: a path, at most 4095 characters" },
		{ "description", "option 'description' needs a value: text, at most 255 characters" },
	};
	struct bench_opts o;
	struct bench_job_opts j;
	size_t i;

	bench_opts_init(&o);
	bench_job_defaults(&j);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		assert_int_equal(set(&o, &j, cases[i].name, ""), -EINVAL);
		assert_string_equal(errbuf, cases[i].msg);
		assert_int_equal(set(&o, &j, cases[i].name, NULL), -EINVAL);
		assert_string_equal(errbuf, cases[i].msg);
	}
}

/* Text from the user is cut at 64 characters and never sent raw. */
static void test_error_text_shown_safely(void **state)
{
	char long_val[200], want[300];
	struct bench_opts o;
	struct bench_job_opts j;

	bench_opts_init(&o);
	bench_job_defaults(&j);

	memset(long_val, 'x', sizeof(long_val) - 1);
	long_val[sizeof(long_val) - 1] = '\0';
	assert_int_equal(set(&o, &j, "rw", long_val), -EINVAL);
	snprintf(want, sizeof(want), "rw=%.64s...: bad value, allowed ", long_val);
	assert_memory_equal(errbuf, want, strlen(want));
	assert_int_equal(set(&o, &j, long_val, "1"), -ENOENT);
	snprintf(want, sizeof(want), "unknown option '%.64s...'", long_val);
	assert_string_equal(errbuf, want);
	/* Exactly 64 characters: no "..." */
	long_val[64] = '\0';
	assert_int_equal(set(&o, &j, "rw", long_val), -EINVAL);
	snprintf(want, sizeof(want), "rw=%s: bad", long_val);
	assert_memory_equal(errbuf, want, strlen(want));

	/* Control bytes, DEL, a bad byte and a C1 control: \xNN. */
	assert_int_equal(set(&o, &j, "rw", "\x1b[31mred\x7f\xff\xc2\x9b"), -EINVAL);
	assert_non_null(strstr(errbuf,
			       "rw=\\x1b[31mred\\x7f\\xff\\xc2\\x9b: bad value"));
	assert_int_equal(set(&o, &j, "fo\no", "1"), -ENOENT);
	assert_string_equal(errbuf, "unknown option 'fo\\x0ao'");
	/* UTF-8 text stays as it is. */
	assert_int_equal(set(&o, &j, "rw", "l\xc3\xa9se"), -EINVAL);
	assert_non_null(strstr(errbuf, "rw=l\xc3\xa9se: bad value"));
	/* The list of devices shows the bad element the same way. */
	assert_int_equal(set(&o, &j, "dev", "null,\x01"), -EINVAL);
	assert_string_equal(errbuf,
			    "dev=null,\\x01: unknown device '\\x01', allowed null|ram|uring|nvme|scsi|iscsi");
	/* A job name goes to reports: no control characters in it. */
	assert_int_equal(set(&o, &j, "name", "a\tb"), -EINVAL);
	assert_string_equal(errbuf,
			    "name=a\\x09b: control characters are not allowed");
	assert_int_equal(set(&o, &j, "name", "r\xc3\xa9" "ad"), 0);
}

static void test_dev_list(void **state)
{
	struct bench_opts o;
	struct bench_job_opts j;

	bench_opts_init(&o);
	bench_job_defaults(&j);
	assert_int_equal(set(&o, &j, "dev", "null,ram"), 0);
	assert_int_equal(o.dev.nr_devs, 2);
	assert_string_equal(o.dev.devs[0], "null");
	assert_string_equal(o.dev.devs[1], "ram");
	assert_int_equal(set(&o, &j, "dev", "ram"), 0);
	assert_int_equal(o.dev.nr_devs, 1);
	assert_string_equal(o.dev.devs[0], "ram");

	assert_int_equal(set(&o, &j, "dev", "null,nvme"), 0);
	assert_int_equal(o.dev.nr_devs, 2);
	assert_string_equal(o.dev.devs[1], "nvme");
	assert_int_equal(set(&o, &j, "dev", "ram"), 0);
	assert_int_equal(set(&o, &j, "dev", "null,bogus"), -EINVAL);
	assert_string_equal(errbuf,
			    "dev=null,bogus: unknown device 'bogus', allowed null|ram|uring|nvme|scsi|iscsi");
	assert_int_equal(set(&o, &j, "dev", "null,,ram"), -EINVAL);
	assert_non_null(strstr(errbuf, "empty device name"));
	assert_int_equal(set(&o, &j, "dev", "null,"), -EINVAL);
	assert_int_equal(set(&o, &j, "dev", ",null"), -EINVAL);
	assert_int_equal(set(&o, &j, "dev", "null,null"), -EINVAL);
	assert_non_null(strstr(errbuf, "listed twice"));
	assert_int_equal(set(&o, &j, "dev", NULL), -EINVAL);
	assert_int_equal(o.dev.nr_devs, 1);
	assert_string_equal(o.dev.devs[0], "ram");
}

/* dev=nvme's options: defaults, ranges, choices, the dashed alias */
static void test_nvme_options(void **state)
{
	struct bench_opts o;
	struct bench_job_opts j;

	bench_opts_init(&o);
	bench_job_defaults(&j);
	assert_int_equal(o.dev.p.nvme_queues, 0);
	assert_int_equal(o.dev.p.nvme_qd, 1024);
	assert_int_equal(o.dev.p.nvme_ctrl, 0);          /* thread */
	assert_int_equal(o.dev.p.nvme_sqe_init, 1);      /* fields */
	assert_int_equal(o.dev.p.nvme_ns, 0);            /* ram */
	assert_int_equal(set(&o, &j, "nvme_qd", "64"), 0);
	assert_int_equal(o.dev.p.nvme_qd, 64);
	assert_int_equal(set(&o, &j, "nvme-qd", "2"), 0);
	assert_int_equal(o.dev.p.nvme_qd, 2);
	assert_int_equal(set(&o, &j, "nvme_qd", "1"), -EINVAL);
	assert_non_null(strstr(errbuf, "nvme_qd=1"));
	assert_non_null(strstr(errbuf, "allowed 2..65536"));
	assert_int_equal(set(&o, &j, "nvme-queues", "257"), -EINVAL);
	assert_non_null(strstr(errbuf, "nvme-queues=257"));
	assert_non_null(strstr(errbuf, "allowed 0..256"));
	assert_int_equal(set(&o, &j, "nvme_ctrl", "inline"), 0);
	assert_int_equal(o.dev.p.nvme_ctrl, 1);
	assert_int_equal(set(&o, &j, "nvme_ctrl", "dma"), -EINVAL);
	assert_non_null(strstr(errbuf, "thread|inline"));
	assert_int_equal(set(&o, &j, "nvme_sqe_init", "memset"), 0);
	assert_int_equal(o.dev.p.nvme_sqe_init, 0);
	assert_int_equal(set(&o, &j, "nvme_ns", "null"), 0);
	assert_int_equal(o.dev.p.nvme_ns, 1);
	assert_int_equal(set(&o, &j, "nvme_ns", "disk"), -EINVAL);
	assert_non_null(strstr(errbuf, "ram|null"));
}

static void test_rw_helpers(void **state)
{
	assert_string_equal(bench_rw_name(RW_RANDREAD), "randread");
	assert_string_equal(bench_rw_name(RW_RW), "rw");
	assert_string_equal(bench_rw_name(RW_RANDTRIM), "randtrim");
	assert_true(bench_rw_is_random(RW_RANDRW));
	assert_false(bench_rw_is_random(RW_RW));
	assert_true(bench_rw_reads(RW_RW));
	assert_true(bench_rw_writes(RW_RANDRW));
	assert_false(bench_rw_reads(RW_WRITE));
	assert_false(bench_rw_writes(RW_TRIM));
	assert_false(bench_rw_reads(RW_RANDTRIM));
}

static void test_cli_no_args_is_matrix(void **state)
{
	const char *argv[] = { "bench" };
	struct bench_opts o;

	assert_int_equal(parse(&o, 1, argv), 0);
	assert_true(o.matrix);
	assert_int_equal(o.nr_jobs, 1);
	assert_string_equal(o.jobs[0].name, "bench");
	assert_int_equal(o.jobs[0].bs, 4096);
	assert_int_equal(o.dev.nr_devs, 0);
}

static void test_cli_single_job(void **state)
{
	const char *argv[] = {
		"bench", "--rw=randread", "--iodepth=32", "--hw_queue_depth=64",
		"--time_based", "--runtime=10", "--dev=null",
	};
	const char *argv2[] = { "bench", "--iodepth=8", "--dev=ram,null" };
	const char *argv3[] = { "bench", "--rw=read", "--matrix" };
	struct bench_opts o;

	assert_int_equal(parse(&o, ARRAY_SIZE(argv), argv), 0);
	assert_false(o.matrix);
	assert_int_equal(o.nr_jobs, 1);
	assert_string_equal(o.jobs[0].name, "bench");
	assert_int_equal(o.jobs[0].rw, RW_RANDREAD);
	assert_int_equal(o.jobs[0].iodepth, 32);
	assert_true(o.jobs[0].time_based);
	assert_int_equal(o.jobs[0].runtime_ns, 10 * NS_PER_SEC);
	assert_int_equal(o.dev.p.hw_queue_depth, 64);
	assert_int_equal(o.dev.nr_devs, 1);

	/* Options without rw=: the matrix, with those options. */
	assert_int_equal(parse(&o, ARRAY_SIZE(argv2), argv2), 0);
	assert_true(o.matrix);
	assert_int_equal(o.nr_jobs, 1);
	assert_int_equal(o.jobs[0].iodepth, 8);
	assert_string_equal(o.dev.devs[0], "ram");

	assert_int_equal(parse(&o, ARRAY_SIZE(argv3), argv3), 0);
	assert_true(o.matrix);
}

static void test_cli_multiple_jobs(void **state)
{
	const char *argv[] = {
		"bench", "--iodepth=4", "--size=1m",
		"--name=a", "--rw=read",
		"--hw_queue_depth=32",		/* device: any position */
		"--name=b", "--rw=randwrite", "--bs=8k", "--iodepth=16",
		"--name=c",
	};
	struct bench_opts o;

	assert_int_equal(parse(&o, ARRAY_SIZE(argv), argv), 0);
	assert_false(o.matrix);
	assert_int_equal(o.nr_jobs, 3);
	assert_string_equal(o.jobs[0].name, "a");
	assert_int_equal(o.jobs[0].rw, RW_READ);
	assert_int_equal(o.jobs[0].iodepth, 4);
	assert_int_equal(o.jobs[0].bs, 4096);
	assert_int_equal(o.jobs[0].size, 1 << 20);
	assert_string_equal(o.jobs[1].name, "b");
	assert_int_equal(o.jobs[1].rw, RW_RANDWRITE);
	assert_int_equal(o.jobs[1].iodepth, 16);
	assert_int_equal(o.jobs[1].bs, 8192);
	assert_int_equal(o.jobs[1].size, 1 << 20);
	/* Options of job b do not leak into job c. */
	assert_string_equal(o.jobs[2].name, "c");
	assert_int_equal(o.jobs[2].rw, RW_READ);
	assert_false(o.jobs[2].has_rw);
	assert_int_equal(o.jobs[2].iodepth, 4);
	assert_int_equal(o.jobs[2].bs, 4096);
	assert_int_equal(o.dev.p.hw_queue_depth, 32);
}

static void test_cli_global_section(void **state)
{
	const char *argv[] = {
		"bench", "--rw=write", "--name=a", "--name=global",
		"--iodepth=8", "--name=b",
	};
	struct bench_opts o;

	assert_int_equal(parse(&o, ARRAY_SIZE(argv), argv), 0);
	assert_int_equal(o.nr_jobs, 2);
	assert_int_equal(o.jobs[0].iodepth, 1);
	assert_int_equal(o.jobs[0].rw, RW_WRITE);
	assert_true(o.jobs[0].has_rw);
	assert_int_equal(o.jobs[1].iodepth, 8);
	assert_int_equal(o.jobs[1].rw, RW_WRITE);
	assert_false(o.matrix);
}

static void test_cli_output_options(void **state)
{
	const char *argv[] = {
		"bench", "--output-format=json", "--output=/tmp/x.json",
		"--eta=never",
	};
	const char *argv2[] = { "bench", "--eta=always" };
	const char *argv3[] = { "bench", "--help", "--bogus" };
	struct bench_opts o;

	assert_int_equal(parse(&o, ARRAY_SIZE(argv), argv), 0);
	assert_int_equal(o.output_format, OUT_JSON);
	assert_string_equal(o.output, "/tmp/x.json");
	assert_true(o.quiet_progress);
	assert_false(o.eta_always);
	assert_int_equal(parse(&o, ARRAY_SIZE(argv2), argv2), 0);
	assert_true(o.eta_always);
	assert_false(o.quiet_progress);
	assert_int_equal(parse(&o, ARRAY_SIZE(argv3), argv3), 0);
	assert_true(o.help);
}

static void test_cli_errors(void **state)
{
	static const struct {
		const char *arg;
		const char *msg;
	} cases[] = {
		{ "--iodepth",
		  "option 'iodepth' needs a value: a number (a whole number with an optional k/m/g/t/p suffix), allowed 1..65536" },
		{ "--bs=",
		  "option 'bs' needs a value: a size (a whole number with an optional k/m/g/t/p suffix), allowed 512..16M" },
		{ "--iodepth=0", "iodepth=0: out of range, allowed 1..65536" },
		{ "--foo=1", "unknown option 'foo'" },
		{ "--lockfile=1",
		  "option 'lockfile' is a fio option that blkstack bench does not support: file and file-system management: blkstack issues block requests to its own devices" },
		{ "--output-format=normal,xml",
		  "output-format=normal,xml: bad value, allowed normal|json|json+|terse, or a comma list of them" },
		{ "--terse-version=2", NULL },
		{ "--terse-version=6", "terse-version=6: bad value, allowed 3|4|5" },
		{ "--output-format=xml", NULL },
		{ "--eta=sometimes", NULL },
		{ "--output=", "option 'output' needs a value (FILE)" },
		{ "--eta=", "option 'eta' needs a value, allowed auto|always|never" },
		{ "--output-format",
		  "option 'output-format' needs a value, allowed normal|json|json+|terse" },
		{ "--name=", "option 'name' needs a value: text, at most 63 characters" },
		{ "--matrix=1", "option 'matrix' takes no value" },
		{ "--help=1", "option 'help' takes no value" },
		{ "--help=", "option 'help' takes no value" },
		{ "--help=0", "option 'help' takes no value" },
		{ "--eta=\x1b[2J", "eta=\\x1b[2J: bad value, allowed auto|always|never" },
		{ "-x", NULL },
		{ "--dev=null,foo", NULL },
		{ "--bs=512", NULL },		/* with logical_block_size=4k */
	};
	struct bench_opts o;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *argv[] = {
			"bench", "--logical_block_size=4k", cases[i].arg,
		};

		assert_int_equal(parse(&o, ARRAY_SIZE(argv), argv), -EINVAL);
		assert_true(errbuf[0] != '\0');
		if (cases[i].msg)
			assert_string_equal(errbuf, cases[i].msg);
	}
	{
		/* fio's comma list: every report asked, json+ over json */
		const char *argv[] = { "bench", "--output-format=normal,json+,terse" };
		const char *a2[] = { "bench", "--output-format=json" };

		assert_int_equal(parse(&o, 2, argv), 0);
		assert_int_equal(o.out_mask, BENCH_OUT_NORMAL | BENCH_OUT_JSON | BENCH_OUT_TERSE);
		assert_int_equal(o.output_format, OUT_JSON_PLUS);
		assert_int_equal(parse(&o, 2, a2), 0);
		assert_int_equal(o.out_mask, BENCH_OUT_JSON);
	}
	{
		/* fio's terse: --output-format=terse or --minimal, version 3 */
		const char *a1[] = { "bench", "--output-format=terse" };
		const char *a2[] = { "bench", "--minimal", "--terse-version=5" };

		assert_int_equal(parse(&o, 2, a1), 0);
		assert_int_equal(o.output_format, OUT_TERSE);
		assert_int_equal(o.terse_version, 3);
		assert_int_equal(parse(&o, 3, a2), 0);
		assert_int_equal(o.output_format, OUT_TERSE);
		assert_int_equal(o.terse_version, 5);
	}
	{
		/* --help with a value fails even before a bad option. */
		const char *argv[] = { "bench", "--help=1", "--bogus" };

		assert_int_equal(parse(&o, 3, argv), -EINVAL);
		/* every problem, one per line */
		assert_string_equal(errbuf, "option 'help' takes no value\nunknown option 'bogus'");
		assert_false(o.help);
	}
	{
		const char *argv[BENCH_MAX_JOBS + 2] = { "bench" };
		char want[80];

		for (i = 1; i <= BENCH_MAX_JOBS + 1; i++)
			argv[i] = "--name=j";
		assert_int_equal(parse(&o, BENCH_MAX_JOBS + 1, argv), 0);
		assert_int_equal(o.nr_jobs, BENCH_MAX_JOBS);
		assert_int_equal(parse(&o, BENCH_MAX_JOBS + 2, argv), -EINVAL);
		snprintf(want, sizeof(want),
			 "more than %d jobs (blkstack bench's limit)",
			 BENCH_MAX_JOBS);
		assert_string_equal(errbuf, want);
	}
}

static void test_cli_iodepth_batch_capped(void **state)
{
	const char *argv[] = {
		"bench", "--rw=read", "--iodepth=4", "--iodepth_batch=16",
	};
	struct bench_opts o;

	assert_int_equal(parse(&o, ARRAY_SIZE(argv), argv), 0);
	assert_int_equal(o.jobs[0].iodepth_batch, 4);
}

static const char jobfile_text[] =
	"; a fio job file\n"
	"# with both comment styles\n"
	"\n"
	"[global]\n"
	"  bs = 8k  \n"
	"time_based\n"
	"runtime=${BLK_TEST_RUNTIME}\n"
	"iodepth=4\n"
	"thread\n"
	"hw_queue_depth=128\n"
	"\n"
	"[seq-read]\n"
	"rw=read\n"
	"iodepth=${BLK_TEST_DEPTH}\n"
	"description=sequential read at depth ${BLK_TEST_DEPTH}\n"
	"\n"
	"[global]\n"
	"numjobs=2\n"
	"\n"
	"[rand-write]\r\n"
	"rw=randwrite\r\n"
	"norandommap\r\n"
	"rwmixwrite=25\r\n";

static void test_jobfile(void **state)
{
	const char *path = write_file("good.fio", jobfile_text);
	struct bench_opts o;
	int rc;

	setenv("BLK_TEST_DEPTH", "16", 1);
	setenv("BLK_TEST_RUNTIME", "3s", 1);
	bench_opts_init(&o);
	rc = bench_parse_jobfile(&o, path, NULL, errbuf, sizeof(errbuf));
	assert_int_equal(rc, 0);
	assert_int_equal(o.nr_jobs, 2);

	assert_string_equal(o.jobs[0].name, "seq-read");
	assert_int_equal(o.jobs[0].rw, RW_READ);
	assert_true(o.jobs[0].has_rw);
	assert_int_equal(o.jobs[0].bs, 8192);
	assert_true(o.jobs[0].time_based);
	assert_int_equal(o.jobs[0].runtime_ns, 3 * NS_PER_SEC);
	assert_int_equal(o.jobs[0].iodepth, 16);
	assert_int_equal(o.jobs[0].numjobs, 1);	/* second [global] is later */

	assert_string_equal(o.jobs[1].name, "rand-write");
	assert_int_equal(o.jobs[1].rw, RW_RANDWRITE);
	assert_int_equal(o.jobs[1].bs, 8192);
	assert_int_equal(o.jobs[1].iodepth, 4);
	assert_int_equal(o.jobs[1].numjobs, 2);
	assert_true(o.jobs[1].norandommap);
	assert_int_equal(o.jobs[1].rwmixread, 75);

	assert_int_equal(o.dev.p.hw_queue_depth, 128);
	unsetenv("BLK_TEST_DEPTH");
	unsetenv("BLK_TEST_RUNTIME");
}

/*
 * fio's unset ${VAR}: the empty string, a note naming it; and
 * ignore_error='s classes, each replacing fio's EIO:EILSEQ and turning
 * its continue_on_error bit on.
 */
static void test_jobfile_env_unset_and_ignore_error(void **state)
{
	const char *path = write_file("env.fio",
		"[j]\nrw=read\nfilename=a${BLK_TEST_UNSET_VAR}b\n"
		"continue_on_error=read\nignore_error=,ENOSPC:5:-28: EIO ,\n"
		"[k]\nrw=read\nignore_error=EIO\ncontinue_on_error=none\n");
	struct bench_opts o;
	int rc;

	(void)state;
	unsetenv("BLK_TEST_UNSET_VAR");
	bench_opts_init(&o);
	rc = bench_parse_jobfile(&o, path, NULL, errbuf, sizeof(errbuf));
	assert_int_equal(rc, 0);
	assert_string_equal(o.jobs[0].filename, "ab");
	assert_non_null(strstr(o.notes, "env.fio:3: environment variable 'BLK_TEST_UNSET_VAR' is not set: 'a${BLK_TEST_UNSET_VAR}b' has the empty string in its place, as in fio"));
	/* read as given, write from ignore_error, verify untouched */
	assert_int_equal(o.jobs[0].continue_on_error, 1 | 2);
	assert_int_equal(o.jobs[0].ignore_nr[0], 0);
	assert_int_equal(o.jobs[0].ignore_nr[1], 4);
	assert_int_equal(o.jobs[0].ignore_err[1][0], ENOSPC);
	assert_int_equal(o.jobs[0].ignore_err[1][1], EIO);
	assert_int_equal(o.jobs[0].ignore_err[1][2], ENOSPC);
	assert_int_equal(o.jobs[0].ignore_err[1][3], EIO);
	assert_int_equal(o.jobs[0].ignore_nr[2], 0);
	/* a later continue_on_error= sets the classes again, as in fio */
	assert_int_equal(o.jobs[1].continue_on_error, 0);
	assert_int_equal(o.jobs[1].ignore_nr[0], 1);
}

static void jobfile_error(const char *text, int want_rc, const char *want);

/*
 * fio's keywords with arithmetic (HOWTO "Reserved keywords"): worked out
 * as fio has bc(1) do it, integers; without a keyword, or not all
 * arithmetic, the value is left to its option.
 */
static void test_jobfile_keyword_math(void **state)
{
	const char *path = write_file("math.fio",
		"[j]\nrw=read\nsize=2^2*($pagesize+$pagesize)/2\n"
		"bs=$pagesize/2\noffset=$pagesize-1024\n");
	long pg = sysconf(_SC_PAGESIZE);
	struct bench_opts o;
	int rc;

	(void)state;
	bench_opts_init(&o);
	rc = bench_parse_jobfile(&o, path, NULL, errbuf, sizeof(errbuf));
	assert_int_equal(rc, 0);
	assert_int_equal(o.jobs[0].size, 4 * pg);
	assert_int_equal(o.jobs[0].bs, pg / 2);
	assert_int_equal(o.jobs[0].offset, pg - 1024);
	/* bsrange=512-$pagesize is arithmetic to fio too (bc: -3584): refused */
	jobfile_error("[k]\nrw=read\nbsrange=512-$pagesize\n", -EINVAL,
		      ":3: bsrange=-3584: a block size is missing or too long");
}

static void test_jobfile_with_cli_global(void **state)
{
	const char *path = write_file("cli.fio",
				      "[one]\nbs=16k\n[two]\nrw=randread\n");
	const char *argv[] = {
		"bench", "--iodepth=32", path, "--rw=write", "--dev=ram",
	};
	struct bench_opts o;

	assert_int_equal(parse(&o, ARRAY_SIZE(argv), argv), 0);
	assert_false(o.matrix);
	assert_int_equal(o.nr_jobs, 2);
	assert_int_equal(o.jobs[0].iodepth, 32);
	assert_int_equal(o.jobs[0].rw, RW_WRITE);
	assert_int_equal(o.jobs[0].bs, 16384);
	assert_int_equal(o.jobs[1].iodepth, 32);
	assert_int_equal(o.jobs[1].rw, RW_RANDREAD);
	assert_int_equal(o.jobs[1].bs, 4096);
	assert_int_equal(o.dev.nr_devs, 1);

	/* A job file without rw= still is no matrix. */
	path = write_file("norw.fio", "[x]\nsize=1m\n");
	{
		const char *argv2[] = { "bench", path };

		assert_int_equal(parse(&o, 2, argv2), 0);
		assert_false(o.matrix);
		assert_int_equal(o.nr_jobs, 1);
		assert_string_equal(o.jobs[0].name, "x");
	}
}

/* A job file of @len bytes fails with @want_rc and "<path><want>". */
static void jobfile_error_n(const char *text, size_t len, int want_rc,
			    const char *want)
{
	const char *path = write_file_n("bad.fio", text, len);
	char msg[600];
	struct bench_opts o;
	int rc;

	bench_opts_init(&o);
	o.nr_jobs = 1;	/* jobs already there are kept on failure */
	errbuf[0] = '\0';
	rc = bench_parse_jobfile(&o, path, NULL, errbuf, sizeof(errbuf));
	assert_int_equal(rc, want_rc);
	assert_int_equal(o.nr_jobs, 1);
	snprintf(msg, sizeof(msg), "%s%s", path, want);
	assert_string_equal(errbuf, msg);
}

static void jobfile_error(const char *text, int want_rc, const char *want)
{
	jobfile_error_n(text, strlen(text), want_rc, want);
}

static void test_jobfile_errors(void **state)
{
	char big[BENCH_MAX_JOBS * 8 + 64], *p = big;
	char want[64];
	int i;

	unsetenv("BLK_TEST_UNSET_VAR");
	jobfile_error("[global]\nbs=4k\n\n[j]\n; comment\n\n\n\n\n\n\niodepth=0\n",
		      -EINVAL, ":12: iodepth=0: out of range, allowed 1..65536");
	jobfile_error("[j]\nfoo=1\n", -EINVAL, ":2: unknown option 'foo'");
	jobfile_error("[j]\nlockfile=1\n", -EINVAL,
		      ":2: option 'lockfile' is a fio option that blkstack bench does not support: file and file-system management: blkstack issues block requests to its own devices");
	jobfile_error("[j]\niodepth\n", -EINVAL,
		      ":2: option 'iodepth' needs a value: a number (a whole number with an optional k/m/g/t/p suffix), allowed 1..65536");
	jobfile_error("include other.fio\n[j]\n", -EINVAL,
		      ":1: include other.fio: outside of a [section]");
	jobfile_error("[j]\ninclude\n", -EINVAL, ":2: include: no file name");
	jobfile_error("[j]\ninclude /nonexistent/x.fio\n", -EINVAL,
		      ":2: include /nonexistent/x.fio: No such file or directory");
	/* fio: an unset variable is the empty string; the value's error names it */
	jobfile_error("[j]\niodepth=${BLK_TEST_UNSET_VAR}\n", -EINVAL,
		      ":2: option 'iodepth' needs a value: a number (a whole number with an optional k/m/g/t/p suffix), allowed 1..65536 (the environment variable 'BLK_TEST_UNSET_VAR' is not set)");
	jobfile_error("[j]\niodepth=${BLK_TEST\n", -EINVAL,
		      ":2: unterminated '${' in '${BLK_TEST'");
	jobfile_error("iodepth=4\n[j]\n", -EINVAL,
		      ":1: option 'iodepth' outside of a [section]");
	jobfile_error("[j\n", -EINVAL, ":1: bad section header '[j'");
	jobfile_error("[ ]\n", -EINVAL, ":1: empty section name");
	jobfile_error("[j]\n=4\n", -EINVAL, ":2: option name missing before '='");
	jobfile_error("", -EINVAL, ": no jobs defined");
	jobfile_error("; only\n[global]\nbs=8k\n", -EINVAL, ": no jobs defined");

	for (i = 0; i < BENCH_MAX_JOBS; i++)
		p += sprintf(p, "[j%d]\n", i);
	strcpy(p, "[last]\n");
	snprintf(want, sizeof(want),
		 ":%d: more than %d jobs (blkstack bench's limit)",
		 BENCH_MAX_JOBS, BENCH_MAX_JOBS);
	/* One job is already in @o, so the 64th section overflows. */
	jobfile_error(big, -EINVAL, want);
}

/* What a job file holds is shown cut and escaped; odd bytes are caught. */
static void test_jobfile_bytes(void **state)
{
	static const char nul_mid[] = "[j]\nrw=read\0; hidden\nbs=8k\n";
	static const char nul_end[] = "[j]\nrw=read\n\0";
	char text[400], want[400], name[101];
	const char *path;
	struct bench_opts o;

	memset(name, 'n', 100);
	name[100] = '\0';

	/* Long section names and values: 64 characters, then "..." */
	snprintf(text, sizeof(text), "[%s]\n", name);
	snprintf(want, sizeof(want),
		 ":1: section name '%.64s...' longer than 63 characters", name);
	jobfile_error(text, -EINVAL, want);
	snprintf(text, sizeof(text), "[j]\nrw=%s\n", name);
	snprintf(want, sizeof(want),
		 ":2: rw=%.64s...: bad value, allowed read|write|randread|randwrite|rw|readwrite|randrw|trim|randtrim",
		 name);
	jobfile_error(text, -EINVAL, want);
	snprintf(text, sizeof(text), "[%s\n", name);
	snprintf(want, sizeof(want), ":1: bad section header '[%.63s...'",
		 name);
	jobfile_error(text, -EINVAL, want);
	snprintf(text, sizeof(text), "%s=1\n[j]\n", name);
	snprintf(want, sizeof(want),
		 ":1: option '%.64s...' outside of a [section]", name);
	jobfile_error(text, -EINVAL, want);

	/* Control bytes are escaped, never echoed. */
	jobfile_error("[j]\nrw=\x1b[31mred\n", -EINVAL,
		      ":2: rw=\\x1b[31mred: bad value, allowed read|write|randread|randwrite|rw|readwrite|randrw|trim|randtrim");
	jobfile_error("[j\x07\n", -EINVAL, ":1: bad section header '[j\\x07'");
	jobfile_error("[j]\nfoo\x08=1\n", -EINVAL, ":2: unknown option 'foo\\x08'");
	jobfile_error("[j]\niodepth=${\x1b}\n", -EINVAL,
		      ":2: option 'iodepth' needs a value: a number (a whole number with an optional k/m/g/t/p suffix), allowed 1..65536 (the environment variable '\\x1b' is not set)");
	jobfile_error("[j\x1b]\nrw=read\n", -EINVAL,
		      ":1: section name 'j\\x1b': control characters are not allowed");

	/* A NUL byte would cut the line short: an error, not a guess. */
	jobfile_error_n(nul_mid, sizeof(nul_mid) - 1, -EINVAL,
			":2: NUL byte in the line");
	jobfile_error_n(nul_end, sizeof(nul_end) - 1, -EINVAL,
			":3: NUL byte in the line");

	/* A UTF-8 byte order mark starts the file: skipped. */
	path = write_file("bom.fio", "\xef\xbb\xbf[bom]\nbs=8k\n");
	bench_opts_init(&o);
	assert_int_equal(bench_parse_jobfile(&o, path, NULL, errbuf,
					     sizeof(errbuf)), 0);
	assert_int_equal(o.nr_jobs, 1);
	assert_string_equal(o.jobs[0].name, "bom");
	assert_int_equal(o.jobs[0].bs, 8192);
	path = write_file("bom2.fio", "\xef\xbb\xbf; comment\n[b]\n");
	bench_opts_init(&o);
	assert_int_equal(bench_parse_jobfile(&o, path, NULL, errbuf,
					     sizeof(errbuf)), 0);
	assert_string_equal(o.jobs[0].name, "b");
	/* Only at the start of the file; elsewhere it is shown, not hidden. */
	jobfile_error("[j]\n\xef\xbb\xbf[k]\n", -EINVAL,
		      ":2: unknown option '\\xef\\xbb\\xbf[k]'");
	/* So is a bidi override, which would turn the message around. */
	jobfile_error("[j]\nrw=\xe2\x80\xae" "daer\n", -EINVAL,
		      ":2: rw=\\xe2\\x80\\xaedaer: bad value, allowed read|write|randread|randwrite|rw|readwrite|randrw|trim|randtrim");
}

static void test_jobfile_directory(void **state)
{
	const char *argv[] = { "bench", tmpdir };
	char want[600];
	struct bench_opts o;

	bench_opts_init(&o);
	assert_int_equal(bench_parse_jobfile(&o, tmpdir, NULL, errbuf,
					     sizeof(errbuf)), -EISDIR);
	snprintf(want, sizeof(want), "%s: Is a directory", tmpdir);
	assert_string_equal(errbuf, want);
	assert_int_equal(o.nr_jobs, 0);
	assert_int_equal(parse(&o, 2, argv), -EINVAL);
	assert_string_equal(errbuf, want);
}

static void test_jobfile_missing(void **state)
{
	char path[600];
	struct bench_opts o;
	const char *argv[] = { "bench", path };

	snprintf(path, sizeof(path), "%s/does-not-exist.fio", tmpdir);
	bench_opts_init(&o);
	assert_int_equal(bench_parse_jobfile(&o, path, NULL, errbuf,
					     sizeof(errbuf)), -ENOENT);
	assert_non_null(strstr(errbuf, "does-not-exist.fio: "));
	assert_int_equal(parse(&o, 2, argv), -EINVAL);
	assert_non_null(strstr(errbuf, "does-not-exist.fio: "));
}

static void test_usage(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	bench_usage(f);
	fclose(f);
	assert_non_null(strstr(buf, "Job options"));
	assert_non_null(strstr(buf, "Device options"));
	/* a section per registry driver, with its summary and options */
	assert_non_null(strstr(buf, "dev=null: no storage"));
	assert_non_null(strstr(buf, "dev=nvme: NVMe host over"));
	assert_non_null(strstr(buf, "--nvme_fault=SPEC"));
	assert_non_null(strstr(buf, "--lower=DRIVER"));
	assert_non_null(strstr(buf, "Output options"));
	assert_non_null(strstr(buf, "--iodepth=INT"));
	assert_non_null(strstr(buf, "1..65536"));
	assert_non_null(strstr(buf, "512..16M"));
	assert_non_null(strstr(buf, "--time_based[=0|1]"));
	assert_non_null(strstr(buf, "readwrite"));
	assert_non_null(strstr(buf, "--completion_nsec=TIME"));
	assert_non_null(strstr(buf, "--output-format=normal|json"));
	assert_non_null(strstr(buf, "--dev=LIST"));
	free(buf);
}

/* verify=, do_verify, verify_only, verify_dump_dir, offset_increment */
static void test_verify_options(void **state)
{
	struct bench_opts o;
	struct bench_job_opts j;

	bench_opts_init(&o);
	bench_job_defaults(&j);
	assert_int_equal(j.verify, VERIFY_NONE);
	assert_true(j.do_verify);
	assert_false(j.verify_only);
	assert_string_equal(j.verify_dump_dir, ".");
	assert_int_equal(j.offset_increment, 0);

	assert_int_equal(set(&o, &j, "verify", "crc32c"), 0);
	assert_int_equal(j.verify, VERIFY_CRC32C);
	assert_int_equal(set(&o, &j, "verify", "none"), 0);
	assert_int_equal(j.verify, VERIFY_NONE);
	assert_int_equal(set(&o, &j, "verify", "crc32c-intel"), 0);
	assert_int_equal(j.verify, VERIFY_CRC32C);
	/* fio's own spelling of off */
	assert_int_equal(set(&o, &j, "verify", "0"), 0);
	assert_int_equal(j.verify, VERIFY_NONE);
	/* every method of fio 3.33 */
	{
		static const struct {
			const char *name;
			enum bench_verify m;
		} all[] = {
			{ "md5", VERIFY_MD5 }, { "crc64", VERIFY_CRC64 },
			{ "crc32", VERIFY_CRC32 }, { "crc16", VERIFY_CRC16 },
			{ "crc7", VERIFY_CRC7 }, { "xxhash", VERIFY_XXHASH },
			{ "sha512", VERIFY_SHA512 }, { "sha256", VERIFY_SHA256 },
			{ "sha1", VERIFY_SHA1 }, { "sha3-224", VERIFY_SHA3_224 },
			{ "sha3-256", VERIFY_SHA3_256 },
			{ "sha3-384", VERIFY_SHA3_384 },
			{ "sha3-512", VERIFY_SHA3_512 }, { "meta", VERIFY_META },
			{ "pattern", VERIFY_PATTERN }, { "null", VERIFY_NULL },
		};
		unsigned int k;

		for (k = 0; k < ARRAY_SIZE(all); k++) {
			assert_int_equal(set(&o, &j, "verify", all[k].name), 0);
			assert_int_equal(j.verify, all[k].m);
			assert_string_equal(bench_verify_name(j.verify), all[k].name);
		}
	}
	assert_int_equal(set(&o, &j, "verify", "crc33"), -EINVAL);
	assert_string_equal(errbuf,
			    "verify=crc33: bad value, allowed md5|crc64|crc32c|crc32c-intel|crc32|crc16|crc7|xxhash|sha512|sha256|sha1|sha3-224|sha3-256|sha3-384|sha3-512|meta|pattern|null|none");
	assert_int_equal(set(&o, &j, "verify", "crc32c"), 0);

	assert_int_equal(set(&o, &j, "do_verify", "0"), 0);
	assert_false(j.do_verify);
	assert_int_equal(set(&o, &j, "verify_only", NULL), 0);
	assert_true(j.verify_only);
	assert_int_equal(set(&o, &j, "verify_dump_dir", "/tmp/x"), 0);
	assert_string_equal(j.verify_dump_dir, "/tmp/x");
	assert_int_equal(set(&o, &j, "offset_increment", "64m"), 0);
	assert_int_equal(j.offset_increment, 64ull << 20);

	assert_int_equal(set(&o, &j, "verify_fatal", "1"), 0);
	assert_true(j.verify_fatal);
	assert_int_equal(j.verify_dump, 0);
	assert_int_equal(set(&o, &j, "verify_dump", "0"), 0);
	assert_int_equal(j.verify_dump, 1);
	assert_int_equal(set(&o, &j, "verify_dump", "1"), 0);
	assert_int_equal(j.verify_dump, 2);
	assert_int_equal(set(&o, &j, "verify_pattern", "0xff%o\"ab\""), 0);
	assert_string_equal(j.verify_pattern, "0xff%o\"ab\"");
	assert_int_equal(j.verify_pat.len, 11);
	assert_int_equal(j.verify_pat.nr_off, 1);
	assert_int_equal(set(&o, &j, "verify_pattern", "0xff\"ab"), -EINVAL);
	assert_string_equal(errbuf,
			    "verify_pattern=0xff\"ab: a string without its closing quote");
	assert_int_equal(set(&o, &j, "verify_interval", "512"), 0);
	assert_int_equal(j.verify_interval, 512);
	assert_int_equal(set(&o, &j, "verify_offset", "1k"), 0);
	assert_int_equal(j.verify_offset, 1024);
	assert_int_equal(set(&o, &j, "verify_backlog", "16"), 0);
	assert_int_equal(j.verify_backlog, 16);
	assert_int_equal(set(&o, &j, "verify_backlog_batch", "8"), 0);
	assert_int_equal(j.verify_backlog_batch, 8);

	/* verify_async: taken, the job's thread verifies */
	assert_int_equal(set(&o, &j, "verify_async", "2"), 0);
	assert_int_equal(j.verify_async, 2);
	/* trim verification, saved state, experimental_verify (fio's defaults) */
	assert_int_equal(j.trim_verify_zero, 1);
	assert_int_equal(j.verify_state_save, 0);
	assert_int_equal(set(&o, &j, "trim_percentage", "50"), 0);
	assert_int_equal(j.trim_percentage, 50);
	assert_int_equal(set(&o, &j, "trim_percentage", "101"), -EINVAL);
	assert_int_equal(set(&o, &j, "trim_backlog", "16"), 0);
	assert_int_equal(j.trim_backlog, 16);
	assert_int_equal(set(&o, &j, "trim_backlog_batch", "4"), 0);
	assert_int_equal(j.trim_backlog_batch, 4);
	assert_int_equal(set(&o, &j, "trim_verify_zero", "0"), 0);
	assert_int_equal(j.trim_verify_zero, 0);
	assert_int_equal(set(&o, &j, "verify_state_save", "1"), 0);
	assert_int_equal(j.verify_state_save, 1);
	assert_int_equal(set(&o, &j, "verify_state_load", "1"), 0);
	assert_int_equal(j.verify_state_load, 1);
	assert_int_equal(set(&o, &j, "experimental_verify", "1"), 0);
	assert_int_equal(j.experimental_verify, 1);
}

static void test_verify_cli_checks(void **state)
{
	struct bench_opts o;
	const char *only[] = { "bench", "--rw=read", "--verify_only" };
	const char *trim[] = { "bench", "--rw=trim", "--verify=crc32c" };
	const char *ok[] = { "bench", "--rw=trim", "--verify=crc32c",
			     "--verify_only" };

	assert_int_equal(parse(&o, ARRAY_SIZE(only), only), -EINVAL);
	assert_string_equal(errbuf, "job 'bench': verify_only=1 needs verify= (crc32c, md5, ...)");
	assert_int_equal(parse(&o, ARRAY_SIZE(trim), trim), -EINVAL);
	assert_string_equal(errbuf,
			    "job 'bench': verify=crc32c with rw=trim: a trim job writes no data to verify");
	assert_int_equal(parse(&o, ARRAY_SIZE(ok), ok), 0);
}

/* fio's write buffer options: values, what was given, refusals */
static void test_buffer_options(void **state)
{
	struct bench_opts o;
	struct bench_job_opts j;
	const char *ws[] = { "bench", "--rw=write", "--size=8m",
			     "--dedupe_percentage=60", "--dedupe_mode=working_set",
			     "--dedupe_working_set_percentage=41" };
	const char *ws_ok[] = { "bench", "--rw=write", "--size=8m",
				"--dedupe_percentage=60", "--dedupe_mode=working_set",
				"--dedupe_working_set_percentage=40" };
	const char *ws_nosize[] = { "bench", "--rw=write", "--dedupe_percentage=5",
				    "--dedupe_mode=working_set" };

	(void)state;
	bench_opts_init(&o);
	bench_job_defaults(&j);
	/* fio's defaults: scramble on, chunk 512, repeat, 5 %, malloc, 2 MiB */
	assert_true(j.scramble_buffers);
	assert_int_equal(j.compress_chunk, 512);
	assert_int_equal(j.dedupe_mode, BENCH_DEDUPE_REPEAT);
	assert_int_equal(j.dedupe_ws_pct, 5);
	assert_int_equal(j.mem_type, BENCH_MEM_MALLOC);
	assert_int_equal(j.hugepage_size, 2 << 20);
	assert_int_equal(j.buf_given, 0);
	assert_int_equal(j.buf_pat.len, 0);

	assert_int_equal(set(&o, &j, "zero_buffers", NULL), 0);
	assert_true(j.zero_buffers);
	assert_int_equal(set(&o, &j, "refill_buffers", "0"), 0);
	assert_false(j.refill_buffers);
	assert_int_equal(set(&o, &j, "buffer_compress_percentage", "0"), 0);
	assert_int_equal(j.buf_given, BENCH_BUF_ZERO | BENCH_BUF_REFILL |
			 BENCH_BUF_COMPRESS);
	assert_int_equal(set(&o, &j, "buffer_compress_percentage", "101"), -EINVAL);
	assert_int_equal(set(&o, &j, "buffer_compress_chunk", "4k"), 0);
	assert_int_equal(j.compress_chunk, 4096);
	assert_int_equal(set(&o, &j, "dedupe_mode", "working_set"), 0);
	assert_int_equal(j.dedupe_mode, BENCH_DEDUPE_WORKING_SET);
	assert_int_equal(set(&o, &j, "dedupe_mode", "random"), -EINVAL);

	/* buffer_pattern: fio's forms, in a row */
	assert_int_equal(set(&o, &j, "buffer_pattern", "0xdead\"ab\"258"), 0);
	assert_int_equal(j.buf_pat.len, 6);
	assert_memory_equal(j.buf_pat.bytes, "\xde\xad" "ab" "\x02\x01", 6);
	assert_true(j.buf_given & BENCH_BUF_PATTERN);
	assert_int_equal(set(&o, &j, "buffer_pattern", "0x01%o"), -EINVAL);
	assert_non_null(strstr(errbuf, "takes none"));
	assert_int_equal(set(&o, &j, "buffer_pattern", "abc"), -EINVAL);
	assert_int_equal(set(&o, &j, "buffer_pattern", "'file'"), -EINVAL);

	/* mem= and its alias, a file after the mmap types only */
	assert_int_equal(set(&o, &j, "iomem", "shmhuge"), 0);
	assert_int_equal(j.mem_type, BENCH_MEM_SHMHUGE);
	assert_int_equal(set(&o, &j, "mem", "mmapshared:/dev/hugepages/x"), 0);
	assert_int_equal(j.mem_type, BENCH_MEM_MMAPSHARED);
	assert_string_equal(j.mem_file, "/dev/hugepages/x");
	assert_int_equal(set(&o, &j, "mem", "malloc:ignored"), 0);
	assert_int_equal(j.mem_type, BENCH_MEM_MALLOC);
	assert_string_equal(j.mem_file, "");
	assert_int_equal(set(&o, &j, "mem", "mmap:"), -EINVAL);
	assert_int_equal(set(&o, &j, "mem", "cudamalloc"), -EOPNOTSUPP);
	assert_non_null(strstr(errbuf, "cudamalloc"));
	assert_int_equal(set(&o, &j, "mem", "heap"), -EINVAL);
	assert_non_null(strstr(errbuf, "allowed malloc, shm, shmhuge"));
	assert_int_equal(set(&o, &j, "mem_align", "512"), 0);
	assert_int_equal(j.mem_align, 512);
	assert_int_equal(set(&o, &j, "hugepage-size", "3m"), -EINVAL);

	/* dedupe_mode=working_set: fio's checks */
	assert_int_equal(parse(&o, ARRAY_SIZE(ws), ws), -EINVAL);
	assert_non_null(strstr(errbuf, "add up to more than 100"));
	assert_int_equal(parse(&o, ARRAY_SIZE(ws_ok), ws_ok), 0);
	assert_int_equal(parse(&o, ARRAY_SIZE(ws_nosize), ws_nosize), -EINVAL);
	assert_non_null(strstr(errbuf, "needs size="));
}

/* verify_pattern=, verify_interval=, verify_offset= and the methods */
static void test_verify_method_checks(void **state)
{
	struct bench_opts o;
	const char *alone[] = { "bench", "--rw=write", "--verify_pattern=0xaa" };
	const char *none[] = { "bench", "--rw=write", "--verify=none",
			       "--verify_pattern=0xaa" };
	const char *nopat[] = { "bench", "--rw=write", "--verify=pattern" };
	const char *small[] = { "bench", "--rw=write", "--verify=sha512",
				"--verify_interval=64" };
	const char *odd[] = { "bench", "--rw=write", "--verify=md5",
			      "--verify_interval=3000" };
	const char *big[] = { "bench", "--rw=write", "--verify=md5",
			      "--verify_interval=1m" };
	const char *off[] = { "bench", "--rw=write", "--verify=md5",
			      "--verify_interval=512", "--verify_offset=460" };
	const char *offok[] = { "bench", "--rw=write", "--verify=md5",
				"--verify_interval=512", "--verify_offset=456" };
	const char *nofit[] = { "bench", "--rw=write", "--verify=sha512",
				"--verify_interval=256", "--verify_offset=200" };
	const char *sha512[] = { "bench", "--rw=write", "--bs=4k", "--verify=sha512",
				 "--verify_interval=256" };
	const char *batch[] = { "bench", "--rw=write", "--verify=md5",
				"--verify_backlog=4", "--verify_backlog_batch=8" };

	(void)state;
	/* fio: verify_pattern= alone is a header and the pattern */
	assert_int_equal(parse(&o, ARRAY_SIZE(alone), alone), 0);
	assert_int_equal(o.jobs[0].verify, VERIFY_META);
	assert_int_equal(parse(&o, ARRAY_SIZE(none), none), -EINVAL);
	assert_string_equal(errbuf,
			    "job 'bench': verify_pattern= with verify=none: fio then fills the writes with the pattern and checks nothing, which blkstack bench does not do (verify=meta or verify=pattern check it)");
	assert_int_equal(parse(&o, ARRAY_SIZE(nopat), nopat), -EINVAL);
	assert_string_equal(errbuf, "job 'bench': verify=pattern needs verify_pattern=");
	assert_int_equal(parse(&o, ARRAY_SIZE(small), small), -EINVAL);
	assert_string_equal(errbuf,
			    "job 'bench': verify_interval=64 is smaller than the 168-byte header of verify=sha512");
	/* as fio: an interval that does not divide bs, or past it, is bs */
	assert_int_equal(parse(&o, ARRAY_SIZE(odd), odd), 0);
	assert_int_equal(o.jobs[0].verify_interval, 4096);
	assert_non_null(strstr(o.notes, "verify_interval=3000 does not divide bs=4096: one header per block, as fio takes it"));
	assert_int_equal(parse(&o, ARRAY_SIZE(big), big), 0);
	assert_int_equal(o.jobs[0].verify_interval, 4096);
	assert_int_equal(parse(&o, ARRAY_SIZE(off), off), -EINVAL);
	assert_string_equal(errbuf,
			    "job 'bench': verify_offset=460: allowed 56..456 (the 56-byte header of verify=md5 moves there, inside the 512-byte interval and past its own place)");
	assert_int_equal(parse(&o, ARRAY_SIZE(offok), offok), 0);
	assert_int_equal(parse(&o, ARRAY_SIZE(nofit), nofit), -EINVAL);
	assert_string_equal(errbuf,
			    "job 'bench': verify_offset=200: no offset fits: the 168-byte header of verify=sha512 needs an interval of at least 336 bytes to move in, this one is 256");
	assert_int_equal(parse(&o, ARRAY_SIZE(sha512), sha512), -EINVAL);
	assert_string_equal(errbuf,
			    "job 'bench': verify=sha512 with 256-byte intervals: fio's sha512 takes 128 data bytes after its 168-byte header, so intervals of at least 296 bytes (fio fails its own blocks below that); allowed verify_interval=296 or more, or another method");
	assert_int_equal(parse(&o, ARRAY_SIZE(batch), batch), -EINVAL);
}


/*
 * The fio catalogue (fio_opts.c) and the option table (options.c) agree:
 * what the catalogue calls supported or mapped is implemented under
 * fio's name and alias, what it refuses is not, and every refusal says
 * why.
 */
static void test_fio_catalogue(void **state)
{
	const struct fio_opt *t;
	const struct fio_engine *e;
	char why[256];
	size_t n, i, refused = 0;

	t = fio_opts(&n);
	assert_true(n > 260);	/* fio 3.33: 217 general, the engines' more */
	for (i = 0; i < n; i++) {
		bool known = bench_option_known(t[i].name);

		if (t[i].status == FIO_REFUSED) {
			if (known)
				fail_msg("%s: refused in fio_opts.c but in the option table",
					 t[i].name);
			assert_true(strlen(fio_opt_why(&t[i], why, sizeof(why))) > 10);
			refused++;
			continue;
		}
		if (!known)
			fail_msg("%s: %s in fio_opts.c but not in the option table",
				 t[i].name, fio_status_name(t[i].status));
		if (t[i].alias && !bench_option_known(t[i].alias))
			fail_msg("%s: fio's alias %s is not taken", t[i].name,
				 t[i].alias);
		if (t[i].status == FIO_MAPPED)
			assert_non_null(t[i].what);
		/* each name once */
		assert_ptr_equal(fio_opt_find(t[i].name), &t[i]);
	}
	assert_true(refused < n);
	e = fio_engines(&n);
	for (i = 0; i < n; i++) {
		assert_non_null(e[i].what);
		if (e[i].status == FIO_MAPPED)
			assert_non_null(e[i].dev);
		else
			assert_null(e[i].dev);
	}
	assert_true(fio_engine_find("libaio")->status == FIO_MAPPED);
	assert_true(fio_engine_find("psync")->sync);
	assert_true(fio_engine_find("cpuio")->status == FIO_REFUSED);
	assert_null(fio_engine_find("nosuch"));
}

/*
 * A job's files, as fio names them: filename=a:b with "\\:" for a colon,
 * nrfiles= with $filenum, directory=a:b (the first for filename=, the
 * thread's in turn for generated names), every name under directory=.
 */
static void test_job_files(void **state)
{
	struct bench_job_opts j;
	char buf[256];

	(void)state;
	assert_int_equal(bench_name_list("a:b", 1, buf, sizeof(buf)), 2);
	assert_string_equal(buf, "b");
	assert_int_equal(bench_name_list("x\\:y:z", 0, buf, sizeof(buf)), 2);
	assert_string_equal(buf, "x:y");
	assert_int_equal(bench_name_list(" :a::b: ", 1, buf, sizeof(buf)), 2);
	assert_string_equal(buf, "b");
	assert_int_equal(bench_name_list(":", 0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	assert_int_equal(bench_name_list("abcdef", 0, buf, 4), -ENAMETOOLONG);

	bench_job_defaults(&j);
	snprintf(j.name, sizeof(j.name), "job");
	assert_int_equal(bench_job_nr_files(&j), 1);
	assert_false(bench_job_has_file(&j));
	j.nrfiles = 3;
	assert_true(bench_job_has_file(&j));
	assert_int_equal(bench_job_nr_files(&j), 3);
	assert_int_equal(bench_job_file(&j, 1, 2, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "job.1.2");
	snprintf(j.directory, sizeof(j.directory), "/d1:/d2/");
	assert_int_equal(bench_job_file(&j, 1, 0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/d2/job.1.0");
	assert_int_equal(bench_job_file(&j, 2, 0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/d1/job.2.0");
	/* filename= names the files; fio puts them in the first directory */
	snprintf(j.filename, sizeof(j.filename), "a.img:/abs/b\\:c.img");
	assert_int_equal(bench_job_nr_files(&j), 2);
	assert_int_equal(bench_job_file(&j, 1, 0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/d1/a.img");
	assert_int_equal(bench_job_file(&j, 1, 1, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/d1/abs/b:c.img");
	j.directory[0] = '\0';
	assert_int_equal(bench_job_file(&j, 0, 1, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/abs/b:c.img");
}

/* One parse lists every problem of a file, each with its line. */
static void test_jobfile_all_problems(void **state)
{
	const char *path = write_file("all.fio",
		"[global]\nioengine=rbd\nbs=4k\n"
		"[a]\nrw=randread\noffset_align=4k\niodpeth=4\n"
		"[b\nrate=1m\n"		/* a bad header: its lines skipped */
		"[c]\nrw=read\nrw_sequencer=identical\nexec_prerun=true\n");
	struct bench_opts o;
	char want[2048];

	bench_opts_init(&o);
	errbuf[0] = '\0';
	assert_int_equal(bench_parse_jobfile(&o, path, NULL, errbuf,
					     sizeof(errbuf)), -EINVAL);
	assert_int_equal(o.nr_jobs, 0);
	snprintf(want, sizeof(want),
		 "%1$s:2: ioengine=rbd: a fio engine blkstack bench does not support: network or distributed storage: blkstack's media are its own block devices\n"
		 "%1$s:6: option 'offset_align' is a fio option that blkstack bench does not support: a workload option blkstack bench does not implement yet\n"
		 "%1$s:7: unknown option 'iodpeth' (did you mean 'iodepth'?)\n"
		 "%1$s:8: bad section header '[b'\n"
		 "%1$s:12: option 'rw_sequencer' is a fio option that blkstack bench does not support: a workload option blkstack bench does not implement yet\n"
		 "%1$s:13: option 'exec_prerun' is a fio option that blkstack bench does not support: process and cgroup options are not implemented (jobs are threads of one process; its CPU and NUMA placement is: cpus_allowed, cpumask, numa_cpu_nodes, numa_mem_policy)",
		 path);
	{
		static char big[4096];

		bench_opts_init(&o);
		assert_int_equal(bench_parse_jobfile(&o, path, NULL, big,
						     sizeof(big)), -EINVAL);
		assert_string_equal(big, want);
	}
}

/* A full message buffer ends with a note, never with half a line. */
static void test_err_add_cuts(void **state)
{
	char buf[64] = "";
	int i;

	bench_err_add(buf, sizeof(buf), "first");
	bench_err_add(buf, sizeof(buf), "second");
	assert_string_equal(buf, "first\nsecond");
	for (i = 0; i < 10; i++)
		bench_err_add(buf, sizeof(buf), "a longer line of text");
	assert_string_equal(buf,
			    "first\nsecond\na longer line of text\n(more problems not shown)");
}

/* fio's syntax: inline comments, include, keywords, kb_base. */
static void test_jobfile_fio_syntax(void **state)
{
	const char *inc, *path;
	struct bench_opts o;
	char text[512];

	/* a ';' or '#' anywhere starts a comment, as fio cuts its lines */
	path = write_file("c.fio",
		"[j] ; the job\nsize=1m ; a comment\nbs=8k# another\n"
		"rw=randread;x\n  # indented\niodepth=4 ;\n");
	bench_opts_init(&o);
	assert_int_equal(bench_parse_jobfile(&o, path, NULL, errbuf,
					     sizeof(errbuf)), 0);
	assert_int_equal(o.nr_jobs, 1);
	assert_string_equal(o.jobs[0].name, "j");
	assert_int_equal(o.jobs[0].size, 1 << 20);
	assert_int_equal(o.jobs[0].bs, 8192);
	assert_int_equal(o.jobs[0].rw, RW_RANDREAD);
	assert_int_equal(o.jobs[0].iodepth, 4);

	/* include: options of the section it is in; relative to the file */
	inc = write_file("inc.opts", "; included\nbs=16k\niodepth=8\n");
	assert_non_null(inc);
	path = write_file("i.fio", "[a]\ninclude inc.opts\nsize=2m\n[b]\nrw=write\n");
	bench_opts_init(&o);
	assert_int_equal(bench_parse_jobfile(&o, path, NULL, errbuf,
					     sizeof(errbuf)), 0);
	assert_int_equal(o.nr_jobs, 2);
	assert_int_equal(o.jobs[0].bs, 16384);
	assert_int_equal(o.jobs[0].iodepth, 8);
	assert_int_equal(o.jobs[0].size, 2 << 20);
	assert_int_equal(o.jobs[1].bs, 4096);
	/* an included file's problems name that file and its line */
	write_file("bad.opts", "bs=16k\noffset_align=4k\n");
	path = write_file("ib.fio", "[a]\ninclude bad.opts\n");
	bench_opts_init(&o);
	assert_int_equal(bench_parse_jobfile(&o, path, NULL, errbuf,
					     sizeof(errbuf)), -EINVAL);
	snprintf(text, sizeof(text), "%s/bad.opts:2: option 'offset_align'", tmpdir);
	assert_non_null(strstr(errbuf, text));
	/* no sections in an included file */
	write_file("sect.opts", "[x]\n");
	path = write_file("is.fio", "[a]\ninclude sect.opts\n");
	bench_opts_init(&o);
	assert_int_equal(bench_parse_jobfile(&o, path, NULL, errbuf,
					     sizeof(errbuf)), -EINVAL);
	assert_non_null(strstr(errbuf, "sect.opts:1: no sections in an included file"));

	/* fio's keywords */
	path = write_file("k.fio", "[j]\nnumjobs=$ncpus\nbs=$pagesize\n");
	bench_opts_init(&o);
	assert_int_equal(bench_parse_jobfile(&o, path, NULL, errbuf,
					     sizeof(errbuf)), 0);
	assert_int_equal(o.jobs[0].numjobs, sysconf(_SC_NPROCESSORS_ONLN));
	assert_int_equal(o.jobs[0].bs, sysconf(_SC_PAGESIZE));

	/* kb_base=1000: k is 1000, ki 1024; it applies to later sizes */
	path = write_file("kb.fio", "[j]\nsize=1k\nkb_base=1000\noffset=3k\nio_size=2KiB\nbs=4kib\n");
	bench_opts_init(&o);
	assert_int_equal(bench_parse_jobfile(&o, path, NULL, errbuf,
					     sizeof(errbuf)), 0);
	assert_int_equal(o.jobs[0].size, 1024);
	assert_int_equal(o.jobs[0].offset, 3000);
	assert_int_equal(o.jobs[0].io_size, 2048);
	assert_int_equal(o.jobs[0].bs, 4096);

	/* fio's percentages: size, offset, io_size; the last form set wins */
	path = write_file("pct.fio", "[j]\nsize=25%\noffset=50%\nio_size=1m\nio_size=40%\n[k]\nsize=20%\nsize=8m\n");
	bench_opts_init(&o);
	assert_int_equal(bench_parse_jobfile(&o, path, NULL, errbuf,
					     sizeof(errbuf)), 0);
	assert_int_equal(o.jobs[0].size_pct, 25);
	assert_int_equal(o.jobs[0].size, 0);
	assert_int_equal(o.jobs[0].offset_pct, 50);
	assert_int_equal(o.jobs[0].io_size_pct, 40);
	assert_int_equal(o.jobs[0].io_size, 0);
	assert_int_equal(o.jobs[1].size_pct, 0);
	assert_int_equal(o.jobs[1].size, 8 << 20);
	jobfile_error("[j]\nsize=101%\n", -EINVAL, ":2: size=101%: bad percentage, allowed 1%..100%");
	jobfile_error("[j]\nio_size=200%\n", -EINVAL, ":2: io_size=200%: bad percentage, allowed 1%..100%");
	jobfile_error("[j]\noffset=x%\n", -EINVAL, ":2: offset=x%: bad percentage, allowed 0%..100%");
	jobfile_error("[j]\nbs=50%\n", -EINVAL,
		      ":2: bs=50%: a percentage is a fio form blkstack bench takes for size, offset and io_size only");
}

/* The workload options' values as fio writes them. */
static void test_workload_options(void **state)
{
	struct bench_opts o;
	struct bench_job_opts j;

	bench_opts_init(&o);
	bench_job_defaults(&j);
	assert_int_equal(j.thinktime_blocks, 1);
	assert_int_equal(set(&o, &j, "number_ios", "1k"), 0);
	assert_int_equal(j.number_ios, 1024);
	assert_int_equal(set(&o, &j, "startdelay", "2"), 0);
	assert_int_equal(j.startdelay_ns, 2 * NS_PER_SEC);
	assert_int_equal(j.startdelay_max_ns, 0);
	assert_int_equal(set(&o, &j, "startdelay", "100ms-1s"), 0);
	assert_int_equal(j.startdelay_ns, 100000000);
	assert_int_equal(j.startdelay_max_ns, NS_PER_SEC);
	assert_int_equal(set(&o, &j, "startdelay", "x-1"), -EINVAL);
	/* rate=: fio's read,write[,trim] list; one value caps each */
	assert_int_equal(set(&o, &j, "rate", "1m"), 0);
	assert_int_equal(j.rate[0], 1 << 20);
	assert_int_equal(j.rate[1], 1 << 20);
	assert_int_equal(j.rate[2], 1 << 20);
	assert_int_equal(set(&o, &j, "rate", "1m,"), 0);	/* reads only */
	assert_int_equal(j.rate[0], 1 << 20);
	assert_int_equal(j.rate[1], 0);
	assert_int_equal(j.rate[2], 0);
	assert_int_equal(set(&o, &j, "rate", ",500k"), 0);	/* writes, trims */
	assert_int_equal(j.rate[0], 0);
	assert_int_equal(j.rate[1], 500 << 10);
	assert_int_equal(j.rate[2], 500 << 10);
	assert_int_equal(set(&o, &j, "rate", "1m,500k,"), 0);
	assert_int_equal(j.rate[0], 1 << 20);
	assert_int_equal(j.rate[1], 500 << 10);
	assert_int_equal(j.rate[2], 0);
	assert_int_equal(set(&o, &j, "rate", "1,2,3,4"), -EINVAL);
	assert_int_equal(set(&o, &j, "rate", "1m,x"), -EINVAL);
	assert_int_equal(set(&o, &j, "rate", "0"), 0);
	assert_int_equal(set(&o, &j, "rate_iops", "500"), 0);
	assert_int_equal(j.rate_iops[0], 500);
	assert_int_equal(j.rate_iops[1], 500);
	assert_int_equal(set(&o, &j, "rate_iops", "1k,2k"), 0);
	assert_int_equal(j.rate_iops[0], 1024);
	assert_int_equal(j.rate_iops[1], 2048);
	assert_int_equal(j.rate_iops[2], 2048);
	/* latency_target=, latency_window= (bare: us), latency_percentile= */
	assert_int_equal(j.latency_target_ns, 0);
	assert_true(j.latency_percentile == 100.0);
	assert_int_equal(set(&o, &j, "latency_target", "500"), 0);
	assert_int_equal(j.latency_target_ns, 500000);
	assert_int_equal(set(&o, &j, "latency_window", "5000000"), 0);
	assert_int_equal(j.latency_window_ns, 5 * NS_PER_SEC);
	assert_int_equal(set(&o, &j, "latency_percentile", "99.9"), 0);
	assert_true(j.latency_percentile > 99.89 && j.latency_percentile < 99.91);
	assert_int_equal(set(&o, &j, "latency_percentile", "100.5"), -EINVAL);
	assert_int_equal(set(&o, &j, "latency_percentile", "x"), -EINVAL);
	assert_int_equal(set(&o, &j, "latency_run", "1"), 0);
	assert_true(j.latency_run);
	/* iodepth_batch_complete_min (iodepth_batch_complete), _max */
	assert_false(j.batch_complete_set);
	assert_int_equal(j.iodepth_batch_complete_min, 1);
	assert_int_equal(set(&o, &j, "iodepth_batch_complete", "4"), 0);
	assert_int_equal(j.iodepth_batch_complete_min, 4);
	assert_true(j.batch_complete_set);
	assert_int_equal(set(&o, &j, "iodepth_batch_complete_max", "8"), 0);
	assert_int_equal(j.iodepth_batch_complete_max, 8);
	assert_int_equal(set(&o, &j, "rate_process", "linear"), 0);
	assert_int_equal(set(&o, &j, "rate_process", "poisson"), 0);
	assert_true(j.rate_poisson);
	assert_int_equal(set(&o, &j, "rate_process", "other"), -EINVAL);
	assert_int_equal(set(&o, &j, "io_submit_mode", "inline"), 0);
	assert_int_equal(set(&o, &j, "io_submit_mode", "offload"), 0);
	assert_int_equal(set(&o, &j, "io_submit_mode", "other"), -EINVAL);
	/* thinktime: a bare number is in microseconds, as in fio */
	assert_int_equal(set(&o, &j, "thinktime", "250"), 0);
	assert_int_equal(j.thinktime_ns, 250000);
	assert_int_equal(set(&o, &j, "thinktime_spin", "1ms"), 0);
	assert_int_equal(j.thinktime_spin_ns, 1000000);
	assert_int_equal(set(&o, &j, "thinktime_blocks", "0"), -EINVAL);
	/* rate_min (ratemin), rate_iops_min, rate_cycle */
	assert_int_equal(j.rate_cycle_ms, 1000);
	assert_int_equal(set(&o, &j, "ratemin", "1024"), 0);
	assert_int_equal(j.rate_min[0], 1024);
	assert_int_equal(j.rate_min[1], 1024);
	assert_int_equal(set(&o, &j, "rate_iops_min", "50"), 0);
	assert_int_equal(j.rate_iops_min[0], 50);
	assert_int_equal(set(&o, &j, "ratecycle", "250"), 0);
	assert_int_equal(j.rate_cycle_ms, 250);
	assert_int_equal(set(&o, &j, "rate_min", "1m,2m"), 0);
	assert_int_equal(j.rate_min[0], 1 << 20);
	assert_int_equal(j.rate_min[1], 2 << 20);
	/* CPU placement: fio's list, its mask, its policies */
	assert_false(j.cpus_on);
	assert_int_equal(set(&o, &j, "cpus_allowed", "0"), 0);
	assert_true(j.cpus_on);
	assert_int_equal(CPU_COUNT(&j.cpus), 1);
	assert_true(CPU_ISSET(0, &j.cpus));
	assert_int_equal(set(&o, &j, "cpumask", "0x1"), 0);
	assert_int_equal(CPU_COUNT(&j.cpus), 1);
	assert_int_equal(set(&o, &j, "cpumask", "0"), -EINVAL);
	assert_int_equal(set(&o, &j, "cpus_allowed", "0,"), -EINVAL);
	assert_int_equal(set(&o, &j, "cpus_allowed", "100000"), -EINVAL);
	assert_int_equal(j.cpus_policy, CPUS_SHARED);
	assert_int_equal(set(&o, &j, "cpus_allowed_policy", "split"), 0);
	assert_int_equal(j.cpus_policy, CPUS_SPLIT);
	assert_int_equal(set(&o, &j, "numa_cpu_nodes", "0"), 0);
	assert_true(j.numa_cpus_on);
	assert_true(CPU_COUNT(&j.numa_cpus) >= 1);
	assert_int_equal(set(&o, &j, "numa_mem_policy", "bind:0"), 0);
	assert_int_equal(j.mem_policy, MEMPOL_BIND);
	assert_int_equal(j.mem_nodes, 1);
	assert_int_equal(set(&o, &j, "numa_mem_policy", "prefer:0"), 0);
	assert_int_equal(j.mem_policy, MEMPOL_PREFER);
	assert_int_equal(set(&o, &j, "numa_mem_policy", "prefer:0,1"), -EINVAL);
	assert_int_equal(set(&o, &j, "numa_mem_policy", "local"), 0);
	assert_int_equal(j.mem_policy, MEMPOL_LOCAL);
	assert_int_equal(set(&o, &j, "numa_mem_policy", "bind"), -EINVAL);
	assert_int_equal(set(&o, &j, "wait_for", "writers"), 0);
	assert_string_equal(j.wait_for, "writers");
	/* fio's profile options: taken, no effect, a note */
	assert_int_equal(set(&o, &j, "threads", "4"), 0);
	assert_non_null(strstr(o.notes, "threads=4: an option of fio's tiobench profile"));
	assert_int_equal(set(&o, &j, "new_group", NULL), 0);
	assert_true(j.new_group);

	/* bsrange and bssplit */
	assert_int_equal(set(&o, &j, "bsrange", "4k-64k"), 0);
	assert_int_equal(j.bs_min, 4096);
	assert_int_equal(j.bs_max, 65536);
	assert_int_equal(set(&o, &j, "blocksize_range", "64k-4k"), -EINVAL);
	assert_int_equal(set(&o, &j, "bsrange", "1k-2k,4k-8k"), 0);
	assert_int_equal(j.bsd_min[0], 1024);
	assert_int_equal(j.bsd_max[0], 2048);
	assert_int_equal(j.bsd_min[1], 4096);
	assert_int_equal(j.bsd_max[2], 8192);
	assert_int_equal(set(&o, &j, "bssplit", "4k/50:8k/50,16k"), 0);
	assert_int_equal(j.bsd_nr[0], 2);
	assert_int_equal(j.bsd_nr[1], 1);
	assert_int_equal(j.bsd_bs[1][0], 16384);
	assert_int_equal(j.bsd_pct[2][0], 100);
	assert_int_equal(set(&o, &j, "bssplit", "4k/50:8k/40,16k"), -EINVAL);
	assert_int_equal(set(&o, &j, "bssplit", "4k/20:8k:16k"), 0);
	assert_int_equal(j.bssplit_nr, 3);
	assert_int_equal(j.bs_max, 0);	/* the later one wins */
	assert_int_equal(j.bssplit_bs[2], 16384);
	assert_int_equal(j.bssplit_pct[0], 20);
	assert_int_equal(j.bssplit_pct[1], 40);
	assert_int_equal(j.bssplit_pct[2], 40);
	assert_int_equal(set(&o, &j, "bssplit", "4k/30:8k/30:16k"), 0);
	assert_int_equal(j.bssplit_pct[2], 40);
	assert_int_equal(set(&o, &j, "bssplit", "4k/50:8k/40"), -EINVAL);
	assert_string_equal(errbuf, "bssplit=4k/50:8k/40: the shares add up to 90%, not 100%");
	assert_int_equal(set(&o, &j, "bssplit", "1000/100"), -EINVAL);
	assert_int_equal(set(&o, &j, "bssplit", "4k/x"), -EINVAL);

	/* random_distribution */
	assert_int_equal(set(&o, &j, "random_distribution", "zipf:1.2"), 0);
	assert_int_equal(j.rand_dist, DIST_ZIPF);
	assert_true(j.dist_param > 1.19 && j.dist_param < 1.21);
	assert_true(j.dist_center < 0);
	assert_int_equal(set(&o, &j, "random_distribution", "pareto:0.9:0.25"), 0);
	assert_int_equal(j.rand_dist, DIST_PARETO);
	assert_true(j.dist_center > 0.24 && j.dist_center < 0.26);
	assert_int_equal(set(&o, &j, "random_distribution", "normal:5"), 0);
	assert_int_equal(j.rand_dist, DIST_NORMAL);
	assert_int_equal(set(&o, &j, "random_distribution", "zoned:60/10:30/20:8/30:2/40"), 0);
	assert_int_equal(j.rand_dist, DIST_ZONED);
	assert_int_equal(j.dist_zones, 4);
	assert_int_equal(j.zone_pct[2], 8);
	assert_int_equal(j.zone_size[3], 40);
	assert_int_equal(set(&o, &j, "random_distribution", "zoned_abs:70/4m:30/1g"), 0);
	assert_int_equal(j.rand_dist, DIST_ZONED_ABS);
	assert_int_equal(j.zone_size[1], 1ull << 30);
	/* fio: a last zone without a range takes the rest */
	assert_int_equal(set(&o, &j, "random_distribution", "zoned:50/5:30/15:20/"), 0);
	assert_int_equal(j.dist_zones, 3);
	assert_int_equal(j.zone_size[2], 80);
	assert_int_equal(set(&o, &j, "random_distribution", "random"), 0);
	assert_int_equal(j.rand_dist, DIST_RANDOM);
	assert_int_equal(set(&o, &j, "random_distribution", "zipf:1"), -EINVAL);
	assert_int_equal(set(&o, &j, "random_distribution", "pareto:1.5"), -EINVAL);
	assert_int_equal(set(&o, &j, "random_distribution", "zipf:1.2:2"), -EINVAL);
	assert_int_equal(set(&o, &j, "random_distribution", "zoned:60/80:40/30"), -EINVAL);
	assert_int_equal(set(&o, &j, "random_distribution", "gamma:2"), -EINVAL);
	assert_int_equal(set(&o, &j, "random_distribution", "zipf"), -EINVAL);

	/* rw=<pattern>:N: bytes for sequential, a count for random */
	assert_int_equal(set(&o, &j, "rw", "read:-8k"), 0);
	assert_int_equal(j.rw, RW_READ);
	assert_int_equal(j.rw_mod, -8192);
	assert_int_equal(set(&o, &j, "rw", "write:4k"), 0);
	assert_int_equal(j.rw, RW_WRITE);
	assert_int_equal(j.rw_mod, 4096);
	assert_int_equal(set(&o, &j, "rw", "randread:8"), 0);
	assert_int_equal(j.rw, RW_RANDREAD);
	assert_int_equal(j.rw_mod, 8);
	assert_int_equal(set(&o, &j, "rw", "randread"), 0);
	assert_int_equal(j.rw_mod, 0);
	assert_int_equal(set(&o, &j, "rw", "randread:0"), -EINVAL);
	assert_int_equal(set(&o, &j, "rw", "read:x"), -EINVAL);
	assert_int_equal(set(&o, &j, "rw", "sideways:4"), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_parse_time),
		cmocka_unit_test(test_set_values),
		cmocka_unit_test(test_bool_options),
		cmocka_unit_test(test_rwmixwrite),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_number_errors),
		cmocka_unit_test(test_empty_value_errors),
		cmocka_unit_test(test_error_text_shown_safely),
		cmocka_unit_test(test_dev_list),
		cmocka_unit_test(test_nvme_options),
		cmocka_unit_test(test_rw_helpers),
		cmocka_unit_test(test_cli_no_args_is_matrix),
		cmocka_unit_test(test_cli_single_job),
		cmocka_unit_test(test_cli_multiple_jobs),
		cmocka_unit_test(test_cli_global_section),
		cmocka_unit_test(test_cli_output_options),
		cmocka_unit_test(test_cli_errors),
		cmocka_unit_test(test_cli_iodepth_batch_capped),
		cmocka_unit_test(test_jobfile),
		cmocka_unit_test(test_jobfile_env_unset_and_ignore_error),
		cmocka_unit_test(test_jobfile_keyword_math),
		cmocka_unit_test(test_jobfile_with_cli_global),
		cmocka_unit_test(test_jobfile_errors),
		cmocka_unit_test(test_fio_catalogue),
		cmocka_unit_test(test_workload_options),
		cmocka_unit_test(test_prio_options),
		cmocka_unit_test(test_jobfile_fio_syntax),
		cmocka_unit_test(test_jobfile_all_problems),
		cmocka_unit_test(test_err_add_cuts),
		cmocka_unit_test(test_jobfile_bytes),
		cmocka_unit_test(test_jobfile_directory),
		cmocka_unit_test(test_job_files),
		cmocka_unit_test(test_jobfile_missing),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_verify_options),
		cmocka_unit_test(test_verify_cli_checks),
		cmocka_unit_test(test_verify_method_checks),
		cmocka_unit_test(test_buffer_options),
		cmocka_unit_test(test_report_options),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
