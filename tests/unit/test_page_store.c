// SPDX-License-Identifier: MIT
/*
 * page store (ram, null memory_backed): memory follows the data written
 * (spaced 4 KiB writes over a large sparse capacity commit 4 KiB each, not
 * 2 MiB; the process's resident set agrees with ps_committed_bytes()),
 * discard reads back zeros and gives memory back, freed pages are reused,
 * block status, and data integrity with writers, readers and discards on
 * several threads at once (a read never sees another block's data; two
 * first writes into one page both land).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "drivers/ram/page_store.h"

#define KiB 1024ull
#define MiB (1024 * KiB)
#define GiB (1024 * MiB)

static int rw1(struct page_store *ps, int write, uint64_t off, void *buf,
	       size_t len)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return ps_rw(ps, write, off, len, &iov, 1);
}

/* Resident set of this process, bytes (/proc/self/statm). */
static uint64_t rss_bytes(void)
{
	unsigned long size, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%lu %lu", &size, &res), 2);
	fclose(f);
	return (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* What the store may commit besides 1.25x the data: one slab populated
 * ahead, the top array and its bitmap (a page each: one top entry per
 * 64 GiB), the first tables, one page of the free list. */
static uint64_t fixed_bound(const struct page_store *ps)
{
	(void)ps;
	return PS_SLAB_SIZE + 4 * PS_PAGE_SIZE + 2 * (PS_PAGE_SIZE + 16);
}

/*
 * The issue: 2048 writes of 4 KiB spaced 2 MiB apart (8 MiB of data) made
 * the old store commit a 2 MiB chunk each, 4 GiB.  Here over 64 GiB of
 * capacity, so a per-chunk commit would be impossible to miss.
 */
static void test_spaced_writes_commit_what_they_write(void **state)
{
	const unsigned int n = 2048;
	struct page_store ps;
	static char buf[4096];
	uint64_t rss0, rss1, data, committed, i;

	rss0 = rss_bytes();
	assert_int_equal(ps_init(&ps, 64 * GiB), 0);
	for (i = 0; i < n; i++) {
		memset(buf, (int)(i % 251) + 1, sizeof(buf));
		assert_int_equal(rw1(&ps, 1, i * 32 * MiB, buf, sizeof(buf)), 0);
	}
	data = (uint64_t)n * 4096;
	committed = ps_committed_bytes(&ps);
	assert_int_equal(ps_data_bytes(&ps), data);
	assert_true(committed >= data);
	assert_true(committed <= data + data / 4 + fixed_bound(&ps));
	/* the kernel agrees: what ps_committed_bytes() leaves out (the top
	 * level's untouched pages, malloc's arena) is not resident either */
	rss1 = rss_bytes();
#ifndef __SANITIZE_THREAD__
	/* ThreadSanitizer maps shadow memory for every page touched */
	assert_true(rss1 - rss0 <= data + data / 4 + fixed_bound(&ps));
#else
	(void)rss0;
	(void)rss1;
#endif
	for (i = 0; i < n; i += 97) {
		assert_int_equal(rw1(&ps, 0, i * 32 * MiB, buf, sizeof(buf)), 0);
		assert_int_equal((unsigned char)buf[0], i % 251 + 1);
		assert_int_equal((unsigned char)buf[4095], i % 251 + 1);
	}
	ps_destroy(&ps);
}

/* Reads of never-written pages return zeros and allocate nothing. */
static void test_reads_of_holes_allocate_nothing(void **state)
{
	struct page_store ps;
	static char buf[65536];
	uint64_t c0;

	assert_int_equal(ps_init(&ps, 1 * GiB), 0);
	c0 = ps_committed_bytes(&ps);
	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(rw1(&ps, 0, 123 * MiB + 512, buf, sizeof(buf)), 0);
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0);
	assert_int_equal(ps_committed_bytes(&ps), c0);
	assert_int_equal(ps_data_bytes(&ps), 0);
	ps_destroy(&ps);
}

/*
 * Discard gives the memory back (committed drops by the pages freed) and
 * reads back zeros; a later write reuses the freed pages rather than
 * committing new ones.
 */
static void test_discard_gives_memory_back(void **state)
{
	const uint64_t len = 8 * MiB;
	struct page_store ps;
	char *buf = malloc(len);
	uint64_t full, after, slabs, i;

	assert_non_null(buf);
	assert_int_equal(ps_init(&ps, 1 * GiB), 0);
	memset(buf, 0x3c, len);
	assert_int_equal(rw1(&ps, 1, 100 * MiB, buf, len), 0);
	full = ps_committed_bytes(&ps);
	assert_int_equal(ps_data_bytes(&ps), len);

	/* whole pages and a partial page at each end */
	assert_int_equal(ps_zero(&ps, 100 * MiB + 1000, len - 2000), 0);
	assert_int_equal(ps_data_bytes(&ps), 2 * 4096);
	after = ps_committed_bytes(&ps);
	/* less the pages freed, plus the free list's 4 bytes per page */
	assert_true(after <= full - (len - 2 * 4096) +
			     (len / 4096) * sizeof(uint32_t) + PS_PAGE_SIZE);
	assert_int_equal(rw1(&ps, 0, 100 * MiB, buf, len), 0);
	for (i = 0; i < len; i++)
		assert_int_equal((unsigned char)buf[i],
				 i < 1000 || i >= len - 1000 ? 0x3c : 0);

	/* write zeroes of everything: nothing left */
	assert_int_equal(ps_zero(&ps, 0, 1 * GiB), 0);
	assert_int_equal(ps_data_bytes(&ps), 0);

	/* the freed pages come back before any new slab is committed */
	slabs = atomic_load(&ps.alloc.committed_end);
	memset(buf, 0x5a, len);
	assert_int_equal(rw1(&ps, 1, 500 * MiB, buf, len), 0);
	assert_int_equal(atomic_load(&ps.alloc.committed_end), slabs);
	assert_int_equal(ps_data_bytes(&ps), len);
	memset(buf, 0, len);
	assert_int_equal(rw1(&ps, 0, 500 * MiB, buf, len), 0);
	for (i = 0; i < len; i += 4093)
		assert_int_equal((unsigned char)buf[i], 0x5a);
	ps_destroy(&ps);
	free(buf);
}

static void test_block_status(void **state)
{
	struct page_store ps;
	struct blk_extent ext[8];
	static char buf[3 * 4096];

	assert_int_equal(ps_init(&ps, 4 * MiB), 0);
	memset(buf, 1, sizeof(buf));
	/* pages 300..302 inside one leaf (256..319), pages 319..321 across
	 * the edge to the next, then page 320 discarded */
	assert_int_equal(rw1(&ps, 1, 300 * 4096, buf, sizeof(buf)), 0);
	assert_int_equal(rw1(&ps, 1, 319 * 4096, buf, sizeof(buf)), 0);
	assert_int_equal(ps_zero(&ps, 320 * 4096, 4096), 0);
	assert_int_equal(ps_block_status(&ps, 0, 4 * MiB, ext, 8), 7);
	assert_int_equal(ext[0].length, 300 * 4096);
	assert_int_equal(ext[0].flags, BLK_EXTENT_HOLE | BLK_EXTENT_ZERO);
	assert_int_equal(ext[1].length, 3 * 4096);
	assert_int_equal(ext[1].flags, 0);
	assert_int_equal(ext[2].length, 16 * 4096);
	assert_int_equal(ext[3].length, 4096); /* page 319 */
	assert_int_equal(ext[3].flags, 0);
	assert_int_equal(ext[4].length, 4096); /* 320, discarded */
	assert_int_equal(ext[4].flags, BLK_EXTENT_HOLE | BLK_EXTENT_ZERO);
	assert_int_equal(ext[5].length, 4096); /* 321 */
	assert_int_equal(ext[5].flags, 0);
	assert_int_equal(ext[6].length, (1024 - 322) * 4096);
	assert_int_equal(ext[6].flags, BLK_EXTENT_HOLE | BLK_EXTENT_ZERO);
	/* extents stop at nr_ext; a range starting mid-page */
	assert_int_equal(ps_block_status(&ps, 0, 4 * MiB, ext, 2), 2);
	assert_int_equal(ps_block_status(&ps, 300 * 4096 + 100, 200, ext, 8), 1);
	assert_int_equal(ext[0].length, 200);
	assert_int_equal(ext[0].flags, 0);
	assert_true(ps_allocated(&ps, 321 * 4096 + 5));
	assert_false(ps_allocated(&ps, 320 * 4096));
	ps_destroy(&ps);
}

/*
 * Concurrency.  Every 8-byte word a writer stores in page P is
 * (P << 20 | generation); a page read back must hold only zeros or words
 * tagged P.  A word tagged with another page means a discard freed a page
 * under a copy and a write for another block reused it.
 */
#define NR_PAGES 512u /* 2 MiB: 8 leaves, pages reused often */
#define WORD(pg, gen) ((uint64_t)(pg) << 20 | ((gen) & 0xfffff))

struct stress {
	struct page_store ps;
	_Atomic int stop;
	_Atomic unsigned long bad, reads, frees;
};

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

struct stress_arg {
	struct stress *s;
	unsigned int id;
};

static void *writer(void *p)
{
	struct stress_arg *a = p;
	uint64_t buf[512], x = 0x9e3779b97f4a7c15ull * (a->id + 1);
	unsigned int gen = 0, i;

	while (!atomic_load(&a->s->stop)) {
		uint64_t pg = xorshift(&x) % NR_PAGES;

		gen++;
		for (i = 0; i < 512; i++)
			buf[i] = WORD(pg, gen);
		if (rw1(&a->s->ps, 1, pg * 4096, buf, sizeof(buf)))
			atomic_fetch_add(&a->s->bad, 1);
	}
	return NULL;
}

static void *reader(void *p)
{
	struct stress_arg *a = p;
	uint64_t buf[2 * 512], x = 0x1234567ull * (a->id + 1);
	unsigned int i;

	while (!atomic_load(&a->s->stop)) {
		uint64_t pg = xorshift(&x) % (NR_PAGES - 1);

		/* two pages in one call: a copy spanning a leaf edge too */
		rw1(&a->s->ps, 0, pg * 4096, buf, sizeof(buf));
		for (i = 0; i < 2 * 512; i++) {
			uint64_t want = pg + i / 512;

			if (buf[i] && buf[i] >> 20 != want) {
				atomic_fetch_add(&a->s->bad, 1);
				break;
			}
		}
		atomic_fetch_add(&a->s->reads, 1);
	}
	return NULL;
}

static void *discarder(void *p)
{
	struct stress_arg *a = p;
	uint64_t x = 0xabcdefull * (a->id + 1);

	while (!atomic_load(&a->s->stop)) {
		uint64_t pg = xorshift(&x) % NR_PAGES;
		uint64_t n = 1 + xorshift(&x) % 8;

		if (pg + n > NR_PAGES)
			n = NR_PAGES - pg;
		/* mostly whole pages, sometimes a partial one (zeroed in
		 * place: the words stay 0 or tagged) */
		if (xorshift(&x) % 4)
			ps_zero(&a->s->ps, pg * 4096, n * 4096);
		else /* the tail of one page, from a word boundary */
			ps_zero(&a->s->ps, pg * 4096 + 8 * (1 + x % 511),
				4096 - 8 * (1 + x % 511));
		atomic_fetch_add(&a->s->frees, 1);
	}
	return NULL;
}

/*
 * Regression: a 1 PiB device took 32 s to close (ps_destroy() walked every
 * top-level slot) and 18 s to describe (block status walked them too); a
 * 1024 PiB one ignored SIGTERM for minutes.  The bitmap of top entries
 * bounds both by the data.  Under ctest's timeout a walk of 2^32 slots per
 * call (seconds each) over these eight calls would fail the test.
 */
static void test_huge_sparse_device_is_cheap(void **state)
{
	static const uint64_t caps[] = { 1ull << 50, 1ull << 60 };
	char buf[4096];
	struct blk_extent ext[8];

	(void)state;
	for (unsigned int c = 0; c < 2; c++) {
		struct page_store ps;
		uint64_t cap = caps[c], far = cap - (1ull << 40);

		assert_int_equal(ps_init(&ps, cap), 0);
		memset(buf, 0x5a, sizeof(buf));
		assert_int_equal(rw1(&ps, 1, 1ull << 30, buf, sizeof(buf)), 0);
		assert_int_equal(rw1(&ps, 1, far, buf, sizeof(buf)), 0);
		for (int rep = 0; rep < 4; rep++) {
			assert_int_equal(ps_block_status(&ps, 0, cap, ext, 8), 5);
			assert_int_equal(ext[0].length, 1ull << 30);
			assert_int_equal(ext[0].flags, BLK_EXTENT_HOLE | BLK_EXTENT_ZERO);
			assert_int_equal(ext[1].length, 4096);
			assert_int_equal(ext[1].flags, 0);
			assert_int_equal(ext[2].length, far - (1ull << 30) - 4096);
			assert_int_equal(ext[3].length, 4096);
			assert_int_equal(ext[3].flags, 0);
			assert_int_equal(ext[4].length, cap - far - 4096);
		}
		/* a discard of the whole device walks the tables made */
		assert_int_equal(ps_zero(&ps, 0, cap), 0);
		assert_int_equal(ps_data_bytes(&ps), 0);
		assert_int_equal(ps_block_status(&ps, 0, cap, ext, 8), 1);
		assert_int_equal(ext[0].length, cap);
		assert_int_equal(ext[0].flags, BLK_EXTENT_HOLE | BLK_EXTENT_ZERO);
		ps_destroy(&ps);
	}
	{
		struct page_store ps;

		assert_int_equal(ps_init(&ps, (1ull << 60) + 4096), -EFBIG);
	}
}

/*
 * Regression: ps_init() of 1 EiB failed with ENOMEM on a CI machine: the
 * flat index of leaf pointers was 32 TiB of address space (1 PiB: 32 GiB).
 * The radix index needs 128 MiB for 1 EiB; with address space limited to
 * 4 GiB (ulimit -v, in a child: the limit stays there) both sizes open,
 * take writes and read them back.  Not under a sanitizer, whose shadow
 * memory needs terabytes of address space itself.
 */
static void test_huge_device_within_limited_address_space(void **state)
{
	pid_t pid;
	int status;

	(void)state;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	skip();
#endif
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		static const uint64_t caps[] = { 1ull << 50, 1ull << 60 };
		struct rlimit rl = { 4 * GiB, 4 * GiB };
		char buf[4096], back[4096];

		if (setrlimit(RLIMIT_AS, &rl))
			_exit(10);
		memset(buf, 0xa5, sizeof(buf));
		for (unsigned int c = 0; c < 2; c++) {
			struct page_store ps;

			if (ps_init(&ps, caps[c]))
				_exit(11 + (int)c);
			if (rw1(&ps, 1, caps[c] - 8192, buf, sizeof(buf)) ||
			    rw1(&ps, 0, caps[c] - 8192, back, sizeof(back)) ||
			    memcmp(buf, back, sizeof(buf)))
				_exit(13 + (int)c);
			ps_destroy(&ps);
		}
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_concurrent_writers_readers_discards(void **state)
{
	static struct stress s;
	void *(*fn[6])(void *) = { writer, writer, reader, reader, discarder,
				   discarder };
	struct stress_arg args[6];
	pthread_t t[6];
	uint64_t buf[512], pg, nr = 0;
	unsigned int i;

	memset(&s, 0, sizeof(s));
	assert_int_equal(ps_init(&s.ps, NR_PAGES * 4096ull), 0);
	for (i = 0; i < 6; i++) {
		args[i].s = &s;
		args[i].id = i;
		assert_int_equal(pthread_create(&t[i], NULL, fn[i], &args[i]), 0);
	}
	usleep(400 * 1000);
	atomic_store(&s.stop, 1);
	for (i = 0; i < 6; i++)
		pthread_join(t[i], NULL);
	print_message("%lu reads, %lu discards\n", atomic_load(&s.reads),
		      atomic_load(&s.frees));
	assert_int_equal(atomic_load(&s.bad), 0);
	assert_true(atomic_load(&s.reads) > 0 && atomic_load(&s.frees) > 0);

	/* at rest: each page zeros or tagged with its number; the page count
	 * matches what block status reports */
	for (pg = 0; pg < NR_PAGES; pg++) {
		assert_int_equal(rw1(&s.ps, 0, pg * 4096, buf, sizeof(buf)), 0);
		for (i = 0; i < 512; i++)
			if (buf[i])
				assert_int_equal(buf[i] >> 20, pg);
		nr += ps_allocated(&s.ps, pg * 4096);
	}
	assert_int_equal(ps_data_bytes(&s.ps), nr * 4096);
	assert_true(ps_committed_bytes(&s.ps) <=
		    nr * 4096 + nr * 4096 / 4 + fixed_bound(&s.ps) +
		    (PS_SLAB_SLACK + 1) * PS_SLAB_SIZE);
	ps_destroy(&s.ps);
}

/*
 * No lost installs: threads write different 512-byte sectors of the same
 * never-written pages at the same moment; one of them installs the page,
 * the others must copy into that page, not into one of their own that
 * loses the race.
 */
#define INSTALL_THREADS 4
#define INSTALL_ROUNDS 2000

struct install_arg {
	struct page_store *ps;
	pthread_barrier_t *bar;
	unsigned int id;
};

static void *installer(void *p)
{
	struct install_arg *a = p;
	char sec[512];
	unsigned int r;

	memset(sec, 'A' + (int)a->id, sizeof(sec));
	for (r = 0; r < INSTALL_ROUNDS; r++) {
		pthread_barrier_wait(a->bar);
		rw1(a->ps, 1, (uint64_t)r * 4096 + a->id * 512, sec, sizeof(sec));
	}
	return NULL;
}

static void test_racing_first_writes_all_land(void **state)
{
	struct page_store ps;
	pthread_barrier_t bar;
	struct install_arg args[INSTALL_THREADS];
	pthread_t t[INSTALL_THREADS];
	char page[4096];
	unsigned int i, r;

	assert_int_equal(ps_init(&ps, INSTALL_ROUNDS * 4096ull), 0);
	pthread_barrier_init(&bar, NULL, INSTALL_THREADS);
	for (i = 0; i < INSTALL_THREADS; i++) {
		args[i] = (struct install_arg){ &ps, &bar, i };
		pthread_create(&t[i], NULL, installer, &args[i]);
	}
	for (i = 0; i < INSTALL_THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&bar);
	for (r = 0; r < INSTALL_ROUNDS; r++) {
		assert_int_equal(rw1(&ps, 0, (uint64_t)r * 4096, page, 4096), 0);
		for (i = 0; i < INSTALL_THREADS; i++) {
			assert_int_equal(page[i * 512], 'A' + (int)i);
			assert_int_equal(page[i * 512 + 511], 'A' + (int)i);
		}
		assert_int_equal(page[INSTALL_THREADS * 512], 0);
	}
	/* losers gave their pages back */
	assert_int_equal(ps_data_bytes(&ps), INSTALL_ROUNDS * 4096ull);
	ps_destroy(&ps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spaced_writes_commit_what_they_write),
		cmocka_unit_test(test_reads_of_holes_allocate_nothing),
		cmocka_unit_test(test_discard_gives_memory_back),
		cmocka_unit_test(test_block_status),
		cmocka_unit_test(test_huge_sparse_device_is_cheap),
		cmocka_unit_test(test_huge_device_within_limited_address_space),
		cmocka_unit_test(test_concurrent_writers_readers_discards),
		cmocka_unit_test(test_racing_first_writes_all_land),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
