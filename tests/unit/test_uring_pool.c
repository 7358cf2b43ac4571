// SPDX-License-Identifier: MIT
/*
 * The uring driver's thread-pool engine (src/drivers/uring/pool.c) and
 * the engine choice: two hardware queues driven at once by two threads,
 * with more requests than workers, read back and compared; blk_wait()
 * sleeping in the pool's wait op (completion_wait=sleep); the automatic
 * fallback when a seccomp filter refuses io_uring_setup (EPERM and
 * ENOSYS), with its notice, while uring_engine=io_uring keeps the error;
 * the refusal causes in words; out-of-range engine and pool_threads.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "blkstack/uring.h"
#include "drivers/uring/uring_int.h"

#define BS 4096
#define NR 256          /* blocks per thread, more than the queue depth */

static char dir[] = "/tmp/blkstack-pool-XXXXXX";

static int setup_dir(void **state)
{
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static int create(const char *p, uint8_t engine, uint32_t threads,
		  uint32_t hw_queues, uint8_t wait_mode, struct blk_dev **dev,
		  char *err, size_t errlen)
{
	struct blk_uring_config c = { 0 };

	c.path = p;
	c.create_size = 4 << 20;
	c.engine = engine;
	c.pool_threads = threads;
	c.queue.queue_depth = 32;
	c.queue.nr_hw_queues = hw_queues;
	c.queue.wait_mode = wait_mode;
	err[0] = 0;
	return blk_uring_create(&c, dev, err, errlen);
}

struct job {
	struct blk_dev *dev;
	unsigned int idx;       /* the thread's range: blocks idx*NR.. */
	bool sleep;             /* wait with blk_wait(), else blk_poll() */
	unsigned int done, errors;
	struct blk_bio bio[NR];
	struct iovec iov[NR];
	char *buf;
};

static void job_end_io(struct blk_bio *bio)
{
	struct job *j = bio->bi_private;

	j->done++;
	if (bio->bi_status)
		j->errors++;
}

/* All NR blocks of the range in one go: more than the tags, so requeues. */
static void job_pass(struct job *j, struct blk_mq_ctx *ctx, unsigned int op)
{
	unsigned int i;

	j->done = 0;
	for (i = 0; i < NR; i++) {
		struct blk_bio *b = &j->bio[i];

		memset(b, 0, sizeof(*b));
		j->iov[i] = (struct iovec){ j->buf + (size_t)i * BS, BS };
		b->bi_op = (uint8_t)op;
		b->bi_offset = ((uint64_t)j->idx * NR + i) * BS;
		b->bi_size = BS;
		b->bi_vcnt = 1;
		b->bi_io_vec = &j->iov[i];
		b->bi_end_io = job_end_io;
		b->bi_private = j;
		while (blk_submit(ctx, b) == -EAGAIN) /* no tag: reap some */
			j->sleep ? blk_wait(ctx, 1000000000ull) : blk_poll(ctx);
	}
	while (j->done < NR) {
		if (j->sleep)
			blk_wait(ctx, 1000000000ull);
		else
			blk_poll(ctx);
	}
}

static void *job_thread(void *arg)
{
	struct job *j = arg;
	struct blk_mq_ctx *ctx;
	unsigned int i;
	char *want = malloc((size_t)NR * BS);

	j->buf = malloc((size_t)NR * BS);
	if (!want || !j->buf || blk_ctx_attach(j->dev, &ctx)) {
		j->errors = 1000;
		free(want);
		return NULL;
	}
	for (i = 0; i < NR * BS; i++)
		want[i] = (char)(i / BS * 31 + j->idx * 7 + i);
	memcpy(j->buf, want, (size_t)NR * BS);
	job_pass(j, ctx, BLK_OP_WRITE);
	memset(j->buf, 0, (size_t)NR * BS);
	job_pass(j, ctx, BLK_OP_READ);
	if (memcmp(want, j->buf, (size_t)NR * BS))
		j->errors += 10000;
	blk_ctx_detach(ctx);
	free(want);
	free(j->buf);
	return NULL;
}

/* Two threads, two hardware queues, 3 workers each, 256 requests deep. */
static void run_two_threads(uint8_t wait_mode, bool sleep)
{
	struct blk_dev *dev;
	struct job jobs[2];
	pthread_t t[2];
	char p[300], err[512];
	unsigned int i;

	snprintf(p, sizeof(p), "%s/two-%u.img", dir, wait_mode);
	assert_int_equal(create(p, BLK_URING_ENGINE_POOL, 3, 2, wait_mode, &dev,
				err, sizeof(err)), 0);
	for (i = 0; i < 2; i++) {
		memset(&jobs[i], 0, sizeof(jobs[i]));
		jobs[i].dev = dev;
		jobs[i].idx = i;
		jobs[i].sleep = sleep;
		assert_int_equal(pthread_create(&t[i], NULL, job_thread, &jobs[i]), 0);
	}
	for (i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(jobs[i].errors, 0);
		assert_int_equal(jobs[i].done, NR);
	}
	blk_dev_close(dev); /* joins the workers */
}

static void test_two_queues_poll(void **state)
{
	run_two_threads(BLK_WAIT_SPIN, false);
}

/* blk_wait() with completion_wait=sleep: the pool's wait op is woken. */
static void test_two_queues_sleep(void **state)
{
	run_two_threads(BLK_WAIT_SLEEP, true);
}

static void test_config_errors(void **state)
{
	struct blk_dev *dev = NULL;
	char p[300], err[512];

	snprintf(p, sizeof(p), "%s/cfg.img", dir);
	assert_int_equal(create(p, 3, 0, 1, 0, &dev, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "uring_engine=3: allowed auto"));
	assert_int_equal(create(p, BLK_URING_ENGINE_POOL,
				BLK_URING_POOL_THREADS_MAX + 1, 1, 0, &dev, err,
				sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "pool_threads=257: allowed 1..256"));
	/* more workers than tags: fine, only as many as tags are started */
	assert_int_equal(create(p, BLK_URING_ENGINE_POOL, 200, 1, 0, &dev, err,
				sizeof(err)), 0);
	blk_dev_close(dev);
}

static void test_refused_cause(void **state)
{
	assert_string_equal(uring_refused_cause(-EPERM, 2, false),
			    "kernel.io_uring_disabled=2");
	/* the sysctl refuses whatever else is in place */
	assert_string_equal(uring_refused_cause(-EPERM, 2, true),
			    "kernel.io_uring_disabled=2");
	assert_non_null(strstr(uring_refused_cause(-EPERM, 1, false),
			       "kernel.io_uring_group"));
	assert_string_equal(uring_refused_cause(-EPERM, 0, true),
			    "a seccomp filter");
	assert_string_equal(uring_refused_cause(-EPERM, -1, true),
			    "a seccomp filter");
	assert_string_equal(uring_refused_cause(-EPERM, 0, false),
			    "kernel.io_uring_disabled or a seccomp filter");
	assert_non_null(strstr(uring_refused_cause(-ENOSYS, -1, true),
			       "seccomp"));
	assert_non_null(strstr(uring_refused_cause(-ENOSYS, -1, false),
			       "before 5.1"));
}

/* As tests/helpers/deny_syscall.c: io_uring_setup fails with @err. */
static int deny_io_uring_setup(unsigned int err)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(filter) / sizeof(filter[0]),
		.filter = filter,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

static void end_noop(struct blk_bio *bio)
{
	*(int *)bio->bi_private = 1;
}

/*
 * In a child under the filter: io_uring forced fails with today's error;
 * auto falls back to the pool (one notice on stderr) and does I/O.
 * Exit status: 0, 77 without seccomp, or the number of the failed check.
 */
static int refused_child(unsigned int errnum, const char *p,
			    const char *log)
{
	static char w[BS], r[BS];
	struct blk_dev *dev = NULL;
	struct blk_mq_ctx *ctx;
	struct iovec iov;
	struct blk_bio b;
	char err[512];
	int ret, done, fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || dup2(fd, 2) < 0)
		return 10;
	if (deny_io_uring_setup(errnum))
		return 77;
	if (create(p, BLK_URING_ENGINE_IO_URING, 0, 1, 0, &dev, err,
		   sizeof(err)) != -(int)errnum)
		return 1;
	if (!strstr(err, "io_uring: ") || !strstr(err, strerror((int)errnum)))
		return 2;
	if (create(p, BLK_URING_ENGINE_AUTO, 0, 1, 0, &dev, err, sizeof(err)))
		return 3;
	blk_dev_close(dev);
	/* a second device: the notice is not repeated */
	if (create(p, BLK_URING_ENGINE_AUTO, 0, 1, 0, &dev, err, sizeof(err)))
		return 4;
	if (blk_ctx_attach(dev, &ctx))
		return 5;
	memset(w, 0x3c, BS);
	for (ret = 0; ret < 2; ret++) {
		memset(&b, 0, sizeof(b));
		iov = (struct iovec){ ret ? r : w, BS };
		b.bi_op = ret ? BLK_OP_READ : BLK_OP_WRITE;
		b.bi_offset = 8192;
		b.bi_size = BS;
		b.bi_vcnt = 1;
		b.bi_io_vec = &iov;
		b.bi_end_io = end_noop;
		b.bi_private = &done;
		done = 0;
		if (blk_submit(ctx, &b) || blk_drain(ctx, 10000000000ull) ||
		    !done || b.bi_status)
			return 6;
	}
	if (memcmp(w, r, BS))
		return 7;
	blk_ctx_detach(ctx);
	blk_dev_close(dev);
	return 0;
}

static void check_refused(unsigned int errnum)
{
	char p[300], log[300], line[1024], want[600];
	unsigned int lines = 0;
	bool found = false;
	int status;
	pid_t pid;
	FILE *f;

	snprintf(p, sizeof(p), "%s/refused-%u.img", dir, errnum);
	snprintf(log, sizeof(log), "%s/refused-%u.log", dir, errnum);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(refused_child(errnum, p, log));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		skip(); /* no seccomp here */
	assert_int_equal(WEXITSTATUS(status), 0);
	snprintf(want, sizeof(want),
		 "blkstack: uring: %s: io_uring refused (io_uring_setup: %s: a seccomp filter",
		 p, strerror((int)errnum));
	f = fopen(log, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		lines++;
		if (!strncmp(line, want, strlen(want)) &&
		    strstr(line, "; using the pread/pwrite thread pool (uring_engine=pool)"))
			found = true;
	}
	fclose(f);
	if (!found)
		fail_msg("no notice '%s...' in %s", want, log);
	assert_int_equal(lines, 1); /* once per process */
}

static void test_refused_eperm_falls_back(void **state)
{
	check_refused(EPERM);
}

static void test_refused_enosys_falls_back(void **state)
{
	check_refused(ENOSYS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_queues_poll),
		cmocka_unit_test(test_two_queues_sleep),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_refused_cause),
		cmocka_unit_test(test_refused_eperm_falls_back),
		cmocka_unit_test(test_refused_enosys_falls_back),
	};

	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
