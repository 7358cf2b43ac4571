// SPDX-License-Identifier: MIT
/*
 * blk_status_t helpers (the kernel's blk_errors[] table).
 */
#include <errno.h>

#include "blkstack/blk.h"

static const struct {
	int err;
	const char *name;
} blk_errors[BLK_STS_MAX] = {
	[BLK_STS_OK] = { 0, "OK" },
	[BLK_STS_NOTSUPP] = { -EOPNOTSUPP, "NOTSUPP" },
	[BLK_STS_TIMEOUT] = { -ETIMEDOUT, "TIMEOUT" },
	[BLK_STS_NOSPC] = { -ENOSPC, "NOSPC" },
	[BLK_STS_TRANSPORT] = { -ENOLINK, "TRANSPORT" },
	[BLK_STS_TARGET] = { -EREMOTEIO, "TARGET" },
	[BLK_STS_MEDIUM] = { -ENODATA, "MEDIUM" },
	[BLK_STS_PROTECTION] = { -EILSEQ, "PROTECTION" },
	[BLK_STS_RESOURCE] = { -EBUSY, "RESOURCE" },
	[BLK_STS_IOERR] = { -EIO, "IOERR" },
	[BLK_STS_AGAIN] = { -EAGAIN, "AGAIN" },
	[BLK_STS_INVAL] = { -EINVAL, "INVAL" },
};

int blk_status_to_errno(blk_status_t status)
{
	if (status >= BLK_STS_MAX)
		return -EIO;
	return blk_errors[status].err;
}

const char *blk_status_str(blk_status_t status)
{
	if (status >= BLK_STS_MAX)
		return "UNKNOWN";
	return blk_errors[status].name;
}
