// SPDX-License-Identifier: MIT
/*
 * zonemode=zbd: fio 3.33's zone emulation for a device that is not zoned
 * (zbd.c, ZBD_NONE), written from its behaviour: the choice of zone for a
 * write (its own when it can be opened, else one of the open zones picked
 * by where the offset falls in the region, else the next zone that can be
 * opened), resets of full zones and by zone_reset_frequency, reads moved
 * into written data.  zbd.h has the API.
 *
 * Approximations (docs/bench.md): one mutex for the device's zones, not
 * a lock per zone held while the zone's I/Os are in flight; a zone that a
 * write fills is closed when that write is issued, not when it completes
 * (fio then quiesces its I/Os to let zones close: the same choice, without
 * the wait); a reset does not wait for the writes in flight first.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zbd.h"

static inline uint32_t zone_idx(const struct bench_zbd *z, uint64_t off)
{
	uint64_t i = off / z->zone_size;

	return i < z->nr_zones ? (uint32_t)i : z->nr_zones;
}

static inline uint64_t cap_end(const struct bench_zbd *z,
			       const struct bench_zbd_zone *zn)
{
	return zn->start + z->zone_cap;
}

/* fio's zbd_zone_full(): fewer than @need bytes left before the capacity */
static inline bool zone_full(const struct bench_zbd *z,
			     const struct bench_zbd_zone *zn, uint64_t need)
{
	return zn->wp + need > cap_end(z, zn);
}

static inline bool valid_off(const struct bench_zbd_job *j, uint64_t off)
{
	return off - j->off < j->len;
}

int bench_zbd_new(const void *dev, uint64_t dev_size,
		  const struct bench_job_opts *o, const char *name,
		  struct bench_zbd **out, char *err, size_t errlen)
{
	uint64_t zs = o->zonesize, cap = o->zonecapacity, n;
	struct bench_zbd *z;
	uint32_t i;

	*out = NULL;
	if (!zs) {
		snprintf(err, errlen,
			 "%s: Specifying the zone size is mandatory for regular file/block device with --zonemode=zbd (as fio says: job '%s' has no zonesize=)",
			 name, o->name);
		return -EINVAL;
	}
	if (zs < 512) {
		snprintf(err, errlen,
			 "%s: zone size must be at least 512 bytes for --zonemode=zbd",
			 name);
		return -EINVAL;
	}
	if (!cap)
		cap = zs;
	if (cap > zs) {
		snprintf(err, errlen,
			 "%s: job parameter zonecapacity %" PRIu64 " is larger than zone size %" PRIu64,
			 name, cap, zs);
		return -EINVAL;
	}
	if (dev_size < zs) {
		snprintf(err, errlen,
			 "%s: file/device size %" PRIu64 " is smaller than zone size %" PRIu64,
			 name, dev_size, zs);
		return -EINVAL;
	}
	n = (dev_size + zs - 1) / zs;
	if (n >= UINT32_MAX) {
		snprintf(err, errlen, "%s: %" PRIu64 " zones of zonesize=%" PRIu64 ": too many",
			 name, n, zs);
		return -EINVAL;
	}
	z = calloc(1, sizeof(*z));
	if (z)
		z->zones = calloc(n + 1, sizeof(*z->zones));
	if (!z || !z->zones) {
		free(z);
		snprintf(err, errlen, "%s: out of memory for %" PRIu64 " zones", name, n);
		return -ENOMEM;
	}
	pthread_mutex_init(&z->lock, NULL);
	z->dev = dev;
	z->dev_size = dev_size;
	z->zone_size = zs;
	z->zone_cap = cap;
	z->nr_zones = (uint32_t)n;
	z->max_open = o->max_open_zones;
	z->write_cnt = UINT_MAX;
	for (i = 0; i <= z->nr_zones; i++) {
		z->zones[i].start = (uint64_t)i * zs;
		z->zones[i].wp = z->zones[i].start;
	}
	*out = z;
	return 0;
}

void bench_zbd_free(struct bench_zbd *z)
{
	if (!z)
		return;
	pthread_mutex_destroy(&z->lock);
	free(z->zones);
	free(z);
}

int bench_zbd_job_init(struct bench_zbd *z, struct bench_zbd_job *j,
		       const struct bench_job_opts *o, uint64_t *off,
		       uint64_t *len, char *err, size_t errlen)
{
	const char *name = o->filename[0] ? o->filename : o->name;
	bool reads_only = o->rw == RW_READ || o->rw == RW_RANDREAD;

	memset(j, 0, sizeof(*j));
	j->zbd = z;
	j->bs = o->bs;
	j->job_max_open = o->job_max_open_zones;
	j->random = bench_rw_is_random(o->rw);
	j->mixed = o->rw == RW_RW || o->rw == RW_RANDRW;
	j->writes = !reads_only;
	j->read_beyond_wp = o->read_beyond_wp;
	j->verify = o->verify != VERIFY_NONE;
	j->zrt = o->zone_reset_threshold;
	j->zrf = o->zone_reset_frequency;
	/* fio's zbd_zone_align_file_sizes() */
	if (*off < z->dev_size) {
		if (o->zonesize != z->zone_size) {
			snprintf(err, errlen,
				 "%s: zonesize %" PRIu64 " does not match the device zone size %" PRIu64,
				 name, o->zonesize, z->zone_size);
			return -EINVAL;
		}
		if (!reads_only) {
			const struct bench_zbd_zone *zn = &z->zones[zone_idx(z, *off)];
			uint64_t end;

			if (*off != zn->start) {
				uint64_t n = z->zones[zone_idx(z, *off) + 1].start;

				if (n >= *off + *len) {
					snprintf(err, errlen,
						 "%s: io_size must be at least one zone", name);
					return -EINVAL;
				}
				fprintf(stderr, "%s: rounded up offset from %" PRIu64 " to %" PRIu64 "\n",
					name, *off, n);
				*len -= n - *off;
				*off = n;
			}
			end = z->zones[zone_idx(z, *off + *len)].start;
			if (*off + *len != end) {
				if (end <= *off) {
					snprintf(err, errlen,
						 "%s: io_size must be at least one zone", name);
					return -EINVAL;
				}
				fprintf(stderr, "%s: rounded down io_size from %" PRIu64 " to %" PRIu64 "\n",
					name, *len, end - *off);
				*len = end - *off;
			}
		}
	}
	j->off = *off;
	j->len = *len;
	j->min_zone = zone_idx(z, *off);
	j->max_zone = zone_idx(z, *off + *len);
	/* fio's zbd_setup_files() and zbd_verify_bs() */
	if (o->max_open_zones && z->max_open != o->max_open_zones) {
		snprintf(err, errlen, "Different 'max_open_zones' values (job '%s': %u, the device's first job: %u)",
			 o->name, o->max_open_zones, z->max_open);
		return -EINVAL;
	}
	if (o->job_max_open_zones && !z->max_open) {
		snprintf(err, errlen,
			 "'job_max_open_zones' cannot be used without a global open zones limit (job '%s': set max_open_zones=)",
			 o->name);
		return -EINVAL;
	}
	if (j->verify && (z->zone_size % o->bs || z->zone_cap % o->bs)) {
		snprintf(err, errlen,
			 "%s: block size %u is not a divisor of the zone size %" PRIu64 " (and capacity %" PRIu64 ") (verify=)",
			 name, o->bs, z->zone_size, z->zone_cap);
		return -EINVAL;
	}
	return 0;
}

/* fio's zbd_reset_zone(): the write pointer back to the start; counted */
static void zone_reset(struct bench_zbd *z, struct bench_zbd_job *j,
		       struct bench_zbd_zone *zn)
{
	uint64_t data = zn->wp - zn->start;

	if (!data)
		return;
	z->swd -= data;
	zn->wp = zn->start;
	j->resets++;
}

/* fio's zbd_close_zone() */
static void zone_close(struct bench_zbd *z, struct bench_zbd_zone *zn)
{
	uint32_t idx = (uint32_t)(zn - z->zones), i;

	if (!zn->open)
		return;
	for (i = 0; i < z->nr_open; i++)
		if (z->open[i] == idx)
			break;
	if (i == z->nr_open)
		return;
	memmove(&z->open[i], &z->open[i + 1],
		(z->nr_open - i - 1) * sizeof(z->open[0]));
	z->nr_open--;
	if (zn->opener)
		zn->opener->nr_open--;
	zn->opener = NULL;
	zn->open = false;
}

/* fio's zbd_open_zone(): may the job write into @zn? */
static bool zone_open(struct bench_zbd *z, struct bench_zbd_job *j,
		      struct bench_zbd_zone *zn)
{
	/* fio: with verify= a full zone is not reset (that loses data) */
	if (j->verify && zone_full(z, zn, j->bs))
		return false;
	if (!z->max_open)
		return true;
	if (zn->open)
		return zn->wp < cap_end(z, zn);
	if (j->job_max_open && j->nr_open >= j->job_max_open)
		return false;
	if (z->nr_open >= z->max_open)
		return false;
	z->open[z->nr_open++] = (uint32_t)(zn - z->zones);
	j->nr_open++;
	zn->open = true;
	zn->opener = j;
	return true;
}

/* fio's pick_random_zone_idx(): an open zone by where @off falls */
static uint32_t pick_open(const struct bench_zbd *z,
			  const struct bench_zbd_job *j, uint64_t off)
{
	return (uint32_t)((unsigned __int128)(off - j->off) * z->nr_open / j->len);
}

/*
 * fio's zbd_convert_to_open_zone(): the zone a write that could not open
 * its own goes to.  NULL: none (the job ends).
 */
static struct bench_zbd_zone *zone_convert(struct bench_zbd *z,
					   struct bench_zbd_job *j,
					   uint64_t off)
{
	struct bench_zbd_zone *zn;
	uint32_t idx, oi, tmp, i;
	uint64_t n;

	if (z->max_open || j->job_max_open)
		idx = z->open[pick_open(z, j, off) % BENCH_ZBD_MAX_OPEN];
	else
		idx = zone_idx(z, off);
	if (idx < j->min_zone)
		idx = j->min_zone;
	else if (idx >= j->max_zone)
		idx = j->max_zone - 1;
	for (;;) {
		zn = &z->zones[idx];
		if (!z->max_open && !j->job_max_open)
			goto examine;
		if (!z->nr_open)
			goto open_other;
		/* the open zones, from a pick by offset, in the job's region */
		oi = tmp = pick_open(z, j, off);
		for (i = 0; i < z->nr_open; i++, tmp++) {
			if (tmp >= z->nr_open)
				tmp = 0;
			if (z->open[tmp] >= j->min_zone &&
			    z->open[tmp] < j->max_zone) {
				oi = tmp;
				break;
			}
		}
		if (i == z->nr_open)
			return NULL;
		if (z->open[oi] == idx)
			break;
		idx = z->open[oi];
	}
examine:
	if (!zone_full(z, zn, j->bs))
		return zn;
open_other:
	/* the next zones that can be opened, wrapping in the region */
	for (n = j->len / z->zone_size; n > 0; n--) {
		idx++;
		zn++;
		if (!valid_off(j, zn->start)) {
			idx = j->min_zone;
			zn = &z->zones[idx];
		}
		if (zn->open)
			continue;
		if (zone_open(z, j, zn))
			return zn;
	}
	/* an open zone of the region with room */
	for (i = 0; i < z->nr_open; i++) {
		idx = z->open[i];
		if (idx < j->min_zone || idx >= j->max_zone)
			continue;
		zn = &z->zones[idx];
		if (!zone_full(z, zn, j->bs))
			return zn;
	}
	return NULL;
}

/* fio's zbd_find_zone(): a zone with @min bytes written, near @zb */
static struct bench_zbd_zone *zone_find(struct bench_zbd *z,
					const struct bench_zbd_job *j,
					uint64_t min, uint32_t zb)
{
	int64_t z1 = (int64_t)zb + 1, z2 = (int64_t)zb - 1;
	int64_t zl = j->max_zone, zf = j->min_zone;

	for (; z1 < zl || z2 >= zf; z1++, z2--) {
		if (z1 < zl) {
			if (z->zones[z1].start + min <= z->zones[z1].wp)
				return &z->zones[z1];
		} else if (!j->random) {
			break;
		}
		if (j->random && z2 >= zf &&
		    z->zones[z2].start + min <= z->zones[z2].wp)
			return &z->zones[z2];
	}
	return NULL;
}

void bench_zbd_job_start(struct bench_zbd_job *j)
{
	struct bench_zbd *z = j->zbd;
	uint32_t i;

	if (!j->writes)
		return;
	pthread_mutex_lock(&z->lock);
	/* fio: with verify=, the region's zones are reset before any write */
	if (j->verify) {
		for (i = j->min_zone; i < j->max_zone; i++) {
			zone_close(z, &z->zones[i]);
			zone_reset(z, j, &z->zones[i]);
		}
	}
	z->write_cnt = j->zrf > 0 ? (1.0 / j->zrf < (double)UINT_MAX ?
				     (uint32_t)(1.0 / j->zrf) : UINT_MAX) :
				    UINT_MAX;
	pthread_mutex_unlock(&z->lock);
}

uint64_t bench_zbd_seq_pos(const struct bench_zbd_job *j, int ddir,
			   uint64_t pos)
{
	const struct bench_zbd *z = j->zbd;
	const struct bench_zbd_zone *zn = &z->zones[zone_idx(z, pos)];

	if (z->zone_cap < z->zone_size && !j->random && ddir == 1 &&
	    pos >= cap_end(z, zn))
		return zn[1].start;
	return pos;
}

int bench_zbd_ddir(struct bench_zbd_job *j, int ddir)
{
	bool data;

	if (ddir != 0 || !j->mixed || j->read_beyond_wp)
		return ddir;
	pthread_mutex_lock(&j->zbd->lock);
	data = j->zbd->swd != 0;
	pthread_mutex_unlock(&j->zbd->lock);
	return data ? 0 : 1;
}

/* fio's zbd_dec_and_reset_write_cnt(): true every 1/zrf writes */
static bool write_cnt_due(struct bench_zbd *z, const struct bench_zbd_job *j)
{
	if (z->write_cnt)
		z->write_cnt--;
	if (z->write_cnt)
		return false;
	z->write_cnt = 1.0 / j->zrf < (double)UINT_MAX ?
		       (uint32_t)(1.0 / j->zrf) : UINT_MAX;
	return true;
}

static int adjust_read(struct bench_zbd *z, struct bench_zbd_job *j,
		       uint64_t *off, uint32_t *len)
{
	uint32_t oi = zone_idx(z, *off);
	struct bench_zbd_zone *zn = &z->zones[oi];
	const struct bench_zbd_zone *orig = zn;
	uint64_t range = zn->wp - zn->start, n;

	if (range < j->bs || (!j->random && *off + j->bs > zn->wp)) {
		zn = zone_find(z, j, j->bs, oi);
		if (!zn)
			return BENCH_ZBD_EOF;
		range = zn->wp - zn->start;
		if (!j->random)
			*off = zn->start;
	}
	/* within the data, as large as it can be, still random */
	if (range <= *len)
		*off = zn->start;
	else if (j->random)
		*off = zn->start + ((*off - orig->start) % (range - *len)) /
				   j->bs * j->bs;
	n = zn->wp - *off < *len ? zn->wp - *off : *len;
	*len = (uint32_t)(n / j->bs * j->bs);
	return 0;
}

static int adjust_write(struct bench_zbd *z, struct bench_zbd_job *j,
			uint64_t *off, uint32_t *len)
{
	struct bench_zbd_zone *zn = &z->zones[zone_idx(z, *off)];
	uint64_t n, end;

	if (*len > z->zone_size) {
		snprintf(j->err, sizeof(j->err),
			 "I/O buflen exceeds zone size (bs=%u, zonesize=%" PRIu64 ")",
			 *len, z->zone_size);
		return -EINVAL;
	}
	if (!zone_open(z, j, zn)) {
		zn = zone_convert(z, j, *off);
		if (!zn)
			return BENCH_ZBD_EOF;
	}
	if (j->zrf > 0 && z->swd >= (uint64_t)((double)j->len * j->zrt) &&
	    write_cnt_due(z, j))
		zn->reset_due = true;
	if (zn->reset_due || zone_full(z, zn, j->bs)) {
		zn->reset_due = false;
		zone_reset(z, j, zn);
		if (z->zone_cap < j->bs) {
			snprintf(j->err, sizeof(j->err),
				 "ZCAP is less min_bs: zone capacity %" PRIu64 " smaller than minimum block size %u",
				 z->zone_cap, j->bs);
			return -EINVAL;
		}
	}
	/* at the write pointer, within the capacity, in whole blocks */
	*off = zn->wp;
	if (!valid_off(j, *off)) {
		snprintf(j->err, sizeof(j->err), "invalid WP value %" PRIu64, *off);
		return -EINVAL;
	}
	n = cap_end(z, zn) - *off < *len ? cap_end(z, zn) - *off : *len;
	n = n / j->bs * j->bs;
	if (n < j->bs) {
		snprintf(j->err, sizeof(j->err),
			 "zone remainder too small: zone remainder %" PRIu64 " smaller than min block size %u",
			 cap_end(z, zn) - *off, j->bs);
		return -EIO;
	}
	*len = (uint32_t)n;
	/* fio's zbd_queue_io(): the pointer moves as the write is issued */
	end = *off + n < cap_end(z, zn) ? *off + n : cap_end(z, zn);
	if (zn->wp <= end)
		z->swd += end - zn->wp;
	zn->wp = end;
	/* fio's zbd_end_zone_io() (at completion there): a full zone closes */
	if (*off + n >= cap_end(z, zn))
		zone_close(z, zn);
	return 0;
}

int bench_zbd_adjust(struct bench_zbd_job *j, int ddir, uint64_t *off,
		     uint32_t *len)
{
	struct bench_zbd *z = j->zbd;
	int ret;

	if (ddir == 0 && j->read_beyond_wp)
		goto size;
	pthread_mutex_lock(&z->lock);
	ret = ddir == 0 ? adjust_read(z, j, off, len) :
			  adjust_write(z, j, off, len);
	pthread_mutex_unlock(&z->lock);
	if (ret)
		return ret;
size:
	/* fio's fill_io_u(): an I/O past the device's end ends the job */
	if (*off + *len > z->dev_size)
		return BENCH_ZBD_EOF;
	return 0;
}
