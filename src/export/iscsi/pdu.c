// SPDX-License-Identifier: MIT
/*
 * iSCSI PDU layer: see pdu.h.  RFC 7143 11.2 (PDU format), 11.2.2 (AHS),
 * 13.1 (digests).
 */
#include <errno.h>
#include <string.h>

#include <isa-l/crc.h>

#include "pdu.h"

/*
 * What may follow the BHS of each opcode an initiator sends: a data
 * segment (0: none allowed), an AHS.  Opcodes absent here are target
 * opcodes (-EPROTO) unless vendor-specific or SNACK (-EOPNOTSUPP).
 */
static const struct {
	bool valid;
	bool data;
	bool ahs;
} req_ops[64] = {
	[ISCSI_OP_NOP_OUT] = { true, true, false },
	[ISCSI_OP_SCSI_CMD] = { true, true, true },
	[ISCSI_OP_TMF_REQ] = { true, false, false },
	[ISCSI_OP_LOGIN_REQ] = { true, true, false },
	[ISCSI_OP_TEXT_REQ] = { true, true, false },
	[ISCSI_OP_DATA_OUT] = { true, true, false },
	[ISCSI_OP_LOGOUT_REQ] = { true, false, false },
};

int iscsi_pdu_lens(const uint8_t *bhs, uint32_t max_dsl,
		   struct iscsi_pdu_lens *l)
{
	uint32_t dsl = bhs_dsl(bhs);

	if (dsl > max_dsl)
		return -EMSGSIZE;
	l->ahs_len = bhs[BHS_TOTAL_AHS] * 4u;
	l->data_len = dsl;
	l->pad = iscsi_pad4(dsl);
	return 0;
}

int iscsi_pdu_check(const uint8_t *bhs, uint32_t max_dsl,
		    struct iscsi_pdu_lens *l)
{
	uint8_t op = bhs_opcode(bhs);
	uint32_t dsl = bhs_dsl(bhs);

	if (iscsi_pdu_lens(bhs, max_dsl, l))
		return -EMSGSIZE;
	/* initiator opcodes we do not implement: SNACK (ErrorRecoveryLevel
	 * 0), vendor-specific, reserved; a target opcode is an error */
	if (op < 0x20 && !req_ops[op].valid)
		return -EOPNOTSUPP;
	if (!req_ops[op].valid)
		return -EPROTO;
	if ((dsl && !req_ops[op].data) || (l->ahs_len && !req_ops[op].ahs))
		return -EPROTO;
	return 0;
}

int iscsi_ahs_parse(const uint8_t *ahs, uint32_t len, struct iscsi_ahs *out)
{
	uint32_t off = 0;

	memset(out, 0, sizeof(*out));
	while (off < len) {
		uint32_t alen, total;
		uint8_t type;

		if (len - off < 4)
			return -EPROTO;
		alen = get_be16(ahs + off);
		type = ahs[off + 2];
		/* AHSLength counts from the byte after the type */
		total = 3 + alen;
		total += iscsi_pad4(total);
		if (!alen || total > len - off)
			return -EPROTO;
		switch (type) {
		case ISCSI_AHS_EXT_CDB:
			/* a reserved byte, then CDB bytes 16.. */
			if (out->ext_cdb || alen < 2)
				return -EPROTO;
			out->ext_cdb = ahs + off + 4;
			out->ext_cdb_len = alen - 1;
			break;
		case ISCSI_AHS_BIDI_READ_LEN:
			if (out->bidi || alen != 5)
				return -EPROTO;
			out->bidi = true;
			out->bidi_read_len = get_be32(ahs + off + 4);
			break;
		default:
			return -EPROTO;
		}
		off += total;
	}
	return 0;
}

uint32_t iscsi_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	/* crc32_iscsi() takes an int length and a non-const pointer it
	 * only reads; it neither complements its input nor its result */
	while (len) {
		size_t n = len > (1u << 30) ? (1u << 30) : len;

		crc = crc32_iscsi((unsigned char *)(uintptr_t)p, (int)n, crc);
		p += n;
		len -= n;
	}
	return crc;
}

uint32_t iscsi_digest(const struct iovec *iov, int iovcnt)
{
	uint32_t crc = ISCSI_CRC_INIT;
	int i;

	for (i = 0; i < iovcnt; i++)
		crc = iscsi_crc32c(crc, iov[i].iov_base, iov[i].iov_len);
	return iscsi_crc32c_final(crc);
}

void iscsi_bhs_init(uint8_t *bhs, uint8_t opcode, uint8_t flags)
{
	memset(bhs, 0, ISCSI_BHS_LEN);
	bhs[BHS_OPCODE] = opcode;
	bhs[BHS_FLAGS] = flags;
}

void iscsi_nop_in_ping_init(uint8_t *bhs, uint32_t ttt, const uint8_t *lun)
{
	iscsi_bhs_init(bhs, ISCSI_OP_NOP_IN, ISCSI_FLAG_FINAL);
	memcpy(bhs + BHS_LUN, lun, 8);
	put_be32(bhs + BHS_ITT, ISCSI_RSVD_TAG);
	put_be32(bhs + BHS_TTT, ttt);
}

void iscsi_async_logout_init(uint8_t *bhs, uint16_t seconds)
{
	iscsi_bhs_init(bhs, ISCSI_OP_ASYNC, ISCSI_FLAG_FINAL);
	put_be32(bhs + BHS_ITT, ISCSI_RSVD_TAG);
	bhs[BHS_ASYNC_EVENT] = ISCSI_ASYNC_LOGOUT_REQUEST;
	put_be16(bhs + BHS_ASYNC_PARAM3, seconds);
}

const char *iscsi_opcode_name(uint8_t opcode)
{
	static const char *const names[64] = {
		[ISCSI_OP_NOP_OUT] = "NOP-Out",
		[ISCSI_OP_SCSI_CMD] = "SCSI Command",
		[ISCSI_OP_TMF_REQ] = "Task Management Function Request",
		[ISCSI_OP_LOGIN_REQ] = "Login Request",
		[ISCSI_OP_TEXT_REQ] = "Text Request",
		[ISCSI_OP_DATA_OUT] = "SCSI Data-Out",
		[ISCSI_OP_LOGOUT_REQ] = "Logout Request",
		[ISCSI_OP_SNACK_REQ] = "SNACK Request",
		[ISCSI_OP_NOP_IN] = "NOP-In",
		[ISCSI_OP_SCSI_RSP] = "SCSI Response",
		[ISCSI_OP_TMF_RSP] = "Task Management Function Response",
		[ISCSI_OP_LOGIN_RSP] = "Login Response",
		[ISCSI_OP_TEXT_RSP] = "Text Response",
		[ISCSI_OP_DATA_IN] = "SCSI Data-In",
		[ISCSI_OP_LOGOUT_RSP] = "Logout Response",
		[ISCSI_OP_R2T] = "R2T",
		[ISCSI_OP_ASYNC] = "Asynchronous Message",
		[ISCSI_OP_REJECT] = "Reject",
	};
	const char *n = names[opcode & ISCSI_OP_MASK];

	return n ? n : "unknown";
}
