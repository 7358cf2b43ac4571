// SPDX-License-Identifier: MIT
/*
 * Core clocks.  The core reads CLOCK_MONOTONIC only once per batch (plug
 * flush, completion batch) and only with iostats on; timeouts use the
 * coarse clock, which the vDSO answers without reading the TSC.
 */
#include <time.h>

#include "blk-mq.h"

uint64_t blk_time_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t blk_time_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
