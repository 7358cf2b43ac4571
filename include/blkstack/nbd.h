/* SPDX-License-Identifier: MIT */
/*
 * blkstack NBD export: serve any blk_dev over the Network Block Device
 * protocol (the NetworkBlockDevice project's doc/proto.md, "the spec"
 * below), fixed newstyle negotiation only.
 *
 * Three layers, each usable alone:
 *  - the handshake engine (blk_nbd_handshake()): option haggling over two
 *    byte-stream callbacks, no sockets, so a fuzzer can drive it;
 *  - the transmission engine (struct blk_nbd_conn): parses requests from
 *    bytes the caller received into buffers it hands out, runs them on the
 *    export's blk_dev through the calling thread's ctx, and queues replies
 *    as iovecs for the caller to send; no sockets either;
 *  - the server (blk_nbd_server_*): listening sockets, one thread per
 *    connection, shutdown on request.
 *
 * Wire values are big-endian; the constants below are host values.
 * Units: offsets and lengths in bytes.
 *
 * This header compiles on its own and from C++.
 */
#ifndef BLKSTACK_NBD_H
#define BLKSTACK_NBD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "blk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Magic numbers (spec: "Newstyle negotiation", "Transmission"). */
#define NBD_MAGIC 0x4e42444d41474943ull          /* "NBDMAGIC" */
#define NBD_IHAVEOPT 0x49484156454f5054ull       /* "IHAVEOPT" */
#define NBD_REP_MAGIC 0x0003e889045565a9ull      /* option replies */
#define NBD_REQUEST_MAGIC 0x25609513u
#define NBD_SIMPLE_REPLY_MAGIC 0x67446698u
#define NBD_STRUCTURED_REPLY_MAGIC 0x668e33efu

/* Handshake flags (server) and client flags. */
#define NBD_FLAG_FIXED_NEWSTYLE (1u << 0)
#define NBD_FLAG_NO_ZEROES (1u << 1)
#define NBD_FLAG_C_FIXED_NEWSTYLE (1u << 0)
#define NBD_FLAG_C_NO_ZEROES (1u << 1)

/* Transmission flags. */
#define NBD_FLAG_HAS_FLAGS (1u << 0)
#define NBD_FLAG_READ_ONLY (1u << 1)
#define NBD_FLAG_SEND_FLUSH (1u << 2)
#define NBD_FLAG_SEND_FUA (1u << 3)
#define NBD_FLAG_ROTATIONAL (1u << 4)
#define NBD_FLAG_SEND_TRIM (1u << 5)
#define NBD_FLAG_SEND_WRITE_ZEROES (1u << 6)
#define NBD_FLAG_SEND_DF (1u << 7)
#define NBD_FLAG_CAN_MULTI_CONN (1u << 8)
#define NBD_FLAG_SEND_CACHE (1u << 10)
#define NBD_FLAG_SEND_FAST_ZERO (1u << 11)

/* Options. */
#define NBD_OPT_EXPORT_NAME 1
#define NBD_OPT_ABORT 2
#define NBD_OPT_LIST 3
#define NBD_OPT_STARTTLS 5
#define NBD_OPT_INFO 6
#define NBD_OPT_GO 7
#define NBD_OPT_STRUCTURED_REPLY 8
#define NBD_OPT_LIST_META_CONTEXT 9
#define NBD_OPT_SET_META_CONTEXT 10

/* Option reply types. */
#define NBD_REP_ACK 1u
#define NBD_REP_SERVER 2u
#define NBD_REP_INFO 3u
#define NBD_REP_META_CONTEXT 4u
#define NBD_REP_ERR_UNSUP 0x80000001u
#define NBD_REP_ERR_POLICY 0x80000002u
#define NBD_REP_ERR_INVALID 0x80000003u
#define NBD_REP_ERR_PLATFORM 0x80000004u
#define NBD_REP_ERR_TLS_REQD 0x80000005u
#define NBD_REP_ERR_UNKNOWN 0x80000006u
#define NBD_REP_ERR_SHUTDOWN 0x80000007u
#define NBD_REP_ERR_BLOCK_SIZE_REQD 0x80000008u
#define NBD_REP_ERR_TOO_BIG 0x80000009u

/* NBD_REP_INFO types. */
#define NBD_INFO_EXPORT 0
#define NBD_INFO_NAME 1
#define NBD_INFO_DESCRIPTION 2
#define NBD_INFO_BLOCK_SIZE 3

/* Commands and command flags. */
#define NBD_CMD_READ 0
#define NBD_CMD_WRITE 1
#define NBD_CMD_DISC 2
#define NBD_CMD_FLUSH 3
#define NBD_CMD_TRIM 4
#define NBD_CMD_CACHE 5
#define NBD_CMD_WRITE_ZEROES 6
#define NBD_CMD_BLOCK_STATUS 7
#define NBD_CMD_FLAG_FUA (1u << 0)
#define NBD_CMD_FLAG_NO_HOLE (1u << 1)
#define NBD_CMD_FLAG_DF (1u << 2)
#define NBD_CMD_FLAG_REQ_ONE (1u << 3)
#define NBD_CMD_FLAG_FAST_ZERO (1u << 4)

/* Structured reply chunk types and flags. */
#define NBD_REPLY_FLAG_DONE (1u << 0)
#define NBD_REPLY_TYPE_NONE 0
#define NBD_REPLY_TYPE_OFFSET_DATA 1
#define NBD_REPLY_TYPE_OFFSET_HOLE 2
#define NBD_REPLY_TYPE_BLOCK_STATUS 5
#define NBD_REPLY_TYPE_ERROR 0x8001
#define NBD_REPLY_TYPE_ERROR_OFFSET 0x8002

/* base:allocation flags (the same bits as BLK_EXTENT_*). */
#define NBD_STATE_HOLE (1u << 0)
#define NBD_STATE_ZERO (1u << 1)

/* Error values on the wire (spec: "Error values"). */
#define NBD_EPERM 1
#define NBD_EIO 5
#define NBD_ENOMEM 12
#define NBD_EINVAL 22
#define NBD_ENOSPC 28
#define NBD_EOVERFLOW 75
#define NBD_ENOTSUP 95
#define NBD_ESHUTDOWN 108

/* Sizes. */
#define NBD_REQUEST_SIZE 28u            /* request header */
#define NBD_MAX_STRING 4096u            /* spec: names and messages */
#define NBD_MAX_OPTION_LEN 65536u       /* largest option payload accepted */
#define NBD_MAX_PAYLOAD (32u << 20)     /* advertised maximum block size */
#define NBD_META_ID_BASE_ALLOCATION 1u  /* our context id for base:allocation */

/**
 * struct blk_nbd_export - one export of a server.
 * @name: export name, UTF-8, at most NBD_MAX_STRING bytes ("" allowed).
 * @description: free text for NBD_INFO_DESCRIPTION and NBD_OPT_LIST, or "".
 * @dev: the device; owned by the caller, open for the server's lifetime.
 * @read_only: refuse WRITE, TRIM and WRITE_ZEROES with EPERM, advertise
 *	NBD_FLAG_READ_ONLY.
 * @metrics: where the server counts this export's connections
 *	(blkstack/metrics.h), or NULL: not counted.
 */
struct blk_nbd_export {
	const char *name;
	const char *description;
	struct blk_dev *dev;
	bool read_only;
	struct blk_metrics_export *metrics;
};

/**
 * blk_nbd_export_flags() - the transmission flags an export advertises.
 * @exp: the export.
 * @structured: structured replies were negotiated (adds NBD_FLAG_SEND_DF).
 *
 * Derived from blk_dev_get_info(): SEND_FLUSH and SEND_FUA when the device
 * can_flush; SEND_TRIM when it can_discard; SEND_WRITE_ZEROES and
 * SEND_FAST_ZERO when it can_write_zeroes; READ_ONLY; CAN_MULTI_CONN when
 * it stores_data (every queue sees one store, and a flush is device-wide);
 * SEND_CACHE always (a no-op hint).  Spec: "Transmission flags".
 * Return: the 16-bit flags, NBD_FLAG_HAS_FLAGS set.
 * Context: any thread.
 */
uint16_t blk_nbd_export_flags(const struct blk_nbd_export *exp,
			      bool structured);

/**
 * struct blk_nbd_io - the byte stream of one connection, for the handshake.
 * @opaque: handed to both callbacks.
 * @recv: read exactly @len bytes into @buf.  Return 0, or -errno (-EPIPE at
 *	end of stream, -ESHUTDOWN when the server is stopping, -ETIMEDOUT).
 * @send: write all of @iov.  Return 0 or -errno.
 * @stopping: optional; true when the server is shutting down (options
 *	other than ABORT are then answered NBD_REP_ERR_SHUTDOWN).
 */
struct blk_nbd_io {
	void *opaque;
	int (*recv)(void *opaque, void *buf, size_t len);
	int (*send)(void *opaque, const struct iovec *iov, int iovcnt);
	bool (*stopping)(void *opaque);
};

/**
 * struct blk_nbd_session - what the handshake negotiated.
 * @export_idx: index into the exports array of the export chosen.
 * @structured: NBD_OPT_STRUCTURED_REPLY was acknowledged.
 * @base_allocation: base:allocation was selected by SET_META_CONTEXT for
 *	this export (NBD_CMD_BLOCK_STATUS is then allowed).
 * @no_zeroes: the client set NBD_FLAG_C_NO_ZEROES.
 * @tflags: transmission flags sent to the client.
 */
struct blk_nbd_session {
	unsigned int export_idx;
	bool structured;
	bool base_allocation;
	bool no_zeroes;
	uint16_t tflags;
};

/**
 * blk_nbd_handshake() - run the fixed newstyle negotiation as the server
 * (spec: "Fixed newstyle negotiation", "Option types", and the INFO,
 * STRUCTURED_REPLY and metadata extensions).
 * @exports: the server's exports; @exports[0] is also the default export,
 *	chosen by the empty name.
 * @nr_exports: entries in @exports, >= 1.
 * @io: the connection's byte stream.
 * @s: filled in when transmission starts.
 *
 * Sends the greeting (NBDMAGIC, IHAVEOPT, FIXED_NEWSTYLE | NO_ZEROES),
 * reads the client flags (unknown bits: hard disconnect, as the spec
 * requires), then answers options until one of them starts transmission:
 * EXPORT_NAME (an unknown name ends the session: the option cannot return
 * an error) or GO with NBD_REP_ACK.  Handled: EXPORT_NAME, ABORT, LIST,
 * INFO, GO (NBD_INFO_EXPORT, NAME, DESCRIPTION, BLOCK_SIZE: minimum the
 * logical block size,
 * preferred the larger of it and 4096, maximum NBD_MAX_PAYLOAD),
 * STRUCTURED_REPLY, LIST_META_CONTEXT and SET_META_CONTEXT (base:allocation
 * only).  STARTTLS gets NBD_REP_ERR_POLICY (no TLS); any other option
 * NBD_REP_ERR_UNSUP; malformed option data NBD_REP_ERR_INVALID, and the
 * connection goes on.  An option longer than NBD_MAX_OPTION_LEN gets
 * NBD_REP_ERR_TOO_BIG after its data is skipped.
 *
 * Return: 0 when transmission starts; 1 when the client ended the
 * negotiation cleanly (ABORT, or end of stream between options); -EPROTO
 * for bad magic or client flags; -ENOENT for an unknown EXPORT_NAME;
 * -ESHUTDOWN when the server stops; an @io error (-EPIPE, -ECONNRESET,
 * -ETIMEDOUT...); -ENOMEM.
 * Context: the connection's thread; blocks in @io.
 */
int blk_nbd_handshake(const struct blk_nbd_export *exports,
		      unsigned int nr_exports, const struct blk_nbd_io *io,
		      struct blk_nbd_session *s);

/**
 * struct blk_nbd_request - a request header, decoded.
 * @flags: command flags.
 * @type: command.
 * @handle: the client's cookie, echoed in the reply.
 * @offset: bytes.
 * @length: bytes.
 */
struct blk_nbd_request {
	uint16_t flags;
	uint16_t type;
	uint64_t handle;
	uint64_t offset;
	uint32_t length;
};

/**
 * blk_nbd_parse_request() - decode one request header (spec: "Request
 * message").
 * @buf: at least NBD_REQUEST_SIZE bytes as received.
 * @req: filled in.
 *
 * Return: 0, or -EPROTO when the magic is wrong (the stream cannot be
 * resynchronised: the caller disconnects).
 * Context: any.
 */
int blk_nbd_parse_request(const uint8_t *buf, struct blk_nbd_request *req);

/**
 * blk_nbd_check_request() - validate a request against an export and the
 * session, before any I/O (spec: "Request types", "Error values").
 * @req: the decoded request.
 * @s: the session (flags negotiated).
 * @info: the export's device.
 * @read_only: the export refuses writes.
 *
 * Return: 0 when the request may run, otherwise the wire error to reply
 * with: NBD_EINVAL for an unknown command, a flag not valid for the command
 * or not negotiated, a command the export did not advertise, a DISC or
 * FLUSH with a nonzero offset or length, BLOCK_STATUS without
 * base:allocation or past the end, a zero length (except FLUSH and DISC),
 * or an offset or length not a multiple of the logical block size for
 * READ, WRITE, TRIM and WRITE_ZEROES (the handshake advertises that size
 * as the minimum block size); NBD_EPERM for WRITE, TRIM or WRITE_ZEROES
 * on a read-only export; NBD_ENOSPC for a write-class command past the
 * end; NBD_EINVAL for a READ, CACHE or BLOCK_STATUS past the end;
 * NBD_EOVERFLOW for a READ or WRITE longer than NBD_MAX_PAYLOAD.
 * Context: any.
 */
uint32_t blk_nbd_check_request(const struct blk_nbd_request *req,
			       const struct blk_nbd_session *s,
			       const struct blk_dev_info *info, bool read_only);

/**
 * blk_nbd_errno() - a blk_status_t as a wire error.
 * @status: completion status, not BLK_STS_OK.
 * Return: NBD_ENOSPC for BLK_STS_NOSPC, NBD_EINVAL for BLK_STS_INVAL,
 * NBD_ENOTSUP for BLK_STS_NOTSUPP, NBD_EIO otherwise.
 * Context: any.
 */
uint32_t blk_nbd_errno(blk_status_t status);

struct blk_nbd_conn;
struct blk_metrics_conn;
struct blk_metrics_export;

/**
 * blk_nbd_conn_create() - start the transmission phase of one connection.
 * @exp: the export the handshake chose.
 * @s: the negotiated session.
 * @max_inflight: requests run at once, 1..1024 (the connection stops
 *	reading from the client while this many are in flight).
 * @conn: set on success.
 *
 * Attaches a ctx to the export's device (see blk_ctx_attach(): the device
 * needs shared_hctx when connections outnumber its queues).
 * Return: 0, -EINVAL for @max_inflight out of range, -ENOMEM, or
 * blk_ctx_attach()'s -EBUSY.
 * Context: the connection's thread, which then owns @conn.
 */
int blk_nbd_conn_create(const struct blk_nbd_export *exp,
			const struct blk_nbd_session *s,
			unsigned int max_inflight, struct blk_nbd_conn **conn);

/**
 * blk_nbd_conn_set_metrics() - count this connection's requests.
 * @conn: the connection.
 * @mc: its counters (blk_metrics_conn_open()), or NULL to stop counting;
 *	must stay open until blk_nbd_conn_destroy().
 *
 * Each request is recorded (blk_metrics_record()) when its reply has been
 * fully handed to blk_nbd_conn_tx_done(): class, payload bytes, the wire
 * error, and its latency from the blk_nbd_conn_rx_done() call that
 * brought its header (the clock is read once per such call and once per
 * tx_done() call that finishes replies, not per request).  The in-flight
 * gauge is stored once per call.  NBD_CMD_DISC, which has no reply, is
 * not counted.
 * Context: the owner thread.
 */
void blk_nbd_conn_set_metrics(struct blk_nbd_conn *conn,
			      struct blk_metrics_conn *mc);

/**
 * blk_nbd_conn_rx_buf() - where to put the next bytes from the client.
 * @conn: the connection.
 * @buf: set to the buffer.
 *
 * Return: bytes that may be written at *@buf (0: not now: the connection
 * is at its in-flight limit, its output is backed up, or it is closing).
 * Context: the owner thread.
 */
size_t blk_nbd_conn_rx_buf(struct blk_nbd_conn *conn, void **buf);

/**
 * blk_nbd_conn_rx_done() - process @n bytes written at blk_nbd_conn_rx_buf().
 * @conn: the connection.
 * @n: bytes received, at most what rx_buf() returned.
 *
 * Parses every complete request, answers invalid ones with an error reply
 * (the payload of a rejected WRITE is read and dropped), and submits the
 * valid ones to the device (plugged, as one batch).
 * Return: 0; -EPROTO when the client broke the framing (bad magic): the
 * caller must disconnect, after sending what is queued if it wishes.
 * Context: the owner thread.
 */
int blk_nbd_conn_rx_done(struct blk_nbd_conn *conn, size_t n);

/**
 * blk_nbd_conn_poll() - reap device completions and queue their replies;
 * resubmit what the device had no tag for.
 * @conn: the connection.
 * Return: requests completed by this call (>= 0).
 * Context: the owner thread.
 */
int blk_nbd_conn_poll(struct blk_nbd_conn *conn);

/**
 * blk_nbd_conn_tx_iov() - the replies ready to send, in order.
 * @conn: the connection.
 * @iov: filled with at most @max entries.
 * @max: entries in @iov.
 * Return: entries filled (0: nothing to send).
 * Context: the owner thread.
 */
int blk_nbd_conn_tx_iov(struct blk_nbd_conn *conn, struct iovec *iov, int max);

/**
 * blk_nbd_conn_tx_done() - @n bytes of what tx_iov() returned were sent.
 * @conn: the connection.
 * @n: bytes; fully sent replies are released.
 * Context: the owner thread.
 */
void blk_nbd_conn_tx_done(struct blk_nbd_conn *conn, size_t n);

/**
 * blk_nbd_conn_inflight() - requests received and not yet fully replied.
 * @conn: the connection.
 * Return: count (submitted to the device, or with a reply waiting to go).
 * Context: the owner thread.
 */
unsigned int blk_nbd_conn_inflight(const struct blk_nbd_conn *conn);

/**
 * blk_nbd_conn_requests() - request headers received so far (well-formed
 * ones, NBD_CMD_DISC included).
 * @conn: the connection.
 * Return: the count since blk_nbd_conn_create().
 * Context: the owner thread.
 */
uint64_t blk_nbd_conn_requests(const struct blk_nbd_conn *conn);

/**
 * blk_nbd_conn_idle_poll() - poll the device's queue although nothing of
 * this connection is in flight: for the driver's own timers (the iscsi
 * LLD's keep-alive pings and its answers to the target's), which run only
 * when the queue is polled.  Completes nothing.
 * @conn: the connection.
 * Context: the owner thread, when its client has been idle a while
 * (the server calls it after each idle receive timeout, 100 ms).
 */
void blk_nbd_conn_idle_poll(struct blk_nbd_conn *conn);

/**
 * blk_nbd_conn_dev_busy() - requests waiting on the device.
 * @conn: the connection.
 * Return: count; while nonzero the caller should poll soon.
 * Context: the owner thread.
 */
unsigned int blk_nbd_conn_dev_busy(const struct blk_nbd_conn *conn);

/**
 * blk_nbd_conn_closing() - the client sent NBD_CMD_DISC or broke the
 * framing, or blk_nbd_conn_shutdown() was called: the caller stops once
 * nothing is in flight.
 * @conn: the connection.
 * Context: the owner thread.
 */
bool blk_nbd_conn_closing(const struct blk_nbd_conn *conn);

/**
 * blk_nbd_conn_error() - whether the client broke the framing.
 * @conn: the connection.
 *
 * A bad request magic may also be found while replies are released
 * (blk_nbd_conn_tx_done() parses requests that were waiting for a slot),
 * where no -errno can be returned: the caller checks here.  Once set, the
 * engine takes no more bytes and blk_nbd_conn_closing() is true.
 * Return: 0, or -EPROTO.
 * Context: the owner thread.
 */
int blk_nbd_conn_error(const struct blk_nbd_conn *conn);

/**
 * blk_nbd_conn_shutdown() - stop taking requests (server stopping).
 * @conn: the connection.
 *
 * Requests already received still run and get their replies; requests whose
 * header arrives afterwards are answered NBD_ESHUTDOWN (spec: "Terminating
 * the transmission phase").  Once idle, the caller flushes the device and
 * disconnects.
 * Context: the owner thread.
 */
void blk_nbd_conn_shutdown(struct blk_nbd_conn *conn);

/**
 * blk_nbd_conn_destroy() - drain the device I/O still in flight and free.
 * @conn: the connection; NULL is a no-op.
 * Context: the owner thread.
 */
void blk_nbd_conn_destroy(struct blk_nbd_conn *conn);

/**
 * struct blk_nbd_server_config - a server.
 * @exports: exports (copied pointers: keep the strings and devices alive).
 * @nr_exports: 1..64.
 * @tcp_addr: "HOST:PORT" to listen on (IPv4 dotted, IPv6 in brackets, or a
 *	name), or NULL.  Port 0 picks a free port (see blk_nbd_server_port()).
 * @unix_path: a Unix socket path to listen on, or NULL (created; an
 *	existing socket file is replaced).  At least one of the two.
 * @max_connections: connections served at once (0: 64); more are closed
 *	at once, with a log line.
 * @max_inflight: per connection (0: 64).
 * @spin_us: when a connection has nothing in flight, poll its socket for
 *	this many microseconds before sleeping in recv() (0: sleep at once).
 *	Only while there are fewer connections than online CPUs: spinning
 *	threads must not take the CPU from each other.
 * @coalesce_us: longest request-coalescing sleep in microseconds (0: off):
 *	after a turn that received several requests, a connection sleeps
 *	on a timer, adapted to its client's pace, and reads what arrived as
 *	one batch, instead of being woken by every request (see
 *	docs/nbd.md, "Request coalescing").  At most 100000.  Unix and TCP
 *	connections (TCP sockets get SO_TIMESTAMPNS for it).
 * @log: where the one line per connection goes (NULL: stderr).
 */
struct blk_nbd_server_config {
	const struct blk_nbd_export *exports;
	unsigned int nr_exports;
	const char *tcp_addr;
	const char *unix_path;
	unsigned int max_connections;
	unsigned int max_inflight;
	unsigned int spin_us;
	unsigned int coalesce_us;
	void *log; /* FILE * */
	unsigned int stop_deadline_ms;
};

struct blk_nbd_server;

/**
 * blk_nbd_server_create() - open the listening sockets.
 * @cfg: configuration, copied.
 * @srv: set on success.
 * @err: message on failure (names the address and the reason).
 * @errlen: size of @err.
 * Return: 0; -EINVAL for a bad address or configuration; a socket, bind
 * or listen -errno (-EADDRINUSE...); -ENOMEM.
 * Context: any thread.
 */
int blk_nbd_server_create(const struct blk_nbd_server_config *cfg,
			  struct blk_nbd_server **srv, char *err,
			  size_t errlen);

/**
 * blk_nbd_server_port() - the TCP port listened on (useful with port 0).
 * @srv: the server.
 * Return: the port, or 0 without TCP.
 * Context: any thread.
 */
unsigned int blk_nbd_server_port(const struct blk_nbd_server *srv);

/**
 * blk_nbd_server_run() - accept and serve until @stop becomes nonzero.
 * @srv: the server.
 * @stop: checked at least every 100 ms with an atomic load (a signal
 *	handler may set it with __atomic_store_n() or a plain store to an
 *	int it owns).
 *
 * Each connection runs on its own thread: handshake, then the
 * transmission engine with a nonblocking socket.  On stop: no new
 * connections; connections in the handshake are ended; connections in
 * transmission finish their in-flight requests, answer later ones
 * ESHUTDOWN, and close; then every export's device is flushed
 * (BLK_OP_FLUSH when it can_flush).  Returns once all that is done, or
 * when the config's stop_deadline_ms (0: 30000) has passed since the stop
 * with connections still waiting for their devices' completions.
 * Return: 0; -ETIMEDOUT after the stop deadline (connection threads still
 * own requests in flight: the devices must not be closed, and the
 * process should exit without flushing); or -errno from poll()/accept()
 * failures other than EINTR and per-connection resource errors (which are
 * logged and only end that connection).
 * Context: one thread; blocks.
 */
int blk_nbd_server_run(struct blk_nbd_server *srv, int *stop);

/**
 * blk_nbd_server_destroy() - close the sockets (removes the Unix socket file).
 * @srv: the server; NULL is a no-op.  Devices are not closed.
 * Context: after blk_nbd_server_run() returned.
 */
void blk_nbd_server_destroy(struct blk_nbd_server *srv);

#ifdef __cplusplus
}
#endif

#endif /* BLKSTACK_NBD_H */
