/* SPDX-License-Identifier: MIT */
/*
 * blkstack metrics: live counters of the NBD and iSCSI exports, per
 * export and per connection, with the block core's diskstats, rendered in
 * the Prometheus text exposition format 0.0.4 and served over HTTP at
 * /metrics (`blkstack serve --metrics`, docs/metrics.md).
 *
 * Threads.  A registry (struct blk_metrics) holds exports; each
 * connection opens a struct blk_metrics_conn per export it serves and is
 * its only writer: counters are updated with a relaxed atomic load and a
 * relaxed atomic store (a plain add on x86, never a locked
 * read-modify-write, no lock), and read by the scraping thread with
 * relaxed atomic loads.  The registry's mutex is taken only when a
 * connection opens or closes and while a scrape copies the counters,
 * never per request.  A closing connection's counters are added to its
 * export's totals under that mutex, so export totals never go backwards.
 *
 * Units: bytes; latencies in ns in the API, in seconds in the exposition.
 *
 * This header compiles on its own and from C++.
 */
#ifndef BLKSTACK_METRICS_H
#define BLKSTACK_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "blk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The protocol of a connection (label proto="nbd" / "iscsi"). */
enum blk_metrics_proto {
	BLK_METRICS_NBD = 0,
	BLK_METRICS_ISCSI,
	BLK_METRICS_NR_PROTOS,
};

/*
 * Request classes (label dir=): READ and WRITE carry data (NBD_CMD_READ /
 * WRITE; SCSI READ (6/10/12/16) / WRITE (6/10/12/16), WRITE AND VERIFY);
 * OTHER is every other request (flush, trim, write zeroes, block status,
 * cache; INQUIRY, SYNCHRONIZE CACHE, UNMAP, TEST UNIT READY, ...).
 */
enum blk_metrics_dir {
	BLK_METRICS_READ = 0,
	BLK_METRICS_WRITE,
	BLK_METRICS_OTHER,
	BLK_METRICS_NR_DIRS,
};

/*
 * Latency histogram upper bounds in ns: 1-2-5 steps from 1 us to 10 s
 * (le="1e-06" ... le="10"), then +Inf.  Server request latencies span
 * microseconds (ram, inline completion) to seconds (a disk behind uring
 * under load); 22 buckets keep a connection's histogram at 3 x 23 words.
 */
#define BLK_METRICS_NR_BOUNDS 22
#define BLK_METRICS_NR_BUCKETS (BLK_METRICS_NR_BOUNDS + 1)
extern const uint64_t blk_metrics_bounds_ns[BLK_METRICS_NR_BOUNDS];

/*
 * struct blk_metrics_counters - what a connection counts, per request
 * class.  @lat holds per-bucket counts (not cumulative; the last one is
 * +Inf); a class's request count is the sum of its buckets, so a
 * histogram's _count always equals its +Inf bucket.
 * @bytes: payload bytes of successful requests: READ data sent to the
 *	client, WRITE data received from it (OTHER: always 0).
 * @errors: requests answered with an error (NBD: a nonzero error in the
 *	reply; SCSI: a status other than GOOD or CONDITION MET, or a command
 *	ended without a response by task management).
 * @lat_sum_ns: sum of the latencies recorded, in ns.
 */
struct blk_metrics_counters {
	uint64_t bytes[BLK_METRICS_NR_DIRS];
	uint64_t errors[BLK_METRICS_NR_DIRS];
	uint64_t lat_sum_ns[BLK_METRICS_NR_DIRS];
	uint64_t lat[BLK_METRICS_NR_DIRS][BLK_METRICS_NR_BUCKETS];
};

struct blk_metrics;
struct blk_metrics_export;

/*
 * struct blk_metrics_conn - one connection's counters for one export.
 * @c, @inflight: written by the connection's thread only (see
 *	blk_metrics_record()); @inflight is requests received and not yet
 *	answered.
 * The other fields are the registry's, constant while it is open.
 * Aligned so that no other thread's data shares its cache lines.
 */
struct blk_metrics_conn {
	struct blk_metrics_counters c;
	uint64_t inflight;
	struct blk_metrics_export *exp;
	struct blk_metrics_conn *next;
	enum blk_metrics_proto proto;
	unsigned long id;
	char peer[80];
} __attribute__((aligned(64)));

/**
 * blk_metrics_create() - an empty registry.
 * @m: set on success.
 * Return: 0 or -ENOMEM.
 * Context: any thread.
 */
int blk_metrics_create(struct blk_metrics **m);

/**
 * blk_metrics_destroy() - free the registry and its exports.
 * @m: the registry; NULL is a no-op.  No connection may be open and no
 *	HTTP server may still use it (blk_metrics_http_stop() first).
 * Context: any thread.
 */
void blk_metrics_destroy(struct blk_metrics *m);

/**
 * blk_metrics_export_add() - register an export (label export=@name).
 * @m: the registry.
 * @name: the export's name (copied; "" for the unnamed export), any bytes
 *	(escaped in label values).
 * @dev: its device, whose diskstats (blk_dev_get_stats()) are exposed;
 *	the caller's, open while the registry may be rendered.
 * @protos: the protocols serving it, a mask of 1u << enum
 *	blk_metrics_proto: their series are shown (zero) before any client
 *	connects.
 * @ex: set on success; valid until blk_metrics_destroy().
 * Return: 0; -EINVAL for @protos 0 or an unknown bit; -ENOMEM.
 * Context: any thread, before connections use the export.
 */
int blk_metrics_export_add(struct blk_metrics *m, const char *name,
			   struct blk_dev *dev, unsigned int protos,
			   struct blk_metrics_export **ex);

/**
 * blk_metrics_conn_open() - start counting a connection's requests to @ex.
 * @ex: the export (NULL: metrics are off; *@mc is set to NULL, 0 returned).
 * @proto: its protocol.
 * @id: the server's connection number (label conn=), unique per protocol.
 * @peer: the client's address for the label peer= (copied, truncated to
 *	79 bytes).
 * @mc: set to the zeroed counters on success.
 * Return: 0; -ENOMEM.
 * Context: the connection's thread, which then owns *@mc; takes the
 * registry's mutex.
 */
int blk_metrics_conn_open(struct blk_metrics_export *ex,
			  enum blk_metrics_proto proto, unsigned long id,
			  const char *peer, struct blk_metrics_conn **mc);

/**
 * blk_metrics_conn_close() - add a connection's counters to its export's
 * totals and stop showing it.
 * @mc: from blk_metrics_conn_open(); NULL is a no-op.  Freed.
 * Context: the owning thread; takes the registry's mutex.
 */
void blk_metrics_conn_close(struct blk_metrics_conn *mc);

/* Counter update by the owning thread: no read-modify-write, no lock. */
#define BLK_METRICS_ADD(p, v) \
	__atomic_store_n((p), __atomic_load_n((p), __ATOMIC_RELAXED) + (v), \
			 __ATOMIC_RELAXED)

/**
 * blk_metrics_bucket() - the histogram bucket of a latency.
 * @ns: latency in ns.
 * Return: 0..BLK_METRICS_NR_BOUNDS (the last: above 10 s).
 * Context: any.
 */
static inline unsigned int blk_metrics_bucket(uint64_t ns)
{
	unsigned int lo = 0, hi = BLK_METRICS_NR_BOUNDS;

	/* the first bound >= @ns: Prometheus buckets are "le" */
	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (ns <= blk_metrics_bounds_ns[mid])
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/**
 * blk_metrics_record() - count one answered request.
 * @mc: the connection's counters (not NULL).
 * @dir: its class.
 * @bytes: payload bytes moved (0 for a failed request or OTHER).
 * @error: it was answered with an error.
 * @lat_ns: from its arrival to its answer going out, in ns.
 * Context: the owning thread only.
 */
static inline void blk_metrics_record(struct blk_metrics_conn *mc,
				      enum blk_metrics_dir dir, uint64_t bytes,
				      bool error, uint64_t lat_ns)
{
	struct blk_metrics_counters *c = &mc->c;

	BLK_METRICS_ADD(&c->lat[dir][blk_metrics_bucket(lat_ns)], 1);
	BLK_METRICS_ADD(&c->lat_sum_ns[dir], lat_ns);
	if (bytes)
		BLK_METRICS_ADD(&c->bytes[dir], bytes);
	if (error)
		BLK_METRICS_ADD(&c->errors[dir], 1);
}

/**
 * blk_metrics_set_inflight() - requests received and not yet answered.
 * @mc: the connection's counters (not NULL).
 * @n: the count now.
 * Context: the owning thread only.
 */
static inline void blk_metrics_set_inflight(struct blk_metrics_conn *mc,
					    uint64_t n)
{
	__atomic_store_n(&mc->inflight, n, __ATOMIC_RELAXED);
}

/**
 * blk_metrics_now_ns() - the clock request latencies are measured with.
 * Return: CLOCK_MONOTONIC in ns.
 * Context: any.
 */
static inline uint64_t blk_metrics_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/**
 * blk_metrics_render() - the whole registry in the Prometheus text
 * exposition format, version 0.0.4 (docs/metrics.md lists the families).
 * @m: the registry.
 * @buf: set to a malloc()ed, NUL-terminated text the caller frees.
 * @len: set to its length in bytes (without the NUL).
 * Each counter is a value it had during the call; counters of one
 * connection are not a snapshot across each other, but a histogram's
 * buckets, _count and +Inf bucket agree.
 * Return: 0; -ENOMEM.
 * Context: any thread; takes the registry's mutex while it copies the
 * counters (not while it formats), and each device's ctx lock
 * (blk_dev_get_stats()).
 */
int blk_metrics_render(struct blk_metrics *m, char **buf, size_t *len);

/**
 * blk_metrics_parse_addr() - the address of --metrics.
 * @val: NULL or "" (127.0.0.1:9100), "PORT" (on 127.0.0.1), or
 *	"HOST:PORT" (an IPv4 address, a name, or an IPv6 address in
 *	brackets); PORT decimal 0..65535 (0 picks a free one).
 * @host: set to the host, brackets removed (NUL-terminated).
 * @hostlen: size of @host in bytes.
 * @port: set to the port.
 * Return: 0; -EINVAL when @val has none of those forms.
 * Context: any.
 */
int blk_metrics_parse_addr(const char *val, char *host, size_t hostlen,
			   unsigned int *port);

struct blk_metrics_http;

/**
 * blk_metrics_http_start() - serve @m at http://ADDR/metrics with
 * libmicrohttpd, on a thread of its own.
 * @m: the registry; must outlive the server.
 * @host: the address to listen on (numeric or a name; see
 *	blk_metrics_parse_addr()).
 * @port: TCP port, 0..65535 (0: a free one, see blk_metrics_http_port()).
 * @h: set on success.
 * @err: a message on failure, naming the address and the reason.
 * @errlen: size of @err in bytes.
 *
 * libmicrohttpd is loaded here (dlopen()), not linked: with GnuTLS and
 * its eight libraries it would cost every blkstack start, bench runs
 * included, 3.9 million instructions (docs/metrics.md, "Cost").
 * GET or HEAD /metrics answers 200 with the exposition; other paths 404,
 * other methods 405.  At most 16 scrapers at once; an idle one is
 * dropped after 10 s.
 * Return: 0; -EINVAL (the address does not resolve); -ENOENT
 * (libmicrohttpd is not installed); a socket, bind or listen -errno
 * (-EADDRINUSE...); -EIO when libmicrohttpd refuses to start.
 * Context: any thread.
 */
int blk_metrics_http_start(struct blk_metrics *m, const char *host,
			   unsigned int port, struct blk_metrics_http **h,
			   char *err, size_t errlen);

/**
 * blk_metrics_http_port() - the TCP port listened on (useful with port 0).
 * @h: the server.
 * Return: the port.
 * Context: any thread.
 */
unsigned int blk_metrics_http_port(const struct blk_metrics_http *h);

/**
 * blk_metrics_http_stop() - stop serving: close the socket and the
 * connections, join the thread (a scrape being answered finishes first;
 * it only formats memory, so this takes milliseconds).
 * @h: the server; NULL is a no-op.  Freed.
 * Context: any thread but the server's.
 */
void blk_metrics_http_stop(struct blk_metrics_http *h);

#ifdef __cplusplus
}
#endif

#endif /* BLKSTACK_METRICS_H */
