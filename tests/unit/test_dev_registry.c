// SPDX-License-Identifier: MIT
/*
 * The device registry: its table (names, options, stacking), the lower
 * device a stacking driver chooses and the errors for bad combinations,
 * devices opened through it doing I/O (nvme on ram and on a file through
 * uring keep data; nvme on null completes its commands), the check of the
 * driver options the user gave against the stacks of a run, and a null
 * lower's knobs reaching it beneath nvme and scsi.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "bench/options.h"
#include "blkstack/blk.h"
#include "blkstack/dev.h"
#include "blkstack/scsi_tgt.h"

/* The defaults every option's descriptor gives (what bench starts from). */
static struct blk_dev_params defaults(void)
{
	static struct bench_opts o;

	bench_opts_init(&o);
	return o.dev.p;
}

static void test_table(void **state)
{
	const struct blk_driver *drv;
	const struct blk_opt_desc *q;
	unsigned int nd, nq, k, i;
	char names[64];

	(void)state;
	drv = blk_drivers(&nd);
	assert_true(nd >= 4);
	assert_string_equal(blk_driver_names(names, sizeof(names), "|"),
			    "null|ram|uring|nvme|scsi|iscsi");
	for (k = 0; k < nd; k++) {
		assert_ptr_equal(blk_driver_find(drv[k].name), &drv[k]);
		assert_non_null(drv[k].summary);
		assert_non_null(drv[k].create);
		for (i = 0; i < drv[k].nr_opts; i++) {
			const struct blk_opt_desc *d = &drv[k].opts[i];

			assert_non_null(d->help);
			assert_true(d->off + d->len <= sizeof(struct blk_dev_params));
			/* a bit mask's range is its bits: @max their OR */
			if (d->bits) {
				const struct blk_opt_choice *b;
				uint64_t mask = 0;

				assert_int_equal(d->type, BLK_OPT_UINT);
				for (b = d->bits; b->name; b++)
					mask |= (uint64_t)b->val;
				assert_true(mask == d->max);
				assert_int_equal(d->min, 0);
			}
		}
	}
	/* scsi_opts' bits are the target core's */
	for (i = 0; i < blk_driver_find("scsi")->nr_opts; i++) {
		const struct blk_opt_desc *d = &blk_driver_find("scsi")->opts[i];

		if (!strcmp(d->name, "scsi_opts"))
			assert_true(d->bits && d->max == SCSI_TGT_OPTS_SUPPORTED);
	}
	assert_null(blk_driver_find("iscsi-not-yet"));
	assert_non_null(blk_driver_find("scsi")->lowers);
	assert_non_null(blk_driver_find("nvme")->lowers);
	assert_null(blk_driver_find("ram")->lowers);
	q = blk_queue_opts(&nq);
	for (i = 0; i < nq; i++)
		assert_true(q[i].off + q[i].len <= sizeof(struct blk_dev_params));
	/* a bit of blk_dev_params.given for every option */
	for (k = 0; k < nd; k++)
		nq += drv[k].nr_opts;
	assert_true(nq <= 64 * BLK_DEV_GIVEN_WORDS);
}

/* Which device nvme sits on, and the messages for what cannot be. */
static void test_lower(void **state)
{
	const struct blk_driver *nvme = blk_driver_find("nvme");
	const struct blk_driver *ram = blk_driver_find("ram");
	struct blk_dev_params p = defaults();
	const char *lower;
	char err[256];

	(void)state;
	assert_int_equal(blk_dev_lower(nvme, &p, &lower, err, sizeof(err)), 0);
	assert_string_equal(lower, "ram");
	p.nvme_ns = 1; /* nvme_ns=null, the older spelling */
	assert_int_equal(blk_dev_lower(nvme, &p, &lower, err, sizeof(err)), 0);
	assert_string_equal(lower, "null");
	snprintf(p.filename, sizeof(p.filename), "/tmp/x.img");
	assert_int_equal(blk_dev_lower(nvme, &p, &lower, err, sizeof(err)), 0);
	assert_string_equal(lower, "uring");
	snprintf(p.lower, sizeof(p.lower), "ram"); /* explicit wins */
	assert_int_equal(blk_dev_lower(nvme, &p, &lower, err, sizeof(err)), 0);
	assert_string_equal(lower, "ram");

	p = defaults();
	snprintf(p.lower, sizeof(p.lower), "nvme");
	assert_int_equal(blk_dev_lower(nvme, &p, &lower, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "lower=nvme: dev=nvme stacks on ram, null, uring");
	snprintf(p.lower, sizeof(p.lower), "uring");
	assert_int_equal(blk_dev_lower(nvme, &p, &lower, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "lower=uring: needs filename=PATH"));
	snprintf(p.lower, sizeof(p.lower), "null");
	assert_int_equal(blk_dev_lower(ram, &p, &lower, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "lower=null: dev=ram does not stack on another device (drivers that do: nvme, scsi)");
	p.lower[0] = '\0';
	assert_int_equal(blk_dev_lower(ram, &p, &lower, err, sizeof(err)), 0);
	assert_null(lower);
}

/* @drv's option @name, as given by the user with the value already in @p. */
static void give(struct blk_dev_params *p, const char *drv, const char *name)
{
	const struct blk_driver *d = drv ? blk_driver_find(drv) : NULL;
	const struct blk_opt_desc *q;
	unsigned int i, n;

	q = d ? d->opts : blk_queue_opts(&n);
	n = d ? d->nr_opts : n;
	for (i = 0; i < n; i++)
		if (!strcmp(q[i].name, name)) {
			blk_dev_set_given(p, &q[i]);
			assert_true(blk_dev_is_given(p, &q[i]));
			return;
		}
	fail_msg("no option %s of %s", name, drv ? drv : "the queue");
}

/* Driver options given for no driver of the run's stacks are refused. */
static void test_given(void **state)
{
	static const char *const ram[] = { "ram" }, *const scsi[] = { "scsi" },
		*const nvme[] = { "nvme" }, *const null_ram[] = { "null", "ram" },
		*const null_nvme[] = { "null", "nvme" }, *const bogus[] = { "bogus" };
	struct blk_dev_params p = defaults();
	char err[2048];

	(void)state;
	/* defaults never count, and the queue's options are every driver's */
	assert_int_equal(blk_dev_check_given(ram, 1, &p, err, sizeof(err)), 0);
	p.hw_queue_depth = 8;
	give(&p, NULL, "hw_queue_depth");
	assert_int_equal(blk_dev_check_given(ram, 1, &p, err, sizeof(err)), 0);

	p.nvme_qd = 64;
	give(&p, "nvme", "nvme_qd");
	assert_int_equal(blk_dev_check_given(ram, 1, &p, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "nvme_qd=64: an option of dev=nvme; this stack is ram");
	snprintf(p.lower, sizeof(p.lower), "ram");
	assert_int_equal(blk_dev_check_given(scsi, 1, &p, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "nvme_qd=64: an option of dev=nvme; this stack is scsi on ram");
	assert_int_equal(blk_dev_check_given(nvme, 1, &p, err, sizeof(err)), 0);

	/* a null knob: taken by null on top or as a lower; two problems */
	p = defaults();
	p.completion_nsec = 20000;
	give(&p, "null", "completion_nsec");
	p.scsi_wp = true;
	give(&p, "scsi", "scsi_wp");
	assert_int_equal(blk_dev_check_given(ram, 1, &p, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err,
			    "completion_nsec=20us: an option of dev=null, and of lower=null under nvme, scsi; this stack is ram\n"
			    "scsi_wp=1: an option of dev=scsi; this stack is ram");
	assert_int_equal(blk_dev_check_given(null_ram, 2, &p, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "scsi_wp=1: an option of dev=scsi; the stacks are null, ram");
	p.scsi_wp = false;
	p.given[0] = p.given[1] = 0;
	give(&p, "null", "completion_nsec");
	snprintf(p.lower, sizeof(p.lower), "null");
	assert_int_equal(blk_dev_check_given(scsi, 1, &p, err, sizeof(err)), 0);
	assert_int_equal(blk_dev_check_given(nvme, 1, &p, err, sizeof(err)), 0);

	/* what a lower refuses: refused there, taken by null on top */
	p.timeout_every = 100;
	give(&p, "null", "timeout_every");
	assert_int_equal(blk_dev_check_given(nvme, 1, &p, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "timeout_every=100: not for a null lower (dev=nvme on lower=null): "));
	assert_int_equal(blk_dev_check_given(null_nvme, 2, &p, err, sizeof(err)), 0);
	p.timeout_every = 0; /* what the lower gets anyway */
	assert_int_equal(blk_dev_check_given(nvme, 1, &p, err, sizeof(err)), 0);

	/* a uring lower: no registered buffers, no DEFER_TASKRUN */
	p = defaults();
	snprintf(p.lower, sizeof(p.lower), "uring");
	snprintf(p.filename, sizeof(p.filename), "/tmp/x.img");
	give(&p, "uring", "filename");
	give(&p, "uring", "fixedbufs"); /* its default, 1 */
	p.uring_taskrun = 1; /* defer */
	give(&p, "uring", "uring_taskrun");
	assert_int_equal(blk_dev_check_given(scsi, 1, &p, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "fixedbufs=1: not for a uring lower (dev=scsi on lower=uring): "));
	assert_non_null(strstr(err, "\nuring_taskrun=defer: not for a uring lower (dev=scsi on lower=uring): "));
	p.fixedbufs = false;
	p.uring_taskrun = 2; /* signal */
	p.sqthread_poll = true;
	give(&p, "uring", "sqthread_poll");
	assert_int_equal(blk_dev_check_given(scsi, 1, &p, err, sizeof(err)), 0);

	/* the stacks themselves are checked as blk_dev_open() would */
	assert_int_equal(blk_dev_check_given(bogus, 1, &p, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "dev=bogus: unknown device, allowed null, ram, uring, nvme, scsi, iscsi");
	p.filename[0] = '\0';
	assert_int_equal(blk_dev_check_given(nvme, 1, &p, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "lower=uring: needs filename=PATH"));
}

static void end_io(struct blk_bio *bio)
{
	(void)bio;
}

static int io(struct blk_dev *dev, uint8_t op, uint64_t off, void *buf)
{
	struct iovec iov = { .iov_base = buf, .iov_len = 4096 };
	struct blk_bio bio = { 0 };
	struct blk_mq_ctx *ctx;
	int ret;

	assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
	bio.bi_op = op;
	bio.bi_offset = off;
	bio.bi_size = 4096;
	bio.bi_vcnt = 1;
	bio.bi_io_vec = &iov;
	bio.bi_end_io = end_io;
	assert_int_equal(blk_submit(ctx, &bio), 0);
	assert_int_equal(blk_drain(ctx, 10000000000ull), 0);
	ret = bio.bi_status;
	blk_ctx_detach(ctx);
	return ret;
}

/* Write a block, read it back: whether the device kept it. */
static bool keeps_data(struct blk_dev *dev)
{
	static char w[4096], r[4096];

	memset(w, 0x6b, sizeof(w));
	memset(r, 0, sizeof(r));
	assert_int_equal(io(dev, BLK_OP_WRITE, 8192, w), BLK_STS_OK);
	assert_int_equal(io(dev, BLK_OP_READ, 8192, r), BLK_STS_OK);
	return !memcmp(w, r, sizeof(w));
}

static void test_open(void **state)
{
	struct blk_dev_open_args a = { .size = 16 << 20, .nr_threads = 1 };
	struct blk_dev_params p = defaults();
	struct blk_dev_info info;
	struct blk_dev *dev;
	char err[512], path[] = "/tmp/blkstack-registry-XXXXXX";
	int fd;

	(void)state;
	assert_int_equal(blk_dev_open("ram", &p, &a, &dev, err, sizeof(err)), 0);
	blk_dev_get_info(dev, &info);
	assert_int_equal(info.capacity, 16 << 20);
	assert_true(keeps_data(dev));
	blk_dev_close(dev);

	/* nvme on its default lower (ram) and on null */
	assert_int_equal(blk_dev_open("nvme", &p, &a, &dev, err, sizeof(err)), 0);
	assert_true(keeps_data(dev));
	blk_dev_close(dev);
	/*
	 * On null the commands complete and move no data.  What a read
	 * leaves in the buffer is not defined (under ThreadSanitizer the
	 * host's bounce buffer handed back the previous write's data), so
	 * only the statuses are checked; bench refuses verify there
	 * (test_dev_registry.sh).
	 */
	snprintf(p.lower, sizeof(p.lower), "null");
	assert_int_equal(blk_dev_open("nvme", &p, &a, &dev, err, sizeof(err)), 0);
	{
		static char b[4096];

		assert_int_equal(io(dev, BLK_OP_WRITE, 8192, b), BLK_STS_OK);
		assert_int_equal(io(dev, BLK_OP_READ, 8192, b), BLK_STS_OK);
	}
	blk_dev_close(dev);

	/* nvme on a file through uring: the data lands in the file */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 16 << 20), 0);
	snprintf(p.lower, sizeof(p.lower), "uring");
	snprintf(p.filename, sizeof(p.filename), "%s", path);
	assert_int_equal(blk_dev_open("nvme", &p, &a, &dev, err, sizeof(err)), 0);
	assert_true(keeps_data(dev));
	blk_dev_close(dev);
	{
		char back[4096];

		assert_int_equal(pread(fd, back, sizeof(back), 8192), 4096);
		assert_int_equal(back[0], 0x6b);
		assert_int_equal(back[4095], 0x6b);
	}
	close(fd);
	unlink(path);

	/* the errors name the driver and what is allowed */
	p = defaults();
	assert_int_equal(blk_dev_open("iscsi-not-yet", &p, &a, &dev, err,
				      sizeof(err)), -EINVAL);
	assert_string_equal(err, "dev=iscsi-not-yet: unknown device, allowed null, ram, uring, nvme, scsi, iscsi");
	assert_int_equal(blk_dev_open("uring", &p, &a, &dev, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "dev=uring needs filename=PATH"));
	snprintf(p.elevator, sizeof(p.elevator), "bfq");
	assert_int_equal(blk_dev_open("ram", &p, &a, &dev, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "elevator=bfq: allowed none, mq-deadline");
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * A null lower takes null's knobs beneath nvme and scsi: its timer
 * completion (a lower bound on the request's time, whatever the machine's
 * load) and its errors, which reach the consumer after the upper driver's
 * own handling.
 */
static void test_null_lower(void **state)
{
	static const char *const uppers[] = { "nvme", "scsi" };
	struct blk_dev_open_args a = { .size = 16 << 20, .nr_threads = 1 };
	static char b[4096];
	struct blk_dev_params p;
	struct blk_dev *dev;
	char err[512];
	unsigned int i;
	uint64_t t;

	(void)state;
	for (i = 0; i < 2; i++) {
		p = defaults();
		snprintf(p.lower, sizeof(p.lower), "null");
		p.irqmode = 2;
		p.completion_nsec = 5000000; /* 5 ms */
		assert_int_equal(blk_dev_open(uppers[i], &p, &a, &dev, err,
					      sizeof(err)), 0);
		assert_int_equal(io(dev, BLK_OP_READ, 8192, b), BLK_STS_OK);
		t = now_ns();
		assert_int_equal(io(dev, BLK_OP_READ, 8192, b), BLK_STS_OK);
		assert_true(now_ns() - t >= 5000000);
		blk_dev_close(dev);

		p = defaults();
		snprintf(p.lower, sizeof(p.lower), "null");
		p.fail_every = 1;
		assert_int_equal(blk_dev_open(uppers[i], &p, &a, &dev, err,
					      sizeof(err)), 0);
		assert_int_not_equal(io(dev, BLK_OP_READ, 8192, b), BLK_STS_OK);
		blk_dev_close(dev);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_lower),
		cmocka_unit_test(test_given),
		cmocka_unit_test(test_open),
		cmocka_unit_test(test_null_lower),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
