/* SPDX-License-Identifier: MIT */
/*
 * Sparse page store for memory-backed devices (ram, null memory_backed).
 * Memory follows the data written, whatever the pattern, and a first
 * write, random or not, costs a copy rather than a fault or a 2 MiB clear.
 *
 * Index: a leaf maps 64 consecutive 4 KiB pages (256 KiB of the device)
 * and is 64 32-bit page numbers (256 bytes), made on the first write into
 * its range and kept until ps_destroy().  Leaves hang from a radix tree of
 * 4 KiB tables of 512 pointers made on demand: a top array (one pointer
 * per 64 GiB of capacity, an anonymous mapping: the kernel commits only
 * the parts written), a table per 64 GiB, a table of leaves per 128 MiB.
 * A lone 4 KiB write costs 4 KiB of data, one leaf (272 bytes with
 * malloc's header) and at most two tables.  The index's address space is
 * 8 bytes per 64 GiB of capacity plus a bit: 128 MiB for the largest
 * device, 1 EiB.  (A flat array of leaf pointers, the index before this
 * one, needed 32 TiB of address space for 1 EiB and 32 GiB for 1 PiB,
 * which a machine with a smaller address space or a limit on it refused.
 * The two more loads are L1 hits: a device up to 64 GiB has one top entry
 * and one table above its tables of leaves, which hold what the flat
 * array held.  ps_rw() alone, one thread, 1 GiB filled, random 4 KiB,
 * medians of 8 interleaved runs: read 403 ns vs 426 flat, write 236 vs
 * 251: within this VM's noise.)  A bit per top entry says which are
 * set, so that closing, discard and block status walk the data written,
 * not the capacity (a 1 PiB device took 32 s to close, and block status
 * over it 18 s, walking every slot).
 *
 * Pages: carved, in the order of first write, from one virtual region
 * reserved at ps_init() (MAP_NORESERVE: address space only; as large as
 * the device, but no larger than RAM + swap, which is all that could ever
 * be committed) and committed PS_SLAB_SIZE at a time with one
 * madvise(MADV_POPULATE_WRITE), under a mutex per store that is held only
 * to take a page.  Memory committed and not yet handed out: at most one
 * slab.
 *
 * Free (discard, write zeroes of whole pages): the page is unlinked from
 * its leaf (an exchange), and after an RCU grace period, that is once every
 * copy that may have loaded the pointer is over, given back to the kernel
 * with madvise(MADV_DONTNEED) (adjacent pages in one call) and only then
 * put on the allocator's free list.  Pages on the free list are taken
 * before new slab pages, so the region never needs more than the capacity
 * plus PS_SLAB_SLACK slabs; a reused page faults in a fresh zero page on
 * its next write, so it can never show a reader another block's old data
 * and a partial write into it needs no clearing.  DONTNEED at once rather
 * than a pool of committed free pages: a discard must shrink the process.
 *
 * Reads of never-written pages copy zeros and allocate nothing.
 *
 * Concurrency: every ps_* call but ps_init()/ps_destroy() may run on any
 * number of threads at once.  Copies run inside an RCU read-side section
 * (liburcu-bp: threads register themselves on first use; with the
 * membarrier system call the read side is two plain stores and no atomic
 * instruction, the discard side pays with a membarrier).  Page pointers are
 * installed with a compare-and-swap (two first writes racing for one page:
 * the loser frees its page and copies into the winner's), leaves likewise.
 *
 * Measured (2-vCPU AMD EPYC VM, kernel 6.18, a shared and busy machine:
 * medians of interleaved rounds; CPU ns/I/O from the bench's usr+sys):
 *  - 4 KiB random writes at QD32 to a new 1 GiB device, 1 s, 5 rounds:
 *    this store 2.24M IOPS (424 CPU ns/I/O); the old one, a 2 MiB chunk
 *    populated on the first write into it, 1.30M (710 ns), and 0.9-0.3K
 *    when the kernel's pages are cold (the chunk design commits all 1 GiB
 *    in the first ~512 random writes; this one 4 KiB per write).  With
 *    the final store, 3 s rounds (bench/ram-memory.sh): 2.59M vs 1.97M.
 *  - The read side: a reader-writer lock per leaf instead of RCU, 1.29M
 *    (666 ns); over a filled device, CPU ns per random 4 KiB write: no
 *    lock at all (unsafe) 243, RCU 231, rwlock 266, old 317.  The lock's
 *    atomic after the copy waits for the copy's stores to drain.
 *  - ps_rw() alone, one thread, 1 GiB filled, ns per random 4 KiB
 *    write / read (7 rounds): 32-bit page numbers 261 / 494, pointers
 *    279 / 529, old store 381 / 459.  The read left behind the old store
 *    is the leaf: one more dependent cache miss before the data (the old
 *    index for 1 GiB was 64 KiB; this one is 1 MiB), and the RCU calls.
 *  - No populate (a page fault on each first write): 0.99M (834 ns).
 *  - A transparent huge page per slab (MADV_HUGEPAGE) is 6x cheaper to
 *    commit than 512 small pages when the kernel has huge pages to give:
 *    188-295 ns per 4 KiB (a microbenchmark, 1 GiB in 2 MiB populates)
 *    against 1.2 us, and 4 KiB first writes (every block once, random
 *    order, new 1 GiB device) then reach 2.3-2.7M IOPS against 0.6-0.7M.
 *    But a huge page the guest never touched before costs the hypervisor
 *    7.8 us per 4 KiB here (0.10-0.25M IOPS), and with defrag=madvise a
 *    fragmented machine compacts memory before giving one.  So each slab
 *    is committed the way that has cost less lately: huge or small, by an
 *    average of each kind's populate time, the dearer kind tried again
 *    after PS_THP_EXPLORE slabs, then twice as far each time it is still
 *    dearer (up to PS_THP_EXPLORE_MAX).  On this VM, where huge pages are
 *    warm only after another huge-page user freed them, first writes of a
 *    new 1 GiB device measured 0.64-0.78M IOPS this way against 0.63-0.67M
 *    with small pages only, and 2.3-2.7M when huge pages are warm.  A
 *    discarded 4 KiB page of a huge page leaves the process's resident set
 *    at once (the huge page is split in the page table); the kernel frees
 *    its memory when it splits the page itself, under memory pressure.
 *    A refused MADV_HUGEPAGE (vm.max_map_count: each change of kind splits
 *    the mapping) leaves small pages only.
 *  - The kernel's own cost: ~1.2 us per small 4 KiB page committed,
 *    populate or fault alike (a microbenchmark, warm), several times that
 *    when the hypervisor must back the memory first.  It bounds first-write
 *    IOPS: 0.68M first writes against 1.93M random reads of written data
 *    (0.35x) with small pages; warm huge pages lift it past the reads.
 *    (randread of a new device copies zeros from no memory: 17M IOPS.)
 *  - Pre-committing the whole device at create (a "prefill") would remove
 *    that cost from the first writes but commit the capacity: rejected.
 *  - Memory: 2048 4 KiB writes 2 MiB apart (8 MiB) to a 4 GiB device over
 *    NBD: server RSS +8.9 MiB (old store: +4 GiB; nbdkit memory: +18 MiB).
 *    bench/ram-memory.sh prints these.
 */
#ifndef BLKSTACK_PAGE_STORE_H
#define BLKSTACK_PAGE_STORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "blkstack/lock.h"
#include "blkstack/blk_mq.h"

#define PS_PAGE_SHIFT 12
#define PS_PAGE_SIZE (1u << PS_PAGE_SHIFT)
#define PS_LEAF_SHIFT 6 /* pages per leaf: 64 */
#define PS_LEAF_PAGES (1u << PS_LEAF_SHIFT)
/* pointers per index table: 512 (4 KiB) */
#define PS_TBL_SHIFT 9
#define PS_TBL_SLOTS (1u << PS_TBL_SHIFT)
/* leaves under one top entry: 512 x 512 (64 GiB of the device) */
#define PS_TOP_SHIFT (2 * PS_TBL_SHIFT)
/* the largest capacity: 1 EiB (its top array: 128 MiB of address space) */
#define PS_MAX_CAPACITY (1ull << 60)
#define PS_SLAB_SHIFT 9 /* pages per populate call: 512 (2 MiB) */
#define PS_SLAB_SIZE (1ul << (PS_PAGE_SHIFT + PS_SLAB_SHIFT))
/* slabs between two tries of the kind of page that lately cost more: 16,
 * doubling while it stays dearer, up to 1024 */
#define PS_THP_EXPLORE 16
#define PS_THP_EXPLORE_MAX 1024
/* Slabs reserved beyond the capacity: pages in flight between a discard
 * and the free list, and pages lost in install races, are not reusable for
 * a moment. */
#define PS_SLAB_SLACK 64

/* A page is named by its number in the region plus one (0: no page):
 * 4 bytes rather than a pointer halve the index a random read misses in. */
struct ps_leaf {
	_Atomic uint32_t page[PS_LEAF_PAGES];
};

/* An index table: under a top entry, 512 tables of leaves; in a table of
 * leaves, 512 leaves. */
struct ps_table {
	_Atomic(void *) slot[PS_TBL_SLOTS];
};

/* The page allocator: guarded by @lock, except the counters, which are
 * written under it and read without it (relaxed). */
struct ps_alloc {
	struct blk_mutex lock;
	char *next;                     /* next page never handed out */
	char *populated;                /* end of the committed part */
	uint32_t *free;                 /* freed pages, uncommitted */
	size_t nr_free, free_cap;
	_Atomic uint64_t nr_free_pub;   /* nr_free, for readers */
	_Atomic uint64_t committed_end; /* populated - region, bytes */
	_Atomic uint64_t free_high;     /* bytes of @free ever written */
	/* ps_slab_commit(): huge or small pages, whichever costs less */
	uint64_t avg_thp_ns, avg_small_ns; /* recent time to commit a slab */
	uint64_t nr_slabs;
	uint64_t explore_every, explore_at; /* when to try the dearer kind */
	uint64_t thp_slabs, small_slabs; /* slabs committed each way */
	bool thp_broken;                /* MADV_HUGEPAGE refused: small only */
};

struct page_store {
	uint64_t capacity;              /* bytes */
	uint64_t nr_leaves;
	_Atomic(struct ps_table *) *top; /* one per 64 GiB: ps_table of tables */
	uint64_t nr_top;
	_Atomic uint64_t *top_map;      /* a bit per set @top entry */
	uint64_t top_words;
	char *region;                   /* page region, PS_SLAB_SIZE aligned */
	char *region_end;
	void *map;                      /* the mapping region lies in */
	size_t map_len;
	struct ps_alloc alloc;
	_Atomic uint64_t nr_pages;      /* pages holding data */
	_Atomic uint64_t nr_leaf_bytes; /* leaves and tables, with malloc's header */
	_Atomic uint64_t nr_top_made;   /* @top entries set */
};

/**
 * ps_init() - an empty store of @capacity bytes; reserves address space
 * for it, commits nothing but the top array's first use.
 * Return: 0, -EINVAL for capacity 0, -EFBIG above PS_MAX_CAPACITY, -ENOMEM
 * (the address space for the index or the page region was refused).
 * Context: any thread.
 */
int ps_init(struct page_store *ps, uint64_t capacity);
/** ps_destroy() - free every page, leaf and table.  No I/O may be in
 * progress.  Cost: the tables made, not the capacity. */
void ps_destroy(struct page_store *ps);
/**
 * ps_rw() - copy between the store and an iovec array.
 * @write: 1 to store the iovecs' data at @offset, 0 to read into them.
 * @offset, @len: bytes, within capacity (the caller checked).
 * Return: 0 or -ENOMEM (no page or leaf could be allocated for a write;
 * the part before it was written).
 * Context: any thread, concurrently with any other ps_* call but
 * ps_destroy().
 */
int ps_rw(struct page_store *ps, int write, uint64_t offset, uint64_t len,
	  const struct iovec *iov, unsigned int iovcnt);
/**
 * ps_zero() - discard or write zeroes of [@offset, @offset + @len) bytes:
 * free whole pages (their memory goes back to the kernel), zero partial
 * ones in place.
 * Return: 0.
 * Context: any thread.
 */
int ps_zero(struct page_store *ps, uint64_t offset, uint64_t len);
/**
 * ps_rq_rw() - ps_rw() for every bio of a READ or WRITE request.
 * Return: 0 or -ENOMEM.
 * Context: any thread.
 */
int ps_rq_rw(struct page_store *ps, struct request *rq);
/**
 * ps_allocated() - whether the page holding byte @offset holds data.
 * Return: 1 or 0.
 * Context: any thread (a relaxed read).
 */
int ps_allocated(struct page_store *ps, uint64_t offset);

/**
 * ps_block_status() - allocation map of [@offset, @offset + @len) at page
 * granularity: written pages are data (flags 0), others BLK_EXTENT_HOLE |
 * BLK_EXTENT_ZERO.  Range checked by the caller.
 * Return: extents filled, 1..@nr_ext.
 * Context: any thread (relaxed reads of the leaves).
 */
int ps_block_status(struct page_store *ps, uint64_t offset, uint64_t len,
		    struct blk_extent *ext, unsigned int nr_ext);

/**
 * ps_data_bytes() - bytes of pages holding data (4 KiB per written page).
 * Context: any thread; a relaxed read, exact when no I/O is in progress.
 */
uint64_t ps_data_bytes(struct page_store *ps);

/**
 * ps_committed_bytes() - memory the store has made the kernel commit, in
 * bytes: populated slab pages not given back, the leaves and index tables
 * (with malloc's per-allocation header), the free list's array and the top
 * array and its bitmap (a page of each per top entry set, at most their
 * size).
 * Context: any thread; relaxed reads, exact when no I/O is in progress.
 */
uint64_t ps_committed_bytes(struct page_store *ps);

#endif /* BLKSTACK_PAGE_STORE_H */
