// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: iSCSI text key negotiation and the login state
 * machine (src/export/iscsi/keys.c, login.c, chap.c) fed initiator bytes
 * from memory, without and with CHAP secrets.  The input is a sequence
 * of Login Requests: each starts with a 3-byte header (the flags byte of
 * the BHS, then the data segment length in bytes, big-endian, at most
 * 8192), then that much key=value text.  Each key list is also
 * negotiated as a full feature phase Text exchange.  Also built without
 * libFuzzer by fuzz/replay_main.c to replay the seed corpus in CI.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export/iscsi/chap.h"
#include "export/iscsi/keys.h"
#include "export/iscsi/login.h"
#include "export/iscsi/pdu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *tname(void *o, unsigned int i)
{
	(void)o;
	return i ? "iqn.2026-12.org.blkstack:b" : "iqn.2026-12.org.blkstack:default";
}

static uint16_t tsih(void *o)
{
	(void)o;
	return 1;
}

static void run(const uint8_t *data, size_t size,
		const struct iscsi_login_env *env);

/* Each input twice: AuthMethod None only, then with CHAP secrets. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct iscsi_login_env env = { .nr_targets = 2,
						    .target_name = tname };
	static struct iscsi_chap secrets = {
		.users = { { "alice", "secretsecret12" } }, .nr_users = 1,
		.target = { "tgt", "targetsecret99" }, .has_target = true,
	};
	struct iscsi_login_env cenv = env;

	run(data, size, &env);
	cenv.chap = &secrets;
	run(data, size, &cenv);
	return 0;
}

static void run(const uint8_t *data, size_t size,
		const struct iscsi_login_env *env)
{
	struct iscsi_params ours, cur;
	struct iscsi_login l;
	struct iscsi_neg neg;
	static char buf[8192];
	struct iscsi_text_out out = { .buf = buf, .cap = sizeof(buf) };
	uint8_t req[ISCSI_BHS_LEN], rsp[ISCSI_BHS_LEN];
	size_t pos = 0;
	int r = ISCSI_LOGIN_CONTINUE;

	iscsi_params_default(&ours);
	ours.header_digest = ours.data_digest = true;
	ours.max_recv_dsl = 262144;
	iscsi_login_init(&l, env, &ours);
	l.alloc_tsih = tsih;
	while (pos + 3 <= size && r == ISCSI_LOGIN_CONTINUE) {
		uint8_t flags = data[pos];
		uint32_t len = (uint32_t)data[pos + 1] << 8 | data[pos + 2];

		pos += 3;
		if (len > size - pos)
			len = (uint32_t)(size - pos);
		if (len > 8192)
			len = 8192;
		iscsi_bhs_init(req, ISCSI_OP_LOGIN_REQ | ISCSI_OP_IMMEDIATE, flags);
		r = iscsi_login_step(&l, req, data + pos, len, rsp, &out);
		if (r < 0 || r > ISCSI_LOGIN_FAILED || out.len > out.cap ||
		    bhs_dsl(rsp) != out.len)
			abort();
		/* the same text as a Text request in full feature phase */
		iscsi_params_default(&cur);
		memset(&neg, 0, sizeof(neg));
		neg.ours = &ours;
		neg.cur = &cur;
		neg.peer_max_recv_dsl = 8192;
		out.len = 0;
		out.overflow = false;
		iscsi_keys_negotiate(&neg, (const char *)data + pos, len, &out, NULL);
		if (out.len > out.cap || neg.peer_max_recv_dsl < 512 ||
		    cur.max_burst_length < 512 || cur.max_burst_length > 16777215)
			abort();
		pos += len;
	}
	if (r == ISCSI_LOGIN_DONE &&
	    (l.params.first_burst_length > l.params.max_burst_length ||
	     (!l.params.discovery && l.target < 0) ||
	     (env->chap && !l.chap_user[0])))
		abort(); /* the result must be consistent; CHAP not skipped */
	iscsi_login_free(&l);
}
