// SPDX-License-Identifier: MIT
/*
 * Named locks and their profile (blkstack/lock.h).  Classes live for the
 * process: a list registered once per name, never freed; counters are
 * relaxed atomics, since one class is shared by the locks of every device
 * and thread.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "blkstack/lock.h"

struct blk_lock_class {
	const char *name;
	struct blk_lock_class *next;
	_Atomic uint64_t con_bounces, contentions, acq_bounces, acquisitions;
	_Atomic uint64_t wait_min, wait_max, wait_total;
};

static atomic_bool lockstat_on;
static pthread_mutex_t classes_lock = PTHREAD_MUTEX_INITIALIZER; /* not profiled */
static struct blk_lock_class *classes;
static size_t nr_classes;
static __thread uint32_t self_tid;

int blk_lockstat_enable(bool on)
{
#ifndef BLK_LOCK_STATS
	if (on)
		return -EOPNOTSUPP;
#endif
	atomic_store(&lockstat_on, on);
	return 0;
}

bool blk_lockstat_enabled(void)
{
	return atomic_load(&lockstat_on);
}

static struct blk_lock_class *class_get(const char *name)
{
	struct blk_lock_class *c;

	pthread_mutex_lock(&classes_lock);
	for (c = classes; c; c = c->next)
		if (!strcmp(c->name, name))
			goto out;
	c = calloc(1, sizeof(*c));
	if (c) {
		c->name = name;
		atomic_init(&c->wait_min, UINT64_MAX);
		/* appended: the order of registration */
		if (!classes) {
			classes = c;
		} else {
			struct blk_lock_class *t = classes;

			while (t->next)
				t = t->next;
			t->next = c;
		}
		nr_classes++;
	}
out:
	pthread_mutex_unlock(&classes_lock);
	return c;
}

static int profile(struct blk_lock_class **cls, const char *name)
{
	*cls = NULL;
	if (!atomic_load_explicit(&lockstat_on, memory_order_relaxed))
		return 0;
	*cls = class_get(name ? name : "?");
	return *cls ? 0 : -ENOMEM;
}

int blk_mutex_init(struct blk_mutex *l, const char *name, int type)
{
	pthread_mutexattr_t attr;
	int ret;

	l->owner = 0;
	if (type >= 0) {
		pthread_mutexattr_init(&attr);
		pthread_mutexattr_settype(&attr, type);
		ret = pthread_mutex_init(&l->m, &attr);
		pthread_mutexattr_destroy(&attr);
	} else {
		ret = pthread_mutex_init(&l->m, NULL);
	}
	if (ret) {
		l->cls = NULL;
		return ret;
	}
	return profile(&l->cls, name);
}

void blk_mutex_destroy(struct blk_mutex *l)
{
	pthread_mutex_destroy(&l->m);
}

int blk_spin_init(struct blk_spinlock *l, const char *name)
{
	int ret = pthread_spin_init(&l->s, PTHREAD_PROCESS_PRIVATE);

	l->owner = 0;
	if (ret) {
		l->cls = NULL;
		return ret;
	}
	return profile(&l->cls, name);
}

void blk_spin_destroy(struct blk_spinlock *l)
{
	pthread_spin_destroy(&l->s);
}

static inline uint32_t tid(void)
{
	if (!self_tid)
		self_tid = (uint32_t)syscall(SYS_gettid);
	return self_tid;
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define ADD(field, v) atomic_fetch_add_explicit(&(field), (v), memory_order_relaxed)

/* Called with the lock held: its owner field is ours to read and write. */
static void account(struct blk_lock_class *c, uint32_t *owner, bool contended,
		    uint64_t wait)
{
	uint32_t me = tid();
	bool bounce = *owner && *owner != me;
	uint64_t v;

	*owner = me;
	ADD(c->acquisitions, 1);
	if (bounce)
		ADD(c->acq_bounces, 1);
	if (!contended)
		return;
	ADD(c->contentions, 1);
	if (bounce)
		ADD(c->con_bounces, 1);
	ADD(c->wait_total, wait);
	v = atomic_load_explicit(&c->wait_min, memory_order_relaxed);
	while (wait < v &&
	       !atomic_compare_exchange_weak_explicit(&c->wait_min, &v, wait,
						      memory_order_relaxed,
						      memory_order_relaxed))
		;
	v = atomic_load_explicit(&c->wait_max, memory_order_relaxed);
	while (wait > v &&
	       !atomic_compare_exchange_weak_explicit(&c->wait_max, &v, wait,
						      memory_order_relaxed,
						      memory_order_relaxed))
		;
}

void blk_mutex_lock_stat(struct blk_mutex *l)
{
	uint64_t t0;

	if (!pthread_mutex_trylock(&l->m)) {
		account(l->cls, &l->owner, false, 0);
		return;
	}
	t0 = now_ns();
	pthread_mutex_lock(&l->m);
	account(l->cls, &l->owner, true, now_ns() - t0);
}

int blk_mutex_trylock_stat(struct blk_mutex *l)
{
	int ret = pthread_mutex_trylock(&l->m);

	if (!ret)
		account(l->cls, &l->owner, false, 0);
	return ret;
}

void blk_spin_lock_stat(struct blk_spinlock *l)
{
	uint64_t t0;

	if (!pthread_spin_trylock(&l->s)) {
		account(l->cls, &l->owner, false, 0);
		return;
	}
	t0 = now_ns();
	pthread_spin_lock(&l->s);
	account(l->cls, &l->owner, true, now_ns() - t0);
}

void blk_spin_lock_contended(struct blk_spinlock *l)
{
	uint64_t t0;

	if (!l->cls) {
		pthread_spin_lock(&l->s);
		return;
	}
	t0 = now_ns();
	pthread_spin_lock(&l->s);
	account(l->cls, &l->owner, true, now_ns() - t0);
}

int blk_spin_trylock_stat(struct blk_spinlock *l)
{
	int ret = pthread_spin_trylock(&l->s);

	if (!ret)
		account(l->cls, &l->owner, false, 0);
	return ret;
}

#define LD(field) atomic_load_explicit(&(field), memory_order_relaxed)

size_t blk_lockstat_read(struct blk_lockstat *out, size_t max)
{
	struct blk_lock_class *c;
	size_t n = 0;

	pthread_mutex_lock(&classes_lock);
	for (c = classes; c; c = c->next, n++) {
		struct blk_lockstat *s = &out[n];
		uint64_t mn;

		if (n >= max)
			continue;
		s->name = c->name;
		s->con_bounces = LD(c->con_bounces);
		s->contentions = LD(c->contentions);
		mn = LD(c->wait_min);
		s->wait_min_ns = mn == UINT64_MAX ? 0 : mn;
		s->wait_max_ns = LD(c->wait_max);
		s->wait_total_ns = LD(c->wait_total);
		s->acq_bounces = LD(c->acq_bounces);
		s->acquisitions = LD(c->acquisitions);
	}
	pthread_mutex_unlock(&classes_lock);
	return n;
}

void blk_lockstat_reset(void)
{
	struct blk_lock_class *c;

	pthread_mutex_lock(&classes_lock);
	for (c = classes; c; c = c->next) {
		atomic_store(&c->con_bounces, 0);
		atomic_store(&c->contentions, 0);
		atomic_store(&c->acq_bounces, 0);
		atomic_store(&c->acquisitions, 0);
		atomic_store(&c->wait_min, UINT64_MAX);
		atomic_store(&c->wait_max, 0);
		atomic_store(&c->wait_total, 0);
	}
	pthread_mutex_unlock(&classes_lock);
}

static int cmp_stat(const void *a, const void *b)
{
	const struct blk_lockstat *x = a, *y = b;

	if (x->contentions != y->contentions)
		return x->contentions < y->contentions ? 1 : -1;
	if (x->acquisitions != y->acquisitions)
		return x->acquisitions < y->acquisitions ? 1 : -1;
	return strcmp(x->name, y->name);
}

int blk_lockstat_print(FILE *f)
{
	struct blk_lockstat *s;
	size_t n, i;
	static const char rule[] =
		"-----------------------------------------------------------------------------------------------------------------------------------------------\n";

	n = blk_lockstat_read(NULL, 0);
	s = calloc(n ? n : 1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	n = blk_lockstat_read(s, n);
	qsort(s, n, sizeof(*s), cmp_stat);
	fprintf(f, "lock_stat version 0.4 (blkstack: no hold times)\n%s", rule);
	fprintf(f, "%40s %14s %14s %14s %14s %14s %14s %14s %14s\n", "class name",
		"con-bounces", "contentions", "waittime-min", "waittime-max",
		"waittime-total", "waittime-avg", "acq-bounces", "acquisitions");
	fputs(rule, f);
	for (i = 0; i < n; i++)
		fprintf(f, "%39s: %14llu %14llu %14.2f %14.2f %14.2f %14.2f %14llu %14llu\n",
			s[i].name, (unsigned long long)s[i].con_bounces,
			(unsigned long long)s[i].contentions,
			s[i].wait_min_ns / 1000.0, s[i].wait_max_ns / 1000.0,
			s[i].wait_total_ns / 1000.0,
			s[i].contentions ? s[i].wait_total_ns / 1000.0 / (double)s[i].contentions : 0.0,
			(unsigned long long)s[i].acq_bounces,
			(unsigned long long)s[i].acquisitions);
	fputs(rule, f);
	free(s);
	return 0;
}
