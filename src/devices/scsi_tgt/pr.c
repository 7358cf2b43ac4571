// SPDX-License-Identifier: MIT
/*
 * Reservations of the SCSI target core, per logical unit:
 *
 * - SPC-2 RESERVE (6)/(10) and RELEASE (6)/(10) (SPC-2 7.21, 7.22, 7.16,
 *   7.17): one I_T nexus holds the unit; every other nexus gets
 *   RESERVATION CONFLICT for everything but INQUIRY, REPORT LUNS, REQUEST
 *   SENSE, RELEASE and PERSISTENT RESERVE IN; RELEASE by a nexus that
 *   does not hold the reservation is GOOD and does nothing.  Third-party
 *   and extent reservations are refused (INVALID FIELD IN CDB).  While
 *   any persistent registration exists, RESERVE and RELEASE from every
 *   nexus conflict (SPC-4 5.9.3, "exceptions to SPC-2 RESERVE and RELEASE
 *   behavior"; REPORT CAPABILITIES reports CRH).
 *
 * - Persistent reservations (SPC-4 5.9, PERSISTENT RESERVE IN 6.15, OUT
 *   6.16): registrations per I_T nexus (the command's nexus index),
 *   PRgeneration, the six types with the access rules of SPC-4 5.9.1
 *   table 63 and SBC-3 4.17 table 13, and the unit attentions of 5.9.11
 *   (RESERVATIONS PREEMPTED, RESERVATIONS RELEASED, REGISTRATIONS
 *   PREEMPTED) for the nexuses concerned.  Not implemented, refused:
 *   APTPL (the state is in memory only: INVALID FIELD IN PARAMETER LIST
 *   on REGISTER; PTPL_C 0 in REPORT CAPABILITIES), SPEC_I_PT and ALL_TG_PT
 *   (INVALID FIELD IN PARAMETER LIST), REPLACE LOST RESERVATION (INVALID
 *   FIELD IN CDB), scopes other than LU_SCOPE.  REGISTER AND MOVE (5.9.8)
 *   moves the reservation to the nexus its TransportID names (as
 *   scsi_tgt_set_nexus_id() named it, or the default name).
 *   PREEMPT AND ABORT (5.9.11.5) does what PREEMPT does, then aborts the
 *   tasks of the preempted nexuses on the unit (tgt_preempt_abort(),
 *   tmf.c): the dropped and delayed ones of this queue at once, every
 *   other one (in flight, or on another queue) where it ends; TASK
 *   ABORTED with the control mode page's TAS set, else without a response
 *   and with COMMANDS CLEARED BY ANOTHER INITIATOR (2F/00) for its nexus
 *   (SAM-5 5.6).  The preempting nexus's own tasks go on.  What removes
 *   no registration aborts nothing: a zero SERVICE ACTION RESERVATION KEY
 *   but under an all-registrants reservation (INVALID FIELD IN PARAMETER
 *   LIST), a key no other nexus is registered with (RESERVATION CONFLICT;
 *   GOOD and a new type where it is that of the reservation the
 *   preempting nexus holds).
 *
 * The state sits under a mutex per unit that only these commands and the
 * conflict check of a reserved unit take.  The fast path reads one flag,
 * scsi_lu.reserved, with a relaxed load: a unit with no reservation (even
 * with registrations, which restrict nothing) costs the READ/WRITE path
 * that load and nothing else.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tgt_int.h"

/* PERSISTENT RESERVE IN: data for READ FULL STATUS at most */
#define PRIN_MAX (8 + SCSI_TGT_MAX_NEXUS * (24 + SCSI_TGT_TRANSPORT_ID_MAX))

static bool type_valid(uint8_t t)
{
	return t == PR_TYPE_WE || t == PR_TYPE_EA || t == PR_TYPE_WE_RO ||
	       t == PR_TYPE_EA_RO || t == PR_TYPE_WE_AR || t == PR_TYPE_EA_AR;
}

static bool type_ro(uint8_t t)
{
	return t == PR_TYPE_WE_RO || t == PR_TYPE_EA_RO;
}

static bool type_ar(uint8_t t)
{
	return t == PR_TYPE_WE_AR || t == PR_TYPE_EA_AR;
}

/* exclusive access: non-holders may not even read */
static bool type_ea(uint8_t t)
{
	return t == PR_TYPE_EA || t == PR_TYPE_EA_RO || t == PR_TYPE_EA_AR;
}

static uint64_t nexus_bit(unsigned int nexus)
{
	return nexus < SCSI_TGT_MAX_NEXUS ? 1ull << nexus : 0;
}

static bool is_registered(const struct tgt_pr *pr, unsigned int nexus)
{
	return pr->registered & nexus_bit(nexus);
}

/* SPC-4 5.9.10: the holder; every registrant holds an all registrants one */
static bool is_holder(const struct tgt_pr *pr, unsigned int nexus)
{
	if (!pr->type)
		return false;
	if (type_ar(pr->type))
		return is_registered(pr, nexus);
	return pr->holder == nexus;
}

/* publish whether a reservation is held, for the fast path's one load */
static void publish(struct scsi_lu *lu)
{
	atomic_store_explicit(&lu->reserved, lu->pr.type || lu->pr.spc2,
			      memory_order_relaxed);
}

void tgt_pr_init(struct scsi_tgt *t)
{
	unsigned int i;

	blk_mutex_init(&t->nexus_lock, "&scsi_tgt->nexus_lock", -1);
	for (i = 0; i < t->nr_luns; i++) {
		blk_mutex_init(&t->lus[i].pr.lock, "&scsi_lu->pr.lock", -1);
		atomic_init(&t->lus[i].reserved, 0);
	}
}

void tgt_pr_destroy(struct scsi_tgt *t)
{
	unsigned int i;

	for (i = 0; i < t->nr_luns; i++)
		blk_mutex_destroy(&t->lus[i].pr.lock);
	for (i = 0; i < SCSI_TGT_MAX_NEXUS; i++)
		free(t->nexus_id[i]);
	blk_mutex_destroy(&t->nexus_lock);
}

int scsi_tgt_set_nexus_id(struct scsi_tgt *t, unsigned int nexus,
			  const uint8_t *id, size_t len)
{
	uint8_t *copy = NULL;

	if (nexus >= SCSI_TGT_MAX_NEXUS)
		return -EINVAL;
	if (id) {
		if (len < SCSI_TGT_TRANSPORT_ID_MIN ||
		    len > SCSI_TGT_TRANSPORT_ID_MAX || len % 4)
			return -EINVAL;
		copy = malloc(len);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, id, len);
	}
	blk_mutex_lock(&t->nexus_lock);
	free(t->nexus_id[nexus]);
	t->nexus_id[nexus] = copy;
	t->nexus_id_len[nexus] = copy ? (uint16_t)len : 0;
	blk_mutex_unlock(&t->nexus_lock);
	return 0;
}

/*
 * @nexus's TransportID into @b (room for SCSI_TGT_TRANSPORT_ID_MAX); its
 * length.  The default: iSCSI (SPC-4 7.6.4.6, protocol identifier 5,
 * format 00b), a made-up name, NUL-terminated and padded to a multiple
 * of 4 bytes.
 */
static uint32_t transport_id(struct scsi_tgt *t, unsigned int nexus, uint8_t *b)
{
	uint32_t n;
	int l;

	blk_mutex_lock(&t->nexus_lock);
	if (t->nexus_id[nexus]) {
		n = t->nexus_id_len[nexus];
		memcpy(b, t->nexus_id[nexus], n);
		blk_mutex_unlock(&t->nexus_lock);
		return n;
	}
	blk_mutex_unlock(&t->nexus_lock);
	memset(b, 0, 64);
	b[0] = 0x05;
	l = snprintf((char *)b + 4, 60, "iqn.2026-01.org.blkstack:nexus.%u", nexus);
	n = ((uint32_t)l + 1 + 3) & ~3u; /* NUL, padding */
	if (n < SCSI_TGT_TRANSPORT_ID_MIN - 4)
		n = SCSI_TGT_TRANSPORT_ID_MIN - 4;
	scsi_put_be16(b + 2, (uint16_t)n);
	return 4 + n;
}

/* ------------------------------------------------- the conflict table */

enum pr_access {
	ACC_ANY,   /* allowed under every reservation */
	ACC_READ,  /* allowed through write exclusive types */
	ACC_WRITE, /* allowed only to holders (and registrants of RO/AR) */
};

/*
 * SPC-4 5.9.1 table 63 and SBC-3 4.17 table 13, for the commands this
 * target has.  A command not named here is taken as one that changes the
 * medium or the unit's state (conflicts for non-holders under every type).
 */
static enum pr_access access_of(const uint8_t *cdb)
{
	switch (cdb[0]) {
	case INQUIRY:
	case REPORT_LUNS:
	case REQUEST_SENSE:
	case TEST_UNIT_READY:
	case READ_CAPACITY_10:
	case SERVICE_ACTION_IN_16: /* READ CAPACITY (16) */
	case MAINTENANCE_IN:       /* REPORT SUPPORTED OPERATION CODES */
	case PERSISTENT_RESERVE_IN:
	case PERSISTENT_RESERVE_OUT: /* checked by the service action */
		return ACC_ANY;
	case PREVENT_ALLOW_MEDIUM_REMOVAL: /* PREVENT 0 allowed, else conflict */
		return cdb[4] & 0x03 ? ACC_WRITE : ACC_ANY;
	case READ_6:
	case READ_10:
	case READ_12:
	case READ_16:
	case VERIFY_10:
	case VERIFY_12:
	case VERIFY_16:
	case MODE_SENSE_6:
	case MODE_SENSE_10:
	case PRE_FETCH_10:         /* SBC-3 table 13: as a read */
	case PRE_FETCH_16:
	case RECEIVE_COPY_RESULTS:
		return ACC_READ;
	default:
		return ACC_WRITE;
	}
}

/* Whether @nexus may do an @acc command under the persistent reservation */
static bool pr_allows(const struct tgt_pr *pr, unsigned int nexus,
		      enum pr_access acc)
{
	if (!pr->type || acc == ACC_ANY || is_holder(pr, nexus))
		return true;
	/* registrants-only and all-registrants: every registrant may */
	if ((type_ro(pr->type) || type_ar(pr->type)) && is_registered(pr, nexus))
		return true;
	return acc == ACC_READ && !type_ea(pr->type);
}

static bool conflicts(const struct tgt_pr *pr, unsigned int nexus,
		      const uint8_t *cdb)
{
	uint8_t op = cdb[0];

	if (pr->spc2) {
		/* SPC-2 5.5.1: what a reserved unit still answers others */
		if (nexus == pr->spc2_holder)
			return false;
		return !(op == INQUIRY || op == REPORT_LUNS || op == REQUEST_SENSE ||
			 op == RELEASE_6 || op == RELEASE_10 ||
			 op == PERSISTENT_RESERVE_IN);
	}
	if (!pr->type)
		return false;
	/* SPC-4 5.9.3: RESERVE and RELEASE conflict while registrations
	 * exist (and a persistent reservation means one does) */
	if (op == RESERVE_6 || op == RESERVE_10 || op == RELEASE_6 ||
	    op == RELEASE_10)
		return true;
	return !pr_allows(pr, nexus, access_of(cdb));
}

bool tgt_pr_conflict(struct scsi_lu *lu, const struct scsi_tgt_cmd *c)
{
	bool r;

	blk_mutex_lock(&lu->pr.lock);
	r = conflicts(&lu->pr, c->nexus, c->cdb);
	blk_mutex_unlock(&lu->pr.lock);
	return r;
}

bool tgt_pr_may_access(struct scsi_lu *lu, unsigned int nexus, bool write)
{
	bool r;

	if (!atomic_load_explicit(&lu->reserved, memory_order_relaxed))
		return true;
	blk_mutex_lock(&lu->pr.lock);
	if (lu->pr.spc2)
		r = nexus == lu->pr.spc2_holder;
	else
		r = pr_allows(&lu->pr, nexus, write ? ACC_WRITE : ACC_READ);
	blk_mutex_unlock(&lu->pr.lock);
	return r;
}

/* -------------------------------------------- SPC-2 RESERVE / RELEASE */

/* Byte 1 and the rest: third-party (3RDPTY, LONGID, the third-party
 * device ID) and extent reservations (obsolete) are refused. */
static bool spc2_cdb_ok(struct scsi_tgt_cmd *c, struct scsi_lu *lu)
{
	const uint8_t *cdb = c->cdb;
	unsigned int last = cdb[0] == RESERVE_10 || cdb[0] == RELEASE_10 ? 8 : 4;

	for (unsigned int i = 1; i <= last; i++) {
		if (cdb[i]) {
			tgt_cmd_bad_cdb(c, lu, i, i == 1 && (cdb[1] & 0x10) ? 4 : -1);
			return false;
		}
	}
	return true;
}

/* SPC-2 7.21 / 7.22: RESERVE (6) and (10) */
void tgt_pr_lun_reset(struct scsi_lu *lu)
{
	/* SPC-2 5.5.1 / SAM: a logical unit reset releases an SPC-2
	 * reservation; persistent reservations survive it (SPC-4 5.9.1) */
	blk_mutex_lock(&lu->pr.lock);
	if (lu->pr.spc2) {
		lu->pr.spc2 = false;
		publish(lu);
	}
	blk_mutex_unlock(&lu->pr.lock);
}

void tgt_pr_nexus_loss(struct scsi_lu *lu, unsigned int nexus)
{
	/* SPC-2 5.5.1: I_T nexus loss releases the nexus's reservation;
	 * persistent reservations survive it (SPC-4 5.9.1) */
	blk_mutex_lock(&lu->pr.lock);
	if (lu->pr.spc2 && lu->pr.spc2_holder == nexus) {
		lu->pr.spc2 = false;
		publish(lu);
	}
	blk_mutex_unlock(&lu->pr.lock);
}

int tgt_do_reserve(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		   struct scsi_tgt_cmd *c)
{
	struct tgt_pr *pr = &lu->pr;

	(void)q;
	if (!spc2_cdb_ok(c, lu))
		return 0;
	blk_mutex_lock(&pr->lock);
	if (pr->registered || pr->type || c->nexus >= SCSI_TGT_MAX_NEXUS ||
	    (pr->spc2 && pr->spc2_holder != c->nexus)) {
		c->status = SAM_STAT_RESERVATION_CONFLICT;
	} else {
		pr->spc2 = true; /* again by the holder: GOOD, nothing changes */
		pr->spc2_holder = c->nexus;
		publish(lu);
	}
	blk_mutex_unlock(&pr->lock);
	return 0;
}

/* SPC-2 7.16 / 7.17: RELEASE (6) and (10) */
int tgt_do_release(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		   struct scsi_tgt_cmd *c)
{
	struct tgt_pr *pr = &lu->pr;

	(void)q;
	if (!spc2_cdb_ok(c, lu))
		return 0;
	blk_mutex_lock(&pr->lock);
	if (pr->registered || pr->type) {
		c->status = SAM_STAT_RESERVATION_CONFLICT;
	} else if (pr->spc2 && pr->spc2_holder == c->nexus) {
		pr->spc2 = false;
		publish(lu);
	} /* not the holder, or nothing reserved: GOOD, nothing done */
	blk_mutex_unlock(&pr->lock);
	return 0;
}

/* ------------------------------------------- PERSISTENT RESERVE IN */

/* SPC-4 6.15: READ KEYS, READ RESERVATION, REPORT CAPABILITIES, READ
 * FULL STATUS */
int tgt_do_pr_in(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		 struct scsi_tgt_cmd *c)
{
	const uint8_t *cdb = c->cdb;
	struct tgt_pr *pr = &lu->pr;
	uint8_t sa = cdb[1] & 0x1f;
	uint32_t n = 8, i;
	uint8_t *b;

	if (cdb[1] & 0xe0 || sa > PRIN_READ_FULL_STATUS) {
		tgt_cmd_bad_cdb(c, lu, 1, cdb[1] & 0xe0 ? -1 : 4);
		return 0;
	}
	for (i = 2; i <= 6; i++) {
		if (cdb[i]) {
			tgt_cmd_bad_cdb(c, lu, i, -1);
			return 0;
		}
	}
	b = calloc(1, PRIN_MAX);
	if (!b)
		return -ENOMEM;
	blk_mutex_lock(&pr->lock);
	switch (sa) {
	case PRIN_READ_KEYS: /* 6.15.2: every registration's key */
		scsi_put_be32(b, pr->generation);
		for (i = 0; i < SCSI_TGT_MAX_NEXUS; i++) {
			if (is_registered(pr, i)) {
				scsi_put_be64(b + n, pr->key[i]);
				n += 8;
			}
		}
		scsi_put_be32(b + 4, n - 8);
		break;
	case PRIN_READ_RESERVATION: /* 6.15.3 */
		scsi_put_be32(b, pr->generation);
		if (pr->type) {
			/* an all registrants reservation: key 0 (5.9.10) */
			if (!type_ar(pr->type))
				scsi_put_be64(b + 8, pr->key[pr->holder]);
			b[21] = pr->type; /* scope 0: LU_SCOPE */
			n += 16;
		}
		scsi_put_be32(b + 4, n - 8);
		break;
	case PRIN_REPORT_CAPABILITIES: /* 6.15.4 */
		scsi_put_be16(b, 8);
		b[2] = 0x10;  /* CRH; SIP_C, ATP_C, PTPL_C: 0 */
		b[3] = 0x80 | 0x10; /* TMV, ALLOW COMMANDS 001b; PTPL_A 0 */
		b[4] = 0x80 | 0x40 | 0x20 | 0x08 | 0x02; /* WE-AR EA-RO WE-RO EA WE */
		b[5] = 0x01;  /* EA-AR */
		n = 8;
		break;
	default: /* PRIN_READ_FULL_STATUS, 6.15.5 */
		scsi_put_be32(b, pr->generation);
		for (i = 0; i < SCSI_TGT_MAX_NEXUS; i++) {
			uint32_t tl;

			if (!is_registered(pr, i))
				continue;
			scsi_put_be64(b + n, pr->key[i]);
			if (is_holder(pr, i)) {
				b[n + 12] = 0x01;    /* R_HOLDER; ALL_TG_PT 0 */
				b[n + 13] = pr->type; /* scope 0 */
			}
			scsi_put_be16(b + n + 18, 1); /* the one target port */
			tl = transport_id(q->tgt, i, b + n + 24);
			scsi_put_be32(b + n + 20, tl);
			n += 24 + tl;
		}
		scsi_put_be32(b + 4, n - 8);
		break;
	}
	blk_mutex_unlock(&pr->lock);
	tgt_data_in(c, b, n, scsi_get_be16(cdb + 7));
	free(b);
	return 0;
}

/* ------------------------------------------ PERSISTENT RESERVE OUT */

static void unregister_nexuses(struct tgt_pr *pr, uint64_t mask)
{
	for (unsigned int i = 0; i < SCSI_TGT_MAX_NEXUS; i++)
		if (mask & (1ull << i))
			pr->key[i] = 0;
	pr->registered &= ~mask;
}

/* The nexuses registered with @key, but @self */
static uint64_t with_key(const struct tgt_pr *pr, uint64_t key, unsigned int self)
{
	uint64_t m = 0;

	for (unsigned int i = 0; i < SCSI_TGT_MAX_NEXUS; i++)
		if (is_registered(pr, i) && pr->key[i] == key)
			m |= 1ull << i;
	return m & ~nexus_bit(self);
}

/*
 * SPC-4 5.9.7 / 5.9.11.2: @nexus unregisters.  A holder's reservation
 * (but an all registrants one's, which goes with the last registrant)
 * is released; a registrants only one with RESERVATIONS RELEASED to those
 * still registered.
 */
static void drop_registration(struct scsi_lu *lu, unsigned int nexus)
{
	struct tgt_pr *pr = &lu->pr;

	unregister_nexuses(pr, nexus_bit(nexus));
	if (!pr->type)
		return;
	if (type_ar(pr->type)) {
		if (!pr->registered)
			pr->type = 0;
	} else if (pr->holder == nexus) {
		uint8_t old = pr->type;

		pr->type = 0;
		if (type_ro(old))
			tgt_ua_raise_mask(lu, TGT_UA_RES_RELEASED, pr->registered);
	}
}

/*
 * SPC-4 5.9.11.4: PREEMPT (and PREEMPT AND ABORT).  Return: SAM status,
 * or 0xff: INVALID FIELD IN PARAMETER LIST (a zero SERVICE ACTION
 * RESERVATION KEY where only an all registrants reservation takes one).
 * *@preempted: the nexuses whose registrations went (never @nexus); 0
 * unless GOOD.
 */
static uint8_t preempt(struct scsi_lu *lu, unsigned int nexus, uint64_t sakey,
		       uint8_t type, uint64_t *preempted)
{
	struct tgt_pr *pr = &lu->pr;
	uint64_t victims;

	*preempted = 0;
	if (pr->type && type_ar(pr->type) && !sakey) {
		/* every other registration goes, the preempting nexus
		 * takes the reservation with the type asked for */
		victims = pr->registered & ~nexus_bit(nexus);
		unregister_nexuses(pr, victims);
		pr->type = type;
		pr->holder = nexus;
		tgt_ua_raise_mask(lu, TGT_UA_REG_PREEMPTED, victims);
	} else if (!sakey) {
		return 0xff;
	} else if (pr->type && !type_ar(pr->type) && pr->key[pr->holder] == sakey) {
		/* the holder's key: its reservation moves to @nexus, every
		 * registration with that key (but @nexus's) goes */
		uint8_t old = pr->type;

		victims = with_key(pr, sakey, nexus);
		unregister_nexuses(pr, victims);
		pr->type = type;
		pr->holder = nexus;
		tgt_ua_raise_mask(lu, TGT_UA_REG_PREEMPTED, victims);
		if (old != type)
			tgt_ua_raise_mask(lu, TGT_UA_RES_RELEASED,
					  pr->registered & ~nexus_bit(nexus));
	} else {
		/* no reservation, or not its holder's key: the registrations
		 * go, the reservation stays */
		victims = with_key(pr, sakey, nexus);
		if (!victims)
			return SAM_STAT_RESERVATION_CONFLICT;
		unregister_nexuses(pr, victims);
		if (pr->type && type_ar(pr->type) && !pr->registered)
			pr->type = 0;
		tgt_ua_raise_mask(lu, TGT_UA_REG_PREEMPTED, victims);
	}
	pr->generation++;
	*preempted = victims;
	return SAM_STAT_GOOD;
}

/* The name in an iSCSI TransportID (SPC-4 7.6.4.6, formats 00b and 01b:
 * "name" or "name,i,0xISID"), NUL-terminated within @len; NULL: none. */
static const char *tid_name(const uint8_t *b, uint32_t len, uint32_t *nlen)
{
	uint32_t n, i;

	if (len < 8)
		return NULL;
	n = scsi_get_be16(b + 2);
	if (4 + n > len)
		return NULL;
	for (i = 0; i < n && b[4 + i]; i++)
		;
	if (i == n || !i)
		return NULL;
	*nlen = i;
	return (const char *)b + 4;
}

/* The nexus whose TransportID is @id, or -1. */
static int nexus_of_tid(struct scsi_tgt *t, const uint8_t *id, uint32_t len)
{
	uint8_t b[SCSI_TGT_TRANSPORT_ID_MAX + 4];
	const char *want, *have;
	uint32_t wl, hl;
	unsigned int k;

	want = tid_name(id, len, &wl);
	if (!want)
		return -1;
	for (k = 0; k < SCSI_TGT_MAX_NEXUS; k++) {
		uint32_t n = transport_id(t, k, b);

		if ((b[0] & 0x0f) != (id[0] & 0x0f))
			continue;
		have = tid_name(b, n, &hl);
		if (have && hl == wl && !memcmp(have, want, wl))
			return (int)k;
	}
	return -1;
}

/*
 * SPC-4 5.9.8, 6.16.4: REGISTER AND MOVE.  The holder (not of an
 * all-registrants type) with its key registers the nexus the TransportID
 * names with the service action key, gives it the reservation (the CDB's
 * type), and with UNREG drops its own registration.
 */
static int pr_register_and_move(struct scsi_tgt_queue *q, struct scsi_lu *lu,
				struct scsi_tgt_cmd *c, uint8_t type, uint32_t plen)
{
	struct tgt_pr *pr = &lu->pr;
	unsigned int n = c->nexus;
	uint8_t pl[24 + SCSI_TGT_TRANSPORT_ID_MAX];
	uint64_t key, sakey;
	uint32_t tlen;
	int dest;
	uint8_t st = SAM_STAT_GOOD;

	if (plen < 24 + 24 || plen > sizeof(pl) ||
	    tgt_data_out(c, pl, plen) < plen) {
		tgt_cmd_check(c, lu, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
		return 0;
	}
	key = scsi_get_be64(pl);
	sakey = scsi_get_be64(pl + 8);
	tlen = scsi_get_be32(pl + 20);
	if (pl[16] || (pl[17] & 0xfc)) {
		tgt_cmd_bad_param(c, lu, pl[16] ? 16 : 17, -1);
		return 0;
	}
	if (pl[17] & 0x01) { /* APTPL: not persisted */
		tgt_cmd_bad_param(c, lu, 17, 0);
		return 0;
	}
	if (24 + tlen != plen) {
		tgt_cmd_check(c, lu, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
		return 0;
	}
	dest = nexus_of_tid(q->tgt, pl + 24, tlen);
	blk_mutex_lock(&pr->lock);
	if (!is_registered(pr, n) || key != pr->key[n] || !pr->type ||
	    type_ar(pr->type) || !is_holder(pr, n)) {
		st = SAM_STAT_RESERVATION_CONFLICT;
		goto out;
	}
	if (!sakey) {
		blk_mutex_unlock(&pr->lock);
		tgt_cmd_bad_param(c, lu, 8, -1);
		return 0;
	}
	/* the destination: a nexus of ours, not the one that asks */
	if (dest < 0 || (unsigned int)dest == n) {
		blk_mutex_unlock(&pr->lock);
		tgt_cmd_bad_param(c, lu, 24, -1);
		return 0;
	}
	pr->registered |= nexus_bit((unsigned int)dest);
	pr->key[dest] = sakey;
	pr->type = type;
	pr->holder = (unsigned int)dest;
	if (pl[17] & 0x02) /* UNREG */
		unregister_nexuses(pr, nexus_bit(n));
	pr->generation++;
out:
	publish(lu);
	blk_mutex_unlock(&pr->lock);
	c->status = st;
	return 0;
}

/* SPC-4 6.16: the service actions, 5.9.7-5.9.11 for what each does */
int tgt_do_pr_out(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		  struct scsi_tgt_cmd *c)
{
	const uint8_t *cdb = c->cdb;
	struct tgt_pr *pr = &lu->pr;
	uint8_t sa = cdb[1] & 0x1f, scope = cdb[2] >> 4, type = cdb[2] & 0x0f;
	uint32_t plen = scsi_get_be32(cdb + 5);
	unsigned int n = c->nexus;
	bool reg_sa = sa == PROUT_REGISTER || sa == PROUT_REGISTER_AND_IGNORE;
	uint64_t key, sakey, preempted = 0;
	uint8_t pl[24], st;

	if (cdb[1] & 0xe0 || sa > PROUT_REGISTER_AND_MOVE) {
		/* REPLACE LOST RESERVATION: not here */
		tgt_cmd_bad_cdb(c, lu, 1, cdb[1] & 0xe0 ? -1 : 4);
		return 0;
	}
	if (cdb[3] || cdb[4]) {
		tgt_cmd_bad_cdb(c, lu, cdb[3] ? 3 : 4, -1);
		return 0;
	}
	if (sa == PROUT_REGISTER_AND_MOVE) {
		if (scope) {
			tgt_cmd_bad_cdb(c, lu, 2, 7);
			return 0;
		}
		if (!type_valid(type)) {
			tgt_cmd_bad_cdb(c, lu, 2, 3);
			return 0;
		}
		return pr_register_and_move(q, lu, c, type, plen);
	}
	if (sa == PROUT_RESERVE || sa == PROUT_RELEASE || sa == PROUT_PREEMPT ||
	    sa == PROUT_PREEMPT_AND_ABORT) {
		if (scope) {
			tgt_cmd_bad_cdb(c, lu, 2, 7);
			return 0;
		}
		if (!type_valid(type)) {
			tgt_cmd_bad_cdb(c, lu, 2, 3);
			return 0;
		}
	}
	/* 6.16.3: 24 bytes without SPEC_I_PT (which is refused) */
	if (plen != 24 || tgt_data_out(c, pl, 24) < 24) {
		tgt_cmd_check(c, lu, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
		return 0;
	}
	key = scsi_get_be64(pl);
	sakey = scsi_get_be64(pl + 8);
	if (pl[20] & 0xf2) {
		tgt_cmd_bad_param(c, lu, 20, -1);
		return 0;
	}
	if (pl[20] & 0x08) { /* SPEC_I_PT */
		tgt_cmd_bad_param(c, lu, 20, 3);
		return 0;
	}
	/* ALL_TG_PT and APTPL: only REGISTER's, ignored elsewhere (6.16.3) */
	if (reg_sa && (pl[20] & 0x05)) {
		tgt_cmd_bad_param(c, lu, 20, pl[20] & 0x04 ? 2 : 0);
		return 0;
	}
	blk_mutex_lock(&pr->lock);
	st = SAM_STAT_GOOD;
	if (reg_sa) {
		/* 5.9.7: REGISTER checks the key given; REGISTER AND IGNORE
		 * EXISTING KEY does not */
		bool check = sa == PROUT_REGISTER;

		if (!is_registered(pr, n)) {
			/* key 0 from an unregistered nexus unregisters
			 * nothing: GOOD, no change */
			if (check && key) {
				st = SAM_STAT_RESERVATION_CONFLICT;
			} else if (sakey && n >= SCSI_TGT_MAX_NEXUS) {
				blk_mutex_unlock(&pr->lock);
				tgt_cmd_check(c, lu, SK_ILLEGAL_REQUEST,
					      ASC_INSUFFICIENT_REG_RESOURCES);
				return 0;
			} else if (sakey) {
				pr->registered |= nexus_bit(n);
				pr->key[n] = sakey;
				pr->generation++;
			}
		} else if (check && key != pr->key[n]) {
			st = SAM_STAT_RESERVATION_CONFLICT;
		} else {
			if (sakey)
				pr->key[n] = sakey;
			else
				drop_registration(lu, n);
			pr->generation++;
		}
		goto out;
	}
	/* the other service actions: a registered nexus, its own key */
	if (!is_registered(pr, n) || key != pr->key[n]) {
		st = SAM_STAT_RESERVATION_CONFLICT;
		goto out;
	}
	switch (sa) {
	case PROUT_RESERVE: /* 5.9.9 */
		if (!pr->type) {
			pr->type = type;
			pr->holder = n;
		} else if (!is_holder(pr, n) || pr->type != type) {
			st = SAM_STAT_RESERVATION_CONFLICT;
		} /* the holder again, same type and scope: GOOD */
		break;
	case PROUT_RELEASE: /* 5.9.11.2 */
		if (!is_holder(pr, n))
			break; /* nothing held, or not by it: GOOD */
		if (pr->type != type) {
			blk_mutex_unlock(&pr->lock);
			tgt_cmd_check(c, lu, SK_ILLEGAL_REQUEST, ASC_INVALID_RELEASE_OF_PR);
			return 0;
		}
		if (type_ro(type) || type_ar(type))
			tgt_ua_raise_mask(lu, TGT_UA_RES_RELEASED,
					  pr->registered & ~nexus_bit(n));
		pr->type = 0;
		break;
	case PROUT_CLEAR: { /* 5.9.11.3 */
		uint64_t others = pr->registered & ~nexus_bit(n);

		unregister_nexuses(pr, pr->registered);
		pr->type = 0;
		pr->generation++;
		tgt_ua_raise_mask(lu, TGT_UA_RES_PREEMPTED, others);
		break;
	}
	default: /* PREEMPT, PREEMPT AND ABORT */
		st = preempt(lu, n, sakey, type, &preempted);
		if (st == 0xff) {
			blk_mutex_unlock(&pr->lock);
			tgt_cmd_bad_param(c, lu, 8, -1);
			return 0;
		}
		break;
	}
out:
	publish(lu);
	blk_mutex_unlock(&pr->lock);
	/*
	 * 5.9.11.5: the preempted nexuses' tasks on this unit (not this
	 * one's) are aborted as SAM-5 says, TASK ABORTED or, with TAS 0,
	 * without a response (tmf.c); after the registrations went, so that
	 * the tasks that start after it meet the new reservation.
	 */
	if (sa == PROUT_PREEMPT_AND_ABORT && preempted)
		tgt_preempt_abort(q, lu, preempted,
				  !atomic_load_explicit(&lu->tas, memory_order_relaxed));
	c->status = st;
	return 0;
}
