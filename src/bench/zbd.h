/* SPDX-License-Identifier: MIT */
/*
 * zonemode=zbd: fio 3.33's zones emulated on a device that is not zoned
 * (fio's zbd.c, model ZBD_NONE): the device is cut into zones of zonesize
 * bytes, each empty at the start with its write pointer at its start;
 * writes go only to a write pointer, reads (read_beyond_wp=0) only to
 * data written, and a reset moves the write pointer back to the zone's
 * start (nothing is sent to the device, as fio sends nothing).
 *
 * One zone set per device of a run, shared by every job thread on the
 * device, under one mutex (fio: a mutex per zone and one per device).
 * Each thread has a bench_zbd_job: its region's zones, its open zones,
 * its reset count.  docs/bench.md ("zonemode=zbd") says where this
 * approximates fio.
 */
#ifndef BLKSTACK_BENCH_ZBD_H
#define BLKSTACK_BENCH_ZBD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "options.h"

/* One emulated zone.  @opener: the thread that opened it (NULL: none). */
struct bench_zbd_zone {
	uint64_t start;
	uint64_t wp;
	bool open;
	bool reset_due;              /* zone_reset_frequency picked it */
	struct bench_zbd_job *opener;
};

/**
 * struct bench_zbd - the zones of one device.
 * @dev: the device they belong to (its handle, a key only).
 * @dev_size: its bytes.
 * @zone_size, @zone_cap: bytes per zone, bytes writable in each.
 * @nr_zones: zones (the last one may be cut by the device's end).
 * @max_open: zones open at once (fio's max_open_zones; 0: not tracked).
 * @nr_open, @open: the open zones, in the order they opened.
 * @swd: bytes written in all zones (fio's sectors_with_data).
 * @write_cnt: writes before zone_reset_frequency resets a zone.
 * @zones: @nr_zones + 1 (the last a sentinel: its start is the end).
 */
struct bench_zbd {
	pthread_mutex_t lock;
	const void *dev;
	uint64_t dev_size;
	uint64_t zone_size, zone_cap;
	uint32_t nr_zones;
	uint32_t max_open;
	uint32_t nr_open;
	uint32_t open[BENCH_ZBD_MAX_OPEN];
	uint64_t swd;
	uint32_t write_cnt;
	struct bench_zbd_zone *zones;
};

/**
 * struct bench_zbd_job - one job thread's view of the zones.
 * @zbd: the device's zones; NULL when the job is not zonemode=zbd.
 * @off, @len: the thread's region (fio's file_offset, io_size), bytes.
 * @min_zone, @max_zone: its zones, [min_zone, max_zone).
 * @bs: the block size (fio's min_bs).
 * @job_max_open, @nr_open: job_max_open_zones, and zones it has open.
 * @random, @mixed, @writes: rw=rand*, rw=rw|randrw, a job that writes.
 * @read_beyond_wp, @verify: the options.
 * @zrt, @zrf: zone_reset_threshold, zone_reset_frequency.
 * @resets: zones this thread reset (fio's nr_zone_resets).
 * @err: why bench_zbd_adjust() failed (fio's message).
 */
struct bench_zbd_job {
	struct bench_zbd *zbd;
	uint64_t off, len;
	uint32_t min_zone, max_zone;
	uint32_t bs;
	uint32_t job_max_open, nr_open;
	bool random, mixed, writes, read_beyond_wp, verify;
	double zrt, zrf;
	uint64_t resets;
	char err[160];
};

/**
 * bench_zbd_new() - the zones of a device of @dev_size bytes, as fio's
 * init_zone_info() and zbd_set_max_open_zones() make them from job @o's
 * zonesize=, zonecapacity= and max_open_zones=.
 * @dev: the device (a key for bench_zbd_find()).
 * @name: the device or file, for messages.
 * @out: set on success; free with bench_zbd_free().
 * Return: 0; -EINVAL with fio's message in @err (no zonesize, a zone
 * below 512 bytes, zonecapacity above zonesize, a device smaller than a
 * zone); -ENOMEM.  Context: the main thread, before the jobs start.
 */
int bench_zbd_new(const void *dev, uint64_t dev_size,
		  const struct bench_job_opts *o, const char *name,
		  struct bench_zbd **out, char *err, size_t errlen);

/** bench_zbd_free() - free @z (NULL is fine).  Context: no job running. */
void bench_zbd_free(struct bench_zbd *z);

/**
 * bench_zbd_job_init() - attach job thread @j to the zones @z for job @o,
 * whose region is *@off, *@len bytes (fio's zbd_zone_align_file_sizes()
 * and zbd_setup_files()): a job that writes has its region cut to whole
 * zones (offset rounded up, the end down, with fio's lines on stderr).
 * Return: 0; -EINVAL with fio's message in @err (zonesize not the
 * device's, no whole zone in the region, max_open_zones unlike the
 * device's, job_max_open_zones without max_open_zones, with verify= a bs
 * that does not divide the zone).  Context: the main thread.
 */
int bench_zbd_job_init(struct bench_zbd *z, struct bench_zbd_job *j,
		       const struct bench_job_opts *o, uint64_t *off,
		       uint64_t *len, char *err, size_t errlen);

/**
 * bench_zbd_job_start() - the thread starts its workload (fio's
 * zbd_file_reset() for a job that writes): with verify= every zone of
 * its region is reset first, and the zone_reset_frequency count starts.
 * Context: the job's thread.
 */
void bench_zbd_job_start(struct bench_zbd_job *j);

/**
 * bench_zbd_ddir() - fio's zbd_adjust_ddir(): a mixed job's read becomes
 * a write while no zone holds data (unless read_beyond_wp=1).
 * Return: the direction (0 read, 1 write).  Context: the job's thread.
 */
int bench_zbd_ddir(struct bench_zbd_job *j, int ddir);

/**
 * bench_zbd_seq_pos() - fio's setup_zbd_zone_mode(): a sequential write
 * job at or past its zone's capacity goes on at the next zone's start.
 * @pos: the device offset the job would write next.
 * Return: the offset it writes next.  Context: the job's thread (reads
 * only what does not change while jobs run).
 */
uint64_t bench_zbd_seq_pos(const struct bench_zbd_job *j, int ddir,
			   uint64_t pos);

/* bench_zbd_adjust()'s verdicts besides 0 (the I/O goes as adjusted) */
#define BENCH_ZBD_EOF 1	/* no zone for it: the job ends, as fio's does */

/**
 * bench_zbd_adjust() - fio's zbd_adjust_block() and zbd_queue_io() for
 * an I/O of direction @ddir (0 read, 1 write) at *@off of *@len bytes
 * from the job's offset generator: a write moves to the write pointer of
 * its zone (or of an open zone, max_open_zones), resetting the zone
 * first when it is full or zone_reset_frequency says so, and moves the
 * pointer on; a read moves into data written (read_beyond_wp=0).  *@len
 * may shrink (a zone's end, its write pointer), by whole @j->bs.
 * Return: 0; BENCH_ZBD_EOF; -EINVAL or -EIO with fio's message in
 * @j->err.  Context: the job's thread (takes the zones' mutex).
 */
int bench_zbd_adjust(struct bench_zbd_job *j, int ddir, uint64_t *off,
		     uint32_t *len);

#endif /* BLKSTACK_BENCH_ZBD_H */
