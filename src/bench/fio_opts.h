/* SPDX-License-Identifier: MIT */
/*
 * The catalogue of fio's options and I/O engines (fio 3.33), each marked
 * with what blkstack bench does with it: supported with fio's meaning,
 * mapped onto something of blkstack's (and to what), or refused (and why).
 * fio_opts.c says where the names come from.
 */
#ifndef BLKSTACK_BENCH_FIO_OPTS_H
#define BLKSTACK_BENCH_FIO_OPTS_H

#include <stdbool.h>
#include <stddef.h>

enum fio_opt_status {
	FIO_SUPPORTED = 0, /* fio's meaning */
	FIO_MAPPED,        /* accepted, becomes ->what */
	FIO_REFUSED,       /* an error naming ->what (fio_opt_why()) */
};

/**
 * struct fio_opt - one fio option.
 * @name: fio's name.
 * @alias: fio's other spelling, or NULL.
 * @engines: NULL for a general option; else the engines whose option it is
 *	("io_uring/sg/sync/xnvme").
 * @status: what blkstack does with it.
 * @what: mapped: to what; refused: why; NULL for supported options, and
 *	for refused engine options (fio_opt_why() words those).
 */
struct fio_opt {
	const char *name;
	const char *alias;
	const char *engines;
	enum fio_opt_status status;
	const char *what;
};

/**
 * struct fio_engine - one value of fio's ioengine=.
 * @name: fio's name.
 * @status: FIO_MAPPED or FIO_REFUSED.
 * @dev: mapped: the blkstack driver (a --dev= name).
 * @sync: mapped: a synchronous engine, one I/O in flight per job.
 * @what: mapped: to what; refused: why.
 */
struct fio_engine {
	const char *name;
	enum fio_opt_status status;
	const char *dev;
	bool sync;
	const char *what;
};

/** fio_opts() - the whole table, in fio's order; @n: its length. */
const struct fio_opt *fio_opts(size_t *n);

/** fio_opt_find() - the entry with @name as name or alias, or NULL. */
const struct fio_opt *fio_opt_find(const char *name);

/**
 * fio_opt_why() - @f's ->what, or for an engine's option the words that
 * name its engines, built in @buf (@len bytes).
 * Return: the text.  Context: any.
 */
const char *fio_opt_why(const struct fio_opt *f, char *buf, size_t len);

/** fio_engines() - every engine fio 3.33 documents; @n: how many. */
const struct fio_engine *fio_engines(size_t *n);

/**
 * fio_engine_find() - the engine @name ("external:PATH" is "external"),
 * or NULL for a name fio does not have.
 */
const struct fio_engine *fio_engine_find(const char *name);

/** fio_status_name() - "supported", "mapped" or "refused". */
const char *fio_status_name(enum fio_opt_status s);

#endif /* BLKSTACK_BENCH_FIO_OPTS_H */
