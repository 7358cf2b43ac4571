/* SPDX-License-Identifier: MIT */
/*
 * What the NBD and iSCSI servers (src/export/nbd/, src/export/iscsi/)
 * share: the device flush at a stop, and a blocking send of a whole
 * message.  Not installed.
 */
#ifndef BLKSTACK_EXPORT_H
#define BLKSTACK_EXPORT_H

#include <stdint.h>
#include <sys/socket.h>

#include "blkstack/blk.h"

/*
 * export_dev_flush() - flush @dev once no connection uses it (a server's
 * stop): writes acknowledged without FUA reach stable storage before the
 * process exits.
 * Return: a word for the stop's log line: "flushed", "nothing to flush"
 * (no volatile cache), or "flush failed..." with why.
 * Context: any thread that holds no ctx of @dev; blocks until the flush ends.
 */
const char *export_dev_flush(struct blk_dev *dev);

/*
 * export_sendmsg_all() - send all of @mh's iovecs on blocking socket @fd
 * (empty iovecs skipped; @mh's iovec array is advanced in place), adding
 * what went out to *@tx_bytes.
 * Return: 0; -errno from sendmsg() (EINTR retried); the socket's
 * SO_SNDTIMEO bounds a peer that stops reading (-EAGAIN).
 * Context: the connection's thread.
 */
int export_sendmsg_all(int fd, struct msghdr *mh, uint64_t *tx_bytes);

#endif /* BLKSTACK_EXPORT_H */
