/* SPDX-License-Identifier: MIT */
/*
 * NVMe on-the-wire definitions: controller registers, submission and
 * completion queue entries, admin and NVM command set opcodes, status codes,
 * Identify data structures and log pages.
 *
 * Reference: NVM Express Base Specification 2.0 ("Base") and NVM Command Set
 * Specification 1.0 ("NVM").  Section numbers are given per definition.
 *
 * All multi-byte fields are little endian on the wire.  blkstack builds only
 * on little-endian hosts (asserted below), so the structures are used as they
 * are, without byte swapping.
 *
 * This header compiles on its own and from C++.
 */
#ifndef BLKSTACK_NVME_SPEC_H
#define BLKSTACK_NVME_SPEC_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
#define NVME_STATIC_ASSERT static_assert
#else
#define NVME_STATIC_ASSERT _Static_assert
#endif

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "blkstack's NVMe structures assume a little-endian host"
#endif

/* ------------------------------------------------ registers (Base 3.1.3) */

enum nvme_reg {
	NVME_REG_CAP = 0x00,     /* Controller Capabilities, 64 bit */
	NVME_REG_VS = 0x08,      /* Version */
	NVME_REG_INTMS = 0x0c,   /* Interrupt Mask Set */
	NVME_REG_INTMC = 0x10,   /* Interrupt Mask Clear */
	NVME_REG_CC = 0x14,      /* Controller Configuration */
	NVME_REG_CSTS = 0x1c,    /* Controller Status */
	NVME_REG_NSSR = 0x20,    /* NVM Subsystem Reset */
	NVME_REG_AQA = 0x24,     /* Admin Queue Attributes */
	NVME_REG_ASQ = 0x28,     /* Admin SQ Base Address, 64 bit */
	NVME_REG_ACQ = 0x30,     /* Admin CQ Base Address, 64 bit */
	NVME_REG_DBS = 0x1000,   /* first doorbell (SQ0TDBL) */
};

/* CAP fields (Base 3.1.3.1) */
#define NVME_CAP_MQES(cap) ((uint32_t)((cap) & 0xffff))          /* 0's based */
#define NVME_CAP_CQR(cap) ((uint32_t)(((cap) >> 16) & 0x1))
#define NVME_CAP_AMS(cap) ((uint32_t)(((cap) >> 17) & 0x3))
#define NVME_CAP_TO(cap) ((uint32_t)(((cap) >> 24) & 0xff))      /* 500 ms units */
#define NVME_CAP_DSTRD(cap) ((uint32_t)(((cap) >> 32) & 0xf))    /* stride 2^(2+DSTRD) */
#define NVME_CAP_NSSRS(cap) ((uint32_t)(((cap) >> 36) & 0x1))
#define NVME_CAP_CSS(cap) ((uint32_t)(((cap) >> 37) & 0xff))
#define NVME_CAP_MPSMIN(cap) ((uint32_t)(((cap) >> 48) & 0xf))   /* 2^(12+MPSMIN) */
#define NVME_CAP_MPSMAX(cap) ((uint32_t)(((cap) >> 52) & 0xf))
#define NVME_CAP_CSS_NVM (1u << 0)    /* CAP.CSS bit 0: NVM command set */
#define NVME_CAP_CSS_IOCS (1u << 6)   /* one or more I/O command sets */
#define NVME_CAP_CSS_NOIO (1u << 7)   /* admin only */

/* VS (Base 3.1.3.2) */
#define NVME_VS(mjr, mnr, ter) (((uint32_t)(mjr) << 16) | ((uint32_t)(mnr) << 8) | (ter))
#define NVME_VS_2_0 NVME_VS(2, 0, 0)

/* CC fields (Base 3.1.3.5) */
#define NVME_CC_EN (1u << 0)
#define NVME_CC_CSS_SHIFT 4           /* 3 bits; 000b NVM command set */
#define NVME_CC_CSS_MASK (0x7u << NVME_CC_CSS_SHIFT)
#define NVME_CC_CSS_NVM (0u << NVME_CC_CSS_SHIFT)
#define NVME_CC_MPS_SHIFT 7           /* 4 bits; page size 2^(12+MPS) */
#define NVME_CC_MPS_MASK (0xfu << NVME_CC_MPS_SHIFT)
#define NVME_CC_AMS_SHIFT 11          /* 3 bits; 000b round robin */
#define NVME_CC_AMS_MASK (0x7u << NVME_CC_AMS_SHIFT)
#define NVME_CC_SHN_SHIFT 14          /* 2 bits */
#define NVME_CC_SHN_MASK (0x3u << NVME_CC_SHN_SHIFT)
#define NVME_CC_SHN_NONE (0u << NVME_CC_SHN_SHIFT)
#define NVME_CC_SHN_NORMAL (1u << NVME_CC_SHN_SHIFT)
#define NVME_CC_SHN_ABRUPT (2u << NVME_CC_SHN_SHIFT)
#define NVME_CC_IOSQES_SHIFT 16       /* 4 bits; SQ entry size 2^n, 6 for NVM */
#define NVME_CC_IOSQES_MASK (0xfu << NVME_CC_IOSQES_SHIFT)
#define NVME_CC_IOCQES_SHIFT 20       /* 4 bits; CQ entry size 2^n, 4 for NVM */
#define NVME_CC_IOCQES_MASK (0xfu << NVME_CC_IOCQES_SHIFT)

/* CSTS fields (Base 3.1.3.6) */
#define NVME_CSTS_RDY (1u << 0)
#define NVME_CSTS_CFS (1u << 1)       /* controller fatal status */
#define NVME_CSTS_SHST_SHIFT 2
#define NVME_CSTS_SHST_MASK (0x3u << NVME_CSTS_SHST_SHIFT)
#define NVME_CSTS_SHST_NORMAL (0u << NVME_CSTS_SHST_SHIFT)
#define NVME_CSTS_SHST_OCCUR (1u << NVME_CSTS_SHST_SHIFT)   /* processing */
#define NVME_CSTS_SHST_CMPLT (2u << NVME_CSTS_SHST_SHIFT)   /* complete */
#define NVME_CSTS_NSSRO (1u << 4)
#define NVME_CSTS_PP (1u << 5)        /* processing paused */

/* AQA fields (Base 3.1.3.8): 0's based sizes, 12 bits each */
#define NVME_AQA_ASQS(aqa) ((aqa) & 0xfff)
#define NVME_AQA_ACQS(aqa) (((aqa) >> 16) & 0xfff)
#define NVME_AQA(asqs, acqs) ((((uint32_t)(acqs) - 1) << 16) | ((uint32_t)(asqs) - 1))

/**
 * nvme_sq_tail_doorbell() - register offset of SQ @qid's Tail doorbell.
 * @qid: queue identifier, 0 for the admin queue.
 * @dstrd: CAP.DSTRD.
 * Base 3.1.3.25: 1000h + ((2y) * (4 << CAP.DSTRD)).
 */
static inline uint32_t nvme_sq_tail_doorbell(uint16_t qid, uint32_t dstrd)
{
	return NVME_REG_DBS + (2u * qid) * (4u << dstrd);
}

/** nvme_cq_head_doorbell() - 1000h + ((2y + 1) * (4 << CAP.DSTRD)). */
static inline uint32_t nvme_cq_head_doorbell(uint16_t qid, uint32_t dstrd)
{
	return NVME_REG_DBS + (2u * qid + 1u) * (4u << dstrd);
}

/* ---------------------------------------- queue entries (Base 4.2, 4.6) */

/* SQE DW0 flags byte: FUSE bits 1:0, PSDT bits 7:6 (00b = PRPs) */
#define NVME_CMD_FUSE_MASK 0x03
#define NVME_CMD_PSDT_MASK 0xc0

/**
 * struct nvme_command - a 64-byte submission queue entry (Base 4.2,
 * Figure 88 "Common Command Format").  Command-specific dwords 10-15 are
 * kept as cdw10..cdw15; the helpers and field comments below name what each
 * command puts there.
 *
 * There are no gaps: storing every field writes all 64 bytes, which is what
 * the host driver's "fields" SQE-initialisation mode relies on.
 */
struct nvme_command {
	uint8_t opcode;     /* DW0 07:00 */
	uint8_t flags;      /* DW0 15:08 FUSE, PSDT */
	uint16_t cid;       /* DW0 31:16 command identifier */
	uint32_t nsid;      /* DW1 */
	uint32_t cdw2;      /* DW2 */
	uint32_t cdw3;      /* DW3 */
	uint64_t mptr;      /* DW5:4 metadata pointer */
	uint64_t prp1;      /* DW7:6 data pointer, PRP entry 1 */
	uint64_t prp2;      /* DW9:8 PRP entry 2 or PRP list pointer */
	uint32_t cdw10;
	uint32_t cdw11;
	uint32_t cdw12;
	uint32_t cdw13;
	uint32_t cdw14;
	uint32_t cdw15;
};
NVME_STATIC_ASSERT(sizeof(struct nvme_command) == 64, "SQE is 64 bytes");

/*
 * Read / Write / Compare / Write Zeroes (NVM 3.2.4, 3.2.6, 3.2.1, 3.2.8):
 * cdw10/11 = SLBA (low/high), cdw12 bits 15:0 = NLB (0's based), bit 30 FUA,
 * bit 31 LR; Write Zeroes also bit 25 DEAC (deallocate).
 * cdw13 = DSM hints, cdw14 = reference tag, cdw15 = app tag/mask.
 */
#define NVME_RW_NLB_MASK 0xffffu
#define NVME_RW_FUA (1u << 30)
#define NVME_RW_LR (1u << 31)
#define NVME_WZ_DEAC (1u << 25)

/*
 * Dataset Management (NVM 3.2.3): cdw10 bits 7:0 NR (0's based number of
 * ranges), cdw11 bit 2 AD (deallocate), bit 1 IDW, bit 0 IDR.
 */
#define NVME_DSM_AD (1u << 2)

/** struct nvme_dsm_range - one Dataset Management range (NVM Figure 39). */
struct nvme_dsm_range {
	uint32_t cattr;     /* context attributes */
	uint32_t nlb;       /* length in logical blocks (not 0's based) */
	uint64_t slba;
};
NVME_STATIC_ASSERT(sizeof(struct nvme_dsm_range) == 16, "DSM range is 16 bytes");

/* CQE DW3 status field (Base 4.6.1): bit 0 of DW3 upper half is P. */
#define NVME_CQE_PHASE 0x1u
/* status as kept in blkstack: the 15-bit Status Field, (CQE DW3 >> 17) */
#define NVME_SF_SC(sf) ((sf) & 0xff)          /* status code */
#define NVME_SF_SCT(sf) (((sf) >> 8) & 0x7)   /* status code type */
#define NVME_SF_CRD(sf) (((sf) >> 11) & 0x3)
#define NVME_SF_M (1u << 13)                  /* more (Get Log Page) */
#define NVME_SF_DNR (1u << 14)                /* do not retry */
#define NVME_SF(sct, sc) ((uint16_t)(((sct) << 8) | (sc)))

/**
 * struct nvme_completion - a 16-byte completion queue entry (Base 4.6,
 * Figure 90).  @status holds bit 0 Phase Tag and bits 15:1 Status Field:
 * nvme_cqe_sf() extracts the field in blkstack's NVME_SF_* layout.
 */
struct nvme_completion {
	uint32_t result;    /* DW0 command specific */
	uint32_t dw1;       /* DW1 command specific */
	uint16_t sq_head;   /* DW2 15:0 SQ head pointer */
	uint16_t sq_id;     /* DW2 31:16 SQ identifier */
	uint16_t cid;       /* DW3 15:0 command identifier */
	uint16_t status;    /* DW3 31:16 phase (bit 0) and status field */
};
NVME_STATIC_ASSERT(sizeof(struct nvme_completion) == 16, "CQE is 16 bytes");

/** nvme_cqe_sf() - the status field (SC, SCT, CRD, M, DNR) of a CQE. */
static inline uint16_t nvme_cqe_sf(uint16_t status)
{
	return status >> 1;
}

/* ------------------------------------------- opcodes (Base 5, NVM 3) */

enum nvme_admin_opcode {
	nvme_admin_delete_sq = 0x00,
	nvme_admin_create_sq = 0x01,
	nvme_admin_get_log_page = 0x02,
	nvme_admin_delete_cq = 0x04,
	nvme_admin_create_cq = 0x05,
	nvme_admin_identify = 0x06,
	nvme_admin_abort = 0x08,
	nvme_admin_set_features = 0x09,
	nvme_admin_get_features = 0x0a,
	nvme_admin_async_event = 0x0c,
	nvme_admin_keep_alive = 0x18,
};

enum nvme_io_opcode {
	nvme_cmd_flush = 0x00,
	nvme_cmd_write = 0x01,
	nvme_cmd_read = 0x02,
	nvme_cmd_compare = 0x05,
	nvme_cmd_write_zeroes = 0x08,
	nvme_cmd_dsm = 0x09,
};

/*
 * Create I/O CQ (Base 5.4): cdw10 bits 31:16 QSIZE (0's based), 15:0 QID;
 * cdw11 bits 31:16 IV, bit 1 IEN, bit 0 PC (physically contiguous).
 * Create I/O SQ (Base 5.5): cdw10 as above; cdw11 bits 31:16 CQID,
 * 2:1 QPRIO, 0 PC.  Delete I/O SQ/CQ (Base 5.6, 5.7): cdw10 bits 15:0 QID.
 */
#define NVME_QUEUE_PHYS_CONTIG (1u << 0)
#define NVME_CQ_IRQ_ENABLED (1u << 1)

/*
 * Identify (Base 5.17): cdw10 bits 7:0 CNS, 31:16 CNTID; cdw11 bits 31:24
 * CSI.
 */
enum nvme_identify_cns {
	NVME_ID_CNS_NS = 0x00,
	NVME_ID_CNS_CTRL = 0x01,
	NVME_ID_CNS_NS_ACTIVE_LIST = 0x02,
	NVME_ID_CNS_NS_DESC_LIST = 0x03,
};

/* Features (Base 5.27.1): cdw10 bits 7:0 FID, bit 31 SV; Get: bits 10:8 SEL */
enum nvme_feature_id {
	NVME_FEAT_ARBITRATION = 0x01,
	NVME_FEAT_POWER_MGMT = 0x02,
	NVME_FEAT_TEMP_THRESH = 0x04,
	NVME_FEAT_ERR_RECOVERY = 0x05,
	NVME_FEAT_VOLATILE_WC = 0x06,
	NVME_FEAT_NUM_QUEUES = 0x07,
	NVME_FEAT_IRQ_COALESCE = 0x08,
	NVME_FEAT_ASYNC_EVENT = 0x0b,
};

/*
 * Get Log Page (Base 5.16): cdw10 bits 7:0 LID, bit 15 RAE, bits 31:16
 * NUMDL; cdw11 bits 15:0 NUMDU (number of dwords, 0's based); cdw12/13
 * log page offset in bytes (LPOL/LPOU).
 */
enum nvme_log_id {
	NVME_LOG_ERROR = 0x01,
	NVME_LOG_SMART = 0x02,
	NVME_LOG_FW_SLOT = 0x03,
};

/* ------------------------------------------------ status (Base 4.6.1.2) */

enum nvme_sct {
	NVME_SCT_GENERIC = 0x0,
	NVME_SCT_CMD_SPECIFIC = 0x1,
	NVME_SCT_MEDIA = 0x2,
	NVME_SCT_PATH = 0x3,
	NVME_SCT_VENDOR = 0x7,
};

/* Generic Command Status (SCT 0), Base Figure 94 and NVM Figure 17 */
enum nvme_generic_sc {
	NVME_SC_SUCCESS = 0x00,
	NVME_SC_INVALID_OPCODE = 0x01,
	NVME_SC_INVALID_FIELD = 0x02,
	NVME_SC_CMDID_CONFLICT = 0x03,
	NVME_SC_DATA_XFER_ERROR = 0x04,
	NVME_SC_POWER_LOSS = 0x05,
	NVME_SC_INTERNAL = 0x06,
	NVME_SC_ABORT_REQ = 0x07,
	NVME_SC_ABORT_QUEUE = 0x08,        /* command aborted due to SQ deletion */
	NVME_SC_FUSED_FAIL = 0x09,
	NVME_SC_FUSED_MISSING = 0x0a,
	NVME_SC_INVALID_NS = 0x0b,         /* invalid namespace or format */
	NVME_SC_CMD_SEQ_ERROR = 0x0c,
	NVME_SC_SGL_INVALID_LAST = 0x0d,
	NVME_SC_SGL_INVALID_COUNT = 0x0e,
	NVME_SC_SGL_INVALID_DATA = 0x0f,
	NVME_SC_SGL_INVALID_METADATA = 0x10,
	NVME_SC_SGL_INVALID_TYPE = 0x11,
	NVME_SC_CMB_INVALID_USE = 0x12,
	NVME_SC_PRP_INVALID_OFFSET = 0x13,
};

/* Generic NVM command set statuses (SCT 0, values 80h..) */
enum nvme_generic_nvm_sc {
	NVME_SC_LBA_RANGE = 0x80,          /* LBA out of range */
	NVME_SC_CAP_EXCEEDED = 0x81,
	NVME_SC_NS_NOT_READY = 0x82,
};

/* Command Specific Status (SCT 1), Base Figure 95 and NVM Figure 18 */
enum nvme_cmd_specific_sc {
	NVME_SC_CQ_INVALID = 0x00,         /* completion queue invalid */
	NVME_SC_QID_INVALID = 0x01,        /* invalid queue identifier */
	NVME_SC_QUEUE_SIZE = 0x02,         /* invalid queue size */
	NVME_SC_ABORT_LIMIT = 0x03,        /* abort command limit exceeded */
	NVME_SC_ASYNC_LIMIT = 0x05,        /* AER limit exceeded */
	NVME_SC_FIRMWARE_SLOT = 0x06,
	NVME_SC_INVALID_VECTOR = 0x08,     /* invalid interrupt vector */
	NVME_SC_INVALID_LOG_PAGE = 0x09,
	NVME_SC_INVALID_FORMAT = 0x0a,
	NVME_SC_QUEUE_DELETION = 0x0c,     /* invalid queue deletion */
	NVME_SC_FEATURE_NOT_SAVEABLE = 0x0d,
	NVME_SC_FEATURE_NOT_CHANGEABLE = 0x0e,
	NVME_SC_CONFLICTING_ATTRS = 0x80,  /* NVM: conflicting attributes */
	NVME_SC_READ_ONLY = 0x82,          /* NVM: attempted write to read only range */
};

/* Media and Data Integrity Errors (SCT 2), NVM Figure 19 */
enum nvme_media_sc {
	NVME_SC_WRITE_FAULT = 0x80,
	NVME_SC_READ_ERROR = 0x81,         /* unrecovered read error */
	NVME_SC_GUARD_CHECK = 0x82,
	NVME_SC_APPTAG_CHECK = 0x83,
	NVME_SC_REFTAG_CHECK = 0x84,
	NVME_SC_COMPARE_FAILED = 0x85,
	NVME_SC_ACCESS_DENIED = 0x86,
	NVME_SC_UNWRITTEN_BLOCK = 0x87,
};

/* ---------------------------------------- Identify (Base 5.17.2) */

/** struct nvme_lbaf - LBA Format Data Structure (NVM Figure 98). */
struct nvme_lbaf {
	uint16_t ms;        /* metadata size, bytes */
	uint8_t ds;         /* LBA data size, 2^ds bytes */
	uint8_t rp;         /* relative performance, bits 1:0 */
};

/**
 * struct nvme_id_ctrl - Identify Controller Data Structure (Base Figure 275),
 * 4096 bytes.  Fields blkstack does not use are kept as reserved bytes at
 * their offsets.
 */
struct nvme_id_ctrl {
	uint16_t vid;           /* 0 */
	uint16_t ssvid;         /* 2 */
	char sn[20];            /* 4, ASCII, space padded */
	char mn[40];            /* 24 */
	char fr[8];             /* 64 */
	uint8_t rab;            /* 72 recommended arbitration burst */
	uint8_t ieee[3];        /* 73 */
	uint8_t cmic;           /* 76 */
	uint8_t mdts;           /* 77 max data transfer, 2^n * CAP.MPSMIN pages; 0 none */
	uint16_t cntlid;        /* 78 */
	uint32_t ver;           /* 80 */
	uint32_t rtd3r;         /* 84 */
	uint32_t rtd3e;         /* 88 */
	uint32_t oaes;          /* 92 */
	uint32_t ctratt;        /* 96 */
	uint16_t rrls;          /* 100 */
	uint8_t rsvd102[9];     /* 102 */
	uint8_t cntrltype;      /* 111: 1 = I/O controller */
	uint8_t fguid[16];      /* 112 */
	uint16_t crdt[3];       /* 128 */
	uint8_t rsvd134[122];   /* 134 */
	uint16_t oacs;          /* 256 optional admin command support */
	uint8_t acl;            /* 258 abort command limit, 0's based */
	uint8_t aerl;           /* 259 AER limit, 0's based */
	uint8_t frmw;           /* 260 firmware updates */
	uint8_t lpa;            /* 261 log page attributes */
	uint8_t elpe;           /* 262 error log page entries, 0's based */
	uint8_t npss;           /* 263 */
	uint8_t avscc;          /* 264 */
	uint8_t apsta;          /* 265 */
	uint16_t wctemp;        /* 266 kelvin */
	uint16_t cctemp;        /* 268 kelvin */
	uint8_t rsvd270[242];   /* 270 */
	uint8_t sqes;           /* 512 bits 3:0 required, 7:4 max (log2 bytes) */
	uint8_t cqes;           /* 513 */
	uint16_t maxcmd;        /* 514 */
	uint32_t nn;            /* 516 number of namespaces */
	uint16_t oncs;          /* 520 optional NVM command support */
	uint16_t fuses;         /* 522 */
	uint8_t fna;            /* 524 */
	uint8_t vwc;            /* 525 volatile write cache: bit 0 present */
	uint16_t awun;          /* 526 */
	uint16_t awupf;         /* 528 */
	uint8_t icsvscc;        /* 530 */
	uint8_t nwpc;           /* 531 */
	uint16_t acwu;          /* 532 */
	uint16_t ocfs;          /* 534 */
	uint32_t sgls;          /* 536 0: SGLs not supported */
	uint32_t mnan;          /* 540 */
	uint8_t rsvd544[224];   /* 544 */
	char subnqn[256];       /* 768 */
	uint8_t rsvd1024[1024]; /* 1024 */
	uint8_t psd[32][32];    /* 2048 power state descriptors */
	uint8_t vs[1024];       /* 3072 vendor specific */
};
NVME_STATIC_ASSERT(sizeof(struct nvme_id_ctrl) == 4096, "Identify Controller is 4 KiB");

/* ONCS bits (Base Figure 275, byte 520) */
#define NVME_ONCS_COMPARE (1u << 0)
#define NVME_ONCS_WRITE_UNCORRECTABLE (1u << 1)
#define NVME_ONCS_DSM (1u << 2)
#define NVME_ONCS_WRITE_ZEROES (1u << 3)
#define NVME_ONCS_SAVE_FEATURES (1u << 4)
/* VWC bit 0: a volatile write cache is present */
#define NVME_VWC_PRESENT (1u << 0)
/* OACS bits */
#define NVME_OACS_SECURITY (1u << 0)
#define NVME_OACS_FORMAT (1u << 1)
#define NVME_OACS_FW (1u << 2)
/* LPA bits */
#define NVME_LPA_SMART_PER_NS (1u << 0)

/**
 * struct nvme_id_ns - Identify Namespace Data Structure, NVM command set
 * (NVM Figure 97), 4096 bytes.
 */
struct nvme_id_ns {
	uint64_t nsze;          /* 0 namespace size, logical blocks */
	uint64_t ncap;          /* 8 capacity, logical blocks */
	uint64_t nuse;          /* 16 utilization, logical blocks */
	uint8_t nsfeat;         /* 24 bit 0 THINP: thin provisioning (NUSE valid) */
	uint8_t nlbaf;          /* 25 number of LBA formats, 0's based */
	uint8_t flbas;          /* 26 bits 3:0 formatted LBA format index */
	uint8_t mc;             /* 27 */
	uint8_t dpc;            /* 28 */
	uint8_t dps;            /* 29 */
	uint8_t nmic;           /* 30 */
	uint8_t rescap;         /* 31 */
	uint8_t fpi;            /* 32 */
	uint8_t dlfeat;         /* 33 bits 2:0 = 001b: deallocated blocks read as zeroes */
	uint16_t nawun;         /* 34 */
	uint16_t nawupf;        /* 36 */
	uint16_t nacwu;         /* 38 */
	uint16_t nabsn;         /* 40 */
	uint16_t nabo;          /* 42 */
	uint16_t nabspf;        /* 44 */
	uint16_t noiob;         /* 46 */
	uint8_t nvmcap[16];     /* 48 */
	uint16_t npwg;          /* 64 */
	uint16_t npwa;          /* 66 */
	uint16_t npdg;          /* 68 */
	uint16_t npda;          /* 70 */
	uint16_t nows;          /* 72 */
	uint8_t rsvd74[18];     /* 74 */
	uint32_t anagrpid;      /* 92 */
	uint8_t rsvd96[3];      /* 96 */
	uint8_t nsattr;         /* 99 */
	uint16_t nvmsetid;      /* 100 */
	uint16_t endgid;        /* 102 */
	uint8_t nguid[16];      /* 104 */
	uint8_t eui64[8];       /* 120 */
	struct nvme_lbaf lbaf[64]; /* 128 */
	uint8_t rsvd384[3712];  /* 384 */
};
NVME_STATIC_ASSERT(sizeof(struct nvme_id_ns) == 4096, "Identify Namespace is 4 KiB");

#define NVME_NSFEAT_THINP (1u << 0)
#define NVME_FLBAS_INDEX(flbas) ((flbas) & 0xf)

/* Namespace Identification Descriptor (Base Figure 278): 4-byte header */
struct nvme_ns_id_desc {
	uint8_t nidt;           /* type */
	uint8_t nidl;           /* length of nid in bytes */
	uint16_t rsvd;
	/* nid follows */
};
enum nvme_nidt {
	NVME_NIDT_EUI64 = 0x1,  /* 8 bytes */
	NVME_NIDT_NGUID = 0x2,  /* 16 bytes */
	NVME_NIDT_UUID = 0x3,   /* 16 bytes */
	NVME_NIDT_CSI = 0x4,    /* 1 byte, 00h NVM */
};

/* ---------------------------------------------- logs (Base 5.16.1) */

/** struct nvme_error_log - Error Information log entry (Base Figure 205), 64 bytes. */
struct nvme_error_log {
	uint64_t error_count;   /* 0, nonzero unique count */
	uint16_t sqid;          /* 8 */
	uint16_t cid;           /* 10 */
	uint16_t status_field;  /* 12 bit 0 phase, 15:1 status field */
	uint16_t param_error_location; /* 14 byte 7:0, bit 10:8 */
	uint64_t lba;           /* 16 */
	uint32_t nsid;          /* 24 */
	uint8_t vs;             /* 28 */
	uint8_t trtype;         /* 29 */
	uint8_t rsvd30[2];      /* 30 */
	uint64_t cs;            /* 32 command specific */
	uint16_t trtype_spec_info; /* 40 */
	uint8_t rsvd42[21];     /* 42 */
	uint8_t log_page_version; /* 63 */
};
NVME_STATIC_ASSERT(sizeof(struct nvme_error_log) == 64, "error log entry is 64 bytes");

/** struct nvme_smart_log - SMART / Health Information (Base Figure 207), 512 bytes. */
struct nvme_smart_log {
	uint8_t critical_warning;       /* 0 */
	uint8_t temperature[2];         /* 1 composite temperature, kelvin */
	uint8_t avail_spare;            /* 3 percent */
	uint8_t spare_thresh;           /* 4 percent */
	uint8_t percent_used;           /* 5 */
	uint8_t endu_grp_crit_warn_sumry; /* 6 */
	uint8_t rsvd7[25];              /* 7 */
	uint8_t data_units_read[16];    /* 32 in 1000 * 512 bytes, 128 bit */
	uint8_t data_units_written[16]; /* 48 */
	uint8_t host_reads[16];         /* 64 read commands */
	uint8_t host_writes[16];        /* 80 write commands */
	uint8_t ctrl_busy_time[16];     /* 96 minutes */
	uint8_t power_cycles[16];       /* 112 */
	uint8_t power_on_hours[16];     /* 128 */
	uint8_t unsafe_shutdowns[16];   /* 144 */
	uint8_t media_errors[16];       /* 160 */
	uint8_t num_err_log_entries[16]; /* 176 */
	uint32_t warning_temp_time;     /* 192 */
	uint32_t critical_comp_time;    /* 196 */
	uint16_t temp_sensor[8];        /* 200 */
	uint32_t thm_temp1_trans_count; /* 216 */
	uint32_t thm_temp2_trans_count; /* 220 */
	uint32_t thm_temp1_total_time;  /* 224 */
	uint32_t thm_temp2_total_time;  /* 228 */
	uint8_t rsvd232[280];           /* 232 */
};
NVME_STATIC_ASSERT(sizeof(struct nvme_smart_log) == 512, "SMART log is 512 bytes");

/** struct nvme_fw_slot_log - Firmware Slot Information (Base Figure 209), 512 bytes. */
struct nvme_fw_slot_log {
	uint8_t afi;            /* 0 active firmware info: bits 2:0 active slot */
	uint8_t rsvd1[7];
	char frs[7][8];         /* 8 firmware revision of slots 1..7 */
	uint8_t rsvd64[448];
};
NVME_STATIC_ASSERT(sizeof(struct nvme_fw_slot_log) == 512, "firmware slot log is 512 bytes");

/* Asynchronous Event Request completion DW0 (Base 5.2) */
#define NVME_AER_TYPE(dw0) ((dw0) & 0x7)
#define NVME_AER_INFO(dw0) (((dw0) >> 8) & 0xff)
#define NVME_AER_LOG_PAGE(dw0) (((dw0) >> 16) & 0xff)

#ifdef __cplusplus
}
#endif

#endif /* BLKSTACK_NVME_SPEC_H */
