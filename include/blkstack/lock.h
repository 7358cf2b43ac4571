/* SPDX-License-Identifier: MIT */
/*
 * Named locks and the lock profile (seed 003): a thin wrapper over
 * pthread_mutex and pthread_spinlock that, when the profile is on
 * (blk_lockstat_enable() before the lock is initialised), counts per lock
 * class (the name) acquisitions, contended acquisitions (a trylock failed
 * first), the time waited, and bounces (the lock last taken by another
 * thread), printed like Linux's /proc/lock_stat.
 *
 * Off, a lock or unlock is the pthread call behind one test of a pointer
 * in the lock itself (the line the lock word is on); in a build without
 * BLK_LOCK_STATS (cmake -DBLK_LOCK_STATS=OFF), the pthread call alone.
 * Hold times are not measured.
 *
 * This header compiles on its own and from C++.
 */
#ifndef BLKSTACK_LOCK_H
#define BLKSTACK_LOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct blk_lock_class;

/**
 * struct blk_mutex - a named pthread mutex.
 * @m: the mutex; pthread_cond_wait() and the like take &@m (their
 *	re-acquisitions are not counted).
 * @cls: the lock's class while the profile was on at init; NULL: not
 *	profiled.
 * @owner: the thread that took it last (profiled locks; written under
 *	the lock), for bounces.
 */
struct blk_mutex {
	pthread_mutex_t m;
	struct blk_lock_class *cls;
	uint32_t owner;
};

/**
 * struct blk_spinlock - a named pthread spinlock (as struct blk_mutex).
 */
struct blk_spinlock {
	pthread_spinlock_t s;
	struct blk_lock_class *cls;
	uint32_t owner;
};

/**
 * blk_lockstat_enable() - turn the profile on or off for locks
 * initialised from now on (locks initialised before keep their state).
 * @on: true to profile.
 * Return: 0; -EOPNOTSUPP for @on in a build without BLK_LOCK_STATS.
 * Context: any thread; normally once, before devices are created.
 */
int blk_lockstat_enable(bool on);

/** blk_lockstat_enabled() - whether new locks are profiled. Context: any. */
bool blk_lockstat_enabled(void);

/**
 * blk_mutex_init() - initialise a named mutex.
 * @l: the lock.
 * @name: its class, a static string ("&hctx->lock"): every lock of one
 *	name adds to one line of the profile.
 * @type: PTHREAD_MUTEX_* type (PTHREAD_MUTEX_ADAPTIVE_NP, ...); -1 for
 *	the default.
 *
 * Return: 0 or pthread_mutex_init()'s positive error; -ENOMEM (negative)
 * when the class could not be registered (the lock then works, without
 * profile).
 * Context: any thread.
 */
int blk_mutex_init(struct blk_mutex *l, const char *name, int type);

/** blk_mutex_destroy() - pthread_mutex_destroy(). Context: unlocked. */
void blk_mutex_destroy(struct blk_mutex *l);

/** blk_mutex_lock_stat() - the profiled lock (blk_mutex_lock() calls it). */
void blk_mutex_lock_stat(struct blk_mutex *l);

/**
 * blk_mutex_lock() - pthread_mutex_lock(), counted when profiled.
 * Context: any thread that does not hold @l.
 */
static inline void blk_mutex_lock(struct blk_mutex *l)
{
#ifdef BLK_LOCK_STATS
	if (__builtin_expect(l->cls != NULL, 0))
		blk_mutex_lock_stat(l);
	else
#endif
		pthread_mutex_lock(&l->m);
}

/** blk_mutex_trylock_stat() - the profiled trylock. */
int blk_mutex_trylock_stat(struct blk_mutex *l);

/**
 * blk_mutex_trylock() - pthread_mutex_trylock(); a success is counted as
 * an acquisition, a failure as nothing.
 * Return: 0 when taken, else EBUSY (positive, as pthread).
 * Context: any thread.
 */
static inline int blk_mutex_trylock(struct blk_mutex *l)
{
#ifdef BLK_LOCK_STATS
	if (__builtin_expect(l->cls != NULL, 0))
		return blk_mutex_trylock_stat(l);
#endif
	return pthread_mutex_trylock(&l->m);
}

/** blk_mutex_unlock() - pthread_mutex_unlock(). Context: the holder. */
static inline void blk_mutex_unlock(struct blk_mutex *l)
{
	pthread_mutex_unlock(&l->m);
}

/**
 * blk_spin_init() - initialise a named spinlock (process-private).
 * @l: the lock.
 * @name: its class, a static string.
 * Return: 0, a positive pthread error, or -ENOMEM as blk_mutex_init().
 * Context: any thread.
 */
int blk_spin_init(struct blk_spinlock *l, const char *name);

/** blk_spin_destroy() - pthread_spin_destroy(). Context: unlocked. */
void blk_spin_destroy(struct blk_spinlock *l);

/** blk_spin_lock_stat() - the profiled lock (blk_spin_lock() calls it). */
void blk_spin_lock_stat(struct blk_spinlock *l);

/**
 * blk_spin_lock() - pthread_spin_lock(), counted when profiled.
 * Context: any thread that does not hold @l.
 */
static inline void blk_spin_lock(struct blk_spinlock *l)
{
#ifdef BLK_LOCK_STATS
	if (__builtin_expect(l->cls != NULL, 0))
		blk_spin_lock_stat(l);
	else
#endif
		pthread_spin_lock(&l->s);
}

/** blk_spin_trylock_stat() - the profiled trylock. */
int blk_spin_trylock_stat(struct blk_spinlock *l);

/**
 * blk_spin_trylock() - pthread_spin_trylock(), a success counted.
 * Return: 0 when taken, else EBUSY.
 * Context: any thread.
 */
static inline int blk_spin_trylock(struct blk_spinlock *l)
{
#ifdef BLK_LOCK_STATS
	if (__builtin_expect(l->cls != NULL, 0))
		return blk_spin_trylock_stat(l);
#endif
	return pthread_spin_trylock(&l->s);
}

/**
 * blk_spin_lock_contended() - take @l after blk_spin_trylock() failed:
 * counted as a contended acquisition, its wait from this call (for
 * callers that count contention themselves, as scsi's host lock).
 * Context: any thread that does not hold @l.
 */
void blk_spin_lock_contended(struct blk_spinlock *l);

/** blk_spin_unlock() - pthread_spin_unlock(). Context: the holder. */
static inline void blk_spin_unlock(struct blk_spinlock *l)
{
	pthread_spin_unlock(&l->s);
}

/**
 * struct blk_lockstat - one class's counters (/proc/lock_stat's columns).
 * @name: the class.
 * @con_bounces: contended acquisitions of a lock another thread took last.
 * @contentions: acquisitions that found the lock taken (trylock failed).
 * @wait_min_ns, @wait_max_ns, @wait_total_ns: time waited by the
 *	contended acquisitions, ns (min 0 when none).
 * @acq_bounces: acquisitions of a lock another thread took last.
 * @acquisitions: every acquisition (lock, and trylock that succeeded).
 */
struct blk_lockstat {
	const char *name;
	uint64_t con_bounces;
	uint64_t contentions;
	uint64_t wait_min_ns;
	uint64_t wait_max_ns;
	uint64_t wait_total_ns;
	uint64_t acq_bounces;
	uint64_t acquisitions;
};

/**
 * blk_lockstat_read() - every class's counters, in order of registration.
 * @out: room for @max entries.
 * @max: entries at @out.
 *
 * Return: the number of classes (may exceed @max: only @max are filled).
 * Context: any thread; counters are read relaxed while locks are taken.
 */
size_t blk_lockstat_read(struct blk_lockstat *out, size_t max);

/**
 * blk_lockstat_print() - the classes in /proc/lock_stat's layout (times
 * in us, 2 decimals), most contended first, then most acquired.
 * @f: where to.
 * Return: 0, or -ENOMEM.
 * Context: any thread.
 */
int blk_lockstat_print(FILE *f);

/**
 * blk_lockstat_reset() - zero every class's counters.
 * Context: any thread; counts in progress may be lost.
 */
void blk_lockstat_reset(void);

#ifdef __cplusplus
}
#endif

#endif /* BLKSTACK_LOCK_H */
