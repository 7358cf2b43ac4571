// SPDX-License-Identifier: MIT
/*
 * blkstack serve: export blkstack devices over NBD (docs/nbd.md) and
 * iSCSI (docs/iscsi.md), one or both at once.
 *
 * Exports: device options before the first --export=NAME are defaults for
 * every export; options after an --export=NAME apply to that export only,
 * as fio applies [global] and then a job's own section.  Without
 * --export there is one export, named "" (the default export).  The first
 * export also answers the empty name.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "blkstack/lock.h"
#include "bench/bench.h"
#include "blkstack/dev.h"
#include "blkstack/iscsi.h"
#include "blkstack/metrics.h"
#include "blkstack/nbd.h"
#include "blkstack/uring.h"
#include "serve.h"

#define MAX_EXPORTS 64

struct serve_export {
	char name[NBD_MAX_STRING + 1];
	char description[1024];
	bool read_only;
	char iscsi_acl[4096]; /* initiator names, comma-separated ("": any) */
	bool iscsi_removable; /* iSCSI: removable medium (RMB) */
	int iscsi_thin;       /* iSCSI: enum blk_iscsi_thin */
	char lun_of[NBD_MAX_STRING + 1]; /* iSCSI: a LUN of that export's target */
	bool has_lun_of;
	struct bench_opts *o; /* device options (o->dev) */
};

static int serve_stop;
static uint64_t serve_stop_ns;

/*
 * SIGINT/SIGTERM: stop (in-flight requests finish, devices are flushed,
 * within the stop deadline).  A second signal exits at once, killed by
 * it, unless it comes within 100 ms of the first: timeout(1) signals the
 * command and then its process group, one interrupt delivered twice.
 * Only async-signal-safe calls.
 */
static void on_signal(int sig)
{
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (!__atomic_load_n(&serve_stop, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&serve_stop_ns, now, __ATOMIC_RELAXED);
		__atomic_store_n(&serve_stop, sig, __ATOMIC_RELEASE);
		return;
	}
	if (now - __atomic_load_n(&serve_stop_ns, __ATOMIC_RELAXED) <
	    BENCH_STOP_DUP_NS)
		return;
	bench_stop_reraise(sig);
}

/* "      uring: --filename, --direct, ..." wrapped at 79 columns. */
static void usage_names(FILE *f, const char *who,
			const struct blk_opt_desc *opts, unsigned int n)
{
	unsigned int i, col;

	col = (unsigned int)fprintf(f, "      %s:", who);
	for (i = 0; i < n; i++) {
		unsigned int w = (unsigned int)strlen(opts[i].name) + 4;

		if (col + w > 79) {
			fprintf(f, "\n       ");
			col = 7;
		}
		col += (unsigned int)fprintf(f, " --%s%s", opts[i].name,
					     i + 1 < n ? "," : "");
	}
	fprintf(f, "\n");
}

void serve_usage(FILE *f)
{
	const struct blk_driver *drv;
	const struct blk_opt_desc *q;
	unsigned int nd, n, k;

	fprintf(f,
		"usage: blkstack serve [server options] [device options]\n"
		"                      [--export=NAME [export options]]...\n"
		"\n"
		"Serve blkstack devices over NBD (fixed newstyle, structured replies,\n"
		"base:allocation) and/or iSCSI (RFC 7143, ErrorRecoveryLevel 0). Stops\n"
		"on SIGINT/SIGTERM after in-flight requests, flushing the devices. One\n"
		"line per NBD connection, per iSCSI login and logout goes to stderr.\n"
		"\n"
		"server options:\n"
		"  --nbd=HOST:PORT        TCP address (default 127.0.0.1:10809 when neither\n"
		"                         --unix nor --iscsi is given; port 0 picks a free one)\n"
		"  --unix=PATH            Unix socket (with or instead of --nbd)\n"
		"  --iscsi=HOST[:PORT]    iSCSI target portal (port 3260 by default; 0 picks a\n"
		"                         free one); each export is a target named\n"
		"                         " BLK_ISCSI_NAME_PREFIX "NAME (the unnamed\n"
		"                         export: ...:default) with the device as LUN 0;\n"
		"                         given again (up to %d), more portals to the same\n"
		"                         targets, all listed by SendTargets (multipath)\n"
		"  --iscsi-max-cmds=N     iSCSI commands at once per connection (the CmdSN\n"
		"                         window), 1..256 (32)\n"
		"  --iscsi-chap=FILE      require CHAP: lines 'initiator NAME SECRET' (and\n"
		"                         'target NAME SECRET' for mutual CHAP); refused when\n"
		"                         its group or others may read it\n"
		"  --iscsi-nopin=S        iSCSI keep-alive: a NOP-In to a connection idle this\n"
		"                         long, dropped if unanswered within as long again,\n"
		"                         0..3600 seconds (15; 0: off)\n"
		"  --max-connections=N    connections at once, 1..1024 (64)\n"
		"  --max-inflight=N       requests run at once per connection, 1..1024 (64)\n"
		"  --spin-us=US           poll an idle connection this long before sleeping,\n"
		"                         0..100000 (50; only with fewer connections than CPUs)\n"
		"  --coalesce-us=US       longest request-coalescing sleep of a connection at\n"
		"                         queue depth, adapted to its client, 0..100000\n"
		"                         (1000; 0: off, every request wakes the server)\n"
		"  --stop-deadline-ms=MS  after SIGINT/SIGTERM, wait this long for requests in\n"
		"                         flight, then exit 1 unflushed, 100..3600000 (30000);\n"
		"                         a second signal exits at once\n"
		"  --lock_stats=0|1       the lock profile (seed 003): every named lock's\n"
		"                         acquisitions, contentions and time waited, on\n"
		"                         stderr at the stop, as /proc/lock_stat (0)\n"
		"  --metrics[=[HOST:]PORT] Prometheus metrics at http://HOST:PORT/metrics: per\n"
		"                         export and connection requests, bytes, errors,\n"
		"                         latency histograms, in flight, the block core's\n"
		"                         diskstats (docs/metrics.md); alone 127.0.0.1:9100,\n"
		"                         a bare PORT on 127.0.0.1, 0 picks a free port\n"
		"\n"
		"export options (before the first --export: defaults for all exports):\n"
		"  --export=NAME          start an export called NAME (clients ask for it\n"
		"                         by name; the first export is also the default)\n"
		"  --description=TEXT     shown by NBD_OPT_LIST and NBD_INFO_DESCRIPTION\n"
		"  --read-only            refuse writes (EPERM), advertise READ_ONLY\n"
		"  --iscsi-acl=IQN[,IQN]  iSCSI: only these initiators may log in to the\n"
		"                         target (others: authorization failure)\n"
		"  --iscsi-lun-of=NAME    iSCSI: this export is the next LUN of export NAME's\n"
		"                         target (given before it) instead of a target\n"
		"  --iscsi-removable      iSCSI: the target's units are removable media\n"
		"                         (PREVENT ALLOW MEDIUM REMOVAL, eject and load)\n"
		"  --iscsi-thin[=auto|0|1] iSCSI: logical block provisioning (LBPME): 1 thin\n"
		"                         (UNMAP, WRITE SAME with UNMAP; the device must\n"
		"                         discard), 0 fully provisioned (both refused),\n"
		"                         auto as the device can (auto; ram: thin)\n"
		"  --dev=NAME             the driver (ram), from the device registry:\n",
		BLK_ISCSI_MAX_PORTALS);
	drv = blk_drivers(&nd);
	for (k = 0; k < nd; k++)
		fprintf(f, "      %-8s %s\n", drv[k].name, drv[k].summary);
	fprintf(f,
		"  --size=SIZE            device size (k/m/g suffixes); for uring, the size a\n"
		"                         missing file is created with\n"
		"  --NAME=VALUE           a device option: units, ranges and defaults in\n"
		"                         'blkstack bench --help'; by driver:\n");
	q = blk_queue_opts(&n);
	usage_names(f, "every driver", q, n);
	for (k = 0; k < nd; k++)
		if (drv[k].nr_opts)
			usage_names(f, drv[k].name, drv[k].opts, drv[k].nr_opts);
	fprintf(f,
		"\n"
		"example:\n"
		"  blkstack serve --nbd=127.0.0.1:10809 --dev=ram --size=1G\n"
		"  blkstack serve --iscsi=127.0.0.1:3260 --dev=ram --size=1G\n"
		"  blkstack serve --unix=/tmp/nbd.sock --export=a --dev=ram --size=1G \\\n"
		"      --export=b --dev=uring --filename=/var/tmp/b.img --size=4G --read-only\n");
}

static int parse_range(const char *name, const char *v, unsigned int min,
		       unsigned int max, unsigned int *out)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = v && *v != '-' ? strtoul(v, &end, 10) : 0;
	if (!v || !*v || *v == '-' || *end || errno || x < min || x > max) {
		fprintf(stderr, "blkstack serve: --%s=%s: allowed %u..%u\n", name,
			v ? v : "", min, max);
		return -EINVAL;
	}
	*out = (unsigned int)x;
	return 0;
}

static int parse_uint(const char *name, const char *v, unsigned int max,
		      unsigned int *out)
{
	return parse_range(name, v, 1, max, out);
}

static struct serve_export *export_new(struct serve_export *ex, unsigned int n,
				       const struct serve_export *defaults)
{
	struct serve_export *e = &ex[n];

	*e = *defaults;
	e->o = malloc(sizeof(*e->o));
	if (!e->o)
		return NULL;
	memcpy(e->o, defaults->o, sizeof(*e->o));
	return e;
}

/*
 * Device errors come from the bench's option code, which calls the size
 * dev_size=; serve's flag is --size.  Rewrite that name in @err.
 */
static const char *serve_names(char *err, size_t len)
{
	char *p = strstr(err, "dev_size=");
	char tmp[512];

	if (p) {
		snprintf(tmp, sizeof(tmp), "%.*s--size=%s", (int)(p - err), err,
			 p + strlen("dev_size="));
		snprintf(err, len, "%s", tmp);
	}
	return err;
}

static const char *export_dev(const struct serve_export *e)
{
	return e->o->dev.nr_devs ? e->o->dev.devs[0] : "ram";
}

/*
 * Before any export opens: one device each, and every driver option given
 * for it (before the first --export, for every export, as fio's [global])
 * is for a driver of its stack.
 */
static int check_export(const struct serve_export *e)
{
	const char *devname = export_dev(e), *p, *nl;
	char err[4096];

	if (e->o->dev.nr_devs > 1) {
		fprintf(stderr, "blkstack serve: export '%s': --dev= takes one device\n",
			e->name);
		return -EINVAL;
	}
	if (!blk_dev_check_given(&devname, 1, &e->o->dev.p, err, sizeof(err)))
		return 0;
	for (p = err; *p; p = nl + !!*nl) {
		nl = p + strcspn(p, "\n");
		fprintf(stderr, "blkstack serve: export '%s': %.*s\n", e->name,
			(int)(nl - p), p);
	}
	return -EINVAL;
}

static int open_export(struct serve_export *e, unsigned int nr_threads,
		       struct blk_dev **dev)
{
	struct bench_dev_opts d = e->o->dev;
	const char *devname = export_dev(e);
	char err[512];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int ret;

	/* uring: the file's size; iscsi: the remote disk's */
	if (!d.p.dev_size && strcmp(devname, "uring") && strcmp(devname, "iscsi")) {
		fprintf(stderr, "blkstack serve: export '%s': --size= is required for dev=%s\n",
			e->name, devname);
		return -EINVAL;
	}
	/*
	 * DEFER_TASKRUN rings belong to the first thread that submits; a
	 * connection's hardware queue is used by every later connection's
	 * thread too.
	 */
	if (!strcmp(devname, "uring") && d.p.uring_taskrun == BLK_URING_TASKRUN_DEFER) {
		fprintf(stderr, "blkstack serve: export '%s': --uring_taskrun=defer: not with serve (connections come and go on different threads; a DEFER_TASKRUN ring takes one); allowed coop, signal\n",
			e->name);
		return -EINVAL;
	}
	/* one queue per CPU (at most 16); connections beyond share them */
	if (!d.p.nr_hw_queues)
		d.p.nr_hw_queues = ncpu < 1 ? 1 : ncpu > 16 ? 16 : (uint32_t)ncpu;
	ret = blk_dev_open(devname, &d.p, &(struct blk_dev_open_args){
				   .size = d.p.dev_size,
				   .create_size = d.p.dev_size,
				   .nr_threads = nr_threads },
			   dev, err, sizeof(err));
	if (ret)
		fprintf(stderr, "blkstack serve: export '%s': %s\n", e->name,
			serve_names(err, sizeof(err)));
	return ret;
}

struct iscsi_run {
	struct blk_iscsi_server *srv;
	int ret;
};

static void *iscsi_thread(void *arg)
{
	struct iscsi_run *r = arg;

	r->ret = blk_iscsi_server_run(r->srv, &serve_stop);
	return NULL;
}

int serve_main(int argc, char **argv)
{
	static char iscsi_names[MAX_EXPORTS][sizeof(BLK_ISCSI_NAME_PREFIX) + NBD_MAX_STRING + 8];
	struct blk_iscsi_target itgt[MAX_EXPORTS];
	static struct blk_dev *tluns[MAX_EXPORTS][MAX_EXPORTS];
	static struct blk_metrics_export *tmx[MAX_EXPORTS][MAX_EXPORTS];
	struct blk_metrics_export *mx[MAX_EXPORTS] = { 0 };
	struct blk_metrics *metrics = NULL;
	struct blk_metrics_http *mhttp = NULL;
	char metrics_host[256];
	unsigned int metrics_port = 0;
	bool want_metrics = false;
	unsigned int tlun_n[MAX_EXPORTS], texp[MAX_EXPORTS];
	struct blk_iscsi_server_config icfg = { 0 };
	struct blk_iscsi_server *isrv = NULL;
	struct iscsi_run irun = { 0 };
	pthread_t ith;
	bool ith_started = false;
	const char *iscsi = NULL, *iscsi_chap = NULL;
	const char *iscsi_more[BLK_ISCSI_MAX_PORTALS - 1];
	unsigned int nr_iscsi_more = 0;
	unsigned int iscsi_max_cmds = 32, iscsi_nopin = 15;
	struct serve_export defaults = { .name = "" }, *ex, *cur;
	struct blk_nbd_export nexp[MAX_EXPORTS];
	struct blk_dev *devs[MAX_EXPORTS] = { 0 };
	struct blk_nbd_server_config cfg = { 0 };
	struct blk_nbd_server *srv = NULL;
	const char *tcp = NULL, *unix_path = NULL;
	unsigned int nr = 0, i, max_conn = 64, max_inflight = 64, spin_us = 50;
	unsigned int coalesce_us = 1000, stop_deadline_ms = 30000;
	struct sigaction sa = { .sa_handler = on_signal };
	char err[512];
	int ret = 1, a;

	ex = calloc(MAX_EXPORTS, sizeof(*ex));
	defaults.o = malloc(sizeof(*defaults.o));
	if (!ex || !defaults.o) {
		fprintf(stderr, "blkstack serve: out of memory\n");
		goto out;
	}
	bench_opts_init(defaults.o);
	cur = &defaults;

	for (a = 1; a < argc; a++) {
		char *arg = argv[a], *name, *val;
		char buf[8192];

		if (strncmp(arg, "--", 2)) {
			fprintf(stderr, "blkstack serve: unexpected argument '%s'\n", arg);
			goto usage;
		}
		snprintf(buf, sizeof(buf), "%s", arg + 2);
		name = buf;
		val = strchr(buf, '=');
		if (val)
			*val++ = 0;
		if (!strcmp(name, "help") || !strcmp(name, "h")) {
			serve_usage(stdout);
			ret = 0;
			goto out;
		} else if (!strcmp(name, "nbd") || !strcmp(name, "unix")) {
			if (!val || !*val) {
				fprintf(stderr, "blkstack serve: --%s needs a value (%s)\n",
					name, !strcmp(name, "nbd") ? "HOST:PORT" : "PATH");
				goto out;
			}
			/* point into argv: the server keeps the string */
			if (!strcmp(name, "nbd"))
				tcp = arg + 6;
			else
				unix_path = arg + 7;
		} else if (!strcmp(name, "iscsi")) {
			if (!val || !*val) {
				fprintf(stderr, "blkstack serve: --iscsi needs a value (HOST[:PORT])\n");
				goto out;
			}
			if (!iscsi) {
				iscsi = arg + 8;
			} else if (nr_iscsi_more + 1 < BLK_ISCSI_MAX_PORTALS) {
				iscsi_more[nr_iscsi_more++] = arg + 8;
			} else {
				fprintf(stderr, "blkstack serve: --iscsi: at most %d portals\n",
					BLK_ISCSI_MAX_PORTALS);
				goto out;
			}
		} else if (!strcmp(name, "lock_stats")) {
			if (!val || (strcmp(val, "0") && strcmp(val, "1"))) {
				fprintf(stderr, "blkstack serve: --lock_stats=%s: allowed 0|1\n",
					val ? val : "");
				goto out;
			}
			/* before the devices and servers: their locks are
			 * profiled from their init on */
			if (blk_lockstat_enable(val[0] == '1')) {
				fprintf(stderr, "blkstack serve: --lock_stats=1: this build has no lock profile (cmake -DBLK_LOCK_STATS=ON)\n");
				goto out;
			}
		} else if (!strcmp(name, "metrics")) {
			if (blk_metrics_parse_addr(val, metrics_host,
						   sizeof(metrics_host),
						   &metrics_port)) {
				fprintf(stderr, "blkstack serve: --metrics=%s: expected PORT or HOST:PORT (PORT 0..65535, IPv6 HOST in brackets; --metrics alone: 127.0.0.1:9100)\n",
					val);
				goto out;
			}
			want_metrics = true;
		} else if (!strcmp(name, "iscsi-chap")) {
			if (!val || !*val) {
				fprintf(stderr, "blkstack serve: --iscsi-chap needs a file\n");
				goto out;
			}
			iscsi_chap = arg + strlen("--iscsi-chap=");
		} else if (!strcmp(name, "iscsi-max-cmds")) {
			if (parse_uint(name, val, 256, &iscsi_max_cmds))
				goto out;
		} else if (!strcmp(name, "iscsi-nopin")) {
			if (parse_range(name, val, 0, 3600, &iscsi_nopin))
				goto out;
		} else if (!strcmp(name, "max-connections")) {
			if (parse_uint(name, val, 1024, &max_conn))
				goto out;
		} else if (!strcmp(name, "spin-us")) {
			if (parse_range(name, val, 0, 100000, &spin_us))
				goto out;
		} else if (!strcmp(name, "coalesce-us")) {
			if (parse_range(name, val, 0, 100000, &coalesce_us))
				goto out;
		} else if (!strcmp(name, "stop-deadline-ms")) {
			if (parse_range(name, val, 100, 3600000, &stop_deadline_ms))
				goto out;
		} else if (!strcmp(name, "max-inflight")) {
			if (parse_uint(name, val, 1024, &max_inflight))
				goto out;
		} else if (!strcmp(name, "export")) {
			if (!val || strlen(val) > NBD_MAX_STRING) {
				fprintf(stderr, "blkstack serve: --export=NAME: 0..%u bytes\n",
					NBD_MAX_STRING);
				goto out;
			}
			for (i = 0; i < nr; i++)
				if (!strcmp(ex[i].name, val)) {
					fprintf(stderr, "blkstack serve: --export=%s given twice\n",
						val);
					goto out;
				}
			if (nr == MAX_EXPORTS) {
				fprintf(stderr, "blkstack serve: at most %d exports\n",
					MAX_EXPORTS);
				goto out;
			}
			cur = export_new(ex, nr, &defaults);
			if (!cur)
				goto out;
			nr++;
			snprintf(cur->name, sizeof(cur->name), "%s", val);
		} else if (!strcmp(name, "description")) {
			snprintf(cur->description, sizeof(cur->description), "%s",
				 val ? val : "");
		} else if (!strcmp(name, "iscsi-lun-of")) {
			if (cur == &defaults || !val) {
				fprintf(stderr, "blkstack serve: --iscsi-lun-of=NAME goes after an --export=\n");
				goto out;
			}
			for (i = 0; i + 1 < nr; i++)
				if (!strcmp(ex[i].name, val) && !ex[i].has_lun_of)
					break;
			if (i + 1 >= nr) {
				fprintf(stderr, "blkstack serve: --iscsi-lun-of=%s: no earlier export of that name with a target of its own\n",
					val);
				goto out;
			}
			snprintf(cur->lun_of, sizeof(cur->lun_of), "%s", val);
			cur->has_lun_of = true;
		} else if (!strcmp(name, "iscsi-acl")) {
			if (!val || !*val || strlen(val) >= sizeof(cur->iscsi_acl)) {
				fprintf(stderr, "blkstack serve: --iscsi-acl=IQN[,IQN...]: 1..%zu bytes\n",
					sizeof(cur->iscsi_acl) - 1);
				goto out;
			}
			snprintf(cur->iscsi_acl, sizeof(cur->iscsi_acl), "%s", val);
		} else if (!strcmp(name, "iscsi-removable")) {
			if (val && strcmp(val, "1") && strcmp(val, "0")) {
				fprintf(stderr, "blkstack serve: --iscsi-removable takes no value (or 0|1)\n");
				goto out;
			}
			cur->iscsi_removable = !val || !strcmp(val, "1");
		} else if (!strcmp(name, "iscsi-thin")) {
			if (!val || !strcmp(val, "1")) {
				cur->iscsi_thin = BLK_ISCSI_THIN_ON;
			} else if (!strcmp(val, "0")) {
				cur->iscsi_thin = BLK_ISCSI_THIN_OFF;
			} else if (!strcmp(val, "auto")) {
				cur->iscsi_thin = BLK_ISCSI_THIN_AUTO;
			} else {
				fprintf(stderr, "blkstack serve: --iscsi-thin=%s: allowed auto, 0, 1 (none: 1)\n",
					val);
				goto out;
			}
		} else if (!strcmp(name, "read-only") || !strcmp(name, "readonly")) {
			if (val && strcmp(val, "1") && strcmp(val, "0")) {
				fprintf(stderr, "blkstack serve: --read-only takes no value (or 0|1)\n");
				goto out;
			}
			cur->read_only = !val || !strcmp(val, "1");
		} else {
			/* a device option; size= is the device's size here */
			if (!strcmp(name, "size"))
				name = "dev_size";
			if (bench_set_option(cur->o, NULL, name, val, err, sizeof(err))) {
				fprintf(stderr, "blkstack serve: %s\n",
					serve_names(err, sizeof(err)));
				goto usage;
			}
		}
	}
	if (!nr) {
		if (!export_new(ex, 0, &defaults))
			goto out;
		nr = 1;
	}
	if (iscsi_chap && !iscsi) {
		fprintf(stderr, "blkstack serve: --iscsi-chap without --iscsi\n");
		goto out;
	}
	if (!tcp && !unix_path && !iscsi)
		tcp = "127.0.0.1:10809";

	for (i = 0; i < nr; i++)
		if (check_export(&ex[i]))
			goto out;
	for (i = 0; i < nr; i++) {
		/* a queue per connection of each protocol, and the flush */
		if (open_export(&ex[i], max_conn * ((tcp || unix_path) + !!iscsi) + 1,
				&devs[i]))
			goto out;
		if (want_metrics) {
			unsigned int protos = (tcp || unix_path ? 1u << BLK_METRICS_NBD : 0) |
					      (iscsi ? 1u << BLK_METRICS_ISCSI : 0);

			if (!metrics && blk_metrics_create(&metrics))
				goto nomem;
			if (blk_metrics_export_add(metrics, ex[i].name, devs[i],
						   protos, &mx[i]))
				goto nomem;
		}
		nexp[i] = (struct blk_nbd_export){
			.name = ex[i].name, .description = ex[i].description,
			.dev = devs[i], .read_only = ex[i].read_only,
			.metrics = mx[i],
		};
	}
	cfg.exports = nexp;
	cfg.nr_exports = nr;
	cfg.tcp_addr = tcp;
	cfg.unix_path = unix_path;
	cfg.max_connections = max_conn;
	cfg.max_inflight = max_inflight;
	cfg.spin_us = spin_us;
	cfg.coalesce_us = coalesce_us;
	cfg.stop_deadline_ms = stop_deadline_ms;
	cfg.log = stderr;
	if ((tcp || unix_path) &&
	    blk_nbd_server_create(&cfg, &srv, err, sizeof(err))) {
		fprintf(stderr, "blkstack serve: %s\n", err);
		goto out;
	}
	if (iscsi) {
		unsigned int nt = 0, k;

		/* a target per export, but for the LUNs of another's */
		for (i = 0; i < nr; i++) {
			if (ex[i].has_lun_of)
				continue;
			snprintf(iscsi_names[nt], sizeof(iscsi_names[nt]), "%s%s",
				 BLK_ISCSI_NAME_PREFIX,
				 ex[i].name[0] ? ex[i].name : "default");
			tlun_n[nt] = 0;
			tmx[nt][0] = mx[i];
			for (k = i + 1; k < nr; k++)
				if (ex[k].has_lun_of && !strcmp(ex[k].lun_of, ex[i].name)) {
					tmx[nt][tlun_n[nt] + 1] = mx[k];
					tluns[nt][tlun_n[nt]++] = devs[k];
				}
			itgt[nt] = (struct blk_iscsi_target){
				.name = iscsi_names[nt], .dev = devs[i],
				.more_luns = tluns[nt], .nr_more_luns = tlun_n[nt],
				.read_only = ex[i].read_only,
				.removable = ex[i].iscsi_removable,
				.acl = ex[i].iscsi_acl,
				.thin = ex[i].iscsi_thin,
				.metrics = metrics ? tmx[nt] : NULL,
			};
			texp[nt++] = i;
		}
		icfg.targets = itgt;
		icfg.nr_targets = nt;
		icfg.tcp_addr = iscsi;
		icfg.more_tcp_addrs = iscsi_more;
		icfg.nr_more_tcp_addrs = nr_iscsi_more;
		icfg.max_connections = max_conn;
		icfg.max_cmds = iscsi_max_cmds;
		icfg.stop_deadline_ms = stop_deadline_ms;
		icfg.log = stderr;
		icfg.chap_secrets = iscsi_chap;
		icfg.nopin_ms = iscsi_nopin * 1000;
		if (blk_iscsi_server_create(&icfg, &isrv, err, sizeof(err))) {
			fprintf(stderr, "blkstack serve: %s\n", err);
			goto out;
		}
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (metrics && blk_metrics_http_start(metrics, metrics_host, metrics_port,
					      &mhttp, err, sizeof(err))) {
		fprintf(stderr, "blkstack serve: %s\n", err);
		goto out;
	}
	if (mhttp)
		fprintf(stderr, "blkstack serve: metrics on http://%s%s%s:%u/metrics\n",
			strchr(metrics_host, ':') ? "[" : "", metrics_host,
			strchr(metrics_host, ':') ? "]" : "",
			blk_metrics_http_port(mhttp));
	if (tcp) {
		const char *colon = strrchr(tcp, ':');

		fprintf(stderr, "blkstack serve: listening on %.*s:%u\n",
			(int)(colon - tcp), tcp, blk_nbd_server_port(srv));
	}
	for (i = 0; iscsi && i <= nr_iscsi_more; i++) {
		const char *a = i ? iscsi_more[i - 1] : iscsi;
		const char *colon = strrchr(a, ':');
		const char *rb = strrchr(a, ']');
		int hl = colon && (!rb || colon > rb) ? (int)(colon - a) :
			 (int)strlen(a);

		fprintf(stderr, "blkstack serve: iscsi listening on %.*s:%u\n",
			hl, a, blk_iscsi_server_portal_port(isrv, i));
	}
	if (iscsi) {
		for (i = 0; i < icfg.nr_targets; i++) {
			unsigned int k, lun = 1;

			fprintf(stderr, "blkstack serve: iscsi target %s: LUN 0 export '%s'",
				iscsi_names[i], ex[texp[i]].name);
			for (k = 0; k < nr; k++)
				if (ex[k].has_lun_of && !strcmp(ex[k].lun_of, ex[texp[i]].name))
					fprintf(stderr, ", LUN %u export '%s'", lun++, ex[k].name);
			fprintf(stderr, "\n");
		}
	}
	if (unix_path)
		fprintf(stderr, "blkstack serve: listening on unix:%s\n", unix_path);
	for (i = 0; i < nr; i++) {
		struct blk_dev_info info;

		blk_dev_get_info(devs[i], &info);
		fprintf(stderr,
			"blkstack serve: export '%s': %s, %llu bytes, block %u, flags 0x%x%s\n",
			ex[i].name, info.name, (unsigned long long)info.capacity,
			info.logical_block_size,
			srv ? blk_nbd_export_flags(&nexp[i], true) : 0,
			ex[i].read_only ? ", read-only" : "");
	}
	fflush(stderr);
	if (isrv && srv) {
		irun.srv = isrv;
		if (pthread_create(&ith, NULL, iscsi_thread, &irun)) {
			fprintf(stderr, "blkstack serve: no thread for the iSCSI server\n");
			goto out;
		}
		ith_started = true;
	}
	if (srv) {
		ret = blk_nbd_server_run(srv, &serve_stop);
		if (ith_started) {
			pthread_join(ith, NULL);
			ith_started = false;
			if (!ret || (irun.ret == -ETIMEDOUT && ret != -ETIMEDOUT))
				ret = irun.ret;
		}
	} else {
		ret = blk_iscsi_server_run(isrv, &serve_stop);
	}
	if (ret == -ETIMEDOUT) {
		/*
		 * Connection threads still own requests in flight: closing the
		 * devices would wait for them.  Exit now, unflushed.
		 */
		fprintf(stderr, "blkstack serve: stopped (signal %d) without finishing: requests still in flight at the stop deadline; devices not flushed\n",
			__atomic_load_n(&serve_stop, __ATOMIC_ACQUIRE));
		fflush(stderr);
		_exit(1);
	}
	if (ret) {
		fprintf(stderr, "blkstack serve: %s\n", strerror(-ret));
		ret = 1;
		goto out;
	}
	fprintf(stderr, "blkstack serve: stopped (signal %d)\n",
		__atomic_load_n(&serve_stop, __ATOMIC_ACQUIRE));
	if (blk_lockstat_enabled())
		blk_lockstat_print(stderr);
	ret = 0;
	goto out;
nomem:
	fprintf(stderr, "blkstack serve: out of memory\n");
	goto out;
usage:
	fprintf(stderr, "'blkstack serve --help' lists the options.\n");
out:
	if (ith_started) {
		__atomic_store_n(&serve_stop, SIGTERM, __ATOMIC_RELEASE);
		pthread_join(ith, NULL);
	}
	/* the servers are done: no connection counts any more */
	blk_metrics_http_stop(mhttp);
	blk_nbd_server_destroy(srv);
	blk_iscsi_server_destroy(isrv);
	for (i = 0; i < MAX_EXPORTS; i++) {
		blk_dev_close(devs[i]);
		if (ex && i < nr)
			free(ex[i].o);
	}
	blk_metrics_destroy(metrics);
	free(ex);
	free(defaults.o);
	return ret;
}
