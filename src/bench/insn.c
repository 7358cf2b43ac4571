// SPDX-License-Identifier: MIT
/*
 * --count_instructions: instructions per I/O.
 *
 * perf: a hardware counter of user-space instructions over the whole
 * process (perf_event_open, inherited by the job threads), read around
 * each device's run.  Virtual machines without a virtual PMU (this
 * project's) have none: `perf stat -e instructions` says <not supported>.
 *
 * callgrind: this bench again, under valgrind's callgrind, which counts
 * every instruction exactly; callgrind_annotate's per-function costs are
 * added up by the source directory of the code (inlined code counts where
 * its source is), so the layers add up to the whole process: the block
 * core, each driver, each emulated device, the bench engine, libc and the
 * rest.  The inclusive costs of the layers' entry points (blk_submit,
 * blk_poll, the driver's queue_rq, ...) follow; they overlap.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "insn.h"

extern char **environ;

int bench_insn_open(int *fd, char *err, size_t errlen)
{
	struct perf_event_attr a;
	int f;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_INSTRUCTIONS;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.inherit = 1; /* the job threads, started later, count too */
	f = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (f < 0) {
		int e = errno;

		snprintf(err, errlen,
			 "count_instructions: no hardware instruction counter here (perf_event_open(PERF_COUNT_HW_INSTRUCTIONS): %s%s); "
			 "count them under valgrind instead, exactly and per layer: blkstack bench --count_instructions=callgrind with the same options",
			 strerror(e),
			 e == ENOENT || e == EOPNOTSUPP ?
				 ": a virtual machine without a virtual PMU, as `perf stat -e instructions true` shows with <not supported>" :
			 e == EACCES || e == EPERM ?
				 ": kernel.perf_event_paranoid forbids it; as root, or sysctl kernel.perf_event_paranoid=2 or less" : "");
		return -e;
	}
	*fd = f;
	return 0;
}

int bench_insn_read(int fd, uint64_t *count)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		return -EIO;
	*count = v;
	return 0;
}

/* ------------------------------------------------------------ callgrind */

/*
 * Where @dir ("src/core/") is in @path: at its start (callgrind_annotate
 * prints paths under its working directory relative) or after a '/'.
 */
static const char *in_dir(const char *path, const char *dir)
{
	char slashed[64];
	const char *p;

	if (!strncmp(path, dir, strlen(dir)))
		return path;
	snprintf(slashed, sizeof(slashed), "/%s", dir);
	p = strstr(path, slashed);
	return p ? p + 1 : NULL;
}

/* The layer of a source path. */
static void layer_of(const char *path, char *out, size_t len)
{
	static const struct {
		const char *dir, *name;
	} dirs[] = {
		{ "src/core/", "block core (src/core)" },
		{ "src/bench/", "bench engine (src/bench)" },
		{ "src/dev/", "device registry (src/dev)" },
		{ "src/export/", "exports (src/export)" },
		{ "src/cli/", "command line (src/cli)" },
	};
	const char *p;
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (in_dir(path, dirs[i].dir)) {
			snprintf(out, len, "%s", dirs[i].name);
			return;
		}
	if ((p = in_dir(path, "src/drivers/"))) {
		p += strlen("src/drivers/");
		snprintf(out, len, "driver %.*s (src/drivers/%.*s)",
			 (int)strcspn(p, "/"), p, (int)strcspn(p, "/"), p);
		return;
	}
	if ((p = in_dir(path, "src/devices/"))) {
		p += strlen("src/devices/");
		snprintf(out, len, "emulated device %.*s (src/devices/%.*s)",
			 (int)strcspn(p, "/"), p, (int)strcspn(p, "/"), p);
		return;
	}
	snprintf(out, len, "libc, loader, others");
}

#define MAX_LAYERS 32

struct layer {
	char name[96];
	uint64_t ir;
};

struct entry {
	char fn[64];
	uint64_t ir;
};

static const char *const entry_fns[] = {
	"blk_submit", "blk_finish_plug", "blk_poll", "blk_mq_end_requests",
	NULL,
};

static bool is_entry(const char *fn)
{
	size_t n = strlen(fn);
	unsigned int i;

	for (i = 0; entry_fns[i]; i++)
		if (!strcmp(fn, entry_fns[i]))
			return true;
	/* the drivers' entry points */
	return (n > 9 && !strcmp(fn + n - 9, "_queue_rq")) ||
	       (n > 11 && !strcmp(fn + n - 11, "_commit_rqs"));
}

/*
 * One callgrind_annotate line: "  1,234 (12.34%)  FILE:FUNCTION [OBJ]".
 * Returns the cost, or -1 for a line that is not one.
 */
static long long parse_line(const char *line, char *file, size_t flen,
			    char *fn, size_t fnlen, bool *has_obj)
{
	long long v = 0;
	const char *p = line, *colon, *end;
	bool digits = false;

	while (*p == ' ')
		p++;
	for (; *p && (*p == ',' || (*p >= '0' && *p <= '9')); p++) {
		if (*p == ',')
			continue;
		v = v * 10 + (*p - '0');
		digits = true;
	}
	if (!digits || *p != ' ')
		return -1;
	p = strchr(p, ')');
	if (!p)
		return -1;
	p++;
	while (*p == ' ')
		p++;
	end = p + strcspn(p, " \n");
	colon = memrchr(p, ':', (size_t)(end - p));
	if (!colon)
		return -1;
	snprintf(file, flen, "%.*s", (int)(colon - p), p);
	snprintf(fn, fnlen, "%.*s", (int)(end - colon - 1), colon + 1);
	*has_obj = strchr(end, '[') != NULL;
	return v;
}

/* Run callgrind_annotate on @out_file; layers or entry points. */
static int annotate(const char *cg_file, bool inclusive, struct layer *layers,
		    unsigned int *nr_layers, struct entry *entries,
		    unsigned int *nr_entries, uint64_t *total)
{
	char cmd[512], line[4096], file[2048], fn[64], name[96];
	FILE *p;
	bool body = false, has_obj;

	snprintf(cmd, sizeof(cmd), "callgrind_annotate --threshold=100 --inclusive=%s '%s' 2>/dev/null",
		 inclusive ? "yes" : "no", cg_file);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	while (fgets(line, sizeof(line), p)) {
		long long v;
		unsigned int i;

		if (strstr(line, "PROGRAM TOTALS")) {
			char f2[8], f3[8];

			v = parse_line(line, f2, sizeof(f2), f3, sizeof(f3), &has_obj);
			if (v < 0) {
				/* "1,234 (100.0%)  PROGRAM TOTALS": no colon */
				const char *q = line;

				v = 0;
				while (*q == ' ')
					q++;
				for (; *q == ',' || (*q >= '0' && *q <= '9'); q++)
					if (*q != ',')
						v = v * 10 + (*q - '0');
			}
			*total = (uint64_t)v;
			continue;
		}
		if (strstr(line, "file:function")) {
			body = true;
			continue;
		}
		if (!body)
			continue;
		v = parse_line(line, file, sizeof(file), fn, sizeof(fn), &has_obj);
		if (v < 0)
			continue;
		if (inclusive) {
			/* the function itself (with its object), not its inlined parts */
			if (!has_obj || !is_entry(fn) || *nr_entries >= MAX_LAYERS)
				continue;
			snprintf(entries[*nr_entries].fn, sizeof(entries[0].fn), "%s", fn);
			entries[(*nr_entries)++].ir = (uint64_t)v;
			continue;
		}
		layer_of(file, name, sizeof(name));
		for (i = 0; i < *nr_layers; i++)
			if (!strcmp(layers[i].name, name))
				break;
		if (i == *nr_layers) {
			if (i >= MAX_LAYERS)
				continue;
			snprintf(layers[i].name, sizeof(layers[i].name), "%s", name);
			layers[i].ir = 0;
			(*nr_layers)++;
		}
		layers[i].ir += (uint64_t)v;
	}
	return pclose(p) == 0 ? 0 : -EIO;
}

static int cmp_layer(const void *a, const void *b)
{
	const struct layer *x = a, *y = b;

	return x->ir < y->ir ? 1 : x->ir > y->ir ? -1 : 0;
}

static bool skip_arg(const char *a)
{
	static const char *const drop[] = {
		"--count_instructions", "--count-instructions", "--output-format",
		"--output", "--eta", NULL,
	};
	unsigned int i;

	for (i = 0; drop[i]; i++) {
		size_t n = strlen(drop[i]);

		if (!strncmp(a, drop[i], n) && (a[n] == '\0' || a[n] == '='))
			return true;
	}
	return false;
}

/* The child's last lines of stderr, for a failure message. */
static void tail_file(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "r");
	char line[512];

	out[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "==", 2)) /* valgrind's own banner */
			snprintf(out, len, "%s", line);
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
}

int bench_insn_callgrind(const struct bench_opts *o, int argc, char **argv,
			 FILE *out)
{
	char dir[] = "/tmp/blkstack-cg.XXXXXX", cg[64], js[64], er[64];
	char self[4096], outarg[96], last[512];
	struct layer layers[MAX_LAYERS];
	struct entry entries[MAX_LAYERS];
	unsigned int nr_layers = 0, nr_entries = 0, i;
	uint64_t total = 0, total2 = 0;
	double ios = 0;
	posix_spawn_file_actions_t fa;
	json_t *root = NULL, *jobs, *job, *insn, *arr;
	json_error_t jerr;
	char **args;
	ssize_t n;
	pid_t pid;
	int st, ret = 1, k = 0;
	size_t ji;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		fprintf(stderr, "blkstack bench: count_instructions=callgrind: /proc/self/exe: %s\n",
			strerror(errno));
		return 1;
	}
	self[n] = '\0';
	if (!mkdtemp(dir)) {
		fprintf(stderr, "blkstack bench: count_instructions=callgrind: %s: %s\n",
			dir, strerror(errno));
		return 1;
	}
	snprintf(cg, sizeof(cg), "%s/callgrind.out", dir);
	snprintf(js, sizeof(js), "%s/run.json", dir);
	snprintf(er, sizeof(er), "%s/stderr", dir);
	args = calloc((size_t)argc + 12, sizeof(*args));
	if (!args)
		goto out;
	args[k++] = "valgrind";
	args[k++] = "--tool=callgrind";
	snprintf(outarg, sizeof(outarg), "--callgrind-out-file=%s", cg);
	args[k++] = outarg;
	args[k++] = self;
	args[k++] = "bench";
	for (i = 1; i < (unsigned int)argc; i++) /* argv[0] is "bench" */
		if (!skip_arg(argv[i]))
			args[k++] = argv[i];
	args[k++] = "--output-format=json";
	args[k++] = "--eta=never";
	args[k] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, js, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, er, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	st = posix_spawnp(&pid, "valgrind", &fa, NULL, args, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (st) {
		fprintf(stderr, "blkstack bench: count_instructions=callgrind: cannot run valgrind: %s (apt-get install valgrind)\n",
			strerror(st));
		goto out;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		tail_file(er, last, sizeof(last));
		fprintf(stderr, "blkstack bench: count_instructions=callgrind: the run under valgrind failed (%s %d): %s\n",
			WIFEXITED(st) ? "status" : "signal",
			WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
			last[0] ? last : "(nothing on stderr)");
		goto out;
	}
	root = json_load_file(js, 0, &jerr);
	jobs = json_object_get(root, "jobs");
	json_array_foreach(jobs, ji, job) {
		static const char *const dirs[] = { "read", "write", "trim" };

		for (i = 0; i < 3; i++)
			ios += json_number_value(json_object_get(
				json_object_get(job, dirs[i]), "total_ios"));
	}
	if (!root || ios <= 0) {
		fprintf(stderr, "blkstack bench: count_instructions=callgrind: the run did no I/O (%s)\n",
			root ? "0 I/Os" : jerr.text);
		goto out;
	}
	if (annotate(cg, false, layers, &nr_layers, NULL, NULL, &total) ||
	    annotate(cg, true, NULL, NULL, entries, &nr_entries, &total2) || !total) {
		fprintf(stderr, "blkstack bench: count_instructions=callgrind: callgrind_annotate failed on %s\n",
			cg);
		goto out;
	}
	qsort(layers, nr_layers, sizeof(layers[0]), cmp_layer);
	if (o->output_format == OUT_JSON) {
		json_array_foreach(jobs, ji, job) {
			json_t *bs = json_object_get(job, "blkstack");

			if (bs)
				json_object_set_new(bs, "instructions_per_io",
						    json_real((double)total / ios));
		}
		insn = json_object();
		json_object_set_new(insn, "method", json_string("callgrind"));
		json_object_set_new(insn, "ios", json_integer((json_int_t)ios));
		json_object_set_new(insn, "total_ir", json_integer((json_int_t)total));
		json_object_set_new(insn, "ir_per_io", json_real((double)total / ios));
		arr = json_array();
		for (i = 0; i < nr_layers; i++) {
			json_t *v = json_object();

			json_object_set_new(v, "name", json_string(layers[i].name));
			json_object_set_new(v, "ir", json_integer((json_int_t)layers[i].ir));
			json_object_set_new(v, "ir_per_io", json_real((double)layers[i].ir / ios));
			json_array_append_new(arr, v);
		}
		json_object_set_new(insn, "layers", arr);
		arr = json_array();
		for (i = 0; i < nr_entries; i++) {
			json_t *v = json_object();

			json_object_set_new(v, "function", json_string(entries[i].fn));
			json_object_set_new(v, "ir_inclusive", json_integer((json_int_t)entries[i].ir));
			json_object_set_new(v, "ir_per_io", json_real((double)entries[i].ir / ios));
			json_array_append_new(arr, v);
		}
		json_object_set_new(insn, "entry_points", arr);
		json_object_set_new(root, "instructions", insn);
		if (json_dumpf(root, out, JSON_INDENT(2)))
			goto out;
		fputc('\n', out);
	} else {
		fprintf(out, "instructions per I/O by layer (callgrind: every user-space instruction, exact; %.0f I/Os; the whole process, setup included)\n",
			ios);
		fprintf(out, "  %-48s %12s %7s\n", "layer (where the code's source is)", "Ir/IO", "%");
		for (i = 0; i < nr_layers; i++)
			fprintf(out, "  %-48s %12.1f %6.1f%%\n", layers[i].name,
				(double)layers[i].ir / ios,
				100.0 * (double)layers[i].ir / (double)total);
		fprintf(out, "  %-48s %12.1f %6.1f%%\n", "total", (double)total / ios, 100.0);
		fprintf(out, "entry points, inclusive (callees included, so they overlap: a completion callback submits again)\n");
		for (i = 0; i < nr_entries; i++)
			fprintf(out, "  %-48s %12.1f\n", entries[i].fn,
				(double)entries[i].ir / ios);
	}
	ret = 0;
out:
	json_decref(root);
	free(args);
	unlink(cg);
	unlink(js);
	unlink(er);
	rmdir(dir);
	return ret;
}
