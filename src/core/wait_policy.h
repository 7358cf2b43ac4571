/* SPDX-License-Identifier: MIT */
/*
 * blk_wait()'s choice between spinning and sleeping, per ctx.
 *
 * When a consumer has nothing to do but wait for a completion, it can spin
 * (poll the device in a loop: the completion is seen the moment it is
 * posted, at the price of a whole CPU) or sleep in the driver (io_uring's
 * GETEVENTS: no CPU while waiting, but a wake-up per wait, which costs
 * 10-40 us of latency on a virtual machine).  Which wins depends on things
 * the queue cannot know in advance: how long completions take (memory
 * copies by an io-wq worker, or a disk), and whether the CPU that a
 * spinner takes is needed by whoever completes the I/O (io-wq workers,
 * other jobs) on a machine with fewer CPUs than runnable threads.
 * Measured on a 2-vCPU VM (docs/uring.md): spinning is 4x faster for QD1
 * reads of tmpfs and 18% faster at QD32, but half as fast with four jobs
 * on two CPUs, and for a disk it only burns a CPU.
 *
 * So the policy measures instead of guessing.  Time is cut into epochs of
 * BLK_WAIT_EPOCH_NS, aligned to the monotonic clock so that every ctx of
 * the process (and of any other process using it) probes at the same
 * moments: a probe is BLK_WAIT_PROBE_PAIRS pairs of epochs, one spinning
 * and one sleeping, and measures the completion rate of each.  Spinning is
 * chosen for the next BLK_WAIT_RUN_EPOCHS epochs only when
 *   - it bought at least BLK_WAIT_GAIN_PCT % more completions per second
 *     than sleeping (the price of a CPU must buy something), and
 *   - the spinning thread was not preempted for more than
 *     BLK_WAIT_PREEMPT_PCT % of its spin time (a spinner that the
 *     scheduler has to take off the CPU is taking it from someone:
 *     with probes aligned, several ctxs spinning at once see each other
 *     this way, and a lone spinner among sleepers is not fooled by the
 *     CPU it steals).
 * Otherwise it sleeps.  While spinning is chosen, preemption above the
 * same share during a run epoch switches to sleeping until the next probe.
 * Probes with too few completions to judge (a slow device) choose sleep:
 * waits long enough to be rare are too long to spin through.
 *
 * Pure arithmetic on caller-supplied times and counters: no clock, no
 * system call, so tests drive it with device models.  Context: the ctx's
 * own thread; no locking.
 */
#ifndef BLKSTACK_WAIT_POLICY_H
#define BLKSTACK_WAIT_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#define BLK_WAIT_EPOCH_NS 4000000ull       /* 4 ms */
#define BLK_WAIT_PROBE_PAIRS 2             /* spin, sleep, spin, sleep */
#define BLK_WAIT_RUN_EPOCHS 60             /* 240 ms between probes */
#define BLK_WAIT_GAIN_PCT 8                /* spinning must buy this much */
#define BLK_WAIT_PREEMPT_PCT 10            /* of spin time lost to others */
#define BLK_WAIT_PREEMPT_GAP_NS 30000ull   /* a gap this long in a spin loop
					    * is the scheduler, not an IRQ */
#define BLK_WAIT_MIN_PROBE_DONE 64         /* completions per probe side */
#define BLK_WAIT_SPIN_MAX_NS 200000ull     /* default cap on one spin */

enum blk_wait_choice {
	BLK_WAIT_CHOOSE_SLEEP = 0,
	BLK_WAIT_CHOOSE_SPIN = 1,
};

/* What one probe side (or the current run epoch) has seen. */
struct blk_wait_sample {
	uint64_t done;          /* completions observed */
	uint64_t ns;            /* time they were observed over */
	uint64_t spin_ns;       /* time spent spinning */
	uint64_t preempt_ns;    /* of which lost to preemption */
};

struct blk_wait_policy {
	uint8_t mode;           /* enum blk_wait_mode */
	uint8_t choice;         /* enum blk_wait_choice, for run epochs */
	bool decided;           /* a probe has completed */
	uint64_t spin_max_ns;
	/* the epoch being observed */
	uint64_t epoch;         /* index: now / BLK_WAIT_EPOCH_NS */
	int slot;               /* probe slot 0..2*PAIRS-1, or -1: run */
	uint64_t first_ns;      /* first observation in the epoch */
	uint64_t first_done;
	uint64_t last_ns;       /* latest observation */
	uint64_t last_done;
	uint64_t spin_ns;       /* spun in this epoch */
	uint64_t preempt_ns;
	/* the probe being gathered: [0] spinning, [1] sleeping */
	struct blk_wait_sample probe[2];
	unsigned int probe_epochs; /* probe epochs closed so far */
	/* statistics, for reports and tests */
	uint64_t probes;        /* probes decided */
	uint64_t chose_spin;    /* of which chose spinning */
	uint64_t contended;     /* probes or run epochs that saw preemption */
	uint64_t spins, sleeps; /* waits that spun, that slept */
	double last_gain;       /* spin rate / sleep rate of the last probe */
};

/**
 * blk_wait_policy_init() - set up a ctx's policy.
 * @p: state.
 * @mode: enum blk_wait_mode.
 * @spin_max_ns: cap on one spin before sleeping, ns (0: the default).
 */
void blk_wait_policy_init(struct blk_wait_policy *p, unsigned int mode,
			  uint64_t spin_max_ns);

/**
 * blk_wait_policy_begin() - a wait with nothing ready: how long to spin.
 * @p: state.
 * @now: monotonic time, ns.
 * @done: the ctx's completions so far (a running count).
 *
 * Return: ns to spin before sleeping; 0: sleep at once.
 */
uint64_t blk_wait_policy_begin(struct blk_wait_policy *p, uint64_t now,
			       uint64_t done);

/**
 * blk_wait_policy_spun() - report a spin that was taken.
 * @p: state.
 * @spun_ns: time spent spinning.
 * @preempt_ns: of it, gaps between two polls longer than
 *	BLK_WAIT_PREEMPT_GAP_NS (the thread was off the CPU).
 * @slept: the spin ended without a completion and the wait slept.
 */
void blk_wait_policy_spun(struct blk_wait_policy *p, uint64_t spun_ns,
			  uint64_t preempt_ns, bool slept);

#endif /* BLKSTACK_WAIT_POLICY_H */
