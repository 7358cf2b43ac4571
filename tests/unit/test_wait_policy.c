// SPDX-License-Identifier: MIT
/*
 * blk_wait()'s spin-or-sleep policy (src/core/wait_policy.c) against model
 * devices.  A model says how long the next completion takes to be seen
 * when the thread spins and when it sleeps (the wake-up latency is the
 * difference), and what share of spinning time the scheduler takes away
 * (other runnable threads on too few CPUs).  One completion per wait.
 * The tests check what wait_policy.h promises: spin where it buys
 * completions, sleep where it does not, where it would buy too little,
 * where the spinner is preempted, where completions are too rare to judge,
 * and follow a device that changes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "blkstack/blk.h"
#include "core/wait_policy.h"

struct model {
	double spin_ns;         /* a completion is seen this long after a spin starts */
	double sleep_ns;        /* ... after a sleep starts */
	double preempt;         /* share of spin time spent preempted */
};

struct outcome {
	uint64_t waits, spun;   /* waits, of which spun (probes included) */
};

/* Drive @p with @m from @t for @ns simulated ns; returns the end time. */
static double run(struct blk_wait_policy *p, const struct model *m,
		  double t, double ns, uint64_t *done, struct outcome *o)
{
	double end = t + ns;

	while (t < end) {
		uint64_t spin = blk_wait_policy_begin(p, (uint64_t)t, *done);

		o->waits++;
		if (spin) {
			double s = m->spin_ns < (double)spin ? m->spin_ns : (double)spin;
			bool slept = m->spin_ns > (double)spin;

			o->spun++;
			blk_wait_policy_spun(p, (uint64_t)s,
					     (uint64_t)(s * m->preempt), slept);
			/* a spin that ran out sleeps for the rest */
			t += slept ? (double)spin + m->sleep_ns : s;
		} else {
			t += m->sleep_ns;
		}
		(*done)++;
	}
	return end;
}

static struct blk_wait_policy adaptive(void)
{
	struct blk_wait_policy p;

	blk_wait_policy_init(&p, BLK_WAIT_ADAPTIVE, 0);
	return p;
}

/* tmpfs at QD1: spinning sees a completion in 2 us, a sleep in 40 us */
static void test_spin_pays_chooses_spin(void **state)
{
	struct model m = { .spin_ns = 2000, .sleep_ns = 40000 };
	struct blk_wait_policy p = adaptive();
	struct outcome o = { 0 };
	uint64_t done = 0;

	(void)state;
	run(&p, &m, 1e9, 1e9, &done, &o);
	assert_int_equal(p.choice, BLK_WAIT_CHOOSE_SPIN);
	assert_true(p.probes >= 3);
	assert_int_equal(p.chose_spin, p.probes);
	assert_true(p.last_gain > 10);
	/* nearly every wait spun: the sleeping probe epochs are few waits */
	assert_true(o.spun * 100 > o.waits * 95);
}

/* a disk: completions come when they come, whatever the thread does */
static void test_equal_rates_sleep(void **state)
{
	struct model m = { .spin_ns = 25000, .sleep_ns = 25000 };
	struct blk_wait_policy p = adaptive();
	struct outcome o = { 0 };
	uint64_t done = 0;

	(void)state;
	run(&p, &m, 1e9, 2e9, &done, &o);
	assert_int_equal(p.choice, BLK_WAIT_CHOOSE_SLEEP);
	assert_int_equal(p.chose_spin, 0);
	assert_true(p.probes >= 6);
	/* only probe epochs spin: 2 of every 64 epochs, plus the first probe */
	assert_true(o.spun * 100 < o.waits * 8);
}

/* spinning buys 5 %: less than BLK_WAIT_GAIN_PCT, not worth a CPU */
static void test_small_gain_sleeps(void **state)
{
	struct model m = { .spin_ns = 20000, .sleep_ns = 21000 };
	struct blk_wait_policy p = adaptive();
	struct outcome o = { 0 };
	uint64_t done = 0;

	(void)state;
	run(&p, &m, 1e9, 1e9, &done, &o);
	assert_int_equal(p.choice, BLK_WAIT_CHOOSE_SLEEP);
	assert_int_equal(p.chose_spin, 0);
	assert_true(p.last_gain > 1.0 && p.last_gain < 1.08);
}

/* spin would see completions sooner, but the scheduler keeps taking the
 * spinner off the CPU: someone else needs it (four jobs on two CPUs) */
static void test_preempted_spinner_sleeps(void **state)
{
	struct model m = { .spin_ns = 2000, .sleep_ns = 4000, .preempt = 0.4 };
	struct blk_wait_policy p = adaptive();
	struct outcome o = { 0 };
	uint64_t done = 0;

	(void)state;
	run(&p, &m, 1e9, 1e9, &done, &o);
	assert_int_equal(p.choice, BLK_WAIT_CHOOSE_SLEEP);
	assert_int_equal(p.chose_spin, 0);
	assert_true(p.contended >= p.probes);
}

/* preemption of a little more than noise is tolerated */
static void test_light_preemption_still_spins(void **state)
{
	struct model m = { .spin_ns = 2000, .sleep_ns = 4000, .preempt = 0.02 };
	struct blk_wait_policy p = adaptive();
	struct outcome o = { 0 };
	uint64_t done = 0;

	(void)state;
	run(&p, &m, 1e9, 1e9, &done, &o);
	assert_int_equal(p.choice, BLK_WAIT_CHOOSE_SPIN);
	assert_int_equal(p.contended, 0);
}

/* spinning was chosen; then another process takes the CPU: the next run
 * epoch that sees it switches to sleeping without waiting for a probe */
static void test_contention_in_run_switches_at_once(void **state)
{
	struct model m = { .spin_ns = 2000, .sleep_ns = 40000 };
	struct blk_wait_policy p = adaptive();
	struct outcome o = { 0 };
	uint64_t done = 0, probes;
	double t;

	(void)state;
	/* start just after a cycle's probe so the run phase is long */
	t = run(&p, &m, 1e9, 0.3e9, &done, &o);
	assert_int_equal(p.choice, BLK_WAIT_CHOOSE_SPIN);
	probes = p.probes;
	/* move to the start of a run epoch, then get preempted */
	m.preempt = 0.5;
	t = run(&p, &m, t, 3 * BLK_WAIT_EPOCH_NS, &done, &o);
	if (p.probes == probes) /* no probe in between: the run epoch did it */
		assert_int_equal(p.choice, BLK_WAIT_CHOOSE_SLEEP);
	assert_true(p.contended >= 1);
	run(&p, &m, t, 1e9, &done, &o);
	assert_int_equal(p.choice, BLK_WAIT_CHOOSE_SLEEP);
}

/* the device changes: fast completions, then a disk's; the next probe
 * follows, and back again */
static void test_reprobe_follows_the_device(void **state)
{
	struct model fast = { .spin_ns = 2000, .sleep_ns = 40000 };
	struct model disk = { .spin_ns = 200000, .sleep_ns = 200000 };
	struct blk_wait_policy p = adaptive();
	struct outcome o = { 0 };
	uint64_t done = 0;
	double t;

	(void)state;
	t = run(&p, &fast, 1e9, 0.5e9, &done, &o);
	assert_int_equal(p.choice, BLK_WAIT_CHOOSE_SPIN);
	t = run(&p, &disk, t, 0.6e9, &done, &o);
	assert_int_equal(p.choice, BLK_WAIT_CHOOSE_SLEEP);
	run(&p, &fast, t, 0.6e9, &done, &o);
	assert_int_equal(p.choice, BLK_WAIT_CHOOSE_SPIN);
}

/* completions every 5 ms: a probe epoch sees one or none; sleep */
static void test_rare_completions_sleep(void **state)
{
	struct model m = { .spin_ns = 4000000, .sleep_ns = 5000000 };
	struct blk_wait_policy p = adaptive();
	struct outcome o = { 0 };
	uint64_t done = 0;

	(void)state;
	run(&p, &m, 1e9, 2e9, &done, &o);
	assert_int_equal(p.choice, BLK_WAIT_CHOOSE_SLEEP);
	assert_int_equal(p.chose_spin, 0);
}

/* the spin cap: a spin never asks for more than spin_max_ns */
static void test_spin_is_capped(void **state)
{
	struct blk_wait_policy p;

	(void)state;
	blk_wait_policy_init(&p, BLK_WAIT_ADAPTIVE, 50000);
	/* an undecided policy probes by epoch parity: even epochs spin */
	assert_int_equal(blk_wait_policy_begin(&p, 0, 0), 50000);
	assert_int_equal(blk_wait_policy_begin(&p, BLK_WAIT_EPOCH_NS, 10), 0);
	blk_wait_policy_init(&p, BLK_WAIT_ADAPTIVE, 0);
	assert_int_equal(blk_wait_policy_begin(&p, 0, 0), BLK_WAIT_SPIN_MAX_NS);
}

static void test_forced_modes(void **state)
{
	struct model fast = { .spin_ns = 2000, .sleep_ns = 40000 };
	struct model disk = { .spin_ns = 25000, .sleep_ns = 25000 };
	struct blk_wait_policy p;
	struct outcome o = { 0 };
	uint64_t done = 0;

	(void)state;
	blk_wait_policy_init(&p, BLK_WAIT_SPIN, 30000);
	run(&p, &disk, 1e9, 0.5e9, &done, &o);
	assert_int_equal(o.spun, o.waits);
	assert_int_equal(p.probes, 0);
	blk_wait_policy_init(&p, BLK_WAIT_SLEEP, 0);
	o.spun = o.waits = 0;
	run(&p, &fast, 1e9, 0.5e9, &done, &o);
	assert_int_equal(o.spun, 0);
	assert_int_equal(p.sleeps, o.waits);
}

/* two ctxs started apart probe in the same epochs once decided */
static void test_probes_are_aligned(void **state)
{
	struct model m = { .spin_ns = 25000, .sleep_ns = 25000 };
	struct blk_wait_policy a = adaptive(), b = adaptive();
	struct outcome o = { 0 };
	uint64_t da = 0, db = 0, e, t;
	int same = 0, n = 0;

	(void)state;
	run(&a, &m, 1e9, 0.5e9, &da, &o);
	run(&b, &m, 1.3e9, 0.5e9, &db, &o);
	/* walk both through two whole cycles, one wait per epoch */
	for (e = 2e9 / BLK_WAIT_EPOCH_NS; e < 2e9 / BLK_WAIT_EPOCH_NS + 128; e++) {
		t = e * BLK_WAIT_EPOCH_NS + 1000;
		same += !blk_wait_policy_begin(&a, t, ++da) ==
			!blk_wait_policy_begin(&b, t, ++db);
		n++;
	}
	assert_int_equal(same, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spin_pays_chooses_spin),
		cmocka_unit_test(test_equal_rates_sleep),
		cmocka_unit_test(test_small_gain_sleeps),
		cmocka_unit_test(test_preempted_spinner_sleeps),
		cmocka_unit_test(test_light_preemption_still_spins),
		cmocka_unit_test(test_contention_in_run_switches_at_once),
		cmocka_unit_test(test_reprobe_follows_the_device),
		cmocka_unit_test(test_rare_completions_sleep),
		cmocka_unit_test(test_spin_is_capped),
		cmocka_unit_test(test_forced_modes),
		cmocka_unit_test(test_probes_are_aligned),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
