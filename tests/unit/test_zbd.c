// SPDX-License-Identifier: MIT
/*
 * Unit tests for zonemode=zbd's emulated zones (src/bench/zbd.c), fio
 * 3.33's rules: every write lands at its zone's write pointer and moves
 * it; a full zone is reset (and counted) before it is written again;
 * max_open_zones and job_max_open_zones bound the zones written at once;
 * read_beyond_wp=0 reads only written data and ends on an empty device;
 * zone_reset_frequency resets; verify= never resets; fio's set-up errors.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bench/zbd.h"

#define MiB (1024ull * 1024)
#define KiB 1024ull

static struct bench_job_opts job(enum bench_rw rw, uint64_t zs)
{
	struct bench_job_opts o;

	memset(&o, 0, sizeof(o));
	snprintf(o.name, sizeof(o.name), "j");
	o.rw = rw;
	o.bs = 64 * KiB;
	o.zonemode = BENCH_ZONE_ZBD;
	o.zonesize = zs;
	return o;
}

/* a tiny deterministic generator: the offsets a random job would draw */
static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

/* zones partly written: what max_open_zones bounds */
static unsigned int partly_written(const struct bench_zbd *z)
{
	unsigned int i, n = 0;

	for (i = 0; i < z->nr_zones; i++)
		n += z->zones[i].wp > z->zones[i].start &&
		     z->zones[i].wp < z->zones[i].start + z->zone_cap;
	return n;
}

static uint64_t data_sum(const struct bench_zbd *z)
{
	uint64_t s = 0;
	unsigned int i;

	for (i = 0; i < z->nr_zones; i++)
		s += z->zones[i].wp - z->zones[i].start;
	return s;
}

static void test_setup_errors(void **state)
{
	struct bench_job_opts o = job(RW_WRITE, 0);
	struct bench_zbd *z;
	char err[256];

	(void)state;
	assert_int_equal(bench_zbd_new(NULL, 8 * MiB, &o, "f", &z, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "Specifying the zone size is mandatory"));
	o.zonesize = 256;
	assert_int_equal(bench_zbd_new(NULL, 8 * MiB, &o, "f", &z, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "at least 512 bytes"));
	o.zonesize = MiB;
	o.zonecapacity = 2 * MiB;
	assert_int_equal(bench_zbd_new(NULL, 8 * MiB, &o, "f", &z, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "zonecapacity 2097152 is larger than zone size 1048576"));
	o.zonecapacity = 0;
	assert_int_equal(bench_zbd_new(NULL, 512 * KiB, &o, "f", &z, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "smaller than zone size"));
	/* job_max_open_zones needs max_open_zones; zonesize must match */
	assert_int_equal(bench_zbd_new(NULL, 8 * MiB, &o, "f", &z, err, sizeof(err)), 0);
	assert_int_equal(z->nr_zones, 8);
	{
		struct bench_zbd_job j;
		uint64_t off = 0, len = 8 * MiB;

		o.job_max_open_zones = 2;
		assert_int_equal(bench_zbd_job_init(z, &j, &o, &off, &len, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "'job_max_open_zones' cannot be used without a global open zones limit"));
		o.job_max_open_zones = 0;
		o.zonesize = 2 * MiB;
		assert_int_equal(bench_zbd_job_init(z, &j, &o, &off, &len, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "does not match the device zone size"));
		o.zonesize = MiB;
		o.max_open_zones = 3;
		assert_int_equal(bench_zbd_job_init(z, &j, &o, &off, &len, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "Different 'max_open_zones' values"));
	}
	bench_zbd_free(z);
}

/* a writing job's region is whole zones; a reading job's is as given */
static void test_region_rounding(void **state)
{
	struct bench_job_opts o = job(RW_WRITE, MiB);
	struct bench_zbd_job j;
	struct bench_zbd *z;
	uint64_t off = 100 * KiB, len = 3 * MiB + 100 * KiB;
	char err[256];

	(void)state;
	assert_int_equal(bench_zbd_new(NULL, 8 * MiB, &o, "f", &z, err, sizeof(err)), 0);
	assert_int_equal(bench_zbd_job_init(z, &j, &o, &off, &len, err, sizeof(err)), 0);
	/* [100k, 3M + 200k): up to 1M, down to 3M */
	assert_int_equal(off, MiB);
	assert_int_equal(len, 2 * MiB);
	assert_int_equal(j.min_zone, 1);
	assert_int_equal(j.max_zone, 3);
	o.rw = RW_READ;
	off = 100 * KiB;
	len = 3 * MiB;
	assert_int_equal(bench_zbd_job_init(z, &j, &o, &off, &len, err, sizeof(err)), 0);
	assert_int_equal(off, 100 * KiB);
	off = 100 * KiB;
	len = 200 * KiB;
	o.rw = RW_WRITE;
	assert_int_equal(bench_zbd_job_init(z, &j, &o, &off, &len, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "io_size must be at least one zone"));
	bench_zbd_free(z);
}

/* sequential writes: at the pointer, each zone in turn, then resets */
static void test_seq_write_resets(void **state)
{
	struct bench_job_opts o = job(RW_WRITE, MiB);
	struct bench_zbd_job j;
	struct bench_zbd *z;
	uint64_t off = 0, len = 4 * MiB, pos = 0, i;
	char err[256];

	(void)state;
	o.zonecapacity = 768 * KiB;
	assert_int_equal(bench_zbd_new(NULL, 4 * MiB, &o, "f", &z, err, sizeof(err)), 0);
	assert_int_equal(bench_zbd_job_init(z, &j, &o, &off, &len, err, sizeof(err)), 0);
	bench_zbd_job_start(&j);
	for (i = 0; i < 2 * 4 * 12; i++) {
		uint32_t l = 64 * KiB;
		uint64_t at;

		pos = bench_zbd_seq_pos(&j, 1, pos);
		if (pos >= 4 * MiB)
			pos = 0;
		at = pos;
		assert_int_equal(bench_zbd_adjust(&j, 1, &at, &l), 0);
		/* fio: the capacity's end skips to the next zone */
		assert_int_equal(at, pos);
		assert_int_equal(l, 64 * KiB);
		assert_int_equal(z->zones[at / MiB].wp, at + l);
		pos = at + l;
	}
	/* the second pass reset each of the 4 zones once */
	assert_int_equal(j.resets, 4);
	assert_int_equal(z->swd, 4 * 768 * KiB);
	bench_zbd_free(z);
}

/*
 * Random writes from two jobs, interleaved: every write at the write
 * pointer of the zone it went to; never more than max_open_zones zones
 * partly written, nor a job holding more than job_max_open_zones; resets
 * only of full zones.
 */
static void test_rand_write_open_limits(void **state)
{
	struct bench_job_opts o = job(RW_RANDWRITE, MiB);
	struct bench_zbd_job j[2];
	struct bench_zbd *z;
	uint64_t seed = 42, resets = 0;
	unsigned int i, k;
	char err[256];

	(void)state;
	o.max_open_zones = 4;
	o.job_max_open_zones = 2;
	assert_int_equal(bench_zbd_new(NULL, 32 * MiB, &o, "f", &z, err, sizeof(err)), 0);
	for (k = 0; k < 2; k++) {
		uint64_t off = 0, len = 32 * MiB;

		assert_int_equal(bench_zbd_job_init(z, &j[k], &o, &off, &len, err, sizeof(err)), 0);
		bench_zbd_job_start(&j[k]);
	}
	for (i = 0; i < 4000; i++) {
		struct bench_zbd_job *jj = &j[i & 1];
		uint64_t at = lcg(&seed) % 512 * 64 * KiB, wp_before[32];
		uint32_t l = 64 * KiB, zi;
		uint64_t r0 = jj->resets;

		for (zi = 0; zi < 32; zi++)
			wp_before[zi] = z->zones[zi].wp;
		assert_int_equal(bench_zbd_adjust(jj, 1, &at, &l), 0);
		zi = (uint32_t)(at / MiB);
		if (jj->resets != r0) {
			/* a reset: only of a full zone, then written from its start */
			assert_int_equal(wp_before[zi], z->zones[zi].start + MiB);
			assert_int_equal(at, z->zones[zi].start);
			resets++;
		} else {
			assert_int_equal(at, wp_before[zi]);
		}
		assert_int_equal(z->zones[zi].wp, at + l);
		assert_true(partly_written(z) <= 4);
		assert_true(z->nr_open <= 4);
		assert_true(j[0].nr_open <= 2 && j[1].nr_open <= 2);
		assert_int_equal(z->swd, data_sum(z));
	}
	assert_true(resets > 0);
	assert_int_equal(j[0].resets + j[1].resets, resets);
	bench_zbd_free(z);
}

/* read_beyond_wp=0: an empty device reads nothing; reads stay in data */
static void test_reads_written_data(void **state)
{
	struct bench_job_opts w = job(RW_WRITE, MiB), r = job(RW_RANDREAD, MiB);
	struct bench_zbd_job jw, jr, js;
	struct bench_zbd *z;
	uint64_t off = 0, len = 8 * MiB, seed = 7, at;
	uint32_t l;
	unsigned int i;
	char err[256];

	(void)state;
	assert_int_equal(bench_zbd_new(NULL, 8 * MiB, &w, "f", &z, err, sizeof(err)), 0);
	assert_int_equal(bench_zbd_job_init(z, &jr, &r, &off, &len, err, sizeof(err)), 0);
	r.rw = RW_READ;
	assert_int_equal(bench_zbd_job_init(z, &js, &r, &off, &len, err, sizeof(err)), 0);
	at = 3 * MiB;
	l = 64 * KiB;
	assert_int_equal(bench_zbd_adjust(&jr, 0, &at, &l), BENCH_ZBD_EOF);
	at = 0;
	assert_int_equal(bench_zbd_adjust(&js, 0, &at, &l), BENCH_ZBD_EOF);
	/* 320 KiB written into zone 5 */
	assert_int_equal(bench_zbd_job_init(z, &jw, &w, &off, &len, err, sizeof(err)), 0);
	for (i = 0; i < 5; i++) {
		at = 5 * MiB;
		l = 64 * KiB;
		assert_int_equal(bench_zbd_adjust(&jw, 1, &at, &l), 0);
		assert_int_equal(at, 5 * MiB + i * 64 * KiB);
	}
	for (i = 0; i < 1000; i++) {
		at = lcg(&seed) % 128 * 64 * KiB;
		l = 128 * KiB;
		assert_int_equal(bench_zbd_adjust(&jr, 0, &at, &l), 0);
		assert_true(at >= 5 * MiB && at + l <= 5 * MiB + 320 * KiB);
		assert_true(l >= 64 * KiB);
	}
	/* sequential: from an empty zone to the next zone with data */
	at = MiB;
	l = 64 * KiB;
	assert_int_equal(bench_zbd_adjust(&js, 0, &at, &l), 0);
	assert_int_equal(at, 5 * MiB);
	at = 5 * MiB + 320 * KiB;
	assert_int_equal(bench_zbd_adjust(&js, 0, &at, &l), BENCH_ZBD_EOF);
	/* read_beyond_wp=1: where the offset says */
	jr.read_beyond_wp = true;
	at = MiB;
	assert_int_equal(bench_zbd_adjust(&jr, 0, &at, &l), 0);
	assert_int_equal(at, MiB);
	/* a mixed job writes while nothing is written */
	bench_zbd_free(z);
	assert_int_equal(bench_zbd_new(NULL, 8 * MiB, &w, "f", &z, err, sizeof(err)), 0);
	r.rw = RW_RANDRW;
	assert_int_equal(bench_zbd_job_init(z, &jr, &r, &off, &len, err, sizeof(err)), 0);
	assert_int_equal(bench_zbd_ddir(&jr, 0), 1);
	at = 0;
	l = 64 * KiB;
	assert_int_equal(bench_zbd_adjust(&jr, 1, &at, &l), 0);
	assert_int_equal(bench_zbd_ddir(&jr, 0), 0);
	bench_zbd_free(z);
}

/* zone_reset_frequency=0.5: every second write resets its zone first */
static void test_reset_frequency(void **state)
{
	struct bench_job_opts o = job(RW_WRITE, MiB);
	struct bench_zbd_job j;
	struct bench_zbd *z;
	uint64_t off = 0, len = 4 * MiB, at;
	uint32_t l;
	unsigned int i;
	char err[256];

	(void)state;
	o.zone_reset_frequency = 0.5;
	assert_int_equal(bench_zbd_new(NULL, 4 * MiB, &o, "f", &z, err, sizeof(err)), 0);
	assert_int_equal(bench_zbd_job_init(z, &j, &o, &off, &len, err, sizeof(err)), 0);
	bench_zbd_job_start(&j);
	for (i = 0; i < 10; i++) {
		at = 0;
		l = 64 * KiB;
		assert_int_equal(bench_zbd_adjust(&j, 1, &at, &l), 0);
		assert_int_equal(at, i % 2 ? 0 : (i ? 64 * KiB : 0));
	}
	assert_int_equal(j.resets, 5);
	bench_zbd_free(z);
}

/* verify=: a full zone is never reset; no zone left: the job ends */
static void test_verify_no_reset(void **state)
{
	struct bench_job_opts o = job(RW_RANDWRITE, MiB);
	struct bench_zbd_job j;
	struct bench_zbd *z;
	uint64_t off = 0, len = 2 * MiB, at;
	uint32_t l;
	unsigned int i;
	char err[256];

	(void)state;
	o.verify = VERIFY_CRC32C;
	assert_int_equal(bench_zbd_new(NULL, 2 * MiB, &o, "f", &z, err, sizeof(err)), 0);
	assert_int_equal(bench_zbd_job_init(z, &j, &o, &off, &len, err, sizeof(err)), 0);
	bench_zbd_job_start(&j);
	for (i = 0; i < 32; i++) {
		at = 0;
		l = 64 * KiB;
		assert_int_equal(bench_zbd_adjust(&j, 1, &at, &l), 0);
		assert_int_equal(at, i * 64 * KiB);
	}
	at = 0;
	assert_int_equal(bench_zbd_adjust(&j, 1, &at, &l), BENCH_ZBD_EOF);
	assert_int_equal(j.resets, 0);
	/* a bs that does not divide the zone: fio's error */
	o.bs = 96 * KiB;
	assert_int_equal(bench_zbd_job_init(z, &j, &o, &off, &len, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "is not a divisor of the zone size"));
	bench_zbd_free(z);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_setup_errors),
		cmocka_unit_test(test_region_rounding),
		cmocka_unit_test(test_seq_write_resets),
		cmocka_unit_test(test_rand_write_open_limits),
		cmocka_unit_test(test_reads_written_data),
		cmocka_unit_test(test_reset_frequency),
		cmocka_unit_test(test_verify_no_reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
