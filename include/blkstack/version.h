/* SPDX-License-Identifier: MIT */
#ifndef BLKSTACK_VERSION_H
#define BLKSTACK_VERSION_H

/* blkstack's version, printed by `blkstack version` and in bench JSON. */
#define BLKSTACK_VERSION "0.1.0"

#endif /* BLKSTACK_VERSION_H */
