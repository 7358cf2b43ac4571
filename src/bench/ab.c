// SPDX-License-Identifier: MIT
/*
 * `blkstack bench --ab=OPTIONS --ab=OPTIONS [common options]`: two or more
 * configurations ("sides") of the same workload, each run in rounds in a
 * process of its own (the side's blkstack binary, this one by default,
 * with --output-format=json), rounds alternating the sides after a
 * warm-up, until every headline metric's interval is narrow enough or the
 * time budget ends.  Then each metric: the sides' medians, the difference
 * against side A with its 95 % interval (ab_stats.c) and a verdict, as
 * seed 001's tables or as JSON.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <wordexp.h>

#include <jansson.h>

#include "bench.h"
#include "bench/ab_stats.h"
#include "bench/log.h"
#include "bench/plot.h"
#include "blkstack/version.h"

extern char **environ;

#define AB_MAX_SIDES 8
#define AB_MAX_CELLS 64
#define AB_CONF 0.95
#define AB_MIN_ROUNDS_LIMIT 6	/* the fewest pairs with a 95 % interval */
/* merges are a headline metric of a cell only where this share of I/Os merge */
#define AB_MERGE_MATERIAL 0.01

enum ab_metric {
	M_IOPS, M_CPU, M_LAT, M_P50, M_P99, M_P999, M_MERGE, M_INSN,
	M_IOS,	/* internal: I/Os of the run, for the merge share */
	M_NR,
};

static const struct ab_metric_def {
	const char *name;	/* JSON */
	const char *label;	/* table */
	const char *unit;
	bool higher_is_better;
	bool headline;		/* in the stop rule and the A/A promise */
	bool internal;		/* kept, not reported */
} metric_defs[M_NR] = {
	[M_IOPS] = { "iops", "IOPS(K)", "thousand I/Os per second", true, true },
	[M_CPU] = { "cpu_per_io", "CPU(ns/IO)", "ns of process CPU per I/O", false, true },
	[M_LAT] = { "lat_mean", "LAT(us)", "us, mean total latency", false, true },
	[M_P50] = { "clat_p50", "P50(us)", "us, completion latency", false, false },
	[M_P99] = { "clat_p99", "P99(us)", "us, completion latency", false, false },
	[M_P999] = { "clat_p99.9", "P99.9(us)", "us, completion latency", false, false },
	[M_MERGE] = { "merges", "MERGE(K)", "thousand bios merged", true, true },
	[M_INSN] = { "instructions_per_io", "INSN/IO", "instructions per I/O", false, false },
	[M_IOS] = { "ios", "IOS", "I/Os", true, false, true },
};

struct ab_side {
	char name[4];		/* "A", "B", ... */
	const char *text;	/* the --ab value as given */
	char *binary;		/* NULL: this blkstack */
	wordexp_t words;
	char **args;		/* the side's options (words without binary=) */
	size_t nr_args;
};

struct ab_cell {
	char dev[16];
	char job[BENCH_NAME_MAX];
	char workload[16];
	bool has[M_NR];		/* every run reported it */
	/* --plot: each side's fio clat bins over its rounds (json+), or NULL */
	uint64_t *plat[AB_MAX_SIDES];
};

struct ab {
	struct ab_side sides[AB_MAX_SIDES];
	unsigned int nr_sides;
	char **common;		/* options and job files for every side */
	unsigned int nr_common;
	bool random_order;
	uint64_t seed;
	double ci_pct;
	double noise_pct;
	uint64_t budget_ns;
	unsigned int min_rounds, max_rounds, warmup;
	bool json;
	char output[256];
	char plot_dir[1024];	/* --plot=DIR: the sides' latency on one chart */
	char self[4096];	/* this binary */
	/* results */
	struct ab_cell cells[AB_MAX_CELLS];
	unsigned int nr_cells;
	double *values;		/* [side][cell][metric][round] */
	unsigned int rounds;
	uint64_t elapsed_ns;
	const char *stopped;	/* ci, budget, max_rounds, interrupted, error */
	char why[1300];
	char error[1200];
	size_t k;		/* signed-rank order statistic for rounds */
	double coverage;
};

static double *val(struct ab *ab, unsigned int s, unsigned int c,
		   unsigned int m)
{
	return ab->values + (((size_t)s * AB_MAX_CELLS + c) * M_NR + m) *
				    ab->max_rounds;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool interrupted(void)
{
	return atomic_load(&bench_interrupted) != 0;
}

/* ---- the command line ---- */

static const struct {
	const char *name, *metavar, *help;
} ab_opts[] = {
	{ "ab", "OPTIONS", "one side of an A/B comparison (give it twice or more): bench options, "
	  "split as a shell would, optionally starting with binary=PATH for another blkstack build; "
	  "the other options on the line are the workload every side runs" },
	{ "ab_order", "alternate|random", "order of the sides in each round: ABAB... or shuffled per round (default alternate)" },
	{ "ab_seed", "INT", "seed of ab_order=random (default 1)" },
	{ "ab_ci", "PCT", "stop once every headline metric's 95 % interval is narrower than PCT % of side A's median; 0.1..100 (default 2)" },
	{ "ab_noise", "PCT", "the smallest difference a verdict calls better or worse: the whole 95 % interval must lie beyond +-PCT % of side A's median; 0..50 (default 1; 0: any interval that excludes 0)" },
	{ "ab_budget", "TIME", "stop when the next round would end past this time; a bare number is in s; 1s..24h (default 60s)" },
	{ "ab_min_rounds", "INT", "rounds before the interval may stop the run; 6..200 (default 6)" },
	{ "ab_max_rounds", "INT", "rounds at most; ab_min_rounds..200 (default 30)" },
	{ "ab_warmup", "INT", "rounds run first and not counted; 0..10 (default 1)" },
};

void bench_ab_usage(FILE *f)
{
	size_t i;

	fprintf(f, "\nA/B options (command line only; docs/lab.md):\n");
	for (i = 0; i < sizeof(ab_opts) / sizeof(ab_opts[0]); i++) {
		char left[64];

		snprintf(left, sizeof(left), "  --%s=%s", ab_opts[i].name,
			 ab_opts[i].metavar);
		if (strlen(left) < 28)
			fprintf(f, "%-28s%s\n", left, ab_opts[i].help);
		else
			fprintf(f, "%s\n%-28s%s\n", left, "", ab_opts[i].help);
	}
}

bool bench_ab_wanted(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strncmp(argv[i], "--ab=", 5) || !strcmp(argv[i], "--ab") ||
		    !strncmp(argv[i], "--ab_", 5))
			return true;
	}
	return false;
}

/*
 * One line on stderr.  The message carries the user's text (sides, paths,
 * values), so it goes out through bench_show(): control bytes and bytes
 * that are not UTF-8 as \xNN, never a terminal escape.
 */
#define AB_MSG_MAX 1000
static __attribute__((format(printf, 1, 2))) int ab_err(const char *fmt, ...)
{
	static char msg[2048], shown[AB_MSG_MAX * 4 + 4];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "blkstack bench: %s\n",
		bench_show(shown, sizeof(shown), msg, strlen(msg), AB_MSG_MAX));
	return -EINVAL;
}

static int parse_uint_opt(const char *name, const char *v, unsigned int min,
			  unsigned int max, unsigned int *out)
{
	uint64_t x;

	if (!v || bench_parse_size(v, &x) || x < min || x > max)
		return ab_err("%s=%s: allowed %u..%u", name, v ? v : "", min, max);
	*out = (unsigned int)x;
	return 0;
}

/* An option the parent takes for itself; a side may not set it. */
static bool parent_opt(const char *a)
{
	static const char *const names[] = { "output-format", "output", "eta", "help", "plot" };
	size_t i, n;

	if (strncmp(a, "--", 2))
		return false;
	a += 2;
	if (!strncmp(a, "ab", 2) && (a[2] == '\0' || a[2] == '=' || a[2] == '_'))
		return true;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		n = strlen(names[i]);
		if (!strncmp(a, names[i], n) && (a[n] == '\0' || a[n] == '='))
			return true;
	}
	return false;
}

static int side_parse(struct ab_side *s, const char *text)
{
	size_t i;
	int rc;

	s->text = text;
	rc = wordexp(text, &s->words, WRDE_NOCMD | WRDE_UNDEF);
	if (rc) {
		s->words.we_wordc = 0;
		s->words.we_wordv = NULL;
		return ab_err("ab='%s' (side %s): cannot split it as a shell would (%s)",
			      text, s->name,
			      rc == WRDE_CMDSUB ? "command substitution is not allowed" :
			      rc == WRDE_BADVAL ? "an unset variable" :
			      rc == WRDE_BADCHAR ? "a character such as | ; & < > needs quotes" :
			      "bad quoting");
	}
	s->args = calloc(s->words.we_wordc + 1, sizeof(*s->args));
	if (!s->args)
		return -ENOMEM;
	for (i = 0; i < s->words.we_wordc; i++) {
		char *w = s->words.we_wordv[i];

		if (!strncmp(w, "binary=", 7)) {
			if (s->binary)
				return ab_err("ab='%s' (side %s): binary= given twice", text, s->name);
			if (!w[7])
				return ab_err("ab='%s' (side %s): binary= needs a path to a blkstack build",
					      text, s->name);
			s->binary = w + 7;
			continue;
		}
		if (parent_opt(w))
			return ab_err("ab='%s' (side %s): '%s' belongs beside the --ab options, not in a side (the sides always report JSON to blkstack bench --ab)",
				      text, s->name, w);
		s->args[s->nr_args++] = w;
	}
	return 0;
}

/* Run @argv with stdout and stderr into files; the exit status in @status. */
static int spawn_capture(char *const argv[], FILE *out, FILE *err,
			 int *status)
{
	posix_spawn_file_actions_t fa;
	bool signalled = false;
	pid_t pid;
	int rc;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fileno(out), STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, fileno(err), STDERR_FILENO);
	rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc)
		return -rc;
	for (;;) {
		pid_t w = waitpid(pid, status, WNOHANG);
		struct timespec ts = { 0, 10000000 };

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return -errno;
		/* a stop signal for us is one for the side's run too */
		if (interrupted() && !signalled) {
			kill(pid, atomic_load(&bench_interrupted));
			signalled = true;
		}
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* The whole of @f as a string (NUL-terminated), or NULL. */
static char *slurp(FILE *f)
{
	long n;
	char *buf;

	fflush(f);
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		return NULL;
	buf = malloc((size_t)n + 1);
	if (!buf)
		return NULL;
	if (n && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

/*
 * The last two lines of @s (a message and its hint, or a sanitizer's
 * summary) on one line, made safe to print (bench_show()), in @buf of
 * @len bytes (at least 4 x 200 + 4).
 */
static const char *last_lines(char *buf, size_t len, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	char raw[1024];
	const char *p;
	int lines = 0;

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		n--;
	if (!n)
		return "(nothing on stderr)";
	for (p = s + n; p > s; p--)
		if (p[-1] == '\n' && ++lines == 2)
			break;
	snprintf(raw, sizeof(raw), "%.*s", (int)(s + n - p), p);
	for (char *q = raw; *q; q++)
		if (*q == '\n')
			*q = ' ';
	return bench_show(buf, len, raw, strlen(raw), 200);
}

static const char *side_binary(const struct ab *ab, const struct ab_side *s)
{
	return s->binary ? s->binary : ab->self;
}

/* binary=PATH: there, executable, and a blkstack ("blkstack X.Y.Z"). */
static int check_binary(struct ab *ab, struct ab_side *s)
{
	char *argv[3] = { s->binary, "--version", NULL }, *out = NULL;
	FILE *fo = NULL, *fe = NULL;
	struct stat st;
	int status = 0, rc;

	(void)ab;
	if (stat(s->binary, &st))
		return ab_err("ab='%s' (side %s): binary=%s: %s, allowed the path of a blkstack build",
			      s->text, s->name, s->binary, strerror(errno));
	if (!S_ISREG(st.st_mode) || access(s->binary, X_OK))
		return ab_err("ab='%s' (side %s): binary=%s: not an executable file, allowed the path of a blkstack build",
			      s->text, s->name, s->binary);
	fo = tmpfile();
	fe = tmpfile();
	if (!fo || !fe) {
		rc = -errno;
		goto out;
	}
	rc = spawn_capture(argv, fo, fe, &status);
	if (!rc)
		out = slurp(fo);
	if (rc || !out || !WIFEXITED(status) || WEXITSTATUS(status) ||
	    strncmp(out, "blkstack ", 9)) {
		char shown[80];

		snprintf(shown, sizeof(shown), "%s", out ? out : "");
		shown[strcspn(shown, "\n")] = '\0';
		rc = ab_err("ab='%s' (side %s): binary=%s: not blkstack ('%s --version' printed '%s', a blkstack build prints 'blkstack VERSION')",
			    s->text, s->name, s->binary, s->binary, shown);
	}
out:
	free(out);
	if (fo)
		fclose(fo);
	if (fe)
		fclose(fe);
	return rc;
}

/*
 * The options of a side on this binary parse here as they would in its
 * run, so that a typo fails at once, naming the side, not in round one.
 */
static int check_options(struct ab *ab, struct ab_side *s)
{
	size_t n = 1 + ab->nr_common + (s ? s->nr_args : 0), i, k = 0;
	char **argv = calloc(n + 1, sizeof(*argv));
	struct bench_opts *o = calloc(1, sizeof(*o));
	char err[4096] = "";
	int rc = -ENOMEM;

	if (!argv || !o)
		goto out;
	argv[k++] = "bench";
	for (i = 0; i < ab->nr_common; i++)
		argv[k++] = ab->common[i];
	for (i = 0; s && i < s->nr_args; i++)
		argv[k++] = s->args[i];
	bench_opts_init(o);
	rc = bench_parse_args(o, (int)k, argv, err, sizeof(err));
	/* a side's drivers, and the driver options given for them */
	if (!rc && s)
		rc = bench_pick_devs(o, err, sizeof(err));
	if (rc) {
		if (s)
			rc = ab_err("ab='%s' (side %s): %s", s->text, s->name, err);
		else
			rc = ab_err("%s", err);
		fprintf(stderr, "Try 'blkstack bench --help'.\n");
	}
out:
	free(argv);
	free(o);
	return rc;
}

static int ab_parse(struct ab *ab, int argc, char **argv, bool *help)
{
	const char *order = "alternate", *ci = NULL, *budget = NULL, *noise = NULL;
	const char *minr = NULL, *maxr = NULL, *warm = NULL, *seed = NULL;
	const char *fmt = "normal";
	bool dashdash = false;
	unsigned int i;
	ssize_t len;
	int rc;

	ab->common = calloc((size_t)argc, sizeof(*ab->common));
	if (!ab->common)
		return -ENOMEM;
	for (i = 1; i < (unsigned int)argc; i++) {
		char *a = argv[i];
		const char *v = strchr(a, '=');

		v = v ? v + 1 : NULL;
		if (dashdash || strncmp(a, "--", 2)) {
			ab->common[ab->nr_common++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			dashdash = true;
			ab->common[ab->nr_common++] = a;
			continue;
		}
		if (!strncmp(a, "--ab=", 5) || !strcmp(a, "--ab")) {
			struct ab_side *s;

			if (!v)
				return ab_err("option 'ab' needs a value: the options of one side (--ab='--elevator=none'), optionally after binary=PATH");
			if (ab->nr_sides == AB_MAX_SIDES)
				return ab_err("ab: more than %d sides, allowed 2..%d", AB_MAX_SIDES, AB_MAX_SIDES);
			s = &ab->sides[ab->nr_sides];
			snprintf(s->name, sizeof(s->name), "%c", 'A' + ab->nr_sides);
			ab->nr_sides++;
			rc = side_parse(s, v);
			if (rc)
				return rc;
			continue;
		}
#define AB_OPT(str, var) \
		if (!strncmp(a, "--" str "=", strlen(str) + 3) || !strcmp(a, "--" str)) { \
			if (!v || !*v) \
				return ab_err("option '%s' needs a value", str); \
			var = v; \
			continue; \
		}
		AB_OPT("ab_order", order)
		AB_OPT("ab_seed", seed)
		AB_OPT("ab_ci", ci)
		AB_OPT("ab_noise", noise)
		AB_OPT("ab_budget", budget)
		AB_OPT("ab_min_rounds", minr)
		AB_OPT("ab_max_rounds", maxr)
		AB_OPT("ab_warmup", warm)
		AB_OPT("output-format", fmt)
#undef AB_OPT
		if (!strncmp(a, "--ab_", 5)) {
			int n = (int)strcspn(a + 2, "=");

			return ab_err("unknown option '%.*s', allowed ab, ab_order, ab_seed, ab_ci, ab_noise, ab_budget, ab_min_rounds, ab_max_rounds, ab_warmup",
				      n, a + 2);
		}
		if (!strncmp(a, "--output=", 9)) {
			if (!a[9] || strlen(a + 9) >= sizeof(ab->output))
				return ab_err("output=%s: allowed a file name of 1..%zu characters",
					      a + 9, sizeof(ab->output) - 1);
			snprintf(ab->output, sizeof(ab->output), "%s", a + 9);
			continue;
		}
		if (!strncmp(a, "--plot=", 7)) {
			char perr[1200];

			if (!a[7] || strlen(a + 7) >= sizeof(ab->plot_dir))
				return ab_err("plot=%s: allowed a directory name of 1..%zu characters",
					      a + 7, sizeof(ab->plot_dir) - 1);
			snprintf(ab->plot_dir, sizeof(ab->plot_dir), "%s", a + 7);
			if (bench_plot_check(ab->plot_dir, perr, sizeof(perr)))
				return ab_err("%s", perr);
			continue;
		}
		if (!strcmp(a, "--help")) {
			*help = true;
			return 0;
		}
		if (!strncmp(a, "--eta=", 6) || !strcmp(a, "--eta"))
			continue;	/* the sides never show progress */
		ab->common[ab->nr_common++] = a;
	}
	if (ab->nr_sides < 2)
		return ab_err("ab: %u side%s given, allowed 2..%d: one --ab=OPTIONS per side (--ab= for a side with the workload's options alone; for A/A give the same options twice)",
			      ab->nr_sides, ab->nr_sides == 1 ? "" : "s", AB_MAX_SIDES);
	if (!strcmp(order, "alternate"))
		ab->random_order = false;
	else if (!strcmp(order, "random"))
		ab->random_order = true;
	else
		return ab_err("ab_order=%s: bad value, allowed alternate|random", order);
	if (!strcmp(fmt, "json"))
		ab->json = true;
	else if (strcmp(fmt, "normal"))
		return ab_err("output-format=%s: bad value, allowed normal|json", fmt);
	ab->seed = 1;
	if (seed && bench_parse_size(seed, &ab->seed))
		return ab_err("ab_seed=%s: allowed 0..2^64-1", seed);
	ab->ci_pct = 2.0;
	if (ci) {
		char *end;
		double x = strtod(ci, &end);

		if (end == ci || *end || !isfinite(x) || x < 0.1 || x > 100.0)
			return ab_err("ab_ci=%s: allowed 0.1..100 (percent of side A's median; the width of the 95 %% interval)",
				      ci);
		ab->ci_pct = x;
	}
	ab->noise_pct = 1.0;
	if (noise) {
		char *end;
		double x = strtod(noise, &end);

		if (end == noise || *end || !isfinite(x) || x < 0.0 || x > 50.0)
			return ab_err("ab_noise=%s: allowed 0..50 (percent of side A's median)",
				      noise);
		ab->noise_pct = x;
	}
	ab->budget_ns = 60ull * 1000000000ull;
	if (budget && (bench_parse_time(budget, 1000000000ull, &ab->budget_ns) ||
		       ab->budget_ns < 1000000000ull ||
		       ab->budget_ns > 86400ull * 1000000000ull))
		return ab_err("ab_budget=%s: allowed 1s..24h (a bare number is in s)", budget);
	ab->min_rounds = AB_MIN_ROUNDS_LIMIT;
	ab->max_rounds = 30;
	ab->warmup = 1;
	if (minr && parse_uint_opt("ab_min_rounds", minr, AB_MIN_ROUNDS_LIMIT,
				   AB_MAX_PAIRS, &ab->min_rounds))
		return -EINVAL;
	if (maxr && parse_uint_opt("ab_max_rounds", maxr, ab->min_rounds,
				   AB_MAX_PAIRS, &ab->max_rounds))
		return -EINVAL;
	if (!maxr && ab->max_rounds < ab->min_rounds)
		ab->max_rounds = ab->min_rounds;
	if (warm && parse_uint_opt("ab_warmup", warm, 0, 10, &ab->warmup))
		return -EINVAL;
	len = readlink("/proc/self/exe", ab->self, sizeof(ab->self) - 1);
	if (len <= 0)
		return ab_err("ab: cannot find this binary (/proc/self/exe): %s", strerror(errno));
	ab->self[len] = '\0';
	/* the workload alone, then each side on it */
	rc = check_options(ab, NULL);
	if (rc)
		return rc;
	for (i = 0; i < ab->nr_sides; i++) {
		struct ab_side *s = &ab->sides[i];

		rc = s->binary ? check_binary(ab, s) : check_options(ab, s);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- one run of one side ---- */

static double num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static double pct(json_t *dir, const char *key)
{
	return num(json_object_get(json_object_get(dir, "clat_ns"), "percentile"), key);
}

/* One job entry's metrics; @run_ios: all I/Os of its run (the process CPU's). */
static void job_metrics(json_t *job, double run_ios, double m[M_NR])
{
	static const char *const dirs[] = { "read", "write", "trim" };
	json_t *bs = json_object_get(job, "blkstack"), *big = NULL;
	double ios = 0, iops = 0, lsum = 0, ln = 0, most = -1, merges = 0;
	size_t i;

	for (i = 0; i < 3; i++) {
		json_t *d = json_object_get(job, dirs[i]);
		json_t *lat = json_object_get(d, "lat_ns");
		double n = num(d, "total_ios");

		if (!d || isnan(n))
			continue;
		ios += n;
		iops += num(d, "iops");
		if (num(lat, "N") > 0) {
			lsum += num(lat, "mean") * num(lat, "N");
			ln += num(lat, "N");
		}
		if (n > most) {
			most = n;
			big = d;
		}
		merges += num(json_object_get(bs, "merges"), dirs[i]);
	}
	m[M_IOPS] = iops / 1000.0;
	m[M_CPU] = run_ios > 0 ? num(bs, "cpu_pct") / 100.0 * num(bs, "wall_ns") / run_ios : NAN;
	m[M_LAT] = ln > 0 ? lsum / ln / 1000.0 : NAN;
	m[M_P50] = pct(big, "50.000000") / 1000.0;
	m[M_P99] = pct(big, "99.000000") / 1000.0;
	m[M_P999] = pct(big, "99.900000") / 1000.0;
	m[M_MERGE] = merges / 1000.0;
	/* a blkstack that counts instructions reports them here */
	m[M_INSN] = num(bs, "instructions_per_io");
	m[M_IOS] = ios;
}

static double job_ios(json_t *job)
{
	static const char *const dirs[] = { "read", "write", "trim" };
	double ios = 0;
	size_t i;

	for (i = 0; i < 3; i++) {
		double n = num(json_object_get(job, dirs[i]), "total_ios");

		if (!isnan(n))
			ios += n;
	}
	return ios;
}

static const char *jstr_or(json_t *o, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : dflt;
}

/* --plot: add a job's clat bins (json+, every direction) to cell @c of @side. */
static int take_bins(struct ab *ab, unsigned int side, unsigned int c,
		     json_t *job)
{
	static const char *const dirs[] = { "read", "write", "trim" };
	uint64_t **p = &ab->cells[c].plat[side];
	const char *key;
	json_t *bins, *n;
	size_t i;

	if (!*p) {
		*p = calloc(BENCH_PLAT_NR, sizeof(**p));
		if (!*p) {
			snprintf(ab->error, sizeof(ab->error), "out of memory");
			return -ENOMEM;
		}
	}
	for (i = 0; i < 3; i++) {
		bins = json_object_get(json_object_get(json_object_get(job, dirs[i]),
						       "clat_ns"), "bins");
		json_object_foreach(bins, key, n)
			if (json_is_integer(n) && json_integer_value(n) > 0)
				(*p)[bench_plat_index(strtoull(key, NULL, 10))] +=
					(uint64_t)json_integer_value(n);
	}
	return 0;
}

/*
 * Read a side's JSON report into round @round (< 0: a warm-up, only
 * checked).  The first report read, side A's, names the cells.  Return 0
 * or -EINVAL with ab->error set.
 */
static int take_report(struct ab *ab, unsigned int side, int round,
		       const char *text)
{
	json_error_t je;
	json_t *root = json_loads(text, 0, &je), *jobs, *job;
	bool define = !ab->nr_cells;	/* side A's first report names the cells */
	unsigned int seen = 0;
	size_t i, j;

	jobs = json_object_get(root, "jobs");
	if (!json_is_array(jobs) || !json_array_size(jobs)) {
		snprintf(ab->error, sizeof(ab->error),
			 "side %s: its report is not blkstack bench JSON with jobs (%s)",
			 ab->sides[side].name, root ? "no jobs[]" : je.text);
		json_decref(root);
		return -EINVAL;
	}
	json_array_foreach(jobs, i, job) {
		json_t *bs = json_object_get(job, "blkstack");
		const char *dev = jstr_or(bs, "dev", "?");
		const char *name = jstr_or(job, "jobname", "?");
		const char *wl = jstr_or(bs, "workload", "");
		double m[M_NR], run_ios = 0;
		json_t *other;
		unsigned int c, k;

		/* the process CPU of the run is shared by its jobs */
		json_array_foreach(jobs, j, other) {
			json_t *ob = json_object_get(other, "blkstack");

			if (!strcmp(jstr_or(ob, "dev", "?"), dev) &&
			    !strcmp(jstr_or(ob, "workload", ""), wl))
				run_ios += job_ios(other);
		}
		job_metrics(job, run_ios, m);
		for (c = 0; c < ab->nr_cells; c++)
			if (!strcmp(ab->cells[c].dev, dev) && !strcmp(ab->cells[c].job, name))
				break;
		if (c == ab->nr_cells) {
			if (!define) {
				snprintf(ab->error, sizeof(ab->error),
					 "side %s: its report has job '%s' on %s, which the first report did not have: the sides must run the same jobs",
					 ab->sides[side].name, name, dev);
				json_decref(root);
				return -EINVAL;
			}
			if (c == AB_MAX_CELLS) {
				snprintf(ab->error, sizeof(ab->error),
					 "more than %d jobs in one run, blkstack bench --ab's limit", AB_MAX_CELLS);
				json_decref(root);
				return -EINVAL;
			}
			snprintf(ab->cells[c].dev, sizeof(ab->cells[c].dev), "%s", dev);
			snprintf(ab->cells[c].job, sizeof(ab->cells[c].job), "%s", name);
			snprintf(ab->cells[c].workload, sizeof(ab->cells[c].workload), "%s", wl);
			for (k = 0; k < M_NR; k++)
				ab->cells[c].has[k] = true;
			ab->nr_cells++;
		}
		seen++;
		if (ab->plot_dir[0] && round >= 0 && take_bins(ab, side, c, job)) {
			json_decref(root);
			return -ENOMEM;
		}
		for (k = 0; k < M_NR; k++) {
			if (isnan(m[k]))
				ab->cells[c].has[k] = false;
			if (round >= 0)
				val(ab, side, c, k)[round] = m[k];
		}
	}
	json_decref(root);
	if (seen != ab->nr_cells) {
		snprintf(ab->error, sizeof(ab->error),
			 "side %s: its report has %u jobs, the first report %u: the sides must run the same jobs",
			 ab->sides[side].name, seen, ab->nr_cells);
		return -EINVAL;
	}
	return 0;
}

/* Run side @s once; its report goes into @round (< 0: warm-up). */
static int run_side(struct ab *ab, unsigned int s, int round)
{
	struct ab_side *side = &ab->sides[s];
	size_t n = 5 + ab->nr_common + side->nr_args, i, k = 0;
	char **argv = calloc(n, sizeof(*argv));
	char *out = NULL, *err = NULL, tail[4 * 200 + 4], rname[32];
	FILE *fo = tmpfile(), *fe = tmpfile();
	int status = 0, rc;

	if (!argv || !fo || !fe) {
		rc = -ENOMEM;
		snprintf(ab->error, sizeof(ab->error), "out of memory or temporary files");
		goto out;
	}
	argv[k++] = (char *)side_binary(ab, side);
	argv[k++] = "bench";
	/* the side's options after the workload's: for a device option the last wins */
	for (i = 0; i < ab->nr_common && strcmp(ab->common[i], "--"); i++)
		argv[k++] = ab->common[i];
	for (i = 0; i < side->nr_args; i++)
		argv[k++] = side->args[i];
	/* --plot: json+ brings the clat bins of each side's rounds */
	argv[k++] = ab->plot_dir[0] ? "--output-format=json+" : "--output-format=json";
	argv[k++] = "--eta=never";
	for (i = 0; i < ab->nr_common; i++)
		if (!strcmp(ab->common[i], "--"))
			break;
	for (; i < ab->nr_common; i++)
		argv[k++] = ab->common[i];
	argv[k] = NULL;
	if (round < 0)
		snprintf(rname, sizeof(rname), "warm-up");
	else
		snprintf(rname, sizeof(rname), "round %d", round + 1);
	rc = spawn_capture(argv, fo, fe, &status);
	if (rc) {
		snprintf(ab->error, sizeof(ab->error), "side %s (%s): cannot start %s: %s",
			 side->name, rname, argv[0], strerror(-rc));
		goto out;
	}
	out = slurp(fo);
	err = slurp(fe);
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);

		rc = -ECHILD;
		if (interrupted() && (sig == SIGINT || sig == SIGTERM))
			goto out;
		snprintf(ab->error, sizeof(ab->error),
			 "side %s (%s): %s crashed, killed by signal %d (%s): %s",
			 side->name, rname, argv[0], sig, strsignal(sig),
			 last_lines(tail, sizeof(tail), err));
		goto out;
	}
	if (WEXITSTATUS(status)) {
		rc = -ECHILD;
		/* 128 + signal: the run was stopped with us */
		if (interrupted() && WEXITSTATUS(status) > 128)
			goto out;
		snprintf(ab->error, sizeof(ab->error),
			 "side %s (%s): %s exited with status %d: %s",
			 side->name, rname, argv[0], WEXITSTATUS(status),
			 last_lines(tail, sizeof(tail), err));
		goto out;
	}
	rc = out ? take_report(ab, s, round, out) : -ENOMEM;
out:
	free(out);
	free(err);
	free(argv);
	if (fo)
		fclose(fo);
	if (fe)
		fclose(fe);
	return rc;
}

/* ---- rounds and the stop rule ---- */

/*
 * Merges are a headline metric of a cell only where side A merged at least
 * AB_MERGE_MATERIAL of its I/Os: random I/O merges a handful of bios by
 * chance (2 in 170000), and a percentage of a handful never settles.
 */
static bool metric_headline(struct ab *ab, unsigned int c, unsigned int m,
			    unsigned int n)
{
	if (!metric_defs[m].headline || !ab->cells[c].has[m])
		return false;
	if (m != M_MERGE)
		return true;
	return ab_median(val(ab, 0, c, M_MERGE), n) * 1000.0 >=
	       AB_MERGE_MATERIAL * ab_median(val(ab, 0, c, M_IOS), n);
}

static int compare(struct ab *ab, unsigned int s, unsigned int c,
		   unsigned int m, unsigned int n, struct ab_compare *out)
{
	return ab_compare_paired(val(ab, 0, c, m), val(ab, s, c, m), n,
				 n >= AB_MIN_ROUNDS_LIMIT ? ab->k : 0,
				 metric_defs[m].higher_is_better, ab->noise_pct, out);
}

/* Every headline interval narrower than ab_ci (after @n rounds)? */
static bool narrow_enough(struct ab *ab, unsigned int n)
{
	unsigned int s, c, m;
	struct ab_compare r;

	for (s = 1; s < ab->nr_sides; s++)
		for (c = 0; c < ab->nr_cells; c++)
			for (m = 0; m < M_NR; m++) {
				if (!metric_headline(ab, c, m, n))
					continue;
				if (compare(ab, s, c, m, n, &r) || !r.has_ci)
					return false;
				if (r.has_pct && r.ci_high_pct - r.ci_low_pct >= ab->ci_pct)
					return false;
			}
	return true;
}

static int run_rounds(struct ab *ab)
{
	unsigned int order[AB_MAX_SIDES], i, w;
	uint64_t t0 = now_ns(), round_ns = 0;
	struct ab_rng rng;
	int rc;

	ab_rng_seed(&rng, ab->seed);
	for (i = 0; i < ab->nr_sides; i++)
		order[i] = i;
	for (w = 0; w < ab->warmup; w++) {
		for (i = 0; i < ab->nr_sides; i++) {
			rc = run_side(ab, i, -1);
			if (rc)
				goto stop;
		}
	}
	for (ab->rounds = 0; ab->rounds < ab->max_rounds;) {
		uint64_t r0 = now_ns();

		if (ab->random_order)
			ab_shuffle(&rng, order, ab->nr_sides);
		for (i = 0; i < ab->nr_sides; i++) {
			rc = run_side(ab, order[i], (int)ab->rounds);
			if (rc)
				goto stop;
		}
		ab->rounds++;
		round_ns = now_ns() - r0;
		ab->elapsed_ns = now_ns() - t0;
		if (ab->rounds >= AB_MIN_ROUNDS_LIMIT &&
		    ab_signed_rank_k(ab->rounds, AB_CONF, &ab->k, &ab->coverage))
			return -ENOMEM;
		if (ab->rounds >= ab->min_rounds && narrow_enough(ab, ab->rounds)) {
			ab->stopped = "ci";
			snprintf(ab->why, sizeof(ab->why),
				 "every headline interval narrower than %.2f %% (ab_ci)", ab->ci_pct);
			return 0;
		}
		if (interrupted())
			break;
		if (ab->elapsed_ns + round_ns > ab->budget_ns) {
			ab->stopped = "budget";
			snprintf(ab->why, sizeof(ab->why),
				 "time budget: another round would end past %.0f s (ab_budget)",
				 (double)ab->budget_ns / 1e9);
			return 0;
		}
	}
	if (!interrupted()) {
		ab->stopped = "max_rounds";
		snprintf(ab->why, sizeof(ab->why), "%u rounds (ab_max_rounds)", ab->max_rounds);
		return 0;
	}
	rc = -EINTR;
stop:
	ab->elapsed_ns = now_ns() - t0;
	if (interrupted()) {
		ab->stopped = "interrupted";
		snprintf(ab->why, sizeof(ab->why), "interrupted by %s",
			 atomic_load(&bench_interrupted) == SIGTERM ? "SIGTERM" : "SIGINT");
		return -EINTR;
	}
	ab->stopped = "error";
	snprintf(ab->why, sizeof(ab->why), "a side failed: %s", ab->error);
	return rc;
}

/* ---- reports ---- */

static const char *cell_label(const struct ab *ab, unsigned int c, char *buf,
			      size_t len)
{
	unsigned int i;
	bool one_dev = true;

	for (i = 1; i < ab->nr_cells; i++)
		if (strcmp(ab->cells[i].dev, ab->cells[0].dev))
			one_dev = false;
	if (one_dev)
		snprintf(buf, len, "%s", ab->cells[c].job);
	else
		snprintf(buf, len, "%s %s", ab->cells[c].dev, ab->cells[c].job);
	return buf;
}

static void print_args(FILE *f, char **args, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		fprintf(f, " %s", args[i]);
}

static void rule(FILE *f, int w)
{
	while (w-- > 0)
		fputc('-', f);
	fputc('\n', f);
}

static void report_text(FILE *f, struct ab *ab)
{
	unsigned int n = ab->rounds, s, c, m;
	int label_w = 11, width;
	bool unit_figures = false;
	char buf[128];

	fprintf(f, "A/B: %u sides, %u round%s after %u warm-up, order %s",
		ab->nr_sides, n, n == 1 ? "" : "s", ab->warmup,
		ab->random_order ? "random" : "alternate");
	if (ab->random_order)
		fprintf(f, " (seed %" PRIu64 ")", ab->seed);
	fprintf(f, ", %.1f s; stopped: %s\n", (double)ab->elapsed_ns / 1e9, ab->why);
	for (s = 0; s < ab->nr_sides; s++) {
		fprintf(f, "  %s: %s", ab->sides[s].name, side_binary(ab, &ab->sides[s]));
		print_args(f, ab->sides[s].args, ab->sides[s].nr_args);
		fputc('\n', f);
	}
	fprintf(f, "  every side:");
	print_args(f, ab->common, ab->nr_common);
	fprintf(f, "%s\n", ab->nr_common ? "" : " (no options: the matrix)");
	if (n >= AB_MIN_ROUNDS_LIMIT)
		fprintf(f, "  difference: Hodges-Lehmann estimate of the per-round differences (side - A), in %% of A's median; "
			   "interval: Wilcoxon signed-rank, 95 %% (%.1f %% exact at %u rounds)\n",
			ab->coverage * 100.0, n);
	else
		fprintf(f, "  difference: Hodges-Lehmann estimate of the per-round differences; no interval: %u rounds, it needs %d\n",
			n, AB_MIN_ROUNDS_LIMIT);
	if (!n || !ab->nr_cells)
		return;
	for (c = 0; c < ab->nr_cells; c++) {
		int l = (int)strlen(cell_label(ab, c, buf, sizeof(buf))) + 1;

		if (l > label_w)
			label_w = l;
	}
	width = label_w + (int)ab->nr_sides * 11 + (int)(ab->nr_sides - 1) * 45;
	fputc('\n', f);
	for (m = 0; m < M_NR; m++) {
		bool any = false;

		if (metric_defs[m].internal)
			continue;
		for (c = 0; c < ab->nr_cells; c++)
			any |= ab->cells[c].has[m];
		if (!any)
			continue;
		rule(f, width);
		fprintf(f, "%-*s", label_w, metric_defs[m].label);
		for (s = 0; s < ab->nr_sides; s++)
			fprintf(f, "| %8s ", ab->sides[s].name);
		for (s = 1; s < ab->nr_sides; s++) {
			snprintf(buf, sizeof(buf), "%s-A %%", ab->sides[s].name);
			fprintf(f, "| %7s %-20s %-12s ", buf, "95 % interval", "verdict");
		}
		fputc('\n', f);
		rule(f, width);
		for (c = 0; c < ab->nr_cells; c++) {
			if (!ab->cells[c].has[m])
				continue;
			fprintf(f, "%-*s", label_w, cell_label(ab, c, buf, sizeof(buf)));
			for (s = 0; s < ab->nr_sides; s++)
				fprintf(f, "| %8.2f ", ab_median(val(ab, s, c, m), n));
			for (s = 1; s < ab->nr_sides; s++) {
				struct ab_compare r;
				char iv[64];

				if (compare(ab, s, c, m, n, &r)) {
					fprintf(f, "| %-41s ", "(no figures)");
					continue;
				}
				unit_figures |= !r.has_pct;
				if (r.has_ci)
					snprintf(iv, sizeof(iv), "[%+.2f, %+.2f]%s",
						 r.ci_low_pct, r.ci_high_pct, r.has_pct ? "" : "*");
				else
					snprintf(iv, sizeof(iv), "-");
				fprintf(f, "| %+7.2f %-20s %-12s ", r.diff_pct, iv,
					ab_verdict_name(r.verdict));
			}
			fputc('\n', f);
			rule(f, width);
		}
	}
	fprintf(f, "\nIOPS(K): I/Os per second, thousands; CPU(ns/IO): process CPU time per I/O; "
		   "LAT(us): mean latency, I/O prepared to completion reaped (fio's lat); "
		   "P50/P99/P99.9(us): completion latency percentiles (fio's clat); "
		   "MERGE(K): bios merged, thousands (a headline metric where side A merges 1 %% or more of its I/Os). "
		   "Per cell: each side's median over the rounds, the difference from A in %% of A's median, "
		   "its 95 %% interval and the verdict: better or worse when the whole interval lies beyond +-%.2f %% (ab_noise; "
		   "higher IOPS and merges are better, higher CPU and latency worse), else within noise%s\n",
		ab->noise_pct, unit_figures ? "; *: A's median is 0, figures in the metric's unit" : "");
}

static int report_json(FILE *f, struct ab *ab)
{
	json_t *root = json_object(), *o = json_object(), *sides = json_array();
	json_t *metrics = json_array(), *common = json_array();
	unsigned int n = ab->rounds, s, c, m, i;
	int rc = 0;

	for (s = 0; s < ab->nr_sides; s++) {
		json_t *so = json_object(), *args = json_array();

		for (i = 0; i < ab->sides[s].nr_args; i++)
			json_array_append_new(args, json_string(ab->sides[s].args[i]));
		json_object_set_new(so, "name", json_string(ab->sides[s].name));
		json_object_set_new(so, "ab", json_string(ab->sides[s].text));
		json_object_set_new(so, "binary", json_string(side_binary(ab, &ab->sides[s])));
		json_object_set_new(so, "options", args);
		json_array_append_new(sides, so);
	}
	for (i = 0; i < ab->nr_common; i++)
		json_array_append_new(common, json_string(ab->common[i]));
	json_object_set_new(o, "sides", sides);
	json_object_set_new(o, "common", common);
	json_object_set_new(o, "rounds", json_integer(n));
	json_object_set_new(o, "warmup_rounds", json_integer(ab->warmup));
	json_object_set_new(o, "order", json_string(ab->random_order ? "random" : "alternate"));
	json_object_set_new(o, "seed", json_integer((json_int_t)ab->seed));
	json_object_set_new(o, "ci_target_pct", json_real(ab->ci_pct));
	json_object_set_new(o, "noise_pct", json_real(ab->noise_pct));
	json_object_set_new(o, "budget_s", json_real((double)ab->budget_ns / 1e9));
	json_object_set_new(o, "min_rounds", json_integer(ab->min_rounds));
	json_object_set_new(o, "max_rounds", json_integer(ab->max_rounds));
	json_object_set_new(o, "elapsed_s", json_real((double)ab->elapsed_ns / 1e9));
	json_object_set_new(o, "stopped", json_string(ab->stopped));
	json_object_set_new(o, "stop_reason", json_string(ab->why));
	if (ab->error[0])
		json_object_set_new(o, "error", json_string(ab->error));
	json_object_set_new(o, "method", json_string("hodges-lehmann paired, wilcoxon signed-rank interval"));
	json_object_set_new(o, "confidence", json_real(AB_CONF));
	if (n >= AB_MIN_ROUNDS_LIMIT)
		json_object_set_new(o, "coverage", json_real(ab->coverage));
	for (c = 0; c < ab->nr_cells && n; c++)
		for (m = 0; m < M_NR; m++) {
			if (!ab->cells[c].has[m] || metric_defs[m].internal)
				continue;
			for (s = 1; s < ab->nr_sides; s++) {
				json_t *e = json_object(), *med = json_array(), *vals = json_array();
				struct ab_compare r;
				unsigned int t, k;

				if (compare(ab, s, c, m, n, &r)) {
					json_decref(e);
					json_decref(med);
					json_decref(vals);
					rc = -ENOMEM;
					continue;
				}
				for (t = 0; t < ab->nr_sides; t++) {
					json_t *v = json_array();

					json_array_append_new(med, json_real(ab_median(val(ab, t, c, m), n)));
					for (k = 0; k < n; k++)
						json_array_append_new(v, json_real(val(ab, t, c, m)[k]));
					json_array_append_new(vals, v);
				}
				json_object_set_new(e, "name", json_string(metric_defs[m].name));
				json_object_set_new(e, "label", json_string(metric_defs[m].label));
				json_object_set_new(e, "unit", json_string(metric_defs[m].unit));
				json_object_set_new(e, "dev", json_string(ab->cells[c].dev));
				json_object_set_new(e, "job", json_string(ab->cells[c].job));
				if (ab->cells[c].workload[0])
					json_object_set_new(e, "workload", json_string(ab->cells[c].workload));
				json_object_set_new(e, "headline", json_boolean(metric_headline(ab, c, m, n)));
				json_object_set_new(e, "higher_is_better",
						    json_boolean(metric_defs[m].higher_is_better));
				json_object_set_new(e, "side", json_string(ab->sides[s].name));
				json_object_set_new(e, "baseline", json_string("A"));
				json_object_set_new(e, "medians", med);
				json_object_set_new(e, "pct_of_baseline", json_boolean(r.has_pct));
				json_object_set_new(e, "diff_pct", json_real(isfinite(r.diff_pct) ? r.diff_pct : 0));
				json_object_set_new(e, "ci_low_pct", r.has_ci ? json_real(r.ci_low_pct) : json_null());
				json_object_set_new(e, "ci_high_pct", r.has_ci ? json_real(r.ci_high_pct) : json_null());
				json_object_set_new(e, "verdict", json_string(ab_verdict_name(r.verdict)));
				json_object_set_new(e, "values", vals);
				json_array_append_new(metrics, e);
			}
		}
	json_object_set_new(o, "metrics", metrics);
	json_object_set_new(root, "blkstack version", json_string("blkstack-" BLKSTACK_VERSION));
	json_object_set_new(root, "ab", o);
	if (json_dumpf(root, f, JSON_INDENT(2)))
		rc = -EIO;
	fputc('\n', f);
	json_decref(root);
	return rc;
}

static void ab_free(struct ab *ab)
{
	unsigned int i, k;

	for (i = 0; i < ab->nr_sides; i++) {
		if (ab->sides[i].words.we_wordv)
			wordfree(&ab->sides[i].words);
		free(ab->sides[i].args);
	}
	free(ab->common);
	free(ab->values);
	for (i = 0; i < AB_MAX_CELLS; i++)
		for (k = 0; k < AB_MAX_SIDES; k++)
			free(ab->cells[i].plat[k]);
}

/*
 * --plot: per cell, the sides' completion latency histograms and CDFs on
 * one chart each (plot.h), from the bins of all their rounds.
 */
static int plot_sides(struct ab *ab)
{
	char titles[AB_MAX_SIDES][160], label[BENCH_NAME_MAX + 32];
	const char *tp[AB_MAX_SIDES];
	const uint64_t *pp[AB_MAX_SIDES];
	char err[1200], name[BENCH_NAME_MAX + 40];
	unsigned int c, s;

	for (s = 0; s < ab->nr_sides; s++) {
		snprintf(titles[s], sizeof(titles[s]), "%s: %.150s",
			 ab->sides[s].name,
			 ab->sides[s].text[0] ? ab->sides[s].text : "(the workload alone)");
		tp[s] = titles[s];
	}
	for (c = 0; c < ab->nr_cells; c++) {
		for (s = 0; s < ab->nr_sides; s++)
			if (!ab->cells[c].plat[s])
				break;
		if (s < ab->nr_sides)
			continue;	/* no round ran */
		for (s = 0; s < ab->nr_sides; s++)
			pp[s] = ab->cells[c].plat[s];
		cell_label(ab, c, label, sizeof(label));
		snprintf(name, sizeof(name), "ab-%s", label);
		if (bench_plot_sides(ab->plot_dir, name, tp, pp, ab->nr_sides,
				     err, sizeof(err))) {
			fprintf(stderr, "blkstack bench: %s\n", err);
			return -EIO;
		}
	}
	return 0;
}

int bench_ab_main(int argc, char **argv)
{
	struct ab *ab = calloc(1, sizeof(*ab));
	bool help = false;
	FILE *out = stdout;
	int rc, ret = 1;

	if (!ab) {
		fprintf(stderr, "blkstack bench: out of memory\n");
		return 1;
	}
	rc = ab_parse(ab, argc, argv, &help);
	if (help) {
		bench_usage(stdout);
		ret = 0;
		goto out;
	}
	if (rc)
		goto out;
	ab->values = calloc((size_t)ab->nr_sides * AB_MAX_CELLS * M_NR * ab->max_rounds,
			    sizeof(*ab->values));
	if (!ab->values) {
		fprintf(stderr, "blkstack bench: out of memory\n");
		goto out;
	}
	rc = run_rounds(ab);
	if (rc && rc != -EINTR)
		ab_err("ab: %s", ab->error[0] ? ab->error : strerror(-rc));
	if (ab->output[0]) {
		out = fopen(ab->output, "w");
		if (!out) {
			fprintf(stderr, "blkstack bench: output=%s: %s\n", ab->output, strerror(errno));
			goto out;
		}
	}
	if (ab->json ? report_json(out, ab) : (report_text(out, ab), 0))
		rc = rc ? rc : -EIO;
	if (ab->plot_dir[0] && ab->rounds && plot_sides(ab))
		rc = rc ? rc : -EIO;
	if (out != stdout && fclose(out)) {
		fprintf(stderr, "blkstack bench: output=%s: %s\n", ab->output, strerror(errno));
		rc = rc ? rc : -EIO;
	}
	if (rc == -EINTR) {
		fprintf(stderr, "blkstack bench: interrupted by %s: the report covers the rounds that ran\n",
			atomic_load(&bench_interrupted) == SIGTERM ? "SIGTERM" : "SIGINT");
		ret = 128 + atomic_load(&bench_interrupted);
	} else {
		ret = rc ? 1 : 0;
	}
out:
	ab_free(ab);
	free(ab);
	return ret;
}
