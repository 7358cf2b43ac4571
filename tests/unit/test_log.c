// SPDX-License-Identifier: MIT
/*
 * fio's logs (src/bench/log.c): fio's histogram bins (the midpoints
 * fio's HOWTO shows), per-I/O lines, averaged and maximum windows, the
 * histogram log and its coarseness, file names.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "bench/bench.h"
#include "bench/log.h"

static void test_plat_bins(void **state)
{
	/* the json+ example of fio's HOWTO: every key is a bin midpoint */
	static const uint64_t howto[] = { 87552, 89600, 94720, 96768, 97792,
					  99840, 100864, 103936, 104960,
					  105984, 107008 };
	unsigned int i, prev = 0;
	uint64_t v;

	(void)state;
	for (i = 0; i < sizeof(howto) / sizeof(howto[0]); i++)
		assert_int_equal(bench_plat_value(bench_plat_index(howto[i])),
				 howto[i]);
	/* exact below 128, then 64 bins per power of two */
	assert_int_equal(bench_plat_index(127), 127);
	assert_int_equal(bench_plat_index(128), 128);
	assert_int_equal(bench_plat_index(129), 128);
	assert_int_equal(bench_plat_index(130), 129);
	assert_int_equal(bench_plat_index(255), 191);
	assert_int_equal(bench_plat_index(256), 192);
	assert_int_equal(bench_plat_value(128), 129);
	assert_int_equal(bench_plat_value(192), 258);
	/* the last bin takes everything past it */
	assert_int_equal(bench_plat_index(UINT64_MAX), BENCH_PLAT_NR - 1);
	for (v = 0; v < 100000000; v += 1 + v / 97) {
		unsigned int b = bench_plat_index(v);
		uint64_t mid = bench_plat_value(b);

		assert_true(b >= prev);
		prev = b;
		/* the midpoint is within half a bin (1/128 of v) of v */
		assert_true(mid + mid / 64 + 1 >= v && mid <= v + v / 64 + 1);
	}
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 20);
	size_t n;

	assert_non_null(f);
	assert_non_null(buf);
	n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static char dir[] = "/tmp/test_log.XXXXXX";

static void in_tmp(void)
{
	static bool made;

	if (!made) {
		assert_non_null(mkdtemp(dir));
		made = true;
	}
	assert_int_equal(chdir(dir), 0);
}

static void test_per_io(void **state)
{
	struct bench_job_opts j;
	struct bench_log *l;
	char err[256], *s;

	(void)state;
	in_tmp();
	bench_job_defaults(&j);
	j.rw = RW_RANDRW;
	j.lat_log_on = j.bw_log_on = j.iops_log_on = true;
	snprintf(j.bw_log, sizeof(j.bw_log), "pre");
	j.log_offset = true;
	l = bench_log_new(&j, true, 0);
	assert_non_null(l);
	assert_int_equal(bench_log_io(l, 1500000, DDIR_READ, 4096, 8192, 300, 1000), 0);
	assert_int_equal(bench_log_io(l, 2999999, DDIR_WRITE, 8192, 0, 100, 4096), 0);
	bench_log_finish(l, 3000000);
	assert_int_equal(bench_log_plat(l, DDIR_READ)[bench_plat_index(1000)], 1);
	assert_int_equal(bench_log_plat(l, DDIR_WRITE)[bench_plat_index(4096)], 1);
	assert_int_equal(bench_log_write(l, "job", 3, NULL, err, sizeof(err)), 0);
	s = slurp("job_lat.3.log");
	assert_string_equal(s, "1, 1300, 0, 4096, 8192, 0\n2, 4196, 1, 8192, 0, 0\n");
	free(s);
	s = slurp("job_clat.3.log");
	assert_string_equal(s, "1, 1000, 0, 4096, 8192, 0\n2, 4096, 1, 8192, 0, 0\n");
	free(s);
	s = slurp("job_slat.3.log");
	assert_string_equal(s, "1, 300, 0, 4096, 8192, 0\n2, 100, 1, 8192, 0, 0\n");
	free(s);
	/* fio's per-I/O bandwidth: bs over clat; the prefix given */
	s = slurp("pre_bw.3.log");
	assert_string_equal(s, "1, 4096000, 0, 4096, 8192, 0\n2, 2000000, 1, 8192, 0, 0\n");
	free(s);
	s = slurp("job_iops.3.log");
	assert_string_equal(s, "1, 1, 0, 4096, 8192, 0\n2, 1, 1, 8192, 0, 0\n");
	free(s);
	bench_log_free(l);
}

static void test_windows(void **state)
{
	struct bench_job_opts j;
	struct bench_log *l;
	char err[256], *s;
	int max;

	(void)state;
	in_tmp();
	for (max = 0; max < 2; max++) {
		bench_job_defaults(&j);
		j.rw = RW_RANDREAD;
		j.lat_log_on = j.bw_log_on = j.iops_log_on = true;
		j.log_avg_msec = 10;
		j.log_max_value = max;
		j.per_job_logs = false;
		l = bench_log_new(&j, false, 0);
		assert_non_null(l);
		/* window 0: two reads; window 1: none; window 2: one */
		bench_log_io(l, 1000000, DDIR_READ, 4096, 0, 10, 100);
		bench_log_io(l, 9000000, DDIR_READ, 4096, 0, 30, 300);
		bench_log_io(l, 25000000, DDIR_READ, 4096, 0, 20, 200);
		/* the last window is 5 ms long */
		bench_log_finish(l, 25000000);
		assert_int_equal(bench_log_write(l, max ? "max" : "avg", 1, "ram",
						 err, sizeof(err)), 0);
		bench_log_free(l);
	}
	/* means, with no latency row for the empty window */
	s = slurp("avg.ram_clat.log");
	assert_string_equal(s, "10, 200, 0, 0, 0\n25, 200, 0, 0, 0\n");
	free(s);
	s = slurp("avg.ram_lat.log");
	assert_string_equal(s, "10, 220, 0, 0, 0\n25, 220, 0, 0, 0\n");
	free(s);
	s = slurp("max.ram_clat.log");
	assert_string_equal(s, "10, 300, 0, 0, 0\n25, 200, 0, 0, 0\n");
	free(s);
	/* bw and iops rows for every window, the empty one at 0 */
	s = slurp("avg.ram_iops.log");
	assert_string_equal(s, "10, 200, 0, 0, 0\n20, 0, 0, 0, 0\n25, 200, 0, 0, 0\n");
	free(s);
	s = slurp("avg.ram_bw.log");
	assert_string_equal(s, "10, 800, 0, 0, 0\n20, 0, 0, 0, 0\n25, 800, 0, 0, 0\n");
	free(s);
}

static void test_hist(void **state)
{
	struct bench_job_opts j;
	struct bench_log *l;
	char err[256], *s, *p;
	unsigned int fields = 0;
	int coarse;

	(void)state;
	in_tmp();
	for (coarse = 0; coarse <= 6; coarse += 6) {
		bench_job_defaults(&j);
		j.rw = RW_RANDREAD;
		j.hist_log_on = true;
		j.log_hist_msec = 100;
		j.log_hist_coarseness = (uint32_t)coarse;
		l = bench_log_new(&j, false, 0);
		assert_non_null(l);
		bench_log_io(l, 10000000, DDIR_READ, 4096, 0, 1, 5);
		bench_log_io(l, 20000000, DDIR_READ, 4096, 0, 1, 5);
		bench_log_io(l, 150000000, DDIR_READ, 4096, 0, 1, 200);
		bench_log_finish(l, 170000000);
		assert_int_equal(bench_log_write(l, coarse ? "c6" : "c0", 1,
						 NULL, err, sizeof(err)), 0);
		bench_log_free(l);
	}
	s = slurp("c0_clat_hist.1.log");
	/* two lines: 3 fields and 1856 bins each */
	assert_memory_equal(s, "100, 0, 4096, 0, 0, 0, 0, 0, 2, 0", 33);
	p = strchr(s, '\n');
	assert_non_null(p);
	assert_memory_equal(p + 1, "170, 0, 4096, ", 14);
	for (p = s; *p && *p != '\n'; p++)
		fields += *p == ',';
	assert_int_equal(fields + 1, 3 + BENCH_PLAT_NR);
	free(s);
	/* coarseness 6: 29 bins of 64; 5 and 200 ns land in bins 0 and 2 */
	s = slurp("c6_clat_hist.1.log");
	assert_string_equal(s,
		"100, 0, 4096, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0\n"
		"170, 0, 4096, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0\n");
	free(s);
}

static void test_write_error(void **state)
{
	struct bench_job_opts j;
	struct bench_log *l;
	char err[256];

	(void)state;
	bench_job_defaults(&j);
	j.iops_log_on = true;
	snprintf(j.iops_log, sizeof(j.iops_log), "/nonexistent/dir/x");
	l = bench_log_new(&j, false, 0);
	assert_non_null(l);
	assert_true(bench_log_write(l, "job", 1, NULL, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "/nonexistent/dir/x_iops.1.log"));
	bench_log_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plat_bins),
		cmocka_unit_test(test_per_io),
		cmocka_unit_test(test_windows),
		cmocka_unit_test(test_hist),
		cmocka_unit_test(test_write_error),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (strcmp(dir, "/tmp/test_log.XXXXXX"))
		rc |= system(cmd) != 0;
	return rc;
}
