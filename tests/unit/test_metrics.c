// SPDX-License-Identifier: MIT
/*
 * Unit tests for the metrics registry and its Prometheus text
 * (src/export/metrics/): buckets, --metrics addresses, label escaping,
 * cumulative histograms, connections folded into their export at close,
 * the NBD engine's counting, and a scrape racing a writer (run under TSan
 * by make test).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "blkstack/metrics.h"
#include "blkstack/nbd.h"
#include "blkstack/ram.h"
#include "blkstack/version.h"
#include "export/nbd/wire.h"
#include "../helpers/nbd_memio.h"
#include "../helpers/unit_ram.h"

#define MiB (1024u * 1024u)

static char *render(struct blk_metrics *m)
{
	char *buf;
	size_t len;

	assert_int_equal(blk_metrics_render(m, &buf, &len), 0);
	assert_int_equal(strlen(buf), len);
	return buf;
}

/*
 * The value of the sample whose name and labels are exactly @series
 * ("name{...}"); -1 when there is none.
 */
static double sample(const char *text, const char *series)
{
	size_t n = strlen(series);
	const char *p = text;

	while ((p = strstr(p, series))) {
		if ((p == text || p[-1] == '\n') && p[n] == ' ')
			return strtod(p + n + 1, NULL);
		p += n;
	}
	return -1;
}

static void test_bucket(void **state)
{
	assert_int_equal(blk_metrics_bucket(0), 0);
	assert_int_equal(blk_metrics_bucket(1000), 0);      /* le="1e-06" */
	assert_int_equal(blk_metrics_bucket(1001), 1);
	assert_int_equal(blk_metrics_bucket(2000), 1);
	assert_int_equal(blk_metrics_bucket(99999), 6);     /* le="0.0001" */
	assert_int_equal(blk_metrics_bucket(1000000), 9);   /* le="0.001" */
	assert_int_equal(blk_metrics_bucket(10000000000ull), BLK_METRICS_NR_BOUNDS - 1);
	assert_int_equal(blk_metrics_bucket(10000000001ull), BLK_METRICS_NR_BOUNDS);
	assert_int_equal(blk_metrics_bucket(UINT64_MAX), BLK_METRICS_NR_BOUNDS);
}

static void test_parse_addr(void **state)
{
	char h[64];
	unsigned int port;

	assert_int_equal(blk_metrics_parse_addr(NULL, h, sizeof(h), &port), 0);
	assert_string_equal(h, "127.0.0.1");
	assert_int_equal(port, 9100);
	assert_int_equal(blk_metrics_parse_addr("9200", h, sizeof(h), &port), 0);
	assert_string_equal(h, "127.0.0.1");
	assert_int_equal(port, 9200);
	assert_int_equal(blk_metrics_parse_addr("0", h, sizeof(h), &port), 0);
	assert_int_equal(port, 0);
	assert_int_equal(blk_metrics_parse_addr("0.0.0.0:9100", h, sizeof(h), &port), 0);
	assert_string_equal(h, "0.0.0.0");
	assert_int_equal(blk_metrics_parse_addr("[::1]:65535", h, sizeof(h), &port), 0);
	assert_string_equal(h, "::1");
	assert_int_equal(port, 65535);
	assert_int_equal(blk_metrics_parse_addr("localhost:1", h, sizeof(h), &port), 0);
	assert_string_equal(h, "localhost");
	/* refused: no port, a port out of range or not decimal, an empty
	 * host, an IPv6 address without brackets */
	assert_int_equal(blk_metrics_parse_addr("65536", h, sizeof(h), &port), -EINVAL);
	assert_int_equal(blk_metrics_parse_addr("-1", h, sizeof(h), &port), -EINVAL);
	assert_int_equal(blk_metrics_parse_addr("abc", h, sizeof(h), &port), -EINVAL);
	assert_int_equal(blk_metrics_parse_addr("127.0.0.1:", h, sizeof(h), &port), -EINVAL);
	assert_int_equal(blk_metrics_parse_addr(":9100", h, sizeof(h), &port), -EINVAL);
	assert_int_equal(blk_metrics_parse_addr("::1", h, sizeof(h), &port), -EINVAL);
	assert_int_equal(blk_metrics_parse_addr("[::1]", h, sizeof(h), &port), -EINVAL);
	assert_int_equal(blk_metrics_parse_addr("[]:80", h, sizeof(h), &port), -EINVAL);
	assert_int_equal(blk_metrics_parse_addr("1.2.3.4:0x50", h, sizeof(h), &port), -EINVAL);
}

#define CONN "proto=\"nbd\",export=\"a\\\"b\\\\c\\nd\",conn=\"7\",peer=\"127.0.0.1:1\""
#define EXP "proto=\"nbd\",export=\"a\\\"b\\\\c\\nd\""

static void test_render_and_fold(void **state)
{
	struct blk_dev *dev = ram_dev(MiB);
	struct blk_metrics *m;
	struct blk_metrics_export *ex;
	struct blk_metrics_conn *mc;
	char *t;

	assert_int_equal(blk_metrics_create(&m), 0);
	assert_int_equal(blk_metrics_export_add(m, "x", dev, 0, &ex), -EINVAL);
	assert_int_equal(blk_metrics_export_add(m, "x", dev, 4, &ex), -EINVAL);
	assert_int_equal(blk_metrics_export_add(m, "a\"b\\c\nd", dev,
						1u << BLK_METRICS_NBD, &ex), 0);
	assert_int_equal(blk_metrics_conn_open(NULL, BLK_METRICS_NBD, 1, "", &mc), 0);
	assert_null(mc);
	assert_int_equal(blk_metrics_conn_open(ex, BLK_METRICS_NBD, 7,
					       "127.0.0.1:1", &mc), 0);
	blk_metrics_record(mc, BLK_METRICS_READ, 4096, false, 3000);
	blk_metrics_record(mc, BLK_METRICS_READ, 4096, false, 1000);
	blk_metrics_record(mc, BLK_METRICS_WRITE, 8192, false, 1500000);
	blk_metrics_record(mc, BLK_METRICS_OTHER, 0, true, 50);
	blk_metrics_set_inflight(mc, 2);

	t = render(m);
	/* no iSCSI series: the export is served over NBD only */
	assert_null(strstr(t, "proto=\"iscsi\""));
	assert_true(sample(t, "blkstack_connection_requests_total{" CONN ",dir=\"read\"}") == 2);
	assert_true(sample(t, "blkstack_connection_bytes_total{" CONN ",dir=\"read\"}") == 8192);
	assert_true(sample(t, "blkstack_connection_bytes_total{" CONN ",dir=\"write\"}") == 8192);
	assert_true(sample(t, "blkstack_connection_bytes_total{" CONN ",dir=\"other\"}") == -1);
	assert_true(sample(t, "blkstack_connection_errors_total{" CONN ",dir=\"other\"}") == 1);
	assert_true(sample(t, "blkstack_connection_errors_total{" CONN ",dir=\"read\"}") == 0);
	/* cumulative: 1000 ns is in le=1e-06, 3000 ns from le=5e-06 on */
	assert_true(sample(t, "blkstack_connection_request_duration_seconds_bucket{" CONN ",dir=\"read\",le=\"1e-06\"}") == 1);
	assert_true(sample(t, "blkstack_connection_request_duration_seconds_bucket{" CONN ",dir=\"read\",le=\"2e-06\"}") == 1);
	assert_true(sample(t, "blkstack_connection_request_duration_seconds_bucket{" CONN ",dir=\"read\",le=\"5e-06\"}") == 2);
	assert_true(sample(t, "blkstack_connection_request_duration_seconds_bucket{" CONN ",dir=\"read\",le=\"+Inf\"}") == 2);
	assert_true(sample(t, "blkstack_connection_request_duration_seconds_count{" CONN ",dir=\"read\"}") == 2);
	assert_true(sample(t, "blkstack_connection_request_duration_seconds_sum{" CONN ",dir=\"read\"}") == 4e-6);
	assert_true(sample(t, "blkstack_connection_request_duration_seconds_bucket{" CONN ",dir=\"write\",le=\"0.001\"}") == 0);
	assert_true(sample(t, "blkstack_connection_request_duration_seconds_bucket{" CONN ",dir=\"write\",le=\"0.002\"}") == 1);
	assert_true(sample(t, "blkstack_connection_inflight_requests{" CONN "}") == 2);
	/* the export's series: the open connection's counts */
	assert_true(sample(t, "blkstack_export_requests_total{" EXP ",dir=\"read\"}") == 2);
	assert_true(sample(t, "blkstack_export_inflight_requests{" EXP "}") == 2);
	assert_true(sample(t, "blkstack_export_connections{" EXP "}") == 1);
	assert_true(sample(t, "blkstack_export_connections_opened_total{" EXP "}") == 1);
	/* the block core's: nothing ran on the device */
	assert_true(sample(t, "blkstack_disk_completed_total{export=\"a\\\"b\\\\c\\nd\",dir=\"read\"}") == 0);
	assert_true(sample(t, "blkstack_build_info{version=\"" BLKSTACK_VERSION "\"}") == 1);
	free(t);

	/* closed: gone from the connection series, kept in the export's */
	blk_metrics_conn_close(mc);
	t = render(m);
	assert_null(strstr(t, "blkstack_connection_requests_total{"));
	assert_non_null(strstr(t, "# TYPE blkstack_connection_requests_total counter"));
	assert_true(sample(t, "blkstack_export_requests_total{" EXP ",dir=\"read\"}") == 2);
	assert_true(sample(t, "blkstack_export_requests_total{" EXP ",dir=\"write\"}") == 1);
	assert_true(sample(t, "blkstack_export_bytes_total{" EXP ",dir=\"write\"}") == 8192);
	assert_true(sample(t, "blkstack_export_errors_total{" EXP ",dir=\"other\"}") == 1);
	assert_true(sample(t, "blkstack_export_request_duration_seconds_bucket{" EXP ",dir=\"read\",le=\"5e-06\"}") == 2);
	assert_true(sample(t, "blkstack_export_inflight_requests{" EXP "}") == 0);
	assert_true(sample(t, "blkstack_export_connections{" EXP "}") == 0);
	assert_true(sample(t, "blkstack_export_connections_opened_total{" EXP "}") == 1);
	free(t);
	blk_metrics_destroy(m);
	blk_dev_close(dev);
}

static void put_req(uint8_t *p, uint16_t flags, uint16_t type, uint64_t handle,
		    uint64_t off, uint32_t len)
{
	put_be32(p, NBD_REQUEST_MAGIC);
	put_be16(p + 4, flags);
	put_be16(p + 6, type);
	put_be64(p + 8, handle);
	put_be64(p + 16, off);
	put_be32(p + 24, len);
}

static uint64_t count(const struct blk_metrics_conn *mc, enum blk_metrics_dir d)
{
	uint64_t n = 0;
	unsigned int b;

	for (b = 0; b < BLK_METRICS_NR_BUCKETS; b++)
		n += mc->c.lat[d][b];
	return n;
}

/* The NBD engine counts each reply once it is sent, by class and error. */
static void test_nbd_engine(void **state)
{
	struct blk_dev *dev = ram_dev(MiB);
	struct blk_nbd_export ex = { .name = "", .description = "", .dev = dev };
	struct blk_nbd_session s = { .structured = true };
	struct blk_metrics *m;
	struct blk_metrics_export *mx;
	struct blk_metrics_conn *mc;
	struct blk_nbd_conn *c;
	struct memio io = { 0 };
	static uint8_t in[4 * 28 + 8192 + 512];
	size_t n = 0;

	assert_int_equal(blk_metrics_create(&m), 0);
	assert_int_equal(blk_metrics_export_add(m, "", dev, 1u << BLK_METRICS_NBD, &mx), 0);
	assert_int_equal(blk_metrics_conn_open(mx, BLK_METRICS_NBD, 1, "unix", &mc), 0);
	s.tflags = blk_nbd_export_flags(&ex, true);
	assert_int_equal(blk_nbd_conn_create(&ex, &s, 4, &c), 0);
	blk_nbd_conn_set_metrics(c, mc);
	put_req(in + n, 0, NBD_CMD_WRITE, 1, 0, 8192);
	n += 28;
	memset(in + n, 0x5a, 8192);
	n += 8192;
	put_req(in + n, 0, NBD_CMD_READ, 2, 0, 4096);
	n += 28;
	put_req(in + n, 0, NBD_CMD_READ, 3, 100, 512); /* unaligned: EINVAL */
	n += 28;
	put_req(in + n, 0, NBD_CMD_FLUSH, 4, 0, 0);
	n += 28;
	assert_int_equal(memio_feed(&io, c, in, n, 1000), 0);
	assert_int_equal(blk_nbd_conn_inflight(c), 0);
	assert_int_equal(count(mc, BLK_METRICS_WRITE), 1);
	assert_int_equal(count(mc, BLK_METRICS_READ), 2);
	assert_int_equal(count(mc, BLK_METRICS_OTHER), 1);
	assert_int_equal(mc->c.bytes[BLK_METRICS_WRITE], 8192);
	assert_int_equal(mc->c.bytes[BLK_METRICS_READ], 4096); /* not the failed one */
	assert_int_equal(mc->c.errors[BLK_METRICS_READ], 1);
	assert_int_equal(mc->c.errors[BLK_METRICS_WRITE], 0);
	assert_int_equal(mc->c.errors[BLK_METRICS_OTHER], 0);
	assert_int_equal(mc->inflight, 0);
	assert_true(mc->c.lat_sum_ns[BLK_METRICS_WRITE] > 0);
	/* a DISC has no reply: not counted */
	put_req(in, 0, NBD_CMD_DISC, 5, 0, 0);
	assert_int_equal(memio_feed(&io, c, in, 28, 28), 0);
	assert_int_equal(count(mc, BLK_METRICS_OTHER), 1);
	blk_nbd_conn_destroy(c);
	blk_metrics_conn_close(mc);
	blk_metrics_destroy(m);
	free(io.out);
	blk_dev_close(dev);
}

#define RACE_IOS 200000u

struct writer {
	struct blk_metrics_conn *mc;
};

static void *writer(void *arg)
{
	struct writer *w = arg;
	unsigned int i;

	for (i = 0; i < RACE_IOS; i++) {
		blk_metrics_set_inflight(w->mc, i & 7);
		blk_metrics_record(w->mc, BLK_METRICS_READ, 512, false, i);
	}
	return NULL;
}

/*
 * A scrape while a connection thread counts: every value seen is one the
 * writer stored (counters never go backwards, _count equals the +Inf
 * bucket), and TSan (make test) sees no race.
 */
static void test_scrape_races_writer(void **state)
{
	struct blk_dev *dev = ram_dev(MiB);
	struct blk_metrics *m;
	struct blk_metrics_export *mx;
	struct writer w;
	pthread_t th;
	double last = 0, bytes;
	unsigned int scrapes = 0;
	char *t;

	assert_int_equal(blk_metrics_create(&m), 0);
	assert_int_equal(blk_metrics_export_add(m, "r", dev, 3, &mx), 0);
	assert_int_equal(blk_metrics_conn_open(mx, BLK_METRICS_ISCSI, 3, "p", &w.mc), 0);
	assert_int_equal(pthread_create(&th, NULL, writer, &w), 0);
	do {
		double n, inf;

		t = render(m);
		n = sample(t, "blkstack_connection_request_duration_seconds_count{proto=\"iscsi\",export=\"r\",conn=\"3\",peer=\"p\",dir=\"read\"}");
		inf = sample(t, "blkstack_connection_request_duration_seconds_bucket{proto=\"iscsi\",export=\"r\",conn=\"3\",peer=\"p\",dir=\"read\",le=\"+Inf\"}");
		assert_true(n >= last);
		assert_true(n == inf);
		last = n;
		free(t);
		scrapes++;
	} while (last < RACE_IOS && scrapes < 100000);
	pthread_join(th, NULL);
	blk_metrics_conn_close(w.mc);
	t = render(m);
	assert_true(sample(t, "blkstack_export_requests_total{proto=\"iscsi\",export=\"r\",dir=\"read\"}") == RACE_IOS);
	bytes = sample(t, "blkstack_export_bytes_total{proto=\"iscsi\",export=\"r\",dir=\"read\"}");
	assert_true(bytes == 512.0 * RACE_IOS);
	free(t);
	blk_metrics_destroy(m);
	blk_dev_close(dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket),
		cmocka_unit_test(test_parse_addr),
		cmocka_unit_test(test_render_and_fold),
		cmocka_unit_test(test_nbd_engine),
		cmocka_unit_test(test_scrape_races_writer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
