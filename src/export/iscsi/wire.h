/* SPDX-License-Identifier: MIT */
/*
 * iSCSI wire format (RFC 7143 clause 11): opcodes, the 48-byte Basic
 * Header Segment (BHS) field offsets, flags, status and reason codes.
 * Every multi-byte field is big-endian.  Offsets are bytes into the BHS.
 */
#ifndef BLKSTACK_ISCSI_WIRE_H
#define BLKSTACK_ISCSI_WIRE_H

#include <stdint.h>

#include "export/nbd/wire.h" /* put_be16/32/64, get_be16/32/64 */

#define ISCSI_BHS_LEN 48u
#define ISCSI_DIGEST_LEN 4u
#define ISCSI_AHS_MAX (255u * 4) /* TotalAHSLength counts 4-byte words */
#define ISCSI_RSVD_TAG 0xffffffffu

/* Opcodes (11.2.1.2): byte 0, low 6 bits; bit 6 is the immediate bit. */
#define ISCSI_OP_IMMEDIATE 0x40
#define ISCSI_OP_MASK 0x3f
enum iscsi_opcode {
	/* initiator */
	ISCSI_OP_NOP_OUT = 0x00,
	ISCSI_OP_SCSI_CMD = 0x01,
	ISCSI_OP_TMF_REQ = 0x02,
	ISCSI_OP_LOGIN_REQ = 0x03,
	ISCSI_OP_TEXT_REQ = 0x04,
	ISCSI_OP_DATA_OUT = 0x05,
	ISCSI_OP_LOGOUT_REQ = 0x06,
	ISCSI_OP_SNACK_REQ = 0x10,
	/* 0x1c..0x1e: vendor-specific initiator opcodes */
	/* target */
	ISCSI_OP_NOP_IN = 0x20,
	ISCSI_OP_SCSI_RSP = 0x21,
	ISCSI_OP_TMF_RSP = 0x22,
	ISCSI_OP_LOGIN_RSP = 0x23,
	ISCSI_OP_TEXT_RSP = 0x24,
	ISCSI_OP_DATA_IN = 0x25,
	ISCSI_OP_LOGOUT_RSP = 0x26,
	ISCSI_OP_R2T = 0x31,
	ISCSI_OP_ASYNC = 0x32,
	/* 0x3c..0x3e: vendor-specific target opcodes */
	ISCSI_OP_REJECT = 0x3f,
};

/* Fields common to every BHS (11.2.1). */
#define BHS_OPCODE 0
#define BHS_FLAGS 1
#define BHS_TOTAL_AHS 4
#define BHS_DSL 5          /* 24 bits */
#define BHS_LUN 8          /* 8 bytes */
#define BHS_ITT 16
#define BHS_TTT 20         /* or other opcode-specific fields */
#define BHS_CMDSN 24       /* initiator PDUs */
#define BHS_STATSN 24      /* target PDUs */
#define BHS_EXPSTATSN 28   /* initiator PDUs */
#define BHS_EXPCMDSN 28    /* target PDUs */
#define BHS_MAXCMDSN 32    /* target PDUs */

#define ISCSI_FLAG_FINAL 0x80

/* SCSI Command (11.3). */
#define ISCSI_CMD_F 0x80
#define ISCSI_CMD_R 0x40
#define ISCSI_CMD_W 0x20
#define ISCSI_CMD_ATTR_MASK 0x07
#define BHS_CMD_EDTL 20
#define BHS_CMD_CDB 32
#define ISCSI_CDB_LEN 16
/* AHS types (11.2.2) */
#define ISCSI_AHS_EXT_CDB 1
#define ISCSI_AHS_BIDI_READ_LEN 2

/* SCSI Response (11.4). */
#define ISCSI_RSP_o 0x10   /* bidirectional read residual overflow */
#define ISCSI_RSP_u 0x08
#define ISCSI_RSP_O 0x04   /* residual overflow */
#define ISCSI_RSP_U 0x02   /* residual underflow */
#define BHS_RSP_RESPONSE 2
#define BHS_RSP_STATUS 3
#define BHS_RSP_EXPDATASN 36
#define BHS_RSP_BIDI_RESID 40
#define BHS_RSP_RESID 44
#define ISCSI_RESPONSE_COMPLETED 0x00
#define ISCSI_RESPONSE_TARGET_FAILURE 0x01

/* Task Management Function Request/Response (11.5, 11.6). */
#define ISCSI_TMF_FUNC_MASK 0x7f
#define BHS_TMF_REF_TASK 20
#define BHS_TMF_REFCMDSN 32
enum iscsi_tmf_func {
	ISCSI_TMF_ABORT_TASK = 1,
	ISCSI_TMF_ABORT_TASK_SET = 2,
	ISCSI_TMF_CLEAR_ACA = 3,
	ISCSI_TMF_CLEAR_TASK_SET = 4,
	ISCSI_TMF_LUN_RESET = 5,
	ISCSI_TMF_TARGET_WARM_RESET = 6,
	ISCSI_TMF_TARGET_COLD_RESET = 7,
	ISCSI_TMF_TASK_REASSIGN = 8,
};
enum iscsi_tmf_response {
	ISCSI_TMF_RSP_COMPLETE = 0,
	ISCSI_TMF_RSP_NO_TASK = 1,
	ISCSI_TMF_RSP_NO_LUN = 2,
	ISCSI_TMF_RSP_ALLEGIANT = 3,
	ISCSI_TMF_RSP_NO_REASSIGN = 4,
	ISCSI_TMF_RSP_NOT_SUPPORTED = 5,
	ISCSI_TMF_RSP_AUTH_FAILED = 6,
	ISCSI_TMF_RSP_REJECTED = 255,
};

/* SCSI Data-Out / Data-In (11.7). */
#define ISCSI_DATA_A 0x40
#define ISCSI_DATA_S 0x01
#define BHS_DATA_STATUS 3
#define BHS_DATASN 36
#define BHS_BUF_OFFSET 40
#define BHS_DATA_RESID 44

/* R2T (11.8). */
#define BHS_R2TSN 36
#define BHS_R2T_DDTL 44

/* Asynchronous Message (11.9). */
#define BHS_ASYNC_EVENT 36
#define BHS_ASYNC_VCODE 37
#define BHS_ASYNC_PARAM1 38
#define BHS_ASYNC_PARAM2 40
#define BHS_ASYNC_PARAM3 42
enum iscsi_async_event {
	ISCSI_ASYNC_SCSI_EVENT = 0,     /* sense data in the data segment */
	ISCSI_ASYNC_LOGOUT_REQUEST = 1, /* Parameter3: seconds to log out in */
	ISCSI_ASYNC_DROP_CONNECTION = 2,
	ISCSI_ASYNC_DROP_SESSION = 3,
	ISCSI_ASYNC_RENEGOTIATE = 4,
	ISCSI_ASYNC_VENDOR = 255,
};

/* Text Request/Response (11.10, 11.11), Login (11.12, 11.13). */
#define ISCSI_TEXT_C 0x40
#define ISCSI_LOGIN_T 0x80
#define ISCSI_LOGIN_C 0x40
#define ISCSI_LOGIN_CSG(f) (((f) >> 2) & 3)
#define ISCSI_LOGIN_NSG(f) ((f) & 3)
#define BHS_LOGIN_VMAX 2
#define BHS_LOGIN_VMIN 3  /* request; Version-active in the response */
#define BHS_LOGIN_ISID 8  /* 6 bytes */
#define BHS_LOGIN_TSIH 14
#define BHS_LOGIN_CID 20
#define BHS_LOGIN_STATUS_CLASS 36
#define BHS_LOGIN_STATUS_DETAIL 37
enum iscsi_stage {
	ISCSI_STAGE_SECURITY = 0,
	ISCSI_STAGE_OPERATIONAL = 1,
	ISCSI_STAGE_FULL_FEATURE = 3,
};
/* Login status: class << 8 | detail (11.13.5). */
enum iscsi_login_status {
	ISCSI_LOGIN_SUCCESS = 0x0000,
	ISCSI_LOGIN_TARGET_MOVED_TEMP = 0x0101,
	ISCSI_LOGIN_TARGET_MOVED_PERM = 0x0102,
	ISCSI_LOGIN_INITIATOR_ERROR = 0x0200,
	ISCSI_LOGIN_AUTH_FAILED = 0x0201,
	ISCSI_LOGIN_AUTHZ_FAILED = 0x0202,
	ISCSI_LOGIN_NOT_FOUND = 0x0203,
	ISCSI_LOGIN_TARGET_REMOVED = 0x0204,
	ISCSI_LOGIN_UNSUPPORTED_VERSION = 0x0205,
	ISCSI_LOGIN_TOO_MANY_CONNECTIONS = 0x0206,
	ISCSI_LOGIN_MISSING_PARAMETER = 0x0207,
	ISCSI_LOGIN_CANT_INCLUDE = 0x0208,
	ISCSI_LOGIN_SESSION_TYPE_UNSUPPORTED = 0x0209,
	ISCSI_LOGIN_NO_SESSION = 0x020a,
	ISCSI_LOGIN_INVALID_REQUEST = 0x020b,
	ISCSI_LOGIN_TARGET_ERROR = 0x0300,
	ISCSI_LOGIN_SERVICE_UNAVAILABLE = 0x0301,
	ISCSI_LOGIN_OUT_OF_RESOURCES = 0x0302,
};

/* Logout Request/Response (11.14, 11.15). */
#define ISCSI_LOGOUT_REASON_MASK 0x7f
#define BHS_LOGOUT_CID 20
#define BHS_LOGOUT_RESPONSE 2
#define BHS_LOGOUT_T2W 40
#define BHS_LOGOUT_T2R 42
enum iscsi_logout_reason {
	ISCSI_LOGOUT_SESSION = 0,
	ISCSI_LOGOUT_CONNECTION = 1,
	ISCSI_LOGOUT_RECOVERY = 2,
};
enum iscsi_logout_response {
	ISCSI_LOGOUT_OK = 0,
	ISCSI_LOGOUT_CID_NOT_FOUND = 1,
	ISCSI_LOGOUT_RECOVERY_UNSUPPORTED = 2,
	ISCSI_LOGOUT_CLEANUP_FAILED = 3,
};

/* Reject (11.17). */
#define BHS_REJECT_REASON 2
enum iscsi_reject_reason {
	ISCSI_REJECT_DATA_DIGEST = 0x02,
	ISCSI_REJECT_SNACK = 0x03,
	ISCSI_REJECT_PROTOCOL_ERROR = 0x04,
	ISCSI_REJECT_CMD_NOT_SUPPORTED = 0x05,
	ISCSI_REJECT_IMM_CMD = 0x06,
	ISCSI_REJECT_TASK_IN_PROGRESS = 0x07,
	ISCSI_REJECT_INVALID_DATA_ACK = 0x08,
	ISCSI_REJECT_INVALID_PDU_FIELD = 0x09,
	ISCSI_REJECT_LONG_OP = 0x0a,
	ISCSI_REJECT_NEGOTIATION_RESET = 0x0b,
	ISCSI_REJECT_WAITING_FOR_LOGOUT = 0x0c,
};

/* RFC 1982 serial number arithmetic on 32 bits (CmdSN, StatSN, DataSN). */
static inline int iscsi_sn_cmp(uint32_t a, uint32_t b)
{
	return a == b ? 0 : (int32_t)(a - b) < 0 ? -1 : 1;
}

static inline uint32_t bhs_dsl(const uint8_t *bhs)
{
	return (uint32_t)bhs[5] << 16 | (uint32_t)bhs[6] << 8 | bhs[7];
}

static inline void bhs_set_dsl(uint8_t *bhs, uint32_t len)
{
	bhs[5] = (uint8_t)(len >> 16);
	bhs[6] = (uint8_t)(len >> 8);
	bhs[7] = (uint8_t)len;
}

static inline uint8_t bhs_opcode(const uint8_t *bhs)
{
	return bhs[0] & ISCSI_OP_MASK;
}

static inline uint32_t iscsi_pad4(uint32_t len)
{
	return (4 - (len & 3)) & 3;
}

#endif /* BLKSTACK_ISCSI_WIRE_H */
