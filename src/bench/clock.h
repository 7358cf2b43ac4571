/* SPDX-License-Identifier: MIT */
/*
 * Bench clock: fio's clocksource=cpu (the TSC, when invariant) or
 * clocksource=clock_gettime.  The TSC read costs a fraction of a vDSO
 * clock_gettime(); it is scaled to ns with a multiply and shift
 * calibrated against CLOCK_MONOTONIC at start.
 */
#ifndef BLKSTACK_BENCH_CLOCK_H
#define BLKSTACK_BENCH_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "options.h"

struct bench_clock {
	bool use_tsc;
	uint64_t tsc0;
	uint64_t ns0;
	uint64_t mult;   /* ns = (tsc - tsc0) * mult >> 32 */
};

extern struct bench_clock bench_clk;

/**
 * bench_clock_init() - choose and calibrate the clock (about 20 ms).
 * @src: CLK_AUTO, CLK_GETTIME or CLK_CPU.
 * Return: 0, or -ENOTSUP when CLK_CPU is asked for and the TSC is not
 * invariant (no constant_tsc and nonstop_tsc in /proc/cpuinfo).
 */
int bench_clock_init(enum bench_clocksource src);

/** bench_clock_name() - "cpu" or "clock_gettime". */
const char *bench_clock_name(void);

static inline uint64_t bench_gettime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/** bench_now_ns() - monotonic ns (not comparable to CLOCK_MONOTONIC). */
static inline uint64_t bench_now_ns(void)
{
#if defined(__x86_64__)
	if (bench_clk.use_tsc)
		return (uint64_t)(((unsigned __int128)(__rdtsc() - bench_clk.tsc0) *
				   bench_clk.mult) >> 32);
#endif
	return bench_gettime_ns();
}

#endif /* BLKSTACK_BENCH_CLOCK_H */
