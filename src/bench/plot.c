// SPDX-License-Identifier: MIT
/*
 * --plot=DIR - see plot.h.  blkstack computes what to draw (the bars of a
 * latency histogram, a CDF, windows over time, the matrix's cells) and
 * gnuplot draws it: no SVG geometry is written here.
 */
#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "plot.h"

extern char **environ;

#define PLOT_PATH 4096

/* File-name-safe copy of @in: [A-Za-z0-9._-], anything else '_'. */
static void safe_name(char *out, size_t len, const char *in)
{
	size_t i;

	for (i = 0; in[i] && i + 1 < len; i++) {
		char c = in[i];

		out[i] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '.' || c == '-' ||
			  c == '_') ? c : '_';
	}
	out[i] = '\0';
}

/* @base followed by @suffix into @buf; the names are short, and a name
 * that does not fit is cut (the directory was checked to hold it). */
static void name_of(char *buf, size_t len, const char *base,
		    const char *suffix)
{
	if (snprintf(buf, len, "%s%s", base, suffix) >= (int)len)
		buf[len - 1] = '\0';
}

static bool gnuplot_on_path(void)
{
	const char *path = getenv("PATH");
	char buf[PLOT_PATH];

	if (!path || !*path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		if (n && n + sizeof("/gnuplot") <= sizeof(buf)) {
			memcpy(buf, path, n);
			memcpy(buf + n, "/gnuplot", sizeof("/gnuplot"));
			if (!access(buf, X_OK))
				return true;
		}
		path += n;
		if (*path == ':')
			path++;
	}
	return false;
}

int bench_plot_check(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (!gnuplot_on_path()) {
		snprintf(err, errlen,
			 "plot=%s: gnuplot is not installed (it draws the pictures): apt-get install gnuplot-nox, or scripts/install-deps.sh",
			 dir);
		return -ENOENT;
	}
	if (mkdir(dir, 0777) && errno != EEXIST) {
		int e = errno;

		snprintf(err, errlen, "plot=%s: cannot make the directory: %s",
			 dir, strerror(e));
		return -e;
	}
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "plot=%s: not a directory", dir);
		return -ENOTDIR;
	}
	return 0;
}

/* ---- histogram bars ---- */

struct bar {
	double lo, hi;		/* ns */
	uint64_t n;
};

struct dist {
	struct bar *b;
	size_t nr, cap;
	uint64_t total;
	int key;		/* the last bar's */
};

/* Bars eight to a power of two: buckets whose low ends share one. */
static int bar_key(double lo)
{
	return lo < 1 ? -1000 : (int)floor(log2(lo) * 8.0);
}

/* Add the samples of [@lo, @hi) (ns); buckets come in increasing order. */
static int dist_add(struct dist *d, double lo, double hi, uint64_t n)
{
	int key = bar_key(lo);

	if (!n)
		return 0;
	d->total += n;
	if (d->nr && key == d->key) {
		d->b[d->nr - 1].hi = hi;
		d->b[d->nr - 1].n += n;
		return 0;
	}
	if (d->nr == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 64;
		struct bar *b = realloc(d->b, cap * sizeof(*b));

		if (!b)
			return -ENOMEM;
		d->b = b;
		d->cap = cap;
	}
	d->b[d->nr++] = (struct bar){ .lo = lo, .hi = hi, .n = n };
	d->key = key;
	return 0;
}

static int dist_from_hist(struct dist *d, const struct blk_hist *h)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; i < BLK_HIST_BUCKETS && !ret; i++) {
		double lo = (double)blk_hist_bucket_low(i);
		double hi = i + 1 < BLK_HIST_BUCKETS ?
			    (double)blk_hist_bucket_low(i + 1) : lo * 2;

		ret = dist_add(d, lo, hi, h->buckets[i]);
	}
	return ret;
}

static int dist_from_plat(struct dist *d, const uint64_t *p)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; i < BENCH_PLAT_NR && !ret; i++) {
		double lo, w;

		if (i < 2 * BENCH_PLAT_VAL) {
			lo = i;
			w = 1;
		} else {
			unsigned int shift = i / BENCH_PLAT_VAL - 1;

			w = ldexp(1.0, (int)shift);
			lo = ldexp(1.0, (int)(shift + BENCH_PLAT_BITS)) +
			     (double)(i % BENCH_PLAT_VAL) * w;
		}
		ret = dist_add(d, lo, lo + w, p[i]);
	}
	return ret;
}

/* One gnuplot data block: "low high percent cumulative-percent", us. */
static void dist_write(FILE *f, const struct dist *d)
{
	uint64_t cum = 0;
	size_t i;

	fprintf(f, "# clat_low_us clat_high_us pct_of_ios cumulative_pct\n");
	if (d->nr)
		fprintf(f, "%.4f %.4f 0 0\n", d->b[0].lo / 1e3, d->b[0].lo / 1e3);
	for (i = 0; i < d->nr; i++) {
		cum += d->b[i].n;
		fprintf(f, "%.4f %.4f %.6f %.6f\n", d->b[i].lo / 1e3,
			d->b[i].hi / 1e3, 100.0 * (double)d->b[i].n / (double)d->total,
			100.0 * (double)cum / (double)d->total);
	}
	fprintf(f, "\n\n");
}

/* ---- gnuplot ---- */

/* @s as a gnuplot single-quoted string ('' is a quote in one). */
static void gp_str(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

static void gp_reset(FILE *f)
{
	fprintf(f, "reset\n"
		"set terminal svg size 960,600 dynamic noenhanced font 'sans,13' background rgb 'white'\n"
		"set grid xtics ytics mxtics lc rgb '#dddddd'\n"
		"set border lc rgb '#555555'\n"
		"set key top right box opaque\n"
		"set datafile missing '?'\n");
}

static FILE *open_in(const char *dir, const char *name, char *err,
		     size_t errlen)
{
	char path[PLOT_PATH];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		snprintf(err, errlen, "plot: %s: %s", path, strerror(errno));
	return f;
}

static int close_checked(FILE *f, const char *dir, const char *name,
			 char *err, size_t errlen)
{
	bool bad = ferror(f);

	if (fclose(f) || bad) {
		snprintf(err, errlen, "plot: %s/%s: write error", dir, name);
		return -EIO;
	}
	return 0;
}

/* Run `gnuplot @script` in @dir; its output goes to stderr. */
static int gp_run(const char *dir, const char *script, char *err,
		  size_t errlen)
{
	char *argv[] = { "gnuplot", (char *)script, NULL };
	posix_spawn_file_actions_t fa;
	int rc, status;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addchdir_np(&fa, dir);
	posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
	rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc) {
		snprintf(err, errlen,
			 "plot=%s: cannot run gnuplot: %s (apt-get install gnuplot-nox)",
			 dir, strerror(rc));
		return -rc;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			snprintf(err, errlen, "plot=%s: waitpid: %s", dir,
				 strerror(errno));
			return -errno;
		}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(err, errlen,
			 "plot=%s: gnuplot failed on %s (%s %d)", dir, script,
			 WIFEXITED(status) ? "exit status" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return -EIO;
	}
	return 0;
}

/*
 * The histogram and CDF charts of data file @dat, whose blocks 0..n-1
 * are the series @titles, into @base-clat-hist.svg and -clat-cdf.svg.
 */
static void gp_dists(FILE *gp, const char *base, const char *dat,
		     const char *what, const char *const *titles, unsigned int n)
{
	static const char *const colors[] = {
		"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
		"#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f",
	};
	char out[PLOT_PATH];
	unsigned int i;

	gp_reset(gp);
	name_of(out, sizeof(out), base, "-clat-hist.svg");
	fprintf(gp, "set output ");
	gp_str(gp, out);
	fprintf(gp, "\nset title ");
	snprintf(out, sizeof(out), "%s: completion latency (clat) histogram", what);
	gp_str(gp, out);
	fprintf(gp, "\nset logscale x 10\nset xlabel 'clat (us), log scale'\n"
		"set ylabel '%% of I/Os'\nset yrange [0:*]\n"
		"set style fill transparent solid 0.45 border\nplot ");
	for (i = 0; i < n; i++) {
		fprintf(gp, "%s", i ? ", \\\n     " : "");
		gp_str(gp, dat);
		fprintf(gp, " index %u using (sqrt($1*$2)):($3/2):1:2:(0):3 "
			"with boxxyerror lc rgb '%s' title ", i, colors[i % 8]);
		gp_str(gp, titles[i]);
	}
	fprintf(gp, "\n");

	gp_reset(gp);
	name_of(out, sizeof(out), base, "-clat-cdf.svg");
	fprintf(gp, "set output ");
	gp_str(gp, out);
	fprintf(gp, "\nset title ");
	snprintf(out, sizeof(out), "%s: completion latency (clat) CDF", what);
	gp_str(gp, out);
	fprintf(gp, "\nset logscale x 10\nset xlabel 'clat (us), log scale'\n"
		"set ylabel '%% of I/Os at or below'\nset yrange [0:100]\n"
		"set ytics 10\nset key bottom right box opaque\n"
		"set arrow from graph 0, first 99 to graph 1, first 99 nohead dt 2 lc rgb '#888888'\n"
		"set label 'p99' at graph 0.01, first 97 tc rgb '#888888'\nplot ");
	for (i = 0; i < n; i++) {
		fprintf(gp, "%s", i ? ", \\\n     " : "");
		gp_str(gp, dat);
		fprintf(gp, " index %u using 2:4 with lines lw 2 lc rgb '%s' title ",
			i, colors[i % 8]);
		gp_str(gp, titles[i]);
	}
	fprintf(gp, "\n");
}

/* ---- a run: per job thread ---- */

static const char *const ddir_name[DDIR_NR] = { "read", "write", "trim" };

struct series_ctx {
	FILE *f;
	unsigned int ddir;
	unsigned int n;
};

static void point_out(void *arg, const struct bench_log_point *p)
{
	struct series_ctx *c = arg;

	if (p->ddir != c->ddir)
		return;
	c->n++;
	if (p->has_lat)
		fprintf(c->f, "%.3f %llu %.3f %.3f\n", p->t_ms / 1e3,
			(unsigned long long)p->iops, p->clat_ns / 1e3,
			p->lat_ns / 1e3);
	else
		fprintf(c->f, "%.3f %llu ? ?\n", p->t_ms / 1e3,
			(unsigned long long)p->iops);
}

static int plot_job(FILE *gp, const char *dir, const char *base,
		    const char *what, const struct bench_job_result *j,
		    char *err, size_t errlen)
{
	struct dist d = { 0 };
	struct blk_hist *h;
	const char *title = "clat";
	char name[PLOT_PATH], out[PLOT_PATH];
	unsigned int k, nd = 0, dirs[DDIR_NR];
	FILE *f;
	int ret;

	/* the latency distribution of all directions */
	h = malloc(sizeof(*h));
	if (!h)
		return -ENOMEM;
	blk_hist_init(h);
	for (k = 0; k < DDIR_NR; k++)
		if (j->dir[k].clat.count)
			blk_hist_merge(h, &j->dir[k].clat);
	if (j->lat_valid && h->count) {
		ret = dist_from_hist(&d, h);
		if (!ret) {
			name_of(name, sizeof(name), base, "-clat.dat");
			f = open_in(dir, name, err, errlen);
			if (!f) {
				ret = -EIO;
			} else {
				dist_write(f, &d);
				ret = close_checked(f, dir, name, err, errlen);
			}
		}
		free(d.b);
		if (ret) {
			free(h);
			return ret;
		}
		gp_dists(gp, base, name, what, &title, 1);
	}
	free(h);

	/* over time, from the --plot windows (log.h) */
	if (!j->log)
		return 0;
	name_of(name, sizeof(name), base, "-time.dat");
	f = open_in(dir, name, err, errlen);
	if (!f)
		return -EIO;
	fprintf(f, "# time_s iops clat_mean_us lat_mean_us; a block per direction\n");
	for (k = 0; k < DDIR_NR; k++) {
		struct series_ctx c = { .f = f, .ddir = k };

		fprintf(f, "# %s\n", ddir_name[k]);
		bench_log_points(j->log, point_out, &c);
		fprintf(f, "\n\n");
		if (c.n)
			dirs[nd++] = k;
	}
	ret = close_checked(f, dir, name, err, errlen);
	if (ret || !nd)
		return ret;
	gp_reset(gp);
	name_of(out, sizeof(out), base, "-iops.svg");
	fprintf(gp, "set output ");
	gp_str(gp, out);
	snprintf(out, sizeof(out), "%s: IOPS over time", what);
	fprintf(gp, "\nset title ");
	gp_str(gp, out);
	fprintf(gp, "\nset xlabel 'time (s)'\nset ylabel 'IOPS'\nset yrange [0:*]\n"
		"set format y '%%.0s%%c'\nplot ");
	for (k = 0; k < nd; k++) {
		fprintf(gp, "%s", k ? ", " : "");
		gp_str(gp, name);
		fprintf(gp, " index %u using 1:2 with linespoints pt 7 ps 0.4 lw 2 title '%s'",
			dirs[k], ddir_name[dirs[k]]);
	}
	fprintf(gp, "\n");
	if (!j->lat_valid)
		return 0;
	gp_reset(gp);
	name_of(out, sizeof(out), base, "-lat.svg");
	fprintf(gp, "set output ");
	gp_str(gp, out);
	snprintf(out, sizeof(out), "%s: mean latency over time", what);
	fprintf(gp, "\nset title ");
	gp_str(gp, out);
	fprintf(gp, "\nset xlabel 'time (s)'\nset ylabel 'latency (us), mean per window'\n"
		"set yrange [0:*]\nplot ");
	for (k = 0; k < nd; k++) {
		fprintf(gp, "%s", k ? ", " : "");
		gp_str(gp, name);
		fprintf(gp, " index %u using 1:4 with linespoints pt 7 ps 0.4 lw 2 title '%s lat', ",
			dirs[k], ddir_name[dirs[k]]);
		gp_str(gp, name);
		fprintf(gp, " index %u using 1:3 with lines dt 2 lw 2 title '%s clat'",
			dirs[k], ddir_name[dirs[k]]);
	}
	fprintf(gp, "\n");
	return 0;
}

int bench_plot_run(const char *dir, const struct bench_run_result *r,
		   const char *prefix, char *err, size_t errlen)
{
	char base[PLOT_PATH], job[BENCH_NAME_MAX], script[PLOT_PATH];
	char what[BENCH_NAME_MAX + 64];
	unsigned int i;
	FILE *gp;
	int ret = 0;

	snprintf(script, sizeof(script), "%s%splot.gp", prefix ? prefix : "",
		 prefix ? "-" : "");
	gp = open_in(dir, script, err, errlen);
	if (!gp)
		return -EIO;
	for (i = 0; i < r->nr_jobs && !ret; i++) {
		const struct bench_job_result *j = &r->jobs[i];

		safe_name(job, sizeof(job), j->name);
		snprintf(base, sizeof(base), "%s%s%s.%u", prefix ? prefix : "",
			 prefix ? "-" : "", job, i + 1);
		snprintf(what, sizeof(what), "%s (thread %u) on %s", j->name,
			 i + 1, r->dev);
		ret = plot_job(gp, dir, base, what, j, err, errlen);
	}
	if (ret) {
		fclose(gp);
		return ret;
	}
	ret = close_checked(gp, dir, script, err, errlen);
	return ret ? ret : gp_run(dir, script, err, errlen);
}

/* ---- the matrix ---- */

int bench_plot_matrix(const char *dir, const struct bench_run_result *runs,
		      unsigned int nr_rows, unsigned int nr_devs, char *err,
		      size_t errlen)
{
	static const char *const what[2] = { "iops", "lat" };
	char name[64];
	unsigned int row, d, k;
	FILE *f, *gp;
	int ret;

	for (k = 0; k < 2; k++) {
		snprintf(name, sizeof(name), "matrix-%s.dat", what[k]);
		f = open_in(dir, name, err, errlen);
		if (!f)
			return -EIO;
		fprintf(f, "workload");
		for (d = 0; d < nr_devs; d++) {
			const char *dev = "?";

			for (row = 0; row < nr_rows; row++)
				if (runs[row * nr_devs + d].jobs)
					dev = runs[row * nr_devs + d].dev;
			fprintf(f, " %s", dev);
		}
		fprintf(f, "\n");
		for (row = 0; row < nr_rows; row++) {
			const char *wl = "?";

			for (d = 0; d < nr_devs; d++)
				if (runs[row * nr_devs + d].jobs)
					wl = runs[row * nr_devs + d].workload;
			fprintf(f, "%s", wl);
			for (d = 0; d < nr_devs; d++) {
				const struct bench_run_result *r = &runs[row * nr_devs + d];

				if (!r->jobs)
					fprintf(f, " ?");
				else if (k == 0)
					fprintf(f, " %.3f", bench_run_iops(r) / 1e3);
				else
					fprintf(f, " %.3f", bench_run_lat_us(r));
			}
			fprintf(f, "\n");
		}
		ret = close_checked(f, dir, name, err, errlen);
		if (ret)
			return ret;
	}
	gp = open_in(dir, "matrix.gp", err, errlen);
	if (!gp)
		return -EIO;
	for (k = 0; k < 2; k++) {
		gp_reset(gp);
		fprintf(gp, "set output 'matrix-%s.svg'\n"
			"set title '%s'\n"
			"set ylabel '%s'\nset yrange [0:*]\n"
			"set style data histograms\n"
			"set style histogram clustered gap 1\n"
			"set style fill solid 0.85 border -1\n"
			"set grid noxtics\nset key top left box opaque\n"
			"plot for [c=2:%u] 'matrix-%s.dat' using c:xtic(1) title columnheader(c)\n",
			what[k],
			k == 0 ? "matrix: IOPS by workload and device" :
				 "matrix: mean latency by workload and device",
			k == 0 ? "IOPS (thousands)" : "mean latency (us)",
			nr_devs + 1, what[k]);
	}
	ret = close_checked(gp, dir, "matrix.gp", err, errlen);
	return ret ? ret : gp_run(dir, "matrix.gp", err, errlen);
}

/* ---- A/B sides ---- */

int bench_plot_sides(const char *dir, const char *name,
		     const char *const *titles, const uint64_t *const *plat,
		     unsigned int nr_sides, char *err, size_t errlen)
{
	char base[PLOT_PATH / 2], dat[PLOT_PATH], script[PLOT_PATH];
	unsigned int s;
	FILE *f, *gp;
	int ret = 0;

	safe_name(base, sizeof(base), name);
	name_of(dat, sizeof(dat), base, "-clat.dat");
	f = open_in(dir, dat, err, errlen);
	if (!f)
		return -EIO;
	for (s = 0; s < nr_sides && !ret; s++) {
		struct dist d = { 0 };

		ret = dist_from_plat(&d, plat[s]);
		if (!ret)
			dist_write(f, &d);
		free(d.b);
	}
	if (ret) {
		fclose(f);
		snprintf(err, errlen, "plot: out of memory");
		return ret;
	}
	ret = close_checked(f, dir, dat, err, errlen);
	if (ret)
		return ret;
	name_of(script, sizeof(script), base, ".gp");
	gp = open_in(dir, script, err, errlen);
	if (!gp)
		return -EIO;
	gp_dists(gp, base, dat, name, titles, nr_sides);
	ret = close_checked(gp, dir, script, err, errlen);
	return ret ? ret : gp_run(dir, script, err, errlen);
}
