// SPDX-License-Identifier: MIT
/*
 * slow_io.so - an LD_PRELOAD shim that makes preadv2() and pwritev2() slow,
 * as on a network or FUSE file system, to exercise the uring driver's
 * inline issue giving up (docs/uring.md, "Issue: through the ring, or
 * inline").
 *
 *   SLOW_IO_US=N     sleep N microseconds before each call (default 100)
 *   SLOW_IO_COUNT    a file the shim writes the number of slowed calls to
 *                    at exit (optional)
 *
 * Only the calling thread is slowed; io_uring's own workers call the file
 * system from the kernel and are not.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <time.h>

static atomic_ulong slowed;

static void slow(void)
{
	const char *e = getenv("SLOW_IO_US");
	long us = e ? atol(e) : 100;
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	atomic_fetch_add(&slowed, 1);
	nanosleep(&ts, NULL);
}

ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	static ssize_t (*real)(int, const struct iovec *, int, off_t, int);

	if (!real)
		real = (ssize_t (*)(int, const struct iovec *, int, off_t, int))
			dlsym(RTLD_NEXT, "preadv2");
	slow();
	return real(fd, iov, cnt, off, flags);
}

ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	static ssize_t (*real)(int, const struct iovec *, int, off_t, int);

	if (!real)
		real = (ssize_t (*)(int, const struct iovec *, int, off_t, int))
			dlsym(RTLD_NEXT, "pwritev2");
	slow();
	return real(fd, iov, cnt, off, flags);
}

__attribute__((destructor)) static void report(void)
{
	const char *path = getenv("SLOW_IO_COUNT");
	FILE *f;

	if (!path || !(f = fopen(path, "w")))
		return;
	fprintf(f, "%lu\n", (unsigned long)atomic_load(&slowed));
	fclose(f);
}
