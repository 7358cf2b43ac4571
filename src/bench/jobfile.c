// SPDX-License-Identifier: MIT
/*
 * fio job files for blkstack bench.
 *
 * The syntax is fio's ini dialect (fio's init.c and HOWTO "Job file
 * format"): "[section]" headers, "key=value" lines, bare keys
 * ("time_based"), whitespace around '=' ignored; a ';' or '#' anywhere in
 * a line starts a comment, as fio cuts its lines (so neither can be part
 * of a value).  [global] sets the defaults of the jobs that follow it; a
 * later [global] changes only the jobs after it.  "include FILE" in a
 * section reads FILE's lines as options of that section (FILE relative to
 * the including file when it is not found as given; no sections in it).
 * In a value, "${VAR}" is replaced by the environment variable VAR (by
 * the empty string when VAR is not set, as fio's fio_option_dup_subs()
 * does, with a note naming it), and fio's keywords $ncpus, $pagesize and
 * $mb_memory by their values.
 *
 * Why not libinih: Debian's libinih is built with upstream's defaults, so
 * INI_ALLOW_NO_VALUE is off and it rejects the bare keys ("time_based")
 * that fio job files use all the time; its default inline " ;" comments
 * also differ from fio.  The dialect is small enough that a line parser is
 * simpler than working around either.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "bench/options.h"

struct jobfile {
	struct bench_opts *o;
	unsigned int depth;		/* include nesting: 0 for the top file */
	const char *path;
	unsigned int lineno;
	struct bench_job_opts global;	/* the [global] sections so far */
	struct bench_job_opts *cur;	/* &global, a job, or NULL before any */
	char *err;
	size_t errlen;
	unsigned int nerr;		/* problems found so far */
	bool skip;			/* in a section that could not start */
	bool too_many;			/* more than BENCH_MAX_JOBS said */
};

/*
 * Text from the file in a message, as options.c shows it: at most SHOW_MAX
 * characters and then "...", control bytes and bytes that are not UTF-8 as
 * \xNN, so that an error never sends a terminal escape or a page of text.
 */
#define SHOW_MAX 64
#define SHOW_LEN (SHOW_MAX * 4 + 4)	/* every character escaped, "...", NUL */
#define PATH_SHOW_MAX 256		/* file names are cut later than text */
#define PATH_SHOW_LEN (PATH_SHOW_MAX * 4 + 4)

/* @s escaped into @buf, at most @max characters of it (see bench_show()). */
static const char *show_max(char *buf, size_t len, const char *s, size_t max)
{
	return bench_show(buf, len, s, strlen(s), max);
}

/* @s shown in a message; @buf has SHOW_LEN bytes. */
static const char *show(char *buf, const char *s)
{
	return show_max(buf, SHOW_LEN, s, SHOW_MAX);
}

/* "path: <what>", for the errors about the file as a whole. */
static __attribute__((format(printf, 4, 5)))
void file_err(const char *path, char *err, size_t errlen, const char *fmt,
	      ...)
{
	char what[512], shown[PATH_SHOW_LEN], line[1600];
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line), "%s: %s",
		 show_max(shown, sizeof(shown), path, PATH_SHOW_MAX), what);
	bench_err_add(err, errlen, line);
}

/* One more problem, "path:line: <what>"; the parse goes on to the next. */
static __attribute__((format(printf, 3, 4)))
int jf_err(struct jobfile *jf, int rc, const char *fmt, ...)
{
	char what[1024], shown[PATH_SHOW_LEN], line[2200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line), "%s:%u: %s",
		 show_max(shown, sizeof(shown), jf->path, PATH_SHOW_MAX),
		 jf->lineno, what);
	bench_err_add(jf->err, jf->errlen, line);
	jf->nerr++;
	return rc;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' ||
	       c == '\f';
}

/* Trim in place: returns the first non-blank, cuts trailing blanks. */
static char *trim(char *s)
{
	char *e;

	while (is_blank(*s))
		s++;
	e = s + strlen(s);
	while (e > s && is_blank(e[-1]))
		*--e = '\0';
	return s;
}

static int append(char **buf, size_t *len, size_t *cap, const char *s,
		  size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t ncap = (*len + n + 1) * 2;
		char *nb = realloc(*buf, ncap);

		if (!nb)
			return -ENOMEM;
		*buf = nb;
		*cap = ncap;
	}
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
	return 0;
}

/*
 * Replace each ${VAR} in @in by getenv(VAR).  An unset variable is the
 * empty string, as in fio (HOWTO "Environment variables"); a note names
 * it, and @unset gets its name (the first one) for the option's error
 * should the value then be refused.
 */
static int expand_env(struct jobfile *jf, const char *in, char **out,
		      char *unset, size_t unset_len)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;
	const char *p = in;
	char shown[SHOW_LEN], shown2[SHOW_LEN];
	int rc = 0;

	rc = append(&buf, &len, &cap, "", 0);
	while (!rc && *p) {
		const char *q = strstr(p, "${"), *end, *val;
		char name[128];
		size_t n;

		if (!q) {
			rc = append(&buf, &len, &cap, p, strlen(p));
			break;
		}
		rc = append(&buf, &len, &cap, p, q - p);
		if (rc)
			break;
		end = strchr(q + 2, '}');
		if (!end) {
			rc = jf_err(jf, -EINVAL, "unterminated '${' in '%s'",
				    show(shown, in));
			break;
		}
		n = end - (q + 2);
		if (!n || n >= sizeof(name)) {
			rc = jf_err(jf, -EINVAL, "bad variable name in '%s'",
				    show(shown, in));
			break;
		}
		memcpy(name, q + 2, n);
		name[n] = '\0';
		val = getenv(name);
		if (!val) {
			char note[PATH_SHOW_LEN + 2 * SHOW_LEN + 128];
			char path[PATH_SHOW_LEN];

			snprintf(note, sizeof(note),
				 "%s:%u: environment variable '%s' is not set: '%s' has the empty string in its place, as in fio",
				 show_max(path, sizeof(path), jf->path, PATH_SHOW_MAX),
				 jf->lineno, show(shown, name), show(shown2, in));
			bench_err_add(jf->o->notes, sizeof(jf->o->notes), note);
			if (!unset[0])
				snprintf(unset, unset_len, "%s", name);
			val = "";
		}
		rc = append(&buf, &len, &cap, val, strlen(val));
		p = end + 1;
	}
	if (rc == -ENOMEM)
		jf_err(jf, rc, "out of memory");
	if (rc) {
		free(buf);
		return rc;
	}
	*out = buf;
	return 0;
}

/*
 * The integer arithmetic fio hands to bc(1) once it has replaced a
 * keyword (options.c bc_calc(), HOWTO "Reserved keywords": size=8*$mb_memory):
 * + - * / % ^ and parentheses over whole numbers, bc's integer division.
 * A recursive descent over @p; false on anything else or an overflow.
 */
struct calc {
	const char *p;
	bool ok;
};

static long long calc_sum(struct calc *c);

static void calc_blank(struct calc *c)
{
	while (*c->p == ' ' || *c->p == '\t')
		c->p++;
}

static long long calc_atom(struct calc *c)
{
	long long v = 0;

	calc_blank(c);
	if (*c->p == '-') {
		c->p++;
		v = calc_atom(c);
		return __builtin_sub_overflow(0, v, &v) ? (c->ok = false, 0) : v;
	}
	if (*c->p == '(') {
		c->p++;
		v = calc_sum(c);
		calc_blank(c);
		if (*c->p++ != ')')
			c->ok = false;
		return v;
	}
	if (*c->p < '0' || *c->p > '9') {
		c->ok = false;
		return 0;
	}
	while (*c->p >= '0' && *c->p <= '9')
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, *c->p++ - '0', &v))
			c->ok = false;
	return v;
}

/* a ^ b, right to left as bc's; b a whole number from 0 */
static long long calc_pow(struct calc *c)
{
	long long base = calc_atom(c), e, v = 1;

	calc_blank(c);
	if (*c->p != '^')
		return base;
	c->p++;
	e = calc_pow(c);
	if (e < 0)
		c->ok = false;
	while (c->ok && e-- > 0)
		if (__builtin_mul_overflow(v, base, &v))
			c->ok = false;
	return v;
}

static long long calc_product(struct calc *c)
{
	long long v = calc_pow(c), r;
	char op;

	for (;;) {
		calc_blank(c);
		op = *c->p;
		if (op != '*' && op != '/' && op != '%')
			return v;
		c->p++;
		r = calc_pow(c);
		if (op == '*' ? __builtin_mul_overflow(v, r, &v) :
		    !r || (v == LLONG_MIN && r == -1))
			c->ok = false;
		else if (op == '/')
			v /= r;
		else if (op == '%')
			v %= r;
	}
}

static long long calc_sum(struct calc *c)
{
	long long v = calc_product(c), r;
	char op;

	for (;;) {
		calc_blank(c);
		op = *c->p;
		if (op != '+' && op != '-')
			return v;
		c->p++;
		r = calc_product(c);
		if (op == '+' ? __builtin_add_overflow(v, r, &v) :
		    __builtin_sub_overflow(v, r, &v))
			c->ok = false;
	}
}

/*
 * @s holds an operator and is all arithmetic: its value in @s (which has
 * room for it: a number is never longer than the sum that made it... but
 * a short sum can make a long number, so @cap bytes).  Otherwise @s stays
 * as it is, for its option to judge.
 */
static void calc_value(char *s, size_t cap)
{
	struct calc c = { .p = s, .ok = true };
	long long v;

	if (!strpbrk(s, "+-*/%^"))
		return;
	v = calc_sum(&c);
	calc_blank(&c);
	if (c.ok && !*c.p)
		snprintf(s, cap, "%lld", v);
}

/*
 * fio's keywords in a value: $ncpus (CPUs online), $pagesize (bytes) and
 * $mb_memory (MiB of memory), replaced where they appear; a value with
 * one replaced and arithmetic in it is then worked out, as fio has bc do.
 */
static int expand_keywords(struct jobfile *jf, const char *in, char **out)
{
	static const char *const words[] = { "$ncpus", "$pagesize", "$mb_memory" };
	size_t len = 0, cap = 0, i;
	const char *p = in;
	char *buf = NULL, num[32];
	bool replaced = false;
	int rc;

	rc = append(&buf, &len, &cap, "", 0);
	while (!rc && *p) {
		for (i = 0; i < 3; i++)
			if (!strncmp(p, words[i], strlen(words[i])))
				break;
		if (i == 3) {
			rc = append(&buf, &len, &cap, p++, 1);
			continue;
		}
		if (i == 0)
			snprintf(num, sizeof(num), "%ld", sysconf(_SC_NPROCESSORS_ONLN));
		else if (i == 1)
			snprintf(num, sizeof(num), "%ld", sysconf(_SC_PAGESIZE));
		else
			snprintf(num, sizeof(num), "%llu",
				 (unsigned long long)sysconf(_SC_PHYS_PAGES) *
				 (unsigned long long)sysconf(_SC_PAGESIZE) >> 20);
		rc = append(&buf, &len, &cap, num, strlen(num));
		p += strlen(words[i]);
		replaced = true;
	}
	/* room for any 64-bit number */
	if (!rc && replaced)
		rc = append(&buf, &len, &cap, "                    ", 21);
	if (rc) {
		free(buf);
		return jf_err(jf, rc, "out of memory");
	}
	if (replaced) {
		buf[len - 21] = '\0';
		calc_value(buf, cap);
	}
	*out = buf;
	return 0;
}

static int section(struct jobfile *jf, char *line)
{
	char *close = strrchr(line, ']');
	char shown[SHOW_LEN];
	char *name, *p;

	/* Until a good header, the lines that follow belong nowhere. */
	jf->skip = true;
	if (!close || close[1])
		return jf_err(jf, -EINVAL, "bad section header '%s'",
			      show(shown, line));
	*close = '\0';
	name = trim(line + 1);
	if (!*name)
		return jf_err(jf, -EINVAL, "empty section name");
	if (strlen(name) >= BENCH_NAME_MAX)
		return jf_err(jf, -EINVAL,
			      "section name '%s' longer than %d characters",
			      show(shown, name), BENCH_NAME_MAX - 1);
	/* The name goes to reports and terminals as it is. */
	for (p = name; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return jf_err(jf, -EINVAL,
				      "section name '%s': control characters are not allowed",
				      show(shown, name));
	if (!strcmp(name, "global")) {
		jf->cur = &jf->global;
		jf->skip = false;
		return 0;
	}
	/* fio's --section: the other sections are skipped unread, as fio does */
	if (jf->o->nr_sections) {
		unsigned int i;

		for (i = 0; i < jf->o->nr_sections; i++)
			if (!strcmp(jf->o->sections[i], name))
				break;
		if (i == jf->o->nr_sections) {
			jf->cur = NULL;
			return 0;	/* jf->skip stays set */
		}
	}
	if (jf->o->nr_jobs >= BENCH_MAX_JOBS && jf->too_many)
		return -EINVAL;	/* said once */
	if (jf->o->nr_jobs >= BENCH_MAX_JOBS && (jf->too_many = true))
		return jf_err(jf, -EINVAL,
			      "more than %d jobs (blkstack bench's limit)",
			      BENCH_MAX_JOBS);
	/* A job starts from [global] as it stands at the job's header. */
	jf->cur = &jf->o->jobs[jf->o->nr_jobs++];
	*jf->cur = jf->global;
	snprintf(jf->cur->name, sizeof(jf->cur->name), "%s", name);
	jf->skip = false;
	return 0;
}

/* "include" starts a line only as fio's directive, never as an option. */
static bool is_include(const char *s)
{
	return !strncmp(s, "include", 7) && (!s[7] || is_blank(s[7]));
}

static int parse_stream(struct jobfile *jf, FILE *f);

/*
 * "include FILE": FILE's lines are options of the current section, as in
 * fio; FILE as given, else next to the including file.
 */
static int include(struct jobfile *jf, const char *name)
{
	struct jobfile sub = *jf;
	char shown[PATH_SHOW_LEN], *path = NULL;
	const char *slash;
	FILE *f;
	int rc;

	if (!*name)
		return jf_err(jf, -EINVAL, "include: no file name");
	if (!jf->cur)
		return jf_err(jf, -EINVAL,
			      "include %s: outside of a [section]",
			      show_max(shown, sizeof(shown), name, PATH_SHOW_MAX));
	if (jf->depth >= 8)
		return jf_err(jf, -EINVAL,
			      "include %s: more than 8 files deep",
			      show_max(shown, sizeof(shown), name, PATH_SHOW_MAX));
	f = fopen(name, "r");
	slash = strrchr(jf->path, '/');
	if (!f && errno == ENOENT && name[0] != '/' && slash) {
		if (asprintf(&path, "%.*s%s", (int)(slash - jf->path + 1),
			     jf->path, name) < 0)
			return jf_err(jf, -ENOMEM, "out of memory");
		f = fopen(path, "r");
	}
	if (!f) {
		rc = -errno;
		free(path);
		return jf_err(jf, rc, "include %s: %s",
			      show_max(shown, sizeof(shown), name, PATH_SHOW_MAX),
			      strerror(-rc));
	}
	sub.path = path ? path : name;
	sub.lineno = 0;
	sub.depth = jf->depth + 1;
	sub.nerr = 0;
	rc = parse_stream(&sub, f);
	fclose(f);
	jf->nerr += sub.nerr;
	free(path);
	if (rc)
		return jf_err(jf, rc, "include: %s", strerror(-rc));
	return sub.nerr ? -EINVAL : 0;
}

static int option(struct jobfile *jf, char *line)
{
	char *eq = strchr(line, '='), *key, *val = NULL, *exp = NULL;
	char msg[512], shown[SHOW_LEN], path[PATH_SHOW_LEN], at[BENCH_AT_LEN];
	char unset[128] = "";
	int rc;

	if (eq) {
		*eq = '\0';
		val = trim(eq + 1);
	}
	key = trim(line);
	if (!eq && is_include(key))
		return include(jf, trim(key + 7));
	if (!*key)
		return jf_err(jf, -EINVAL, "option name missing before '='");
	if (!jf->cur)
		return jf_err(jf, -EINVAL,
			      "option '%s' outside of a [section]",
			      show(shown, key));
	if (val && strstr(val, "${")) {
		rc = expand_env(jf, val, &exp, unset, sizeof(unset));
		if (rc)
			return rc;
		val = exp;
	}
	if (val && strchr(val, '$')) {
		char *kw = NULL;

		rc = expand_keywords(jf, val, &kw);
		if (rc) {
			free(exp);
			return rc;
		}
		free(exp);
		val = exp = kw;
	}
	/* where a device option came from (o->given_at) */
	snprintf(at, sizeof(at), "%s:%u",
		 show_max(path, sizeof(path), jf->path, PATH_SHOW_MAX), jf->lineno);
	jf->o->parse_at = at;
	rc = bench_set_option(jf->o, jf->cur, key, val, msg, sizeof(msg));
	jf->o->parse_at = NULL;
	free(exp);
	/* a bad value, not an option refused whatever its value */
	if (rc == -EINVAL && unset[0])
		return jf_err(jf, -EINVAL,
			      "%s (the environment variable '%s' is not set)",
			      msg, show(shown, unset));
	if (rc)
		return jf_err(jf, -EINVAL, "%s", msg);
	return 0;
}

static int parse_line(struct jobfile *jf, char *raw)
{
	char *line = trim(raw);

	/* fio cuts every line at its first ';' or '#' */
	line[strcspn(line, ";#")] = '\0';
	line = trim(line);
	if (!*line)
		return 0;
	if (*line == '[') {
		if (jf->depth)
			return jf_err(jf, -EINVAL,
				      "no sections in an included file (as in fio)");
		return section(jf, line);
	}
	if (jf->skip)
		return 0;
	return option(jf, line);
}

/*
 * Every line of @f: a problem is listed and the lines after it are still
 * read.  Return: 0, or -errno when reading fails.
 */
static int parse_stream(struct jobfile *jf, FILE *f)
{
	static const char bom[] = "\xef\xbb\xbf";	/* UTF-8 BOM */
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;

	for (;;) {
		char *p;

		errno = 0;
		n = getline(&line, &cap, f);
		if (n < 0) {
			/* -1 at the end too: only errno tells them apart */
			if (ferror(f))
				rc = -(errno ? errno : EIO);
			break;
		}
		jf->lineno++;
		/* C strings would end the line there and hide the rest. */
		if (memchr(line, '\0', n)) {
			jf_err(jf, -EINVAL, "NUL byte in the line");
			continue;
		}
		p = line;
		/* Some editors start a UTF-8 file with a byte order mark. */
		if (jf->lineno == 1 && !strncmp(p, bom, sizeof(bom) - 1))
			p += sizeof(bom) - 1;
		/* a problem is listed; the lines after it are still read */
		parse_line(jf, p);
	}
	free(line);
	return rc;
}

int bench_parse_jobfile(struct bench_opts *o, const char *path,
			const struct bench_job_opts *global, char *err,
			size_t errlen)
{
	struct jobfile jf = {
		.o = o, .path = path, .err = err, .errlen = errlen,
	};
	unsigned int first = o->nr_jobs, i;
	bool is_stdin = !strcmp(path, "-");
	struct stat st;
	FILE *f;
	int rc = 0;

	if (err && errlen)
		err[0] = '\0';
	if (global)
		jf.global = *global;
	else
		bench_job_defaults(&jf.global);

	f = is_stdin ? stdin : fopen(path, "r");
	if (!f) {
		rc = -errno;
		file_err(path, err, errlen, "%s", strerror(-rc));
		return rc;
	}
	/* fopen() takes a directory; reading it would fail with EISDIR. */
	if (fstat(fileno(f), &st))
		rc = -errno;
	else if (S_ISDIR(st.st_mode))
		rc = -EISDIR;
	if (rc) {
		file_err(path, err, errlen, "%s", strerror(-rc));
		if (!is_stdin)
			fclose(f);
		return rc;
	}
	rc = parse_stream(&jf, f);
	if (rc)
		file_err(path, err, errlen, "%s", strerror(-rc));
	else if (jf.nerr)
		rc = -EINVAL;
	if (!is_stdin)
		fclose(f);

	if (!rc && o->nr_jobs == first) {
		rc = -EINVAL;
		file_err(path, err, errlen, "no jobs defined");
	}
	if (rc) {
		/* Leave @o's job list as it was. */
		o->nr_jobs = first;
		return rc;
	}
	/* fio caps the batch at the depth rather than failing. */
	for (i = first; i < o->nr_jobs; i++)
		if (o->jobs[i].iodepth_batch > o->jobs[i].iodepth)
			o->jobs[i].iodepth_batch = o->jobs[i].iodepth;
	return 0;
}
