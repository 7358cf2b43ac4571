// SPDX-License-Identifier: MIT
/*
 * blk_wait()'s spin-or-sleep policy - see wait_policy.h.
 */
#include <string.h>

#include "blkstack/blk.h"
#include "wait_policy.h"

#define PROBE_SLOTS (2 * BLK_WAIT_PROBE_PAIRS)
#define CYCLE_EPOCHS (PROBE_SLOTS + BLK_WAIT_RUN_EPOCHS)

void blk_wait_policy_init(struct blk_wait_policy *p, unsigned int mode,
			  uint64_t spin_max_ns)
{
	memset(p, 0, sizeof(*p));
	p->mode = (uint8_t)mode;
	p->spin_max_ns = spin_max_ns ? spin_max_ns : BLK_WAIT_SPIN_MAX_NS;
	p->epoch = UINT64_MAX;
	p->slot = -1;
	p->choice = BLK_WAIT_CHOOSE_SLEEP;
}

static bool preempted_much(uint64_t preempt_ns, uint64_t spin_ns)
{
	return spin_ns && preempt_ns * 100 > spin_ns * BLK_WAIT_PREEMPT_PCT;
}

/* The probe is complete: choose for the run epochs that follow. */
static void decide(struct blk_wait_policy *p)
{
	const struct blk_wait_sample *s = &p->probe[0], *w = &p->probe[1];
	bool contended = preempted_much(s->preempt_ns, s->spin_ns);
	double gain = 0;

	if (s->ns && w->ns && w->done)
		gain = ((double)s->done / (double)s->ns) /
		       ((double)w->done / (double)w->ns);
	p->last_gain = gain;
	p->choice = BLK_WAIT_CHOOSE_SLEEP;
	if (contended)
		p->contended++;
	else if (s->done >= BLK_WAIT_MIN_PROBE_DONE &&
		 w->done >= BLK_WAIT_MIN_PROBE_DONE &&
		 gain * 100 >= 100 + BLK_WAIT_GAIN_PCT)
		p->choice = BLK_WAIT_CHOOSE_SPIN;
	if (p->choice == BLK_WAIT_CHOOSE_SPIN)
		p->chose_spin++;
	p->probes++;
	p->decided = true;
	memset(p->probe, 0, sizeof(p->probe));
	p->probe_epochs = 0;
}

/* The observed epoch ends: add what it saw to the probe, or check the run. */
static void close_epoch(struct blk_wait_policy *p)
{
	if (p->epoch == UINT64_MAX)
		return;
	if (p->slot >= 0) {
		struct blk_wait_sample *smp = &p->probe[p->slot & 1];

		smp->done += p->last_done - p->first_done;
		smp->ns += p->last_ns - p->first_ns;
		smp->spin_ns += p->spin_ns;
		smp->preempt_ns += p->preempt_ns;
		p->probe_epochs++;
	} else if (p->choice == BLK_WAIT_CHOOSE_SPIN &&
		   preempted_much(p->preempt_ns, p->spin_ns)) {
		/* someone else needs this CPU now: sleep until the next probe */
		p->choice = BLK_WAIT_CHOOSE_SLEEP;
		p->contended++;
	}
}

/* Which slot epoch @e is: a probe slot, or -1 for a run epoch. */
static int epoch_slot(const struct blk_wait_policy *p, uint64_t e)
{
	uint64_t pos;

	if (!p->decided)
		return (int)(e & 1); /* probe at once, in step with the others */
	pos = e % CYCLE_EPOCHS;
	return pos < PROBE_SLOTS ? (int)pos : -1;
}

uint64_t blk_wait_policy_begin(struct blk_wait_policy *p, uint64_t now,
			       uint64_t done)
{
	uint64_t e;
	bool spin;

	if (p->mode == BLK_WAIT_SPIN) {
		p->spins++;
		return p->spin_max_ns;
	}
	if (p->mode == BLK_WAIT_SLEEP) {
		p->sleeps++;
		return 0;
	}
	e = now / BLK_WAIT_EPOCH_NS;
	if (e != p->epoch) {
		int slot;

		close_epoch(p);
		slot = epoch_slot(p, e);
		/*
		 * A probe is judged when it is over: when the undecided ctx
		 * has seen both sides often enough, or at the first run epoch.
		 */
		if ((!p->decided && p->probe_epochs >= PROBE_SLOTS &&
		     p->probe[0].ns && p->probe[1].ns) ||
		    (p->decided && slot < 0 && p->probe_epochs))
			decide(p);
		slot = epoch_slot(p, e);
		p->epoch = e;
		p->slot = slot;
		p->first_ns = now;
		p->first_done = done;
		p->spin_ns = 0;
		p->preempt_ns = 0;
	}
	p->last_ns = now;
	p->last_done = done;
	if (p->slot >= 0)
		spin = !(p->slot & 1);
	else
		spin = p->choice == BLK_WAIT_CHOOSE_SPIN;
	if (spin) {
		p->spins++;
		return p->spin_max_ns;
	}
	p->sleeps++;
	return 0;
}

void blk_wait_policy_spun(struct blk_wait_policy *p, uint64_t spun_ns,
			  uint64_t preempt_ns, bool slept)
{
	p->spin_ns += spun_ns;
	p->preempt_ns += preempt_ns;
	if (slept)
		p->sleeps++;
}
