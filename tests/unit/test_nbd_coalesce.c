// SPDX-License-Identifier: MIT
/*
 * Request coalescing (src/export/nbd/coalesce.c) against a model client:
 * Q requests outstanding, one reply read and one request sent every g ns;
 * the server answers everything it has at once when it wakes.  A sleep
 * lasts what was asked plus the timer's overshoot; without a sleep the
 * server wakes a fixed latency after the first request arrives.  The
 * tests check what the module promises: large batches for a deep client
 * whose pace the timers can follow, a client that hardly ever idles
 * because of it, no sleep for shallow clients, the cap, and the back-off.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "export/nbd/coalesce.h"

struct model {
	unsigned int q;         /* client queue depth */
	double gap;             /* ns per request at the client */
	double overshoot;       /* ns a timer sleeps past what was asked */
	double wake;            /* ns from a request to a sleeping recv() returning */
};

struct outcome {
	double busy;            /* fraction of the time the client worked */
	double per_wake;        /* requests received per server wake-up */
	unsigned long sleeps;   /* coalescing sleeps taken */
	uint64_t max_sleep;     /* longest sleep asked for (ns) */
};

static struct outcome run(struct blk_nbd_coalesce *co, const struct model *m,
			  int turns, unsigned int change_q, double change_gap)
{
	double t = 0, busy = 0, next = m->gap, gap = m->gap;
	unsigned int left = m->q, pending = 0, batch = m->q;
	unsigned long wakes = 0, reqs = 0;
	struct outcome o = { 0 };

	for (int i = 0; i < turns; i++) {
		uint64_t s = blk_nbd_coalesce_wait(co, batch);
		double wake;

		if (i == turns / 2 && change_gap > 0)
			gap = change_gap;
		if (i == turns / 2 && change_q)
			left = left > change_q ? change_q : left;
		if (s) {
			wake = t + (double)s + m->overshoot;
			o.sleeps++;
			if (s > o.max_sleep)
				o.max_sleep = s;
		} else {
			wake = (pending ? t : next) + m->wake;
		}
		while (left && next <= wake) {
			left--;
			pending++;
			busy += gap;
			next += gap;
		}
		if (s)
			blk_nbd_coalesce_update(co, pending, left == 0);
		t = wake;
		batch = pending;
		wakes++;
		reqs += pending;
		if (!left)
			next = t + gap;
		left += pending;
		pending = 0;
	}
	o.busy = busy / t;
	o.per_wake = (double)reqs / (double)wakes;
	return o;
}

/* Run @m with coalescing (cap 1000 us, state left in @co) and without. */
static void both(struct blk_nbd_coalesce *co, const struct model *m, int turns,
		 unsigned int change_q, double change_gap, struct outcome *on,
		 struct outcome *off)
{
	struct blk_nbd_coalesce none;

	blk_nbd_coalesce_init(co, 1000);
	blk_nbd_coalesce_init(&none, 0);
	*on = run(co, m, turns, change_q, change_gap);
	*off = run(&none, m, turns, change_q, change_gap);
}

static void off_never_sleeps(void **state)
{
	struct blk_nbd_coalesce co;
	struct model m = { 32, 12000, 45000, 10000 };
	struct outcome o;

	(void)state;
	blk_nbd_coalesce_init(&co, 0);
	o = run(&co, &m, 2000, 0, 0);
	assert_int_equal(o.sleeps, 0);
	assert_int_equal(blk_nbd_coalesce_wait(&co, 1000), 0);
}

/* The bench's client: QD32, 12 us a request, this VM's 45 us overshoot. */
static void deep_client_gets_batched_and_stays_busy(void **state)
{
	struct blk_nbd_coalesce co;
	struct model m = { 32, 12000, 45000, 10000 };
	struct outcome o, b;

	(void)state;
	both(&co, &m, 20000, 0, 0, &o, &b);
	assert_true(b.per_wake < 2.0);          /* woken per request */
	assert_true(o.per_wake > 20.0);         /* most of the queue per wake */
	assert_true(o.busy > 0.97 * b.busy);    /* at most 3% client idling */
	assert_true(co.dry < co.sleeps / 2);
}

static void shallow_client_never_waits(void **state)
{
	struct blk_nbd_coalesce co;
	struct model m = { 3, 3000, 45000, 10000 };
	struct outcome o;

	(void)state;
	blk_nbd_coalesce_init(&co, 1000);
	o = run(&co, &m, 5000, 0, 0);
	assert_int_equal(o.sleeps, 0);
	assert_int_equal(blk_nbd_coalesce_wait(&co, BLK_NBD_COALESCE_MIN_BATCH - 1), 0);
}

/* QD4 at 12 us: the whole queue is read in less than one timer overshoot. */
static void coarse_timer_backs_off(void **state)
{
	struct blk_nbd_coalesce co;
	struct model m = { 4, 12000, 45000, 10000 };
	struct outcome o, b;

	(void)state;
	both(&co, &m, 20000, 0, 0, &o, &b);
	assert_true(o.sleeps < 20000 / 50);     /* backs off, retries rarely */
	assert_true(o.busy > 0.97 * b.busy);
}

static void sleep_never_exceeds_cap(void **state)
{
	struct blk_nbd_coalesce co;
	struct model m = { 1024, 12000, 45000, 10000 };
	struct outcome o;

	(void)state;
	blk_nbd_coalesce_init(&co, 200);
	o = run(&co, &m, 5000, 0, 0);
	assert_true(o.sleeps > 4000);
	assert_true(o.max_sleep <= 200000);
	assert_int_equal(co.target_ns, 200000);
}

/* The client's queue shrinks from 64 to 8 halfway: no lasting idling. */
static void client_queue_shrinks(void **state)
{
	struct blk_nbd_coalesce co;
	struct model m = { 64, 3000, 5000, 10000 };
	struct outcome o, b;

	(void)state;
	both(&co, &m, 20000, 8, 0, &o, &b);
	assert_true(o.busy > 0.95 * b.busy);
	assert_true(co.target_ns < 8 * 3000);
}

/* The client slows from 3 to 40 us a request halfway. */
static void client_slows_down(void **state)
{
	struct blk_nbd_coalesce co;
	struct model m = { 32, 3000, 5000, 10000 };
	struct outcome o, b;

	(void)state;
	both(&co, &m, 20000, 0, 40000, &o, &b);
	assert_true(o.busy > 0.95 * b.busy);
}

static void drained_at_floor_backs_off_for_the_stated_turns(void **state)
{
	struct blk_nbd_coalesce co;
	unsigned int i;

	(void)state;
	blk_nbd_coalesce_init(&co, 1000);
	assert_int_equal(blk_nbd_coalesce_wait(&co, 8), BLK_NBD_COALESCE_START_NS);
	/* the client drains every time: 3/4, 3/4, ... until below the floor */
	for (i = 0; co.target_ns * 3 / 4 >= BLK_NBD_COALESCE_MIN_NS; i++) {
		blk_nbd_coalesce_update(&co, 8, true);
		assert_int_equal(co.backoff, 0);
	}
	assert_int_equal(i, 4); /* 20 -> 15 -> 11.25 -> 8.4 -> 6.3 us */
	blk_nbd_coalesce_update(&co, 8, true);
	assert_int_equal(co.dry, 5);
	assert_int_equal(co.target_ns, BLK_NBD_COALESCE_START_NS);
	for (i = 0; i < BLK_NBD_COALESCE_BACKOFF_TURNS; i++)
		assert_int_equal(blk_nbd_coalesce_wait(&co, 8), 0);
	assert_int_equal(blk_nbd_coalesce_wait(&co, 8), BLK_NBD_COALESCE_START_NS);
	/* not drained: 1/16 + 1 us longer; drained: 3/4 */
	blk_nbd_coalesce_update(&co, 8, false);
	assert_int_equal(co.target_ns, 20000 + 1250 + 1000);
	blk_nbd_coalesce_update(&co, 8, true);
	assert_int_equal(co.target_ns, 22250 * 3 / 4);
	/* nothing arrived counts as drained */
	blk_nbd_coalesce_update(&co, 0, false);
	assert_int_equal(co.target_ns, 16687 * 3 / 4);
	assert_int_equal(co.gathered, 5 * 8 + 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(off_never_sleeps),
		cmocka_unit_test(deep_client_gets_batched_and_stays_busy),
		cmocka_unit_test(shallow_client_never_waits),
		cmocka_unit_test(coarse_timer_backs_off),
		cmocka_unit_test(sleep_never_exceeds_cap),
		cmocka_unit_test(client_queue_shrinks),
		cmocka_unit_test(client_slows_down),
		cmocka_unit_test(drained_at_floor_backs_off_for_the_stated_turns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
