// SPDX-License-Identifier: MIT
/*
 * Named locks and the lock profile: acquisitions, trylocks, a contended
 * acquisition with its wait and bounce, classes shared by name, locks
 * initialised with the profile off cost nothing and count nothing, the
 * /proc/lock_stat layout.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "blkstack/lock.h"

static struct blk_lockstat find(const char *name)
{
	struct blk_lockstat s[64], none = { 0 };
	size_t n = blk_lockstat_read(s, 64), i;

	assert_true(n <= 64);
	for (i = 0; i < n; i++)
		if (!strcmp(s[i].name, name))
			return s[i];
	return none;
}

static void test_off(void **state)
{
	struct blk_mutex m;

	(void)state;
	blk_lockstat_enable(false);
	assert_int_equal(blk_mutex_init(&m, "test.off", -1), 0);
	assert_null(m.cls);
	blk_mutex_lock(&m);
	blk_mutex_unlock(&m);
	assert_null(find("test.off").name); /* no class registered */
	blk_mutex_destroy(&m);
}

static void test_uncontended(void **state)
{
	struct blk_mutex a, b;
	struct blk_spinlock s;
	struct blk_lockstat st;
	int i;

	(void)state;
	if (blk_lockstat_enable(true))
		skip(); /* a build without BLK_LOCK_STATS */
	assert_int_equal(blk_mutex_init(&a, "test.m", PTHREAD_MUTEX_ADAPTIVE_NP), 0);
	assert_int_equal(blk_mutex_init(&b, "test.m", -1), 0);
	assert_non_null(a.cls);
	assert_ptr_equal(a.cls, b.cls); /* one class per name */
	for (i = 0; i < 10; i++) {
		blk_mutex_lock(&a);
		blk_mutex_unlock(&a);
	}
	blk_mutex_lock(&b);
	assert_int_equal(blk_mutex_trylock(&b), EBUSY); /* not counted */
	blk_mutex_unlock(&b);
	assert_int_equal(blk_mutex_trylock(&b), 0);     /* counted */
	blk_mutex_unlock(&b);
	st = find("test.m");
	assert_string_equal(st.name, "test.m");
	assert_int_equal(st.acquisitions, 12);
	assert_int_equal(st.contentions, 0);
	assert_int_equal(st.acq_bounces, 0); /* one thread */
	assert_int_equal(st.wait_total_ns, 0);
	assert_int_equal(st.wait_min_ns, 0);

	assert_int_equal(blk_spin_init(&s, "test.spin"), 0);
	blk_spin_lock(&s);
	blk_spin_unlock(&s);
	assert_int_equal(blk_spin_trylock(&s), 0);
	blk_spin_unlock(&s);
	assert_int_equal(find("test.spin").acquisitions, 2);
	blk_mutex_destroy(&a);
	blk_mutex_destroy(&b);
	blk_spin_destroy(&s);
	blk_lockstat_enable(false);
}

struct holder {
	struct blk_mutex *m;
	struct blk_spinlock *s;
	pthread_barrier_t *held;
};

static void sleep_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

/* Take the locks, let the main thread know, hold them 30 ms. */
static void *hold(void *arg)
{
	struct holder *h = arg;

	blk_mutex_lock(h->m);
	blk_spin_lock(h->s);
	pthread_barrier_wait(h->held);
	sleep_ms(30);
	blk_spin_unlock(h->s);
	blk_mutex_unlock(h->m);
	return NULL;
}

static void test_contended(void **state)
{
	struct blk_mutex m;
	struct blk_spinlock s;
	pthread_barrier_t held;
	struct holder h = { &m, &s, &held };
	struct blk_lockstat st;
	pthread_t t;

	(void)state;
	if (blk_lockstat_enable(true))
		skip(); /* a build without BLK_LOCK_STATS */
	assert_int_equal(blk_mutex_init(&m, "test.contended", -1), 0);
	assert_int_equal(blk_spin_init(&s, "test.contended_spin"), 0);
	pthread_barrier_init(&held, NULL, 2);
	assert_int_equal(pthread_create(&t, NULL, hold, &h), 0);
	pthread_barrier_wait(&held);
	blk_mutex_lock(&m); /* waits for the holder: about 30 ms */
	blk_mutex_unlock(&m);
	blk_spin_lock(&s);
	blk_spin_unlock(&s);
	pthread_join(t, NULL);
	st = find("test.contended");
	assert_int_equal(st.acquisitions, 2);
	assert_int_equal(st.contentions, 1);
	assert_int_equal(st.con_bounces, 1); /* the other thread had it */
	assert_int_equal(st.acq_bounces, 1);
	assert_true(st.wait_min_ns >= 10000000); /* >= 10 ms of the 30 */
	assert_int_equal(st.wait_min_ns, st.wait_max_ns);
	assert_int_equal(st.wait_total_ns, st.wait_max_ns);
	st = find("test.contended_spin");
	assert_int_equal(st.acquisitions, 2);
	/* the spin was taken after the mutex: still held or just released */
	assert_true(st.contentions <= 1);
	pthread_barrier_destroy(&held);
	blk_mutex_destroy(&m);
	blk_spin_destroy(&s);

	/* the caller's own trylock first, then the contended path */
	assert_int_equal(blk_spin_init(&s, "test.own_trylock"), 0);
	blk_spin_lock_contended(&s);
	blk_spin_unlock(&s);
	st = find("test.own_trylock");
	assert_int_equal(st.acquisitions, 1);
	assert_int_equal(st.contentions, 1);
	blk_spin_destroy(&s);
	blk_lockstat_enable(false);
}

static void test_print_reset(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct blk_mutex m;

	(void)state;
	if (blk_lockstat_enable(true))
		skip(); /* a build without BLK_LOCK_STATS */
	assert_int_equal(blk_mutex_init(&m, "test.print", -1), 0);
	blk_mutex_lock(&m);
	blk_mutex_unlock(&m);
	assert_non_null(f);
	assert_int_equal(blk_lockstat_print(f), 0);
	fclose(f);
	assert_non_null(strstr(buf, "lock_stat version 0.4"));
	assert_non_null(strstr(buf, "class name    con-bounces    contentions   waittime-min   waittime-max waittime-total   waittime-avg    acq-bounces   acquisitions"));
	/* the contended class first (sorted by contentions) */
	assert_true(strstr(buf, "test.contended:") < strstr(buf, "test.print:"));
	assert_non_null(strstr(buf, "                             test.print:              0              0           0.00           0.00           0.00           0.00              0              1\n"));
	free(buf);
	blk_lockstat_reset();
	assert_int_equal(find("test.print").acquisitions, 0);
	assert_int_equal(find("test.contended").contentions, 0);
	assert_int_equal(find("test.contended").wait_min_ns, 0);
	blk_mutex_destroy(&m);
	blk_lockstat_enable(false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off),
		cmocka_unit_test(test_uncontended),
		cmocka_unit_test(test_contended),
		cmocka_unit_test(test_print_reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
