// SPDX-License-Identifier: MIT
/*
 * PRP walking (Base 4.1.1 "Physical Region Page Entry and List"): turn a
 * command's PRP1/PRP2 into an iovec array over host memory (identity
 * mapped), coalescing physically adjacent pages.
 *
 * Rules applied, with the memory page size from CC.MPS:
 *  - PRP1 may carry an offset into its page, which must be dword aligned
 *    (bits 1:0 clear); otherwise PRP Offset Invalid.
 *  - A transfer that ends within PRP1's page ignores PRP2.  One that needs
 *    exactly one more page takes PRP2 as that page's address (offset 0).
 *  - Otherwise PRP2 is a PRP List pointer: qword aligned, and it may start
 *    at an offset into its page.  The list runs to the end of that page;
 *    when more entries remain than the page holds, its last entry points to
 *    the next list page (which then starts at offset 0).
 *  - Every entry but PRP1 and the list pointer must have offset 0.
 */
#include <stdlib.h>
#include <string.h>

#include "ctrl.h"

#define SF_GEN(sc) NVME_SF(NVME_SCT_GENERIC, (sc))

static int iov_add(struct nvme_cmd *c, uint64_t addr, uint64_t len)
{
	struct iovec *v;

	if (c->iov_cnt) {
		v = &c->iov[c->iov_cnt - 1];
		if ((uint64_t)(uintptr_t)v->iov_base + v->iov_len == addr) {
			v->iov_len += len;
			return 0;
		}
	}
	if (c->iov_cnt == c->iov_cap) {
		/*
		 * Grown on demand rather than sized for MDTS up front: MDTS
		 * 1 MiB at 4 KiB pages is 257 entries per slot, times 1024
		 * slots times the queues; most commands need one or two.
		 */
		uint32_t cap = c->iov_cap ? 2 * c->iov_cap : 8;

		v = realloc(c->iov, cap * sizeof(*v));
		if (!v)
			return -1;
		c->iov = v;
		c->iov_cap = cap;
	}
	v = &c->iov[c->iov_cnt++];
	v->iov_base = (void *)(uintptr_t)addr;
	v->iov_len = len;
	return 0;
}

uint16_t nvme_prp_map(struct nvme_ctrl *ctrl, struct nvme_cmd *c,
		      uint64_t prp1, uint64_t prp2, uint64_t len)
{
	uint64_t ps = ctrl->page_size, mask = ps - 1, n, rem, list;

	c->iov_cnt = 0;
	if (!len)
		return 0;
	if (prp1 & 3)
		return SF_GEN(NVME_SC_PRP_INVALID_OFFSET) | NVME_SF_DNR;
	if (!prp1)
		return SF_GEN(NVME_SC_DATA_XFER_ERROR) | NVME_SF_DNR;
	n = ps - (prp1 & mask);
	if (n > len)
		n = len;
	if (iov_add(c, prp1, n))
		return SF_GEN(NVME_SC_INTERNAL);
	rem = len - n;
	if (!rem)
		return 0;
	if (rem <= ps) {
		if (prp2 & mask)
			return SF_GEN(NVME_SC_PRP_INVALID_OFFSET) | NVME_SF_DNR;
		if (!prp2)
			return SF_GEN(NVME_SC_DATA_XFER_ERROR) | NVME_SF_DNR;
		return iov_add(c, prp2, rem) ? SF_GEN(NVME_SC_INTERNAL) : 0;
	}
	if (prp2 & 7)
		return SF_GEN(NVME_SC_PRP_INVALID_OFFSET) | NVME_SF_DNR;
	list = prp2;
	while (rem) {
		const uint64_t *e;
		uint64_t slots, i;

		if (!list)
			return SF_GEN(NVME_SC_DATA_XFER_ERROR) | NVME_SF_DNR;
		e = (const uint64_t *)(uintptr_t)list;
		slots = (ps - (list & mask)) / 8;
		list = 0;
		for (i = 0; i < slots && rem; i++) {
			uint64_t ent = e[i];

			if (i == slots - 1 && rem > ps) {
				/* last slot of a full page: the next list page */
				if (ent & mask)
					return SF_GEN(NVME_SC_PRP_INVALID_OFFSET) | NVME_SF_DNR;
				list = ent;
				break;
			}
			if (ent & mask)
				return SF_GEN(NVME_SC_PRP_INVALID_OFFSET) | NVME_SF_DNR;
			if (!ent)
				return SF_GEN(NVME_SC_DATA_XFER_ERROR) | NVME_SF_DNR;
			n = rem < ps ? rem : ps;
			if (iov_add(c, ent, n))
				return SF_GEN(NVME_SC_INTERNAL);
			rem -= n;
		}
	}
	return 0;
}

void nvme_iov_copy_to(const struct iovec *iov, uint32_t cnt, const void *src,
		      size_t len)
{
	const char *s = src;
	uint32_t i;

	for (i = 0; i < cnt && len; i++) {
		size_t n = iov[i].iov_len < len ? iov[i].iov_len : len;

		memcpy(iov[i].iov_base, s, n);
		s += n;
		len -= n;
	}
}

void nvme_iov_copy_from(void *dst, const struct iovec *iov, uint32_t cnt,
			size_t len)
{
	char *d = dst;
	uint32_t i;

	for (i = 0; i < cnt && len; i++) {
		size_t n = iov[i].iov_len < len ? iov[i].iov_len : len;

		memcpy(d, iov[i].iov_base, n);
		d += n;
		len -= n;
	}
}

/* Admin data in (Identify, Get Log Page, ...): PRP1/PRP2 of the SQE. */
uint16_t nvme_data_to_host(struct nvme_ctrl *ctrl, struct nvme_cmd *c,
			   const void *src, size_t len)
{
	uint16_t st = nvme_prp_map(ctrl, c, c->sqe.prp1, c->sqe.prp2, len);

	if (!st)
		nvme_iov_copy_to(c->iov, c->iov_cnt, src, len);
	return st;
}

uint16_t nvme_data_from_host(struct nvme_ctrl *ctrl, struct nvme_cmd *c,
			     void *dst, size_t len)
{
	uint16_t st = nvme_prp_map(ctrl, c, c->sqe.prp1, c->sqe.prp2, len);

	if (!st)
		nvme_iov_copy_from(dst, c->iov, c->iov_cnt, len);
	return st;
}
