// SPDX-License-Identifier: MIT
/*
 * SCSI target core: the faults that act before a command runs, after
 * scsi_debug's (Linux drivers/scsi/scsi_debug.c) parameters of the same
 * names: per-unit error rules (its debugfs "error" file), tur_ms_to_ready,
 * a removable medium ejected, and the completion delay (delay, ndelay).
 * The every_nth/opts faults of READ and WRITE are in tgt.c (inject()).
 *
 * None of this costs the fast path more than one relaxed load of
 * t->pre_faults in scsi_tgt_submit() and one pointer test in
 * scsi_tgt_poll() while nothing is configured.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tgt_int.h"

uint64_t tgt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------ delay */

/*
 * The command has ended (cmd_end()): hold it on its queue's list until
 * due.  The delay is the same for every command of a target, so the list
 * stays in due order with appends at the tail.
 */
static void delay_done(struct scsi_tgt_cmd *c)
{
	struct scsi_tgt_queue *q = c->delay_q;

	c->done = c->delayed_done;
	c->due_ns = tgt_now_ns() + q->tgt->delay_ns;
	c->delay_next = NULL;
	if (q->delay_tail)
		q->delay_tail->delay_next = c;
	else
		q->delay_head = c;
	q->delay_tail = c;
	q->delay_n++;
}

unsigned int scsi_tgt_delay_pending(const struct scsi_tgt_queue *q,
				    uint64_t *due_ns)
{
	if (q->delay_head)
		*due_ns = q->delay_head->due_ns;
	return q->delay_n;
}

void tgt_delay_cancel(struct scsi_tgt_cmd *c)
{
	if (c->done == delay_done)
		c->done = c->delayed_done;
}

/* It had ended and been counted: answered now, TASK ABORTED. */
static void delay_aborted(struct scsi_tgt *t, struct scsi_tgt_cmd *c)
{
	c->status = SAM_STAT_TASK_ABORTED;
	c->sense_len = 0;
	c->resid = c->xfer_len;
	c->overflow = false;
	atomic_fetch_add_explicit(&t->tasks_aborted, 1, memory_order_relaxed);
}

/* A held task of a nexus that a PREEMPT AND ABORT preempted after it
 * started (on another queue, which could not end it then): aborted. */
static void delay_preempted(struct scsi_tgt *t, struct scsi_tgt_cmd *c)
{
	struct scsi_lu *lu;

	if (c->lun >= t->nr_luns || c->status == SAM_STAT_TASK_ABORTED)
		return;
	lu = &t->lus[c->lun];
	if (atomic_load_explicit(&lu->pa_any, memory_order_acquire) &&
	    tgt_task_preempted(lu, c)) {
		delay_aborted(t, c);
		tgt_task_mark_preempted(lu, c);
	}
}

unsigned int tgt_delay_poll(struct scsi_tgt_queue *q)
{
	uint64_t now = tgt_now_ns();
	unsigned int n = 0;
	struct scsi_tgt_cmd *c;

	while ((c = q->delay_head) && c->due_ns <= now) {
		q->delay_head = c->delay_next;
		if (!q->delay_head)
			q->delay_tail = NULL;
		q->delay_n--;
		delay_preempted(q->tgt, c);
		c->done(c); /* may submit again, on this queue too */
		n++;
	}
	return n;
}

static bool of_nexuses(const struct scsi_tgt_cmd *c, uint64_t nexuses)
{
	if (nexuses == UINT64_MAX)
		return true;
	return c->nexus < SCSI_TGT_MAX_NEXUS && (nexuses & (1ull << c->nexus));
}

unsigned int tgt_delay_abort(struct scsi_tgt_queue *q, struct scsi_tgt_cmd *only,
			     uint64_t lun, uint64_t nexuses)
{
	struct scsi_tgt_cmd *c = q->delay_head, *prev = NULL, *next;
	struct scsi_tgt_cmd *taken = NULL, **tail = &taken;
	unsigned int n = 0;

	/* off the list first: a done that submits again may append to it */
	for (; c; c = next) {
		next = c->delay_next;
		if (only ? c != only : (lun != UINT64_MAX && c->lun != lun) ||
				       !of_nexuses(c, nexuses)) {
			prev = c;
			continue;
		}
		if (prev)
			prev->delay_next = next;
		else
			q->delay_head = next;
		if (q->delay_tail == c)
			q->delay_tail = prev;
		c->delay_next = NULL;
		q->delay_n--;
		*tail = c;
		tail = &c->delay_next;
		if (only)
			break;
	}
	for (c = taken; c; c = next) {
		next = c->delay_next;
		/*
		 * One that ended aborted before the delay took it (a reset
		 * or PREEMPT AND ABORT after it started, seen when its bios
		 * ended: tgt_task_end_aborted()) was counted then: answered
		 * as it is, not counted twice.
		 */
		if (c->status != SAM_STAT_TASK_ABORTED) {
			delay_aborted(q->tgt, c);
			if (c->lun < q->tgt->nr_luns)
				tgt_task_mark_if_preempted(&q->tgt->lus[c->lun], c);
		}
		c->done(c);
		n++;
	}
	return n;
}

/* ------------------------------------------------------ error rules */

static bool status_ok(unsigned int s)
{
	switch (s) {
	/* not CONDITION MET: a success, the command would not run and be
	 * reported done (a WRITE lost without a word) */
	case SAM_STAT_CHECK_CONDITION:
	case SAM_STAT_BUSY:
	case SAM_STAT_RESERVATION_CONFLICT:
	case SAM_STAT_TASK_SET_FULL:
	case SAM_STAT_ACA_ACTIVE:
	case SAM_STAT_TASK_ABORTED:
		return true;
	default:
		return false;
	}
}

#define STATUS_ALLOWED "0x02, 0x08, 0x18, 0x28, 0x30, 0x40 (an error status; not GOOD nor CONDITION MET: a command not run, reported done)"

static int rule_check(const struct scsi_tgt *t, const struct scsi_tgt_error_rule *r,
		      char *why, size_t whylen)
{
	if (r->lun >= t->nr_luns) {
		snprintf(why, whylen, "lun:%llu: allowed 0..%u",
			 (unsigned long long)r->lun, t->nr_luns - 1);
		return -EINVAL;
	}
	if (r->type > SCSI_TGT_ERR_FAIL) {
		snprintf(why, whylen, "type:%u: allowed 0 (timeout), 1 (busy), 2 (fail)",
			 r->type);
		return -EINVAL;
	}
	if (r->type == SCSI_TGT_ERR_FAIL && !status_ok(r->status)) {
		snprintf(why, whylen, "status:0x%02x: allowed " STATUS_ALLOWED,
			 r->status);
		return -EINVAL;
	}
	if (r->sense_key > 0xf) {
		snprintf(why, whylen, "sense key 0x%x: allowed 0..0xf", r->sense_key);
		return -EINVAL;
	}
	return 0;
}

static void rules_flag(struct scsi_tgt *t)
{
	if (atomic_load(&t->nr_rules))
		atomic_fetch_or(&t->pre_faults, TGT_PRE_RULES);
	else
		atomic_fetch_and(&t->pre_faults, ~(uint32_t)TGT_PRE_RULES);
}

static int rule_add_locked(struct scsi_tgt *t, const struct scsi_tgt_error_rule *r)
{
	struct tgt_lu_rules *lr = &t->rules[r->lun];
	unsigned int i;

	for (i = 0; i < lr->n; i++)
		if (lr->r[i].type == r->type && lr->r[i].opcode == r->opcode)
			break;
	if (i == lr->n) {
		if (lr->n == SCSI_TGT_MAX_ERROR_RULES)
			return -ENOSPC;
		lr->n++;
		atomic_fetch_add(&t->nr_rules, 1);
	}
	lr->r[i] = *r;
	return 0;
}

int scsi_tgt_add_error_rule(struct scsi_tgt *t, const struct scsi_tgt_error_rule *r)
{
	char why[160];
	int ret;

	if (rule_check(t, r, why, sizeof(why)))
		return -EINVAL;
	blk_mutex_lock(&t->rules_lock);
	ret = rule_add_locked(t, r);
	rules_flag(t);
	blk_mutex_unlock(&t->rules_lock);
	return ret;
}

int scsi_tgt_clear_error_rules(struct scsi_tgt *t, uint64_t lun)
{
	struct tgt_lu_rules *lr;

	if (lun >= t->nr_luns)
		return -EINVAL;
	lr = &t->rules[lun];
	blk_mutex_lock(&t->rules_lock);
	atomic_fetch_sub(&t->nr_rules, lr->n);
	lr->n = 0;
	rules_flag(t);
	blk_mutex_unlock(&t->rules_lock);
	return 0;
}

int scsi_tgt_get_error_rules(struct scsi_tgt *t, uint64_t lun,
			     struct scsi_tgt_error_rule *rules, unsigned int max)
{
	struct tgt_lu_rules *lr;
	unsigned int i;
	int n;

	if (lun >= t->nr_luns)
		return -EINVAL;
	lr = &t->rules[lun];
	blk_mutex_lock(&t->rules_lock);
	for (i = 0; i < lr->n && i < max; i++)
		rules[i] = lr->r[i];
	n = (int)lr->n;
	blk_mutex_unlock(&t->rules_lock);
	return n;
}

int tgt_rules_init(struct scsi_tgt *t, const struct scsi_tgt_config *cfg,
		   char *err, size_t errlen)
{
	unsigned int i;
	char why[160];

	for (i = 0; i < cfg->nr_error_rules; i++) {
		const struct scsi_tgt_error_rule *r = &cfg->error_rules[i];

		if (rule_check(t, r, why, sizeof(why))) {
			snprintf(err, errlen, "error rule %u: %s", i + 1, why);
			return -EINVAL;
		}
		if (rule_add_locked(t, r)) {
			snprintf(err, errlen, "error rule %u: LUN %llu has %u rules already",
				 i + 1, (unsigned long long)r->lun,
				 SCSI_TGT_MAX_ERROR_RULES);
			return -EINVAL;
		}
	}
	rules_flag(t);
	return 0;
}

/*
 * The rule of @type that decides for @op on @lu, its count taken: true:
 * inject it (*@out, a copy).  Under rules_lock.
 */
static bool rule_take(struct tgt_lu_rules *lr, uint8_t type, uint8_t op,
		      struct scsi_tgt_error_rule *out)
{
	unsigned int i;

	for (i = 0; i < lr->n; i++) {
		struct scsi_tgt_error_rule *r = &lr->r[i];

		if (r->type != type ||
		    (r->opcode != op && r->opcode != SCSI_TGT_ERR_ANY_OPCODE))
			continue;
		if (!r->count)
			return false;
		if (r->count < 0)
			r->count++;
		*out = *r;
		return true;
	}
	return false;
}

/* -1: no rule; else the rule's type, *@r the rule */
static int rules_match(struct scsi_tgt *t, struct scsi_lu *lu, uint8_t op,
		       struct scsi_tgt_error_rule *r)
{
	static const uint8_t order[] = {
		SCSI_TGT_ERR_TIMEOUT, SCSI_TGT_ERR_BUSY, SCSI_TGT_ERR_FAIL,
	};
	struct tgt_lu_rules *lr = &t->rules[lu - t->lus];
	int type = -1;
	unsigned int k;

	blk_mutex_lock(&t->rules_lock);
	if (lr->n)
		for (k = 0; k < ARRAY_SIZE(order) && type < 0; k++)
			if (rule_take(lr, order[k], op, r))
				type = order[k];
	blk_mutex_unlock(&t->rules_lock);
	return type;
}

/* ------------------------------------------------- before a command */

int tgt_pre_faults(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		   struct scsi_tgt_cmd *c, bool media, bool delayable)
{
	struct scsi_tgt *t = q->tgt;
	uint32_t pre = atomic_load_explicit(&t->pre_faults, memory_order_relaxed);
	uint8_t op = c->cdb[0];

	if ((pre & TGT_PRE_RULES) && lu) {
		struct scsi_tgt_error_rule r;

		switch (rules_match(t, lu, op, &r)) {
		case SCSI_TGT_ERR_TIMEOUT:
			atomic_fetch_add_explicit(&t->injected, 1, memory_order_relaxed);
			c->status = TGT_DROP;
			return 0;
		case SCSI_TGT_ERR_BUSY:
			atomic_fetch_add_explicit(&t->injected, 1, memory_order_relaxed);
			return -EBUSY;
		case SCSI_TGT_ERR_FAIL:
			/* answered at once, as scsi_debug's schedule_resp()
			 * with no delay */
			atomic_fetch_add_explicit(&t->injected, 1, memory_order_relaxed);
			if (r.status == SAM_STAT_CHECK_CONDITION)
				tgt_cmd_check(c, lu, r.sense_key,
					      (uint16_t)(r.asc << 8 | r.ascq));
			else
				c->status = r.status;
			return 0;
		default:
			break;
		}
	}
	if ((pre & TGT_PRE_NOT_READY) && lu && (media || op == TEST_UNIT_READY)) {
		uint64_t now = tgt_now_ns();

		if (now < t->ready_ns) {
			struct scsi_sense s = {
				.key = SK_NOT_READY, .asc_ascq = ASC_LUN_BECOMING_READY,
			};

			/* TEST UNIT READY: the ms left in INFORMATION (SPC-6,
			 * T10 20-061r2, as scsi_debug) */
			if (op == TEST_UNIT_READY) {
				s.info_valid = true;
				s.info = (t->ready_ns - now + 999999) / 1000000;
			}
			tgt_cmd_sense(c, lu, &s);
			return 0;
		}
		atomic_fetch_and(&t->pre_faults, ~(uint32_t)TGT_PRE_NOT_READY);
	}
	if ((pre & TGT_PRE_REMOVABLE) && lu && (media || op == TEST_UNIT_READY) &&
	    atomic_load(&lu->ejected)) {
		tgt_cmd_check(c, lu, SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
		return 0;
	}
	if ((pre & TGT_PRE_DELAY) && delayable) {
		c->delayed_done = c->done;
		c->delay_q = q;
		c->done = delay_done;
	}
	return 1;
}

/* ------------------------------------------------------- rule text */

/* A number, decimal or 0x hex, in [@lo, @hi]; false: not one. */
static bool parse_num(const char *s, size_t len, long long lo, long long hi,
		      long long *v)
{
	char buf[32], *end;

	if (!len || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	*v = strtoll(buf, &end, 0);
	return !errno && *end == '\0' && *v >= lo && *v <= hi;
}

/* A hex byte in [0, @hi] */
static bool parse_hex(const char *s, size_t len, unsigned int hi, unsigned int *v)
{
	char buf[8], *end;
	unsigned long x;

	if (!len || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	x = strtoul(buf, &end, 16);
	if (errno || *end != '\0' || buf[0] == '-' || x > hi)
		return false;
	*v = (unsigned int)x;
	return true;
}

/* KEY/ASC/ASCQ, hex */
static bool parse_sense(const char *s, size_t len, struct scsi_tgt_error_rule *r)
{
	const char *e = s + len, *a, *b;
	unsigned int k, asc, ascq;

	a = memchr(s, '/', len);
	if (!a)
		return false;
	b = memchr(a + 1, '/', (size_t)(e - a - 1));
	if (!b)
		return false;
	if (!parse_hex(s, (size_t)(a - s), 0xf, &k) ||
	    !parse_hex(a + 1, (size_t)(b - a - 1), 0xff, &asc) ||
	    !parse_hex(b + 1, (size_t)(e - b - 1), 0xff, &ascq))
		return false;
	r->sense_key = (uint8_t)k;
	r->asc = (uint8_t)asc;
	r->ascq = (uint8_t)ascq;
	return true;
}

/* One rule, [@s, @e): fields NAME:VALUE separated by ',' */
static int parse_rule(const char *s, const char *e, struct scsi_tgt_error_rule *r,
		      char *why, size_t whylen)
{
	bool has_op = false, has_count = false, has_status = false, has_sense = false;
	unsigned int seen = 0;
	long long v;

	memset(r, 0, sizeof(*r));
	r->type = SCSI_TGT_ERR_FAIL;
	while (s < e) {
		const char *f = memchr(s, ',', (size_t)(e - s)), *colon, *val;
		size_t nlen, vlen;

		if (!f)
			f = e;
		colon = memchr(s, ':', (size_t)(f - s));
		if (!colon) {
			snprintf(why, whylen,
				 "'%.*s': not NAME:VALUE (names: type, opcode, count, status, sense, lun)",
				 (int)(f - s), s);
			return -EINVAL;
		}
		nlen = (size_t)(colon - s);
		val = colon + 1;
		vlen = (size_t)(f - val);
#define IS(n) (nlen == sizeof(n) - 1 && !memcmp(s, n, nlen))
		{
			static const char *const names[] = {
				"type", "opcode", "count", "status", "sense", "lun",
			};
			unsigned int k;

			for (k = 0; k < 6; k++)
				if (nlen == strlen(names[k]) && !memcmp(s, names[k], nlen))
					break;
			if (k < 6 && (seen & (1u << k))) {
				snprintf(why, whylen, "%s: given twice", names[k]);
				return -EINVAL;
			}
			seen |= 1u << k;
		}
		if (IS("type")) {
			if (vlen == 4 && !memcmp(val, "fail", 4))
				r->type = SCSI_TGT_ERR_FAIL;
			else if (vlen == 7 && !memcmp(val, "timeout", 7))
				r->type = SCSI_TGT_ERR_TIMEOUT;
			else if (vlen == 4 && !memcmp(val, "busy", 4))
				r->type = SCSI_TGT_ERR_BUSY;
			else if (parse_num(val, vlen, 0, 2, &v))
				r->type = (uint8_t)v; /* scsi_debug's numbers */
			else {
				snprintf(why, whylen,
					 "type:%.*s: allowed fail, timeout, busy (or scsi_debug's 2, 0, 1)",
					 (int)vlen, val);
				return -EINVAL;
			}
		} else if (IS("opcode")) {
			if (!parse_num(val, vlen, 0, 0xff, &v)) {
				snprintf(why, whylen, "opcode:%.*s: allowed 0..0xff (0xff: any command)",
					 (int)vlen, val);
				return -EINVAL;
			}
			r->opcode = (uint8_t)v;
			has_op = true;
		} else if (IS("count")) {
			if (!parse_num(val, vlen, INT32_MIN, INT32_MAX, &v)) {
				snprintf(why, whylen,
					 "count:%.*s: allowed -2147483648..2147483647 (0 off, >0 always, <0 that many times)",
					 (int)vlen, val);
				return -EINVAL;
			}
			r->count = (int32_t)v;
			has_count = true;
		} else if (IS("status")) {
			if (!parse_num(val, vlen, 0, 0xff, &v) || !status_ok((unsigned int)v)) {
				snprintf(why, whylen, "status:%.*s: allowed " STATUS_ALLOWED,
					 (int)vlen, val);
				return -EINVAL;
			}
			r->status = (uint8_t)v;
			has_status = true;
		} else if (IS("sense")) {
			if (!parse_sense(val, vlen, r)) {
				snprintf(why, whylen,
					 "sense:%.*s: allowed KEY/ASC/ASCQ in hex, key 0..f, ASC and ASCQ 0..ff (e.g. 3/11/00)",
					 (int)vlen, val);
				return -EINVAL;
			}
			has_sense = true;
		} else if (IS("lun")) {
			if (!parse_num(val, vlen, 0, SCSI_TGT_MAX_LUNS - 1, &v)) {
				snprintf(why, whylen, "lun:%.*s: allowed 0..%u",
					 (int)vlen, val, SCSI_TGT_MAX_LUNS - 1);
				return -EINVAL;
			}
			r->lun = (uint64_t)v;
		} else {
			snprintf(why, whylen,
				 "'%.*s': unknown field (allowed type, opcode, count, status, sense, lun)",
				 (int)nlen, s);
			return -EINVAL;
		}
#undef IS
		s = f < e ? f + 1 : e;
	}
	if (!has_op || !has_count) {
		snprintf(why, whylen, "%s: required (opcode:0..0xff, count:N)",
			 !has_op ? "opcode" : "count");
		return -EINVAL;
	}
	if (r->type == SCSI_TGT_ERR_FAIL) {
		if (!has_status) {
			snprintf(why, whylen, "status: required for type:fail (allowed " STATUS_ALLOWED ")");
			return -EINVAL;
		}
		if (r->status == SAM_STAT_CHECK_CONDITION && !has_sense) {
			snprintf(why, whylen, "sense: required with status:0x02 (KEY/ASC/ASCQ in hex, e.g. 3/11/00)");
			return -EINVAL;
		}
		if (r->status != SAM_STAT_CHECK_CONDITION && has_sense) {
			snprintf(why, whylen, "sense: only with status:0x02 (CHECK CONDITION), not status:0x%02x",
				 r->status);
			return -EINVAL;
		}
	} else if (has_status || has_sense) {
		snprintf(why, whylen, "%s: only for type:fail", has_status ? "status" : "sense");
		return -EINVAL;
	}
	return 0;
}

int scsi_tgt_parse_error_rules(const char *text, struct scsi_tgt_error_rule *rules,
			       unsigned int max, unsigned int *nr, char *why,
			       size_t whylen)
{
	const char *s = text, *end = text + strlen(text);
	unsigned int n = 0;
	char w[256];

	*nr = 0;
	while (s < end) {
		const char *e = memchr(s, ';', (size_t)(end - s));

		if (!e)
			e = end;
		if (e == s) { /* empty: ";;" or a trailing ';' */
			s = e + 1;
			continue;
		}
		if (n == max) {
			snprintf(why, whylen, "more than %u rules", max);
			return -EINVAL;
		}
		if (parse_rule(s, e, &rules[n], w, sizeof(w))) {
			snprintf(why, whylen, "rule %u: %s", n + 1, w);
			return -EINVAL;
		}
		n++;
		s = e < end ? e + 1 : end;
	}
	if (!n) {
		snprintf(why, whylen, "no rule (e.g. opcode:0x28,count:-1,status:0x02,sense:3/11/00)");
		return -EINVAL;
	}
	*nr = n;
	return 0;
}
