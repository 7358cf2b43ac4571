/*
 * iscsi-randwrite: the write-side counterpart of libiscsi's iscsi-perf,
 * for bench/iscsi-vs-tgt.sh.  iscsi-perf only reads, and Debian's fio has
 * no libiscsi engine, so this client keeps -m commands in flight over
 * libiscsi's asynchronous API (WRITE(16) tasks, iscsi_service() driven by
 * poll()) and reports in iscsi-perf's format: once a second
 *
 *   \rHH:MM:SS - lba N, iops current X (Y MB/s), iops average Z (W MB/s), in_flight Q, busy 0
 *
 * and at the end "\riops average Z (W MB/s)", "finished.", then one line
 * of exact totals:
 *
 *   total: N I/Os in S s (D more completed after the stop)
 *
 * Every iSCSI detail (login, PDUs, CmdSN window, R2T) is libiscsi's; this
 * file only chooses LBAs and counts completions.
 *
 * Options are iscsi-perf's where it has them: -m commands in flight (32),
 * -b blocks per command (8), -t runtime in seconds (0: until SIGINT or
 * SIGTERM), -r random LBAs (aligned to the transfer size; default
 * sequential), -i initiator name; and -1: one sequential pass over the LUN,
 * then stop (to fill a target with data before reads are measured).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

struct client {
	struct iscsi_context *iscsi;
	int lun;
	uint32_t block_size;
	uint64_t num_blocks;
	uint32_t blocks_per_io;
	unsigned char *buf;

	int max_in_flight;
	int random;
	int one_pass;
	uint64_t runtime_s;

	int in_flight;
	int stopping;
	int failed;
	uint64_t pos; /* next sequential LBA; last LBA written when random */
	uint64_t rng;

	uint64_t ios;          /* completed */
	uint64_t ios_at_stop;  /* completed when the stop was decided */
	uint64_t first_ns, last_ns, stop_ns;
	uint64_t last_ios;
};

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	(void)sig;
	got_signal = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: uniform enough for picking LBAs, and cheap */
static uint64_t next_rand(struct client *c)
{
	c->rng ^= c->rng >> 12;
	c->rng ^= c->rng << 25;
	c->rng ^= c->rng >> 27;
	return c->rng * 0x2545F4914F6CDD1Dull;
}

static uint64_t mb_s(const struct client *c, uint64_t iops)
{
	return (iops * c->blocks_per_io * c->block_size) >> 20;
}

static void stop(struct client *c, uint64_t now)
{
	if (c->stopping)
		return;
	c->stopping = 1;
	c->stop_ns = now;
	c->ios_at_stop = c->ios;
}

/* iscsi-perf's progress line, once a second; decides the stop at the
 * runtime */
static void progress(struct client *c, uint64_t now)
{
	uint64_t elapsed, left, iops, aiops;

	if (c->stopping || now - c->last_ns < 1000000000ull)
		return;
	elapsed = (now - c->first_ns) / 1000000000ull;
	aiops = c->ios * 1000000000ull / (now - c->first_ns);
	if (c->runtime_s && elapsed >= c->runtime_s) {
		stop(c, now);
		return;
	}
	left = c->runtime_s ? c->runtime_s - elapsed : elapsed;
	iops = (c->ios - c->last_ios) * 1000000000ull / (now - c->last_ns);
	printf("\r%02" PRIu64 ":%02" PRIu64 ":%02" PRIu64 " - lba %" PRIu64
	       ", iops current %" PRIu64 " (%" PRIu64 " MB/s), iops average %" PRIu64
	       " (%" PRIu64 " MB/s), in_flight %d, busy 0        ",
	       left / 3600, left / 60 % 60, left % 60, c->pos, iops, mb_s(c, iops),
	       aiops, mb_s(c, aiops), c->in_flight);
	fflush(stdout);
	c->last_ns = now;
	c->last_ios = c->ios;
}

static void fill_queue(struct client *c);

static void write_cb(struct iscsi_context *iscsi, int status, void *command_data,
		     void *private_data)
{
	struct client *c = private_data;
	struct scsi_task *task = command_data;

	c->in_flight--;
	if (status != SCSI_STATUS_GOOD) {
		if (status == SCSI_STATUS_CHECK_CONDITION && task)
			fprintf(stderr, "\nwrite16 failed: %s (sense key %d, ascq 0x%04x)\n",
				iscsi_get_error(iscsi), task->sense.key, task->sense.ascq);
		else
			fprintf(stderr, "\nwrite16 failed: status %d: %s\n", status,
				iscsi_get_error(iscsi));
		c->failed = 1;
		stop(c, now_ns());
	} else {
		c->ios++;
	}
	if (task)
		scsi_free_scsi_task(task);
	fill_queue(c);
}

static void fill_queue(struct client *c)
{
	uint64_t slots = c->num_blocks / c->blocks_per_io;

	while (!c->stopping && c->in_flight < c->max_in_flight) {
		uint64_t lba;
		struct scsi_task *task;

		if (c->random) {
			lba = next_rand(c) % slots * c->blocks_per_io;
		} else {
			if (c->pos + c->blocks_per_io > c->num_blocks) {
				if (c->one_pass) {
					stop(c, now_ns());
					break;
				}
				c->pos = 0;
			}
			lba = c->pos;
		}
		task = iscsi_write16_task(c->iscsi, c->lun, lba, c->buf,
					  c->blocks_per_io * c->block_size, c->block_size,
					  0, 0, 0, 0, 0, write_cb, c);
		if (!task) {
			fprintf(stderr, "\nfailed to queue write16: %s\n", iscsi_get_error(c->iscsi));
			c->failed = 1;
			stop(c, now_ns());
			break;
		}
		c->in_flight++;
		c->pos = c->random ? lba : lba + c->blocks_per_io;
	}
}

static void usage(void)
{
	fprintf(stderr,
		"usage: iscsi-randwrite [-i initiator-name] [-m max_requests] [-b blocks_per_request]\n"
		"                       [-t runtime_s] [-r|--random] [-1|--one-pass] URL\n"
		"  iscsi-perf's options and output, writing: WRITE(16) of -b blocks with -m in flight;\n"
		"  -r random LBAs aligned to the transfer (default sequential), -t 0 until SIGINT/SIGTERM,\n"
		"  -1 one sequential pass over the LUN, then stop.\n"
		"  URL: iscsi://HOST[:PORT]/TARGET-IQN/LUN\n");
	exit(1);
}

static long parse_num(const char *s, long lo, long hi, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *s == '\0' || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "iscsi-randwrite: %s '%s': %ld..%ld\n", what, s, lo, hi);
		exit(1);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "initiator-name", required_argument, NULL, 'i' },
		{ "max", required_argument, NULL, 'm' },
		{ "blocks", required_argument, NULL, 'b' },
		{ "runtime", required_argument, NULL, 't' },
		{ "random", no_argument, NULL, 'r' },
		{ "one-pass", no_argument, NULL, '1' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *initiator = "iqn.2010-11.libiscsi:iscsi-randwrite";
	struct client c = { .max_in_flight = 32, .blocks_per_io = 8 };
	struct iscsi_url *url;
	struct scsi_task *task;
	struct scsi_readcapacity16 *rc16;
	struct sigaction sa;
	uint64_t now, elapsed_ns, aiops;
	int opt;

	while ((opt = getopt_long(argc, argv, "i:m:b:t:r1h", opts, NULL)) != -1) {
		switch (opt) {
		case 'i': initiator = optarg; break;
		case 'm': c.max_in_flight = (int)parse_num(optarg, 1, 4096, "-m"); break;
		case 'b': c.blocks_per_io = (uint32_t)parse_num(optarg, 1, 65536, "-b"); break;
		case 't': c.runtime_s = (uint64_t)parse_num(optarg, 0, 86400 * 365, "-t"); break;
		case 'r': c.random = 1; break;
		case '1': c.one_pass = 1; break;
		default: usage();
		}
	}
	if (optind != argc - 1)
		usage();
	if (c.one_pass && c.random) {
		fprintf(stderr, "iscsi-randwrite: -1 is a sequential pass: not with -r\n");
		return 1;
	}

	c.iscsi = iscsi_create_context(initiator);
	if (!c.iscsi) {
		fprintf(stderr, "iscsi-randwrite: cannot create an iSCSI context\n");
		return 10;
	}
	url = iscsi_parse_full_url(c.iscsi, argv[optind]);
	if (!url) {
		fprintf(stderr, "iscsi-randwrite: bad URL: %s\n", iscsi_get_error(c.iscsi));
		return 10;
	}
	iscsi_set_targetname(c.iscsi, url->target);
	iscsi_set_session_type(c.iscsi, ISCSI_SESSION_NORMAL);
	iscsi_set_header_digest(c.iscsi, ISCSI_HEADER_DIGEST_NONE_CRC32C);
	if (url->user[0] &&
	    iscsi_set_initiator_username_pwd(c.iscsi, url->user, url->passwd) != 0) {
		fprintf(stderr, "iscsi-randwrite: cannot set CHAP credentials\n");
		return 10;
	}
	if (url->target_user[0] &&
	    iscsi_set_target_username_pwd(c.iscsi, url->target_user, url->target_passwd) != 0) {
		fprintf(stderr, "iscsi-randwrite: cannot set the target's CHAP credentials\n");
		return 10;
	}
	if (iscsi_full_connect_sync(c.iscsi, url->portal, url->lun) != 0) {
		fprintf(stderr, "iscsi-randwrite: login failed: %s\n", iscsi_get_error(c.iscsi));
		return 10;
	}
	c.lun = url->lun;
	printf("connected to %s\n", argv[optind]);
	iscsi_destroy_url(url);

	task = iscsi_readcapacity16_sync(c.iscsi, c.lun);
	if (!task || task->status != SCSI_STATUS_GOOD || !(rc16 = scsi_datain_unmarshall(task))) {
		fprintf(stderr, "iscsi-randwrite: READ CAPACITY(16) failed: %s\n",
			iscsi_get_error(c.iscsi));
		return 10;
	}
	c.block_size = rc16->block_length;
	c.num_blocks = rc16->returned_lba + 1;
	scsi_free_scsi_task(task);
	if (c.num_blocks < c.blocks_per_io) {
		fprintf(stderr, "iscsi-randwrite: the LUN has %" PRIu64 " blocks, fewer than -b %u\n",
			c.num_blocks, c.blocks_per_io);
		return 10;
	}
	printf("capacity is %" PRIu64 " blocks or %" PRIu64 " byte (%" PRIu64 " MB)\n",
	       c.num_blocks, c.num_blocks * c.block_size, (c.num_blocks * c.block_size) >> 20);
	printf("performing %s WRITE with %d parallel requests\n",
	       c.one_pass ? "ONE SEQUENTIAL PASS of" : c.random ? "RANDOM" : "SEQUENTIAL",
	       c.max_in_flight);
	printf("FIXED transfer size of %u blocks (%u byte)\n", c.blocks_per_io,
	       c.blocks_per_io * c.block_size);
	if (c.runtime_s)
		printf("will run for %" PRIu64 " seconds.\n", c.runtime_s);
	else if (!c.one_pass)
		printf("infinite runtime - press CTRL-C to abort.\n");
	printf("\n");
	fflush(stdout);

	/* data that is neither zeroes nor one repeated byte; every command
	 * sends the same buffer (libiscsi reads it, never writes it) */
	c.buf = malloc((size_t)c.blocks_per_io * c.block_size);
	if (!c.buf) {
		fprintf(stderr, "iscsi-randwrite: out of memory\n");
		return 10;
	}
	c.rng = 0x9E3779B97F4A7C15ull ^ (uint64_t)now_ns();
	for (size_t i = 0; i < (size_t)c.blocks_per_io * c.block_size; i++)
		c.buf[i] = (unsigned char)(next_rand(&c) >> 56);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	c.first_ns = c.last_ns = now_ns();
	fill_queue(&c);
	while (c.in_flight > 0) {
		struct pollfd pfd = {
			.fd = iscsi_get_fd(c.iscsi),
			.events = (short)iscsi_which_events(c.iscsi),
		};
		int n = poll(&pfd, 1, 1000);

		if (n < 0 && errno != EINTR) {
			perror("iscsi-randwrite: poll");
			c.failed = 1;
			break;
		}
		if (iscsi_service(c.iscsi, n > 0 ? pfd.revents : 0) < 0) {
			fprintf(stderr, "\niscsi_service failed: %s\n", iscsi_get_error(c.iscsi));
			c.failed = 1;
			break;
		}
		now = now_ns();
		if (got_signal)
			stop(&c, now);
		progress(&c, now);
		fill_queue(&c);
	}
	if (!c.stopping)
		stop(&c, now_ns());

	elapsed_ns = c.stop_ns - c.first_ns;
	aiops = elapsed_ns ? c.ios_at_stop * 1000000000ull / elapsed_ns : 0;
	printf("\riops average %" PRIu64 " (%" PRIu64 " MB/s)                                                        \n",
	       aiops, mb_s(&c, aiops));
	printf("\nfinished.\n");
	printf("total: %" PRIu64 " I/Os in %.3f s (%" PRIu64 " more completed after the stop)\n",
	       c.ios_at_stop, elapsed_ns / 1e9, c.ios - c.ios_at_stop);
	fflush(stdout);

	if (!c.failed)
		iscsi_logout_sync(c.iscsi);
	iscsi_destroy_context(c.iscsi);
	free(c.buf);
	return c.failed ? 10 : 0;
}
