// SPDX-License-Identifier: MIT
/*
 * The machine around a run: how much CPU the other processes took.  A
 * single-job cell of the matrix runs at the share of a core the scheduler
 * gives it; on a shared machine that share, not the device, sets its IOPS.
 * Reading /proc/stat before and after a run tells the two apart.
 */
#include <stdio.h>
#include <unistd.h>

#include "bench.h"

double bench_machine_busy_s(void)
{
	unsigned long long user, nice, sys, idle, iowait, irq, softirq, steal;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return -1.0;
	/* the first line sums every CPU; guest time is inside user already */
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user,
		   &nice, &sys, &idle, &iowait, &irq, &softirq, &steal);
	fclose(f);
	if (n != 8 || hz <= 0)
		return -1.0;
	/* steal: time the hypervisor gave to other guests, not to us either */
	return (double)(user + nice + sys + irq + softirq + steal) / (double)hz;
}
