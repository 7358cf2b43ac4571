// SPDX-License-Identifier: MIT
/*
 * `blkstack bench`: parse fio options, run the jobs on each --dev in turn,
 * report as fio does (text or JSON) or as seed 001's matrix tables.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "blkstack/lock.h"
#include "bench.h"
#include "log.h"
#include "plot.h"
#include "insn.h"
#include "clock.h"
#include "blkstack/uring.h"

static const enum bench_rw matrix_rows[] = {
	RW_READ, RW_RANDREAD, RW_WRITE, RW_RANDWRITE,
};
#define NR_MATRIX_ROWS (sizeof(matrix_rows) / sizeof(matrix_rows[0]))

/* Was --name given on the command line (as --name or --name=value)? */
static bool arg_given(int argc, char **argv, const char *name)
{
	size_t n = strlen(name);
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strncmp(a, "--", 2))
			continue;
		a += 2;
		if (!strncmp(a, name, n) && (a[n] == '=' || a[n] == '\0'))
			return true;
	}
	return false;
}

/*
 * The matrix's defaults where the user gave none: 4 KiB at QD32 for one
 * second per cell, so the default run (4 workloads x 2 devices) takes ~8 s.
 */
static void matrix_defaults(struct bench_job_opts *j, int argc, char **argv)
{
	if (!arg_given(argc, argv, "iodepth"))
		j->iodepth = 32;
	if (!arg_given(argc, argv, "runtime") && !arg_given(argc, argv, "timeout"))
		j->runtime_ns = 1000000000ull;
	if (!arg_given(argc, argv, "time_based") && !arg_given(argc, argv, "size") &&
	    !arg_given(argc, argv, "io_size") && !arg_given(argc, argv, "io_limit"))
		j->time_based = true;
}

/*
 * SIGINT/SIGTERM: stop the jobs as if their runtime had ended and report
 * what ran.  A second signal kills as usual: the handler puts SIG_DFL back
 * and raises it again, delivered when the handler returns.  One exception:
 * a repeat within BENCH_STOP_DUP_NS of the first is the same interrupt delivered
 * twice, as timeout(1) does (it signals the command, then its process
 * group), and must not throw the report away.  Only async-signal-safe
 * calls here: clock_gettime(), sigaction(), raise() and lock-free atomics.
 * Job and device threads block both signals, so the main thread runs it.
 */
static atomic_ullong stop_first_ns;

void bench_stop_reraise(int sig)
{
	struct sigaction dfl;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGINT, &dfl, NULL);
	sigaction(SIGTERM, &dfl, NULL);
	raise(sig);
}

static void stop_handler(int sig)
{
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (!atomic_load(&bench_interrupted)) {
		atomic_store(&stop_first_ns, now);
		atomic_store(&bench_interrupted, sig);
		return;
	}
	if (now - atomic_load(&stop_first_ns) < BENCH_STOP_DUP_NS)
		return;
	bench_stop_reraise(sig);
}

static void stop_handlers_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = stop_handler;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static bool interrupted(void)
{
	return atomic_load(&bench_interrupted) != 0;
}

static int report_job_errors(const struct bench_run_result *r)
{
	unsigned int i;
	int failed = 0;

	for (i = 0; i < r->nr_jobs; i++) {
		if (!r->jobs[i].error)
			continue;
		fprintf(stderr, "blkstack bench: %s (%s, job %u): %s\n",
			r->jobs[i].name, r->dev, r->jobs[i].jobnum,
			r->jobs[i].errmsg);
		failed = 1;
	}
	return failed;
}

/*
 * Whether a column's device stays open for its four rows.  It must for
 * ram and memory-backed devices, whose data (the layout) goes with them.
 * A uring ring with DEFER_TASKRUN serves the one thread that first used
 * it, and each cell has new job threads: such a file is laid out once and
 * each of its cells opens it anew, the file keeping the layout.
 */
static bool matrix_keep_open(const struct bench_opts *o, const char *devname)
{
	return strcmp(devname, "uring") ||
	       o->dev.p.uring_taskrun != BLK_URING_TASKRUN_DEFER;
}

/*
 * The matrix: per device column, open the device once, lay it out
 * (bench_layout()), run the four rows on it, close it; then report, the
 * layout lines above the tables.  Cells are kept row-major (workload, then
 * device), as the tables read.  Cells that do not run (interrupted) show
 * as empty in the tables and are left out of the JSON.
 */
static int matrix_run(const struct bench_opts *o, int argc, char **argv,
		      FILE *out, int *failed, bool *err_printed)
{
	unsigned int nd = o->dev.nr_devs, nr_cells = NR_MATRIX_ROWS * nd;
	struct bench_job_opts *row_jobs = calloc(NR_MATRIX_ROWS, sizeof(*row_jobs));
	struct bench_run_result *runs = calloc(nr_cells, sizeof(*runs));
	struct bench_run_result *ran = calloc(nr_cells, sizeof(*ran));
	struct bench_layout *lay = calloc(nd, sizeof(*lay));
	struct bench_opts *mo = malloc(sizeof(*mo));
	unsigned int row, d, i, nr_ran = 0;
	char err[512] = "";
	int ret = 0;

	if (!row_jobs || !runs || !ran || !lay || !mo) {
		ret = -ENOMEM;
		goto out;
	}
	/* each run's results point at the job options it ran with */
	for (row = 0; row < NR_MATRIX_ROWS; row++) {
		row_jobs[row] = o->jobs[0];
		matrix_defaults(&row_jobs[row], argc, argv);
		row_jobs[row].rw = matrix_rows[row];
		row_jobs[row].has_rw = true;
		snprintf(row_jobs[row].name, sizeof(row_jobs[row].name), "%s",
			 bench_rw_name(matrix_rows[row]));
		for (d = 0; d < nd; d++) {
			struct bench_run_result *r = &runs[row * nd + d];

			snprintf(r->dev, sizeof(r->dev), "%s", o->dev.devs[d]);
			snprintf(r->workload, sizeof(r->workload), "%s",
				 bench_rw_name(matrix_rows[row]));
		}
	}
	*mo = *o;
	/* the cells are drawn as the matrix's bars, not each as a job */
	mo->plot_dir[0] = '\0';
	mo->nr_jobs = 1;
	for (d = 0; d < nd; d++)
		snprintf(lay[d].dev, sizeof(lay[d].dev), "%s", o->dev.devs[d]);
	for (d = 0; d < nd && !interrupted(); d++) {
		const char *devname = o->dev.devs[d];
		struct blk_dev *dev = NULL;
		bool abandoned = false;

		/* the layout and the device are sized from the first row's job */
		mo->jobs[0] = row_jobs[0];
		bench_layout_probe(mo, devname, &lay[d]);
		ret = bench_open(mo, devname, &dev, err, sizeof(err));
		if (!ret)
			ret = bench_layout(mo, devname, dev, &lay[d], err,
					   sizeof(err));
		if (!ret && !matrix_keep_open(mo, devname)) {
			blk_dev_close(dev);
			dev = NULL;
		}
		for (row = 0; row < NR_MATRIX_ROWS && !ret && !interrupted(); row++) {
			struct bench_run_result *r = &runs[row * nd + d];

			mo->jobs[0] = row_jobs[row];
			ret = bench_run_on(mo, devname, dev, r, err, sizeof(err));
			if (ret)
				break;
			snprintf(r->workload, sizeof(r->workload), "%s",
				 bench_rw_name(matrix_rows[row]));
			/* job options must outlive mo */
			for (i = 0; i < r->nr_jobs; i++)
				r->jobs[i].opts = &row_jobs[row];
			*failed |= report_job_errors(r);
			if (r->abandoned)
				abandoned = true;
			if (bench_rw_writes(matrix_rows[row]) && !interrupted())
				ret = bench_layout_settle(&lay[d], err, sizeof(err));
		}
		/* requests given up at the stop deadline still use it */
		if (!abandoned)
			blk_dev_close(dev);
		if (ret) {
			fprintf(stderr, "blkstack bench: %s\n", err);
			*err_printed = true;
			goto out;
		}
	}
	if (o->plot_dir[0] &&
	    bench_plot_matrix(o->plot_dir, runs, NR_MATRIX_ROWS, nd, err,
			      sizeof(err))) {
		fprintf(stderr, "blkstack bench: %s\n", err);
		*failed = true;
	}
	/* fio's order: terse, JSON, normal */
	if (o->out_mask & BENCH_OUT_TERSE)
		/* fio's terse: one line per entry, cell after cell */
		for (i = 0; i < nr_cells; i++)
			if (runs[i].jobs)
				bench_report_terse(out, o, &runs[i]);
	if (o->out_mask & BENCH_OUT_JSON) {
		for (i = 0; i < nr_cells; i++)
			if (runs[i].jobs)
				ran[nr_ran++] = runs[i];
		ret = bench_report_json_layout(out, o, ran, nr_ran, lay, nd);
	}
	if (o->out_mask & BENCH_OUT_NORMAL) {
		bench_report_layout(out, lay, nd);
		fputc('\n', out);
		bench_report_matrix(out, runs, NR_MATRIX_ROWS, nd);
	}
out:
	for (i = 0; runs && i < nr_cells; i++)
		bench_run_result_free(&runs[i]);
	free(runs);
	free(ran);
	free(lay);
	free(mo);
	free(row_jobs);
	return ret;
}

/*
 * fio's log files of each thread of run @r (log.h), numbered 1.. over the
 * run as fio numbers its threads; with several devices, each device's
 * names carry it (PREFIX.DEV_lat.1.log).  Return: 0, or -errno (printed).
 */
static int write_logs(const struct bench_run_result *r, bool name_dev)
{
	char err[512];
	unsigned int i;
	int ret;

	for (i = 0; i < r->nr_jobs; i++) {
		if (!r->jobs[i].log || !bench_log_wanted(r->jobs[i].opts))
			continue;
		ret = bench_log_write(r->jobs[i].log, r->jobs[i].name, i + 1,
				      name_dev ? r->dev : NULL, err,
				      sizeof(err));
		if (ret) {
			fprintf(stderr, "blkstack bench: log: %s\n", err);
			return ret;
		}
	}
	return 0;
}

/*
 * A parse's problems, one per line (bench_err_add()), each as a line of
 * its own on stderr; more than one are counted at the end.
 */
static void print_problems(const char *err)
{
	unsigned int n = 0;
	const char *p = err;

	while (*p) {
		const char *e = strchr(p, '\n');
		int len = e ? (int)(e - p) : (int)strlen(p);

		fprintf(stderr, "blkstack bench: %.*s\n", len, p);
		n++;
		p += len + (e ? 1 : 0);
	}
	if (n > 1)
		fprintf(stderr, "blkstack bench: %u problems; nothing ran\n", n);
}

/* What the run does differently from what the jobs asked: a line each. */
static void print_notes(const char *notes)
{
	const char *p = notes;

	while (*p) {
		const char *e = strchr(p, '\n');
		int len = e ? (int)(e - p) : (int)strlen(p);

		fprintf(stderr, "blkstack bench: note: %.*s\n", len, p);
		p += len + (e ? 1 : 0);
	}
}

/* Room for every problem of a long job file (bench_err_add() cuts). */
#define BENCH_ERR_LEN 65536

int bench_main(int argc, char **argv)
{
	struct bench_run_result *runs = NULL;
	unsigned int nr_runs = 0, d, i;
	struct bench_opts *o;
	char err[4096] = ""; /* bench_pick_devs(): a line per refused option */
	char *perr;
	FILE *out = stdout;
	bool err_printed = false;
	int ret, failed = 0, insn_fd = -1;

	if (bench_ab_wanted(argc, argv)) {
		stop_handlers_install();
		return bench_ab_main(argc, argv);
	}
	o = calloc(1, sizeof(*o));
	if (!o) {
		fprintf(stderr, "blkstack bench: out of memory\n");
		return 1;
	}
	/* malloc, not calloc: only the first byte needs to be 0 */
	perr = malloc(BENCH_ERR_LEN);
	if (perr)
		perr[0] = '\0';
	if (!perr) {
		fprintf(stderr, "blkstack bench: out of memory\n");
		free(o);
		return 1;
	}
	bench_opts_init(o);
	ret = bench_parse_args(o, argc, argv, perr, BENCH_ERR_LEN);
	if (ret) {
		/* the notes too: an unset ${VAR} may be a problem's cause */
		print_notes(o->notes);
		print_problems(perr);
		fprintf(stderr, "Try 'blkstack bench --help'.\n");
		free(perr);
		free(o);
		return 1;
	}
	free(perr);
	if (o->help) {
		bench_usage(stdout);
		free(o);
		return 0;
	}
	if (o->fio_table) {
		bench_fio_table(stdout);
		free(o);
		return 0;
	}
	if (!o->nr_jobs) {
		bench_job_defaults(&o->jobs[0]);
		snprintf(o->jobs[0].name, sizeof(o->jobs[0].name), "bench");
		o->nr_jobs = 1;
	}
	/* the matrix's cells are not jobs of the user's: no log files */
	for (i = 0; o->matrix && i < o->nr_jobs; i++) {
		struct bench_job_opts *j = &o->jobs[i];

		if (bench_log_wanted(j) && !strstr(o->notes, "no log files"))
			bench_err_add(o->notes, sizeof(o->notes),
				      "write_lat_log, write_bw_log, write_iops_log, write_hist_log: no log files for the matrix (give rw= for one workload)");
		j->lat_log_on = j->bw_log_on = j->iops_log_on = false;
		j->hist_log_on = false;
	}
	if (bench_pick_devs(o, err, sizeof(err))) {
		print_problems(err);
		free(o);
		return 1;
	}
	print_notes(o->notes);
	/* fio's --parse-only: everything checked, nothing runs */
	if (o->parse_only) {
		/* what a run refuses before it opens a job's files, too */
		for (d = 0; d < o->dev.nr_devs; d++) {
			if (bench_check_job_files(o, o->dev.devs[d], err,
						  sizeof(err))) {
				fprintf(stderr, "blkstack bench: %s\n", err);
				free(o);
				return 1;
			}
		}
		free(o);
		return 0;
	}
	/* zonemode=zbd's zones live for one run: each cell's would be empty
	 * (at the run, as the zone size is checked: --parse-only takes it) */
	for (i = 0; o->matrix && i < o->nr_jobs; i++) {
		if (o->jobs[i].zonemode != BENCH_ZONE_ZBD)
			continue;
		print_problems("zonemode=zbd: not with the matrix (each cell is a run of its own, its zones empty, so its read rows would read nothing); give rw= for one workload");
		free(o);
		return 1;
	}
	/* --plot: gnuplot and the directory are there before anything runs */
	if (o->plot_dir[0] && bench_plot_check(o->plot_dir, err, sizeof(err))) {
		fprintf(stderr, "blkstack bench: %s\n", err);
		free(o);
		return 1;
	}
	ret = bench_clock_init(o->jobs[0].clocksource);
	if (ret) {
		fprintf(stderr, "blkstack bench: clocksource=cpu: the TSC is not "
				"invariant here; use clocksource=clock_gettime\n");
		free(o);
		return 1;
	}
	stop_handlers_install();
	/* before any device: locks are profiled from their init on */
	if (o->lock_stats && blk_lockstat_enable(true)) {
		fprintf(stderr, "blkstack bench: lock_stats=1: this build has no lock profile (cmake -DBLK_LOCK_STATS=ON)\n");
		free(o);
		return 1;
	}
	if (o->output[0]) {
		out = fopen(o->output, "w");
		if (!out) {
			fprintf(stderr, "blkstack bench: output=%s: %s\n",
				o->output, strerror(errno));
			free(o);
			return 1;
		}
	}
	o->status_out = out;

	if (o->count_insn == BENCH_INSN_CALLGRIND) {
		ret = bench_insn_callgrind(o, argc, argv, out);
		if (out != stdout)
			fclose(out);
		free(o);
		return ret;
	}
	if (o->count_insn == BENCH_INSN_PERF) {
		if (o->matrix) {
			fprintf(stderr, "blkstack bench: count_instructions: a workload (rw=, a job file), not the matrix\n");
			ret = -EINVAL;
			err_printed = true;
			goto out;
		}
		ret = bench_insn_open(&insn_fd, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "blkstack bench: %s\n", err);
			err_printed = true;
			goto out;
		}
	}
	if (o->matrix) {
		ret = matrix_run(o, argc, argv, out, &failed, &err_printed);
	} else {
		runs = calloc(o->dev.nr_devs, sizeof(*runs));
		if (!runs) {
			ret = -ENOMEM;
			goto out;
		}
		for (d = 0; d < o->dev.nr_devs && !interrupted(); d++) {
			uint64_t i0 = 0, i1 = 0;

			if (insn_fd >= 0)
				bench_insn_read(insn_fd, &i0);
			ret = bench_run(o, o->dev.devs[d], &runs[d], err, sizeof(err));
			if (insn_fd >= 0 && !ret && !bench_insn_read(insn_fd, &i1)) {
				runs[d].has_insn = true;
				runs[d].instructions = i1 - i0;
			}
			if (ret) {
				fprintf(stderr, "blkstack bench: %s\n", err);
				err_printed = true;
				goto out;
			}
			nr_runs++;
			failed |= report_job_errors(&runs[d]);
			if (write_logs(&runs[d], o->dev.nr_devs > 1)) {
				err_printed = true;
				failed = true;
			}
			if (o->plot_dir[0] &&
			    bench_plot_run(o->plot_dir, &runs[d],
					   o->dev.nr_devs > 1 ? runs[d].dev : NULL,
					   err, sizeof(err))) {
				fprintf(stderr, "blkstack bench: %s\n", err);
				err_printed = true;
				failed = true;
			}
			/* normal alone: each device's as soon as it is done */
			if (o->out_mask == BENCH_OUT_NORMAL)
				bench_report_text(out, o, &runs[d]);
		}
		/* fio's order: terse, JSON, normal */
		if (o->out_mask & BENCH_OUT_TERSE)
			for (d = 0; d < nr_runs; d++)
				bench_report_terse(out, o, &runs[d]);
		if (o->out_mask & BENCH_OUT_JSON)
			ret = bench_report_json(out, o, runs, nr_runs);
		if (o->out_mask != BENCH_OUT_NORMAL &&
		    (o->out_mask & BENCH_OUT_NORMAL))
			for (d = 0; d < nr_runs; d++)
				bench_report_text(out, o, &runs[d]);
	}
	if (o->lock_stats && o->output_format != OUT_JSON && !ret) {
		fputc('\n', out);
		ret = blk_lockstat_print(out);
	}
out:
	if (ret == -ENOMEM && !err_printed)
		fprintf(stderr, "blkstack bench: out of memory\n");
	if (interrupted())
		fprintf(stderr, "blkstack bench: interrupted by %s: jobs stopped, the report covers what ran\n",
			atomic_load(&bench_interrupted) == SIGTERM ? "SIGTERM" : "SIGINT");
	for (i = 0; i < nr_runs; i++)
		bench_run_result_free(&runs[i]);
	free(runs);
	if (insn_fd >= 0)
		close(insn_fd);
	if (out != stdout && fclose(out)) {
		fprintf(stderr, "blkstack bench: output=%s: %s\n", o->output,
			strerror(errno));
		ret = -EIO;
	}
	free(o);
	if (ret || failed)
		return 1;
	/*
	 * Interrupted: the report is out, and the exit status says the run
	 * was cut short, as a shell expects of a command stopped by a signal
	 * (128 + the signal): a script under `set -e` stops there instead of
	 * running on (and a matrix-stability run is not counted as whole).
	 */
	return interrupted() ? 128 + atomic_load(&bench_interrupted) : 0;
}
