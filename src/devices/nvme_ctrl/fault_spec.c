// SPDX-License-Identifier: MIT
/*
 * The emulated controller's fault rules as text - see nvme_ctrl.h,
 * nvme_ctrl_parse_fault().  One spelling for bench, serve and tests:
 *
 *   op=write,status=read_error,count=3
 *   admin,op=identify,delay=2ms
 *   op=read,slba=0,nlb=2048,status=2:0x81,dnr
 *   op=write,drop
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "blkstack/nvme_ctrl.h"
#include "blkstack/nvme_spec.h"

struct name_val {
	const char *name;
	unsigned int val;
};

static const struct name_val io_ops[] = {
	{ "flush", nvme_cmd_flush },
	{ "write", nvme_cmd_write },
	{ "read", nvme_cmd_read },
	{ "compare", nvme_cmd_compare },
	{ "write_zeroes", nvme_cmd_write_zeroes },
	{ "dsm", nvme_cmd_dsm },
	{ NULL, 0 },
};

static const struct name_val admin_ops[] = {
	{ "delete_sq", nvme_admin_delete_sq },
	{ "create_sq", nvme_admin_create_sq },
	{ "get_log_page", nvme_admin_get_log_page },
	{ "delete_cq", nvme_admin_delete_cq },
	{ "create_cq", nvme_admin_create_cq },
	{ "identify", nvme_admin_identify },
	{ "abort", nvme_admin_abort },
	{ "set_features", nvme_admin_set_features },
	{ "get_features", nvme_admin_get_features },
	{ "async_event", nvme_admin_async_event },
	{ "keep_alive", nvme_admin_keep_alive },
	{ NULL, 0 },
};

/* Status names: NVME_SF(sct, sc) */
static const struct name_val statuses[] = {
	{ "invalid_opcode", NVME_SF(NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE) },
	{ "invalid_field", NVME_SF(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD) },
	{ "data_xfer_error", NVME_SF(NVME_SCT_GENERIC, NVME_SC_DATA_XFER_ERROR) },
	{ "internal", NVME_SF(NVME_SCT_GENERIC, NVME_SC_INTERNAL) },
	{ "abort_req", NVME_SF(NVME_SCT_GENERIC, NVME_SC_ABORT_REQ) },
	{ "lba_range", NVME_SF(NVME_SCT_GENERIC, NVME_SC_LBA_RANGE) },
	{ "cap_exceeded", NVME_SF(NVME_SCT_GENERIC, NVME_SC_CAP_EXCEEDED) },
	{ "ns_not_ready", NVME_SF(NVME_SCT_GENERIC, NVME_SC_NS_NOT_READY) },
	{ "read_only", NVME_SF(NVME_SCT_CMD_SPECIFIC, NVME_SC_READ_ONLY) },
	{ "write_fault", NVME_SF(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT) },
	{ "read_error", NVME_SF(NVME_SCT_MEDIA, NVME_SC_READ_ERROR) },
	{ "compare_failed", NVME_SF(NVME_SCT_MEDIA, NVME_SC_COMPARE_FAILED) },
	{ "access_denied", NVME_SF(NVME_SCT_MEDIA, NVME_SC_ACCESS_DENIED) },
	{ NULL, 0 },
};

static void list_names(char *buf, size_t len, const struct name_val *t)
{
	size_t n = 0;

	buf[0] = '\0';
	for (; t->name && n < len; t++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "|" : "",
				      t->name);
}

static bool lookup(const struct name_val *t, const char *s, unsigned int *v)
{
	for (; t->name; t++)
		if (!strcasecmp(t->name, s)) {
			*v = t->val;
			return true;
		}
	return false;
}

/* A whole number 0..max, decimal or 0x hex. */
static bool parse_num(const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && !*end && *v <= max;
}

/* A time: a number with ns, us, ms or s (bare: us), into microseconds. */
static bool parse_us(const char *s, uint32_t *us)
{
	static const struct { const char *suf; uint64_t ns; } u[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
	};
	uint64_t n, mult = 1000, t;
	char num[32];
	size_t len = strlen(s), i;

	for (i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		size_t l = strlen(u[i].suf);

		if (len > l && !strcmp(s + len - l, u[i].suf) &&
		    (s[len - l - 1] >= '0' && s[len - l - 1] <= '9')) {
			mult = u[i].ns;
			len -= l;
			break;
		}
	}
	if (!len || len >= sizeof(num))
		return false;
	memcpy(num, s, len);
	num[len] = '\0';
	if (!parse_num(num, UINT64_MAX / 1000000000, &n))
		return false;
	t = n * mult / 1000;
	if (t > NVME_CTRL_FAULT_MAX_DELAY_US)
		return false;
	*us = (uint32_t)t;
	return true;
}

int nvme_ctrl_parse_fault(const char *spec, struct nvme_ctrl_fault *f,
			  char *err, size_t errlen)
{
	char buf[256], names[256], *item, *save = NULL;
	const char *op = NULL;
	uint64_t v;
	unsigned int u;
	bool dnr = false;
	int crd = 0;

	memset(f, 0, sizeof(*f));
	f->opcode = -1;
	f->qid = -1;
	if (!spec || strlen(spec) >= sizeof(buf)) {
		snprintf(err, errlen, "'%s': empty or longer than %zu bytes",
			 spec ? spec : "", sizeof(buf) - 1);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", spec);
	for (item = strtok_r(buf, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		char *val = strchr(item, '=');

		if (val)
			*val++ = '\0';
		if (!strcmp(item, "admin") && !val) {
			f->admin = true;
		} else if (!strcmp(item, "drop") && !val) {
			f->drop = true;
		} else if (!strcmp(item, "dnr") && !val) {
			dnr = true;
		} else if (!val) {
			snprintf(err, errlen,
				 "'%s': '%s' needs a value (or is unknown); keys: admin, op=, qid=, nsid=, slba=, nlb=, status=, dnr, crd=, delay=, drop, count=",
				 spec, item);
			return -EINVAL;
		} else if (!strcmp(item, "op")) {
			op = spec + (val - buf); /* resolved once admin is known */
		} else if (!strcmp(item, "qid")) {
			if (!parse_num(val, 65535, &v))
				goto range;
			f->qid = (int)v;
		} else if (!strcmp(item, "nsid")) {
			if (!parse_num(val, UINT32_MAX, &v) || !v)
				goto range;
			f->nsid = (uint32_t)v;
		} else if (!strcmp(item, "slba")) {
			if (!parse_num(val, UINT64_MAX, &v))
				goto range;
			f->slba = v;
		} else if (!strcmp(item, "nlb")) {
			if (!parse_num(val, UINT64_MAX, &v))
				goto range;
			f->nlb = v;
		} else if (!strcmp(item, "status")) {
			char *colon = strchr(val, ':');
			uint64_t sct, sc;

			if (lookup(statuses, val, &u)) {
				f->status = (uint16_t)u;
			} else if (colon) {
				*colon = '\0';
				if (!parse_num(val, 7, &sct) ||
				    !parse_num(colon + 1, 255, &sc) || (!sct && !sc)) {
					*colon = ':';
					goto bad_status;
				}
				f->status = NVME_SF(sct, sc);
			} else {
				goto bad_status;
			}
		} else if (!strcmp(item, "crd")) {
			if (!parse_num(val, 3, &v) || !v)
				goto range;
			crd = (int)v;
		} else if (!strcmp(item, "delay")) {
			if (!parse_us(val, &f->delay_us)) {
				snprintf(err, errlen,
					 "'%s': delay=%s: a time (ns, us, ms or s; us without a suffix), at most %u us",
					 spec, val, NVME_CTRL_FAULT_MAX_DELAY_US);
				return -EINVAL;
			}
		} else if (!strcmp(item, "count")) {
			if (!parse_num(val, UINT32_MAX, &v))
				goto range;
			f->count = (uint32_t)v;
		} else {
			snprintf(err, errlen,
				 "'%s': unknown key '%s'; keys: admin, op=, qid=, nsid=, slba=, nlb=, status=, dnr, crd=, delay=, drop, count=",
				 spec, item);
			return -EINVAL;
		}
		continue;
range:
		snprintf(err, errlen,
			 "'%s': %s=%s: allowed %s", spec, item, val,
			 !strcmp(item, "qid") ? "0..65535" :
			 !strcmp(item, "nsid") ? "1..4294967295" :
			 !strcmp(item, "crd") ? "1..3 (Command Retry Delay Time 1-3)" :
			 !strcmp(item, "count") ? "0..4294967295 (0: every match)" :
			 "a whole number (decimal or 0x hex)");
		return -EINVAL;
bad_status:
		list_names(names, sizeof(names), statuses);
		snprintf(err, errlen,
			 "'%s': status=%s: allowed %s, or SCT:SC in numbers (e.g. 2:0x81)",
			 spec, val, names);
		return -EINVAL;
	}
	if (op) {
		char opname[64];
		size_t len = strcspn(op, ",");

		snprintf(opname, sizeof(opname), "%.*s", (int)len, op);
		if (lookup(f->admin ? admin_ops : io_ops, opname, &u)) {
			f->opcode = (int)u;
		} else if (parse_num(opname, 255, &v)) {
			f->opcode = (int)v;
		} else {
			list_names(names, sizeof(names), f->admin ? admin_ops : io_ops);
			snprintf(err, errlen,
				 "'%s': op=%s: allowed %s, or an opcode 0..255%s",
				 spec, opname, names,
				 f->admin ? "" : " (admin commands: add 'admin')");
			return -EINVAL;
		}
	}
	if ((dnr || crd) && !f->status) {
		snprintf(err, errlen, "'%s': dnr and crd= go with a status=", spec);
		return -EINVAL;
	}
	if (dnr)
		f->status |= NVME_SF_DNR;
	f->status |= (uint16_t)(crd << 11);
	if (!f->status && !f->delay_us && !f->drop) {
		snprintf(err, errlen,
			 "'%s': does nothing: give status=, delay= or drop", spec);
		return -EINVAL;
	}
	if (f->admin && f->qid > 0) {
		snprintf(err, errlen, "'%s': admin commands are on qid 0", spec);
		return -EINVAL;
	}
	if (!f->admin && f->qid == 0) {
		snprintf(err, errlen,
			 "'%s': qid=0 is the admin queue: add 'admin', or give an I/O queue 1..65535",
			 spec);
		return -EINVAL;
	}
	if (f->nlb && f->slba + f->nlb < f->slba) {
		snprintf(err, errlen, "'%s': slba + nlb wraps", spec);
		return -EINVAL;
	}
	return 0;
}
