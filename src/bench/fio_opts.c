// SPDX-License-Identifier: MIT
/*
 * Every fio option by name, and what blkstack bench does with it.
 *
 * The names are fio 3.33's: every option `fio --cmdhelp=all` lists, with
 * the alias `fio --cmdhelp=NAME` gives, then the options of fio's I/O
 * engines (engines/<name>.c of fio 3.33, whose option tables fio only
 * shows with --enghelp=ENGINE for the engines a build has).  Knowing every
 * name keeps "unknown option" for typos, and lets one run of a job file
 * list every option blkstack refuses, each with its reason.
 *
 * The option table of options.c is what blkstack implements; this one is
 * the catalogue.  test_options.c holds them together: every option marked
 * supported or mapped here is in options.c's table (name and alias), and
 * nothing marked refused is.  docs/bench.md's table is printed from this
 * one (blkstack bench --fio-options) and compared by test_jobfile_fio.sh.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "bench/fio_opts.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Reasons, one per kind of refusal. */
#define R_FILES "file and file-system management: blkstack issues block requests to its own devices"
#define R_WORKLOAD "a workload option blkstack bench does not implement yet"
#define R_REPLAY "not implemented: read_iolog= replays fio's iolog (version 2 and 3), not blktrace files or their merging"
#define R_PROC "process and cgroup options are not implemented (jobs are threads of one process; its CPU and NUMA placement is: cpus_allowed, cpumask, numa_cpu_nodes, numa_mem_policy)"
#define R_ZONE "zoned block devices are not opened as such: zonemode=zbd emulates zones on any device, as fio does on a device that is not zoned"
#define R_LOG "not implemented: blkstack writes fio's logs plain (no compression), bw and iops windows from log_avg_msec"
#define R_LOGENT "accepted and ignored: log buffers grow in 1 MiB chunks"
#define R_ENGOPT NULL	/* fio_opt_why(): an option of an engine blkstack lacks */

/* Mapped: what the option becomes. */
#define R_TEXT "accepted as text; it has no effect on the I/O"
#define R_THREAD "accepted: blkstack's jobs always run as threads"
#define R_ELEV "to elevator= (none|mq-deadline)"
#define R_ENGINE "to a blkstack driver: see the ioengine table"
#define R_EXPVERIFY "to blkstack's verify: the blocks in its map of written blocks (one bit per block, no log of offsets), read back in offset order, the blocks fio's replay of the random sequence reads; a note says so"
#define R_VSTATE "blkstack's own state file (its map of blocks written; docs/bench.md), not fio's format: saved only with verify_state_save=1 (fio saves by default), loaded by verify_only jobs"
#define R_VASYNC "to verification in the job's thread (no offload threads; a note says so): the same blocks checked, the same errors"
#define R_PROFILE "accepted with no effect, as fio takes it without --profile=; a note says so"

static const struct fio_opt fio_opt_table[] = {
	{ "description", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "name", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "wait_for", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "filename", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "lockfile", NULL, NULL, FIO_REFUSED, R_FILES },
	{ "directory", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "filename_format", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "unique_filename", NULL, NULL, FIO_REFUSED, R_FILES },
	{ "opendir", NULL, NULL, FIO_REFUSED, R_FILES },
	{ "rw", "readwrite", NULL, FIO_SUPPORTED, NULL },
	{ "bs", "blocksize", NULL, FIO_SUPPORTED, NULL },
	{ "ba", "blockalign", NULL, FIO_SUPPORTED, NULL },
	{ "bsrange", "blocksize_range", NULL, FIO_SUPPORTED, NULL },
	{ "bssplit", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "bs_unaligned", "blocksize_unaligned", NULL, FIO_SUPPORTED, NULL },
	{ "randrepeat", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "randseed", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "norandommap", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "ignore_error", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "rw_sequencer", NULL, NULL, FIO_REFUSED, R_WORKLOAD },
	{ "ioengine", NULL, NULL, FIO_MAPPED, R_ENGINE },
	{ "iodepth", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "iodepth_batch", "iodepth_batch_submit", NULL, FIO_SUPPORTED, NULL },
	{ "iodepth_batch_complete_min", "iodepth_batch_complete", NULL, FIO_SUPPORTED, NULL },
	{ "iodepth_batch_complete_max", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "iodepth_low", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "serialize_overlap", NULL, NULL, FIO_REFUSED, R_WORKLOAD },
	{ "io_submit_mode", NULL, NULL, FIO_MAPPED, "inline; offload taken as inline: the job's thread submits at the rate's times whatever the completions do, which is what fio's submitting threads are for (docs/bench.md)" },
	{ "size", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "io_size", "io_limit", NULL, FIO_SUPPORTED, NULL },
	{ "fill_device", "fill_fs", NULL, FIO_SUPPORTED, NULL },
	{ "filesize", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "file_append", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "offset", "fileoffset", NULL, FIO_SUPPORTED, NULL },
	{ "offset_increment", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "offset_align", NULL, NULL, FIO_REFUSED, R_WORKLOAD },
	{ "number_ios", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "random_generator", NULL, NULL, FIO_MAPPED, "to blkstack's generator: uniform random offsets without repeats in a pass (the random map), which is lfsr's promise; with lfsr the map stays on even under norandommap (noted); not fio's sequence of offsets" },
	{ "random_distribution", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "percentage_random", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "allrandrepeat", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "nrfiles", "nr_files", NULL, FIO_SUPPORTED, NULL },
	{ "file_service_type", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "openfiles", NULL, NULL, FIO_REFUSED, R_FILES },
	{ "fallocate", NULL, NULL, FIO_MAPPED, "none and truncate (a missing file is created sparse with ftruncate(2)); native, posix, keep and 1 (preallocation) are refused" },
	{ "fadvise_hint", NULL, NULL, FIO_REFUSED, R_FILES },
	{ "fsync", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "fdatasync", NULL, NULL, FIO_MAPPED, "to a FLUSH, as fsync= (a block device has one cache flush; on a uring file it is fdatasync(2), IORING_FSYNC_DATASYNC)" },
	{ "write_barrier", NULL, NULL, FIO_MAPPED, "to FUA on every Nth write (fio sets the barrier only on its sg engine, as the SCSI FUA bit)" },
	{ "sync_file_range", NULL, NULL, FIO_MAPPED, "to a FLUSH every N writes, as fsync=N (on a uring file fdatasync(2), which covers what the flags ask; no IORING_OP_SYNC_FILE_RANGE: the block layer has no ranged flush)" },
	{ "direct", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "atomic", NULL, NULL, FIO_REFUSED, R_FILES },
	{ "buffered", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "overwrite", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "loops", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "numjobs", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "startdelay", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "runtime", "timeout", NULL, FIO_SUPPORTED, NULL },
	{ "time_based", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "verify_only", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "ramp_time", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "clocksource", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "mem", "iomem", NULL, FIO_MAPPED, "malloc, shm, shmhuge, mmap, mmaphuge, mmapshared (with :FILE) allocate the buffers as fio does; cudamalloc refused (no GPU engine)" },
	{ "iomem_align", "mem_align", NULL, FIO_SUPPORTED, NULL },
	{ "verify", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "do_verify", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "verify_interval", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "verify_offset", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "verify_pattern", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "verify_fatal", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "verify_dump", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "verify_async", NULL, NULL, FIO_MAPPED, R_VASYNC },
	{ "verify_async_cpus", NULL, NULL, FIO_MAPPED, R_VASYNC },
	{ "verify_backlog", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "verify_backlog_batch", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "experimental_verify", NULL, NULL, FIO_MAPPED, R_EXPVERIFY },
	{ "verify_state_load", NULL, NULL, FIO_MAPPED, R_VSTATE },
	{ "verify_state_save", NULL, NULL, FIO_MAPPED, R_VSTATE },
	{ "trim_percentage", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "trim_verify_zero", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "trim_backlog", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "trim_backlog_batch", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "write_iolog", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "read_iolog", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "read_iolog_chunked", NULL, NULL, FIO_MAPPED, "accepted: the log is read whole before the job (fio reads it in chunks to save memory)" },
	{ "replay_no_stall", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "replay_redirect", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "replay_scale", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "replay_align", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "replay_time_scale", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "replay_skip", NULL, NULL, FIO_REFUSED, "not implemented: read_iolog= replays every action of the log" },
	{ "merge_blktrace_file", NULL, NULL, FIO_REFUSED, R_REPLAY },
	{ "merge_blktrace_scalars", NULL, NULL, FIO_REFUSED, R_REPLAY },
	{ "merge_blktrace_iters", NULL, NULL, FIO_REFUSED, R_REPLAY },
	{ "exec_prerun", NULL, NULL, FIO_REFUSED, R_PROC },
	{ "exec_postrun", NULL, NULL, FIO_REFUSED, R_PROC },
	{ "ioscheduler", NULL, NULL, FIO_MAPPED, R_ELEV },
	{ "zonemode", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "zonesize", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "zonecapacity", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "zonerange", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "zoneskip", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "read_beyond_wp", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "max_open_zones", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "job_max_open_zones", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "ignore_zone_limits", NULL, NULL, FIO_MAPPED, "accepted: zonemode=zbd's emulated zones have no device limits to ignore, as in fio" },
	{ "zone_reset_threshold", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "zone_reset_frequency", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "lockmem", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "rwmixread", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "rwmixwrite", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "nice", NULL, NULL, FIO_REFUSED, R_PROC },
	{ "prio", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "prioclass", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "thinktime", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "thinktime_spin", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "thinktime_blocks", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "thinktime_blocks_type", NULL, NULL, FIO_REFUSED, R_WORKLOAD },
	{ "thinktime_iotime", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "rate", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "rate_min", "ratemin", NULL, FIO_SUPPORTED, NULL },
	{ "rate_process", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "rate_cycle", "ratecycle", NULL, FIO_SUPPORTED, NULL },
	{ "rate_ignore_thinktime", NULL, NULL, FIO_REFUSED, R_WORKLOAD },
	{ "rate_iops", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "rate_iops_min", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "max_latency", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "latency_target", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "latency_window", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "latency_percentile", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "latency_run", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "invalidate", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "sync", NULL, NULL, FIO_REFUSED, R_FILES },
	{ "write_hint", NULL, NULL, FIO_REFUSED, R_FILES },
	{ "create_serialize", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "create_fsync", NULL, NULL, FIO_REFUSED, R_FILES },
	{ "create_on_open", NULL, NULL, FIO_MAPPED, "1: a missing file is created empty, not laid out, as fio's; the file is opened (created) when the run sets up its devices, before the jobs start, not at the job's first I/O" },
	{ "create_only", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "allow_file_create", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "allow_mounted_write", NULL, NULL, FIO_REFUSED, R_FILES },
	{ "pre_read", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "cpumask", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "cpus_allowed", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "cpus_allowed_policy", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "numa_cpu_nodes", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "numa_mem_policy", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "end_fsync", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "fsync_on_close", NULL, NULL, FIO_MAPPED, "to end_fsync=1: one FLUSH after the workload (blkstack opens its devices once, before the jobs, and closes them after)" },
	{ "unlink", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "unlink_each_loop", NULL, NULL, FIO_REFUSED, R_FILES },
	{ "exitall", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "exit_what", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "exitall_on_error", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "stonewall", "wait_for_previous", NULL, FIO_SUPPORTED, NULL },
	{ "new_group", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "thread", NULL, NULL, FIO_MAPPED, R_THREAD },
	{ "per_job_logs", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "write_bw_log", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "bwavgtime", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "write_lat_log", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "write_iops_log", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "iopsavgtime", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "log_entries", NULL, NULL, FIO_MAPPED, R_LOGENT },
	{ "log_avg_msec", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "log_hist_msec", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "log_hist_coarseness", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "write_hist_log", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "log_max_value", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "log_offset", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "log_prio", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "log_compression", NULL, NULL, FIO_REFUSED, R_LOG },
	{ "log_compression_cpus", NULL, NULL, FIO_REFUSED, R_LOG },
	{ "log_store_compressed", NULL, NULL, FIO_REFUSED, R_LOG },
	{ "log_unix_epoch", NULL, NULL, FIO_REFUSED, R_LOG },
	{ "log_alternate_epoch", NULL, NULL, FIO_REFUSED, R_LOG },
	{ "log_alternate_epoch_clock_id", NULL, NULL, FIO_REFUSED, R_LOG },
	{ "block_error_percentiles", NULL, NULL, FIO_REFUSED, "not implemented: fio's per-block trim counts and trim/write failure states (its \"block lifetime percentiles\" of a trim job on one file) are not kept" },
	{ "group_reporting", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "stats", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "zero_buffers", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "refill_buffers", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "scramble_buffers", NULL, NULL, FIO_MAPPED, "as fio (on by default for writes), with the write's sequence number where fio puts its start time in each 512 bytes" },
	{ "buffer_pattern", NULL, NULL, FIO_MAPPED, "0x hex, decimal and \"string\" as fio; fio's 'FILE' (a file's bytes) refused" },
	{ "buffer_compress_percentage", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "buffer_compress_chunk", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "dedupe_percentage", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "dedupe_mode", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "dedupe_working_set_percentage", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "dedupe_global", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "clat_percentiles", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "lat_percentiles", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "slat_percentiles", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "percentile_list", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "significant_figures", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "disk_util", NULL, NULL, FIO_MAPPED, "to the disk stats of blkstack's own device (its I/Os, merges, ticks, in_queue, util; fio's are the kernel's disks under the job's files): disk_util=0 leaves them out" },
	{ "gtod_reduce", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "disable_lat", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "disable_clat", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "disable_slat", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "disable_bw_measurement", "disable_bw", NULL, FIO_SUPPORTED, NULL },
	{ "gtod_cpu", NULL, NULL, FIO_REFUSED, R_PROC },
	{ "unified_rw_reporting", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "continue_on_error", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "error_dump", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "profile", NULL, NULL, FIO_REFUSED, R_PROC },
	{ "cgroup", NULL, NULL, FIO_REFUSED, R_PROC },
	{ "cgroup_nodelete", NULL, NULL, FIO_MAPPED, "accepted with no effect: blkstack makes no cgroup (cgroup= is refused), as fio with cgroup unset" },
	{ "cgroup_weight", NULL, NULL, FIO_REFUSED, R_PROC },
	{ "uid", NULL, NULL, FIO_REFUSED, R_PROC },
	{ "gid", NULL, NULL, FIO_REFUSED, R_PROC },
	{ "kb_base", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "unit_base", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "hugepage-size", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "flow_id", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "flow", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "flow_sleep", NULL, NULL, FIO_SUPPORTED, NULL },
	{ "steadystate", "ss", NULL, FIO_SUPPORTED, NULL },
	{ "steadystate_duration", "ss_dur", NULL, FIO_SUPPORTED, NULL },
	{ "steadystate_ramp_time", "ss_ramp", NULL, FIO_SUPPORTED, NULL },
	{ "cpuchunks", NULL, "cpuio", FIO_REFUSED, R_ENGOPT },
	{ "cpuload", NULL, "cpuio", FIO_REFUSED, R_ENGOPT },
	{ "cpumode", NULL, "cpuio", FIO_REFUSED, R_ENGOPT },
	{ "exit_on_io_done", NULL, "cpuio", FIO_REFUSED, R_ENGOPT },
	{ "chunk_size", NULL, "dfs/libhdfs", FIO_REFUSED, R_ENGOPT },
	{ "cont", NULL, "dfs", FIO_REFUSED, R_ENGOPT },
	{ "object_class", NULL, "dfs", FIO_REFUSED, R_ENGOPT },
	{ "pool", NULL, "dfs/rados/rbd", FIO_REFUSED, R_ENGOPT },
	{ "svcl", NULL, "dfs", FIO_REFUSED, R_ENGOPT },
	{ "donorname", NULL, "e4defrag", FIO_REFUSED, R_ENGOPT },
	{ "inplace", NULL, "e4defrag", FIO_REFUSED, R_ENGOPT },
	{ "arguments", NULL, "exec", FIO_REFUSED, R_ENGOPT },
	{ "grace_time", NULL, "exec", FIO_REFUSED, R_ENGOPT },
	{ "program", NULL, "exec", FIO_REFUSED, R_ENGOPT },
	{ "std_redirect", NULL, "exec", FIO_REFUSED, R_ENGOPT },
	{ "stat_type", NULL, "filestat", FIO_REFUSED, R_ENGOPT },
	{ "brick", NULL, "gfapi", FIO_REFUSED, R_ENGOPT },
	{ "single-instance", NULL, "gfapi", FIO_REFUSED, R_ENGOPT },
	{ "volume", NULL, "gfapi", FIO_REFUSED, R_ENGOPT },
	{ "http_host", NULL, "http", FIO_REFUSED, R_ENGOPT },
	{ "http_mode", NULL, "http", FIO_REFUSED, R_ENGOPT },
	{ "http_pass", NULL, "http", FIO_REFUSED, R_ENGOPT },
	{ "http_s3_key", NULL, "http", FIO_REFUSED, R_ENGOPT },
	{ "http_s3_keyid", NULL, "http", FIO_REFUSED, R_ENGOPT },
	{ "http_s3_region", NULL, "http", FIO_REFUSED, R_ENGOPT },
	{ "http_s3_sse_customer_algorithm", NULL, "http", FIO_REFUSED, R_ENGOPT },
	{ "http_s3_sse_customer_key", NULL, "http", FIO_REFUSED, R_ENGOPT },
	{ "http_s3_storage_class", NULL, "http", FIO_REFUSED, R_ENGOPT },
	{ "http_swift_auth_token", NULL, "http", FIO_REFUSED, R_ENGOPT },
	{ "http_user", NULL, "http", FIO_REFUSED, R_ENGOPT },
	{ "http_verbose", NULL, "http", FIO_REFUSED, R_ENGOPT },
	{ "https", NULL, "http", FIO_REFUSED, R_ENGOPT },
	{ "cmd_type", NULL, "io_uring", FIO_REFUSED, R_ENGOPT },
	{ "cmdprio", NULL, "io_uring/libaio", FIO_SUPPORTED, NULL },
	{ "cmdprio_bssplit", NULL, "io_uring/libaio", FIO_SUPPORTED, NULL },
	{ "cmdprio_class", NULL, "io_uring/libaio", FIO_SUPPORTED, NULL },
	{ "cmdprio_percentage", NULL, "io_uring/libaio", FIO_SUPPORTED, NULL },
	{ "fixedbufs", NULL, "io_uring", FIO_SUPPORTED, NULL },
	{ "force_async", NULL, "io_uring", FIO_SUPPORTED, NULL },
	{ "hipri", NULL, "io_uring/sg/sync/xnvme", FIO_REFUSED, R_ENGOPT },
	{ "nonvectored", NULL, "io_uring", FIO_REFUSED, R_ENGOPT },
	{ "nowait", NULL, "io_uring/libaio/sync", FIO_REFUSED, R_ENGOPT },
	{ "registerfiles", NULL, "io_uring", FIO_SUPPORTED, NULL },
	{ "sqthread_poll", NULL, "io_uring/xnvme", FIO_SUPPORTED, NULL },
	{ "sqthread_poll_cpu", NULL, "io_uring", FIO_REFUSED, R_ENGOPT },
	{ "uncached", NULL, "io_uring/sync", FIO_REFUSED, R_ENGOPT },
	{ "userspace_reap", NULL, "libaio", FIO_REFUSED, R_ENGOPT },
	{ "cuda_io", NULL, "libcufile", FIO_REFUSED, R_ENGOPT },
	{ "gpu_dev_ids", NULL, "libcufile", FIO_REFUSED, R_ENGOPT },
	{ "hdfs_use_direct", NULL, "libhdfs", FIO_REFUSED, R_ENGOPT },
	{ "hdfsdirectory", NULL, "libhdfs", FIO_REFUSED, R_ENGOPT },
	{ "hostname", NULL, "libhdfs/net/rdma", FIO_REFUSED, R_ENGOPT },
	{ "namenode", NULL, "libhdfs", FIO_REFUSED, R_ENGOPT },
	{ "port", NULL, "libhdfs/librpma/net/rdma", FIO_REFUSED, R_ENGOPT },
	{ "single_instance", NULL, "libhdfs", FIO_REFUSED, R_ENGOPT },
	{ "initiator", NULL, "libiscsi", FIO_REFUSED, R_ENGOPT },
	{ "busy_wait_polling", NULL, "librpma", FIO_REFUSED, R_ENGOPT },
	{ "direct_write_to_pmem", NULL, "librpma", FIO_REFUSED, R_ENGOPT },
	{ "serverip", NULL, "librpma", FIO_REFUSED, R_ENGOPT },
	{ "thp", NULL, "mmap", FIO_REFUSED, R_ENGOPT },
	{ "skip_bad", NULL, "mtd", FIO_REFUSED, R_ENGOPT },
	{ "uri", NULL, "nbd", FIO_REFUSED, R_ENGOPT },
	{ "interface", NULL, "net", FIO_REFUSED, R_ENGOPT },
	{ "listen", NULL, "net", FIO_REFUSED, R_ENGOPT },
	{ "mss", NULL, "net", FIO_REFUSED, R_ENGOPT },
	{ "nodelay", NULL, "net", FIO_REFUSED, R_ENGOPT },
	{ "pingpong", NULL, "net", FIO_REFUSED, R_ENGOPT },
	{ "protocol", NULL, "net", FIO_REFUSED, R_ENGOPT },
	{ "ttl", NULL, "net", FIO_REFUSED, R_ENGOPT },
	{ "window_size", NULL, "net", FIO_REFUSED, R_ENGOPT },
	{ "nfs_url", NULL, "nfs", FIO_REFUSED, R_ENGOPT },
	{ "busy_poll", NULL, "rados/rbd", FIO_REFUSED, R_ENGOPT },
	{ "clientname", NULL, "rados/rbd", FIO_REFUSED, R_ENGOPT },
	{ "clustername", NULL, "rados/rbd", FIO_REFUSED, R_ENGOPT },
	{ "conf", NULL, "rados", FIO_REFUSED, R_ENGOPT },
	{ "touch_objects", NULL, "rados", FIO_REFUSED, R_ENGOPT },
	{ "rbdname", NULL, "rbd", FIO_REFUSED, R_ENGOPT },
	{ "bindname", NULL, "rdma", FIO_REFUSED, R_ENGOPT },
	{ "verb", NULL, "rdma", FIO_REFUSED, R_ENGOPT },
	{ "readfua", NULL, "sg", FIO_REFUSED, R_ENGOPT },
	{ "sg_write_mode", NULL, "sg", FIO_REFUSED, R_ENGOPT },
	{ "stream_id", NULL, "sg", FIO_REFUSED, R_ENGOPT },
	{ "writefua", NULL, "sg", FIO_REFUSED, R_ENGOPT },
	{ "dummy", NULL, "external", FIO_REFUSED, R_ENGOPT },
	{ "hipri_percentage", NULL, "sync", FIO_REFUSED, R_ENGOPT },
	{ "no_completion_thread", NULL, "windowsaio", FIO_REFUSED, R_ENGOPT },
	{ "xnvme_admin", NULL, "xnvme", FIO_REFUSED, R_ENGOPT },
	{ "xnvme_async", NULL, "xnvme", FIO_REFUSED, R_ENGOPT },
	{ "xnvme_be", NULL, "xnvme", FIO_REFUSED, R_ENGOPT },
	{ "xnvme_dev_nsid", NULL, "xnvme", FIO_REFUSED, R_ENGOPT },
	{ "xnvme_iovec", NULL, "xnvme", FIO_REFUSED, R_ENGOPT },
	{ "xnvme_sync", NULL, "xnvme", FIO_REFUSED, R_ENGOPT },
	/* the options of fio's profiles (profiles/tiobench.c, act.c): fio
	 * takes them in any job file and ignores them without --profile= */
	{ "threads", NULL, "profile tiobench", FIO_MAPPED, R_PROFILE },
	{ "block", NULL, "profile tiobench", FIO_MAPPED, R_PROFILE },
	{ "numruns", NULL, "profile tiobench", FIO_MAPPED, R_PROFILE },
	{ "dir", NULL, "profile tiobench", FIO_MAPPED, R_PROFILE },
	{ "device-names", NULL, "profile act", FIO_MAPPED, R_PROFILE },
	{ "load", NULL, "profile act", FIO_MAPPED, R_PROFILE },
	{ "test-duration", NULL, "profile act", FIO_MAPPED, R_PROFILE },
	{ "threads-per-queue", NULL, "profile act", FIO_MAPPED, R_PROFILE },
	{ "read-req-num-512-blocks", NULL, "profile act", FIO_MAPPED, R_PROFILE },
	{ "large-block-op-kbytes", NULL, "profile act", FIO_MAPPED, R_PROFILE },
	{ "prep", NULL, "profile act", FIO_MAPPED, R_PROFILE },
};

/* Every engine fio 3.33 documents (HOWTO, ioengine=). */
#define E_URING_SYNC "dev=uring, iodepth=1 per job thread, each I/O a system call of the job's thread (uring_inline=always): a synchronous engine ignores iodepth, as in fio"
#define E_URING "dev=uring at the job's iodepth, issued as the driver chooses (uring_inline=auto: through the ring; inline where io_uring could only hand the I/O to a worker, as on tmpfs)"
#define E_POSIXAIO "dev=uring at the job's iodepth, on the pread/pwrite pool with one worker per job thread (uring_engine=pool, pool_threads=1): glibc's POSIX AIO does a file's requests one at a time on a helper thread"
#define E_NET "network or distributed storage: blkstack's media are its own block devices"
#define E_FILEOP "file-system operations, not block I/O"
#define E_PMEM "persistent memory mapped into the process, not block I/O"
#define E_OS "an engine of another operating system"

static const struct fio_engine fio_engine_table[] = {
	{ "sync", FIO_MAPPED, "uring", true, E_URING_SYNC },
	{ "psync", FIO_MAPPED, "uring", true, E_URING_SYNC },
	{ "vsync", FIO_MAPPED, "uring", true, E_URING_SYNC },
	{ "pvsync", FIO_MAPPED, "uring", true, E_URING_SYNC },
	{ "pvsync2", FIO_MAPPED, "uring", true, E_URING_SYNC },
	{ "libaio", FIO_MAPPED, "uring", false, E_URING },
	{ "io_uring", FIO_MAPPED, "uring", false, E_URING },
	{ "posixaio", FIO_MAPPED, "uring", false, E_POSIXAIO },
	{ "null", FIO_MAPPED, "null", false, "dev=null" },
	{ "cpp_null", FIO_MAPPED, "null", false,
	  "dev=null (fio's null engine built as C++)" },
	{ "solarisaio", FIO_REFUSED, NULL, false, E_OS },
	{ "windowsaio", FIO_REFUSED, NULL, false, E_OS },
	{ "mmap", FIO_REFUSED, NULL, false,
	  "memory-mapped I/O is page faults and copies, not block requests" },
	{ "splice", FIO_REFUSED, NULL, false,
	  "splice/vmsplice moves data through pipes, not block requests" },
	{ "netsplice", FIO_REFUSED, NULL, false, E_NET },
	{ "io_uring_cmd", FIO_REFUSED, NULL, false,
	  "NVMe passthrough to a character device (blkstack's emulated NVMe controller is --dev=nvme)" },
	{ "sg", FIO_REFUSED, NULL, false,
	  "SCSI generic passthrough (blkstack's SCSI stack is --dev=scsi)" },
	{ "libzbc", FIO_REFUSED, NULL, false, R_ZONE },
	{ "net", FIO_REFUSED, NULL, false, E_NET },
	{ "rdma", FIO_REFUSED, NULL, false, E_NET },
	{ "librpma_apm_client", FIO_REFUSED, NULL, false, E_NET },
	{ "librpma_apm_server", FIO_REFUSED, NULL, false, E_NET },
	{ "librpma_gpspm_client", FIO_REFUSED, NULL, false, E_NET },
	{ "librpma_gpspm_server", FIO_REFUSED, NULL, false, E_NET },
	{ "http", FIO_REFUSED, NULL, false, E_NET },
	{ "nbd", FIO_REFUSED, NULL, false,
	  "an NBD client (blkstack serves NBD: blkstack serve)" },
	{ "nfs", FIO_REFUSED, NULL, false, E_NET },
	{ "libiscsi", FIO_REFUSED, NULL, false, E_NET },
	{ "rados", FIO_REFUSED, NULL, false, E_NET },
	{ "rbd", FIO_REFUSED, NULL, false, E_NET },
	{ "gfapi", FIO_REFUSED, NULL, false, E_NET },
	{ "gfapi_async", FIO_REFUSED, NULL, false, E_NET },
	{ "libhdfs", FIO_REFUSED, NULL, false, E_NET },
	{ "dfs", FIO_REFUSED, NULL, false, E_NET },
	{ "ime_psync", FIO_REFUSED, NULL, false, E_NET },
	{ "ime_psyncv", FIO_REFUSED, NULL, false, E_NET },
	{ "ime_aio", FIO_REFUSED, NULL, false, E_NET },
	{ "cpuio", FIO_REFUSED, NULL, false, "burns CPU, does no I/O" },
	{ "exec", FIO_REFUSED, NULL, false, "runs a program, does no I/O" },
	{ "falloc", FIO_REFUSED, NULL, false, E_FILEOP },
	{ "ftruncate", FIO_REFUSED, NULL, false, E_FILEOP },
	{ "e4defrag", FIO_REFUSED, NULL, false, E_FILEOP },
	{ "filecreate", FIO_REFUSED, NULL, false, E_FILEOP },
	{ "filestat", FIO_REFUSED, NULL, false, E_FILEOP },
	{ "filedelete", FIO_REFUSED, NULL, false, E_FILEOP },
	{ "mtd", FIO_REFUSED, NULL, false, "raw flash (MTD) devices are not emulated" },
	{ "pmemblk", FIO_REFUSED, NULL, false, E_PMEM },
	{ "dev-dax", FIO_REFUSED, NULL, false, E_PMEM },
	{ "libpmem", FIO_REFUSED, NULL, false, E_PMEM },
	{ "libcufile", FIO_REFUSED, NULL, false, "GPU direct storage" },
	{ "xnvme", FIO_REFUSED, NULL, false,
	  "xNVMe's own NVMe stack (blkstack's emulated NVMe controller is --dev=nvme)" },
	{ "external", FIO_REFUSED, NULL, false,
	  "external engines are code loaded from a shared object" },
};

const struct fio_opt *fio_opts(size_t *n)
{
	*n = ARRAY_SIZE(fio_opt_table);
	return fio_opt_table;
}

const struct fio_opt *fio_opt_find(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fio_opt_table); i++)
		if (!strcmp(fio_opt_table[i].name, name) ||
		    (fio_opt_table[i].alias &&
		     !strcmp(fio_opt_table[i].alias, name)))
			return &fio_opt_table[i];
	return NULL;
}

const char *fio_opt_why(const struct fio_opt *f, char *buf, size_t len)
{
	static const char *const mapped[] = { "io_uring", "libaio", "sync" };
	size_t i, n;

	if (f->what)
		return f->what;
	/* engines/sync.c holds the options of psync, pvsync and pvsync2 */
	for (i = 0; i < ARRAY_SIZE(mapped); i++) {
		n = strlen(mapped[i]);
		if (!strncmp(f->engines, mapped[i], n) &&
		    (!f->engines[n] || f->engines[n] == '/'))
			break;
	}
	if (i < ARRAY_SIZE(mapped))
		snprintf(buf, len,
			 "an option of ioengine=%s that blkstack's uring driver does not implement",
			 f->engines);
	else
		snprintf(buf, len,
			 "an option of ioengine=%s, an engine blkstack refuses",
			 f->engines);
	return buf;
}

const struct fio_engine *fio_engines(size_t *n)
{
	*n = ARRAY_SIZE(fio_engine_table);
	return fio_engine_table;
}

const struct fio_engine *fio_engine_find(const char *name)
{
	size_t i;

	/* "external:/path/engine.so" and fio's "external" alike */
	if (!strncmp(name, "external:", 9))
		name = "external";
	for (i = 0; i < ARRAY_SIZE(fio_engine_table); i++)
		if (!strcmp(fio_engine_table[i].name, name))
			return &fio_engine_table[i];
	return NULL;
}

const char *fio_status_name(enum fio_opt_status s)
{
	switch (s) {
	case FIO_SUPPORTED:
		return "supported";
	case FIO_MAPPED:
		return "mapped";
	case FIO_REFUSED:
		return "refused";
	}
	return "?";
}
