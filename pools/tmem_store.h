/* SPDX-License-Identifier: MIT */
/*
 * The page store: clients, pools, objects and pages in a host memory
 * arena.  A library with no I/O: it never logs, never exits, and knows
 * nothing of transports, sockets or JSON.  Every function returns the
 * Xen value documented in tmem(7) (man/tmem.7, SEMANTICS) or a negative
 * errno.  Its functions
 * are store_*; tmem_* functions are libtmem's (guest-shim/libtmem/tmem.h),
 * the guests' side of the same ops.
 *
 * Ownership: the store owns clients; a client owns its private pools;
 * shared pools are owned by the store and refcounted by their sharers
 * (they belong to the built-in "shared" client for accounting and
 * eviction, see store_shared_client()).
 *
 * Thread safety: every function may be called from any thread at once,
 * on the same or different pools, except that a client must not be used
 * after (or while) store_client_destroy() runs on it.  The lock order is
 * written next to the structs in pools/internal.h; what is kept in
 * the arena file is pools/durable.h, and the order it is written in
 * pools/COMMIT.md.
 *
 * Admission and eviction choices are not made here: policy/ decides when
 * to evict whom and which caps apply, and calls the hooks below.
 */
#ifndef TMEM_STORE_H
#define TMEM_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tmem_compress.h"
#include "tmem_proto.h"

struct tmem_store;
struct tmem_client;

#define TMEM_CLIENT_NAME_MAX 64   /* bytes, including the NUL */
#define TMEM_MAX_POOLS_PER_CLIENT 32
#define TMEM_MAX_SHARED_POOLS 64
#define TMEM_MAX_CLIENTS 8192     /* clients at once, the shared one included */
#define TMEM_NO_CAP UINT64_MAX

/*
 * Compression, per client (store_client_set_compress()).  OFF stores every
 * page raw, as tmemd did before compression.  LZ4 and ZSTD also store
 * same-filled pages (every 8-byte word equal) as their word, with no data
 * frame, and pages that compress to more than the store's threshold raw.
 * The setting and its text form are proto/tmem_compress.h's, the one
 * grammar tmemd.conf, the control protocol and tmemctl share; these are
 * its errno forms for the daemon.
 */
/* Whether algo and level go together (LZ4 and OFF: level 0). */
bool store_compress_valid(const struct tmem_compress *cz);
/* tmem_compress_parse(): 0, or -EINVAL. */
int store_compress_parse(const char *text, struct tmem_compress *out);
/* The same text back, in buf ("zstd:3"). */
const char *store_compress_format(const struct tmem_compress *cz, char *buf, size_t len);

struct tmem_store_config {
	uint64_t arena_bytes;     /* pool size; rounded down to whole pages */
	uint64_t max_arena_bytes; /* address space reserved for growing; 0 = arena_bytes */
	bool lock_memory;         /* mlock() the arena */
	bool prefault;            /* touch every arena page at create time */
	/* Free frames kept resident ahead of the puts by a thread of the
	 * store's own (pools/warm.c), so a put after an idle spell does not
	 * take the first touch; at most what store_release_cold() keeps.
	 * 0: none (every first touch in the put that needs the frame). */
	uint32_t warm_frames;
	/* New clients' compression until store_client_set_compress(). */
	struct tmem_compress compress;
	/* A page compressed to more bytes than this is stored raw;
	 * 0 = 3072 (3 KiB); at most 4088. */
	uint32_t compress_threshold;
	/* Optional: asked while store_create() or store_open() works (every
	 * 64 MiB of prefaulting, and before an adopted arena's records are
	 * read); true gives up with -ECANCELED, the file's records as they
	 * were (a daemon told to stop during its start).  Not kept after. */
	bool (*should_stop)(void *ctx);
	void *stop_ctx;
	/* The host tier (pools/COMMIT.md, "Host tier"): a file or block
	 * device open read-write (the store uses it, does not own it), and
	 * its size in bytes, header included, whole pages.  tier_bytes 0:
	 * no tier (tier_fd is not looked at). */
	int tier_fd;
	uint64_t tier_bytes;
	/* The victim order: false (the default) oldest put first with a
	 * second chance for a page got since the last pass; true, oldest
	 * put first only (make bench-spill compares the two). */
	bool spill_fifo;
};

/* A store in anonymous memory: nothing in it outlives the process. */
int store_create(const struct tmem_store_config *cfg,
		 struct tmem_store **out);

/*
 * A store that outlives the process: its frames and every record needed
 * to find a page live in the file fd (a memfd, or a file on tmpfs or
 * hugetlbfs), mapped shared.  The store keeps using fd but does not own
 * it (the caller closes it after store_destroy()).
 *
 * An empty file is formatted to hold cfg->max_arena_bytes.  A file that
 * holds an arena is adopted: the header is checked (magic, layout
 * version, page size, geometry, checksum) and the clients, pools and
 * pages are rebuilt from the records (pools/COMMIT.md), then the arena is
 * resized to cfg->arena_bytes if that fits.  The adopted clients are
 * detached until claimed (store_client_claim()).  Shared pools are not
 * kept: their pages are ephemeral and their sharers rejoin.
 *
 * Refusals change nothing in the file: -EPROTO a layout version this
 * build does not know, -EBADMSG a damaged or foreign header (bad magic,
 * checksum, geometry, or a file shorter than its geometry), -EINVAL bad
 * arguments, else -errno from mmap.  With a host tier (cfg->tier_bytes)
 * the tier is checked against the arena first, and a refusal of it
 * (-EBADMSG, -EPROTO, -EINVAL, or the -errno of its I/O) has a why that
 * starts "host tier: " (pools/COMMIT.md, "Host tier", Start).  why (may
 * be NULL) gets a sentence
 * for the admin on -EPROTO and -EBADMSG.
 *
 * store_destroy() on such a store frees the process's memory only:
 * every client, pool and page stays in the file for the next open.
 */
int store_open(const struct tmem_store_config *cfg, int fd,
	       struct tmem_store **out, char *why, size_t why_len);

/* What the last store_open() found. */
struct tmem_recovery_info {
	bool file_backed;          /* in a file: survives the process */
	bool adopted;              /* false: a new or anonymous arena */
	uint64_t wall_usec;        /* CLOCK_REALTIME at the end of recovery */
	uint64_t duration_nsec;    /* time spent rebuilding */
	uint64_t pages;            /* pages kept, by kind below */
	uint64_t persistent_pages;
	uint64_t ephemeral_pages;
	uint64_t pages_dropped;    /* invalid or unpublished descriptors freed */
	uint32_t clients;          /* detached clients recovered */
	uint32_t pools;            /* private pools recovered */
	uint64_t starts;           /* times this arena has been adopted */
};
void store_recovery_info(const struct tmem_store *store,
			 struct tmem_recovery_info *out);
/* Frees everything.  Accepts NULL. */
void store_destroy(struct tmem_store *store);

/*
 * Clients.  name is the client's principal in canonical text
 * (proto/tmem_names.h): "domid:N" for Xen domain N, else a local
 * client's name; shared-pool authorisations match on it.  It is copied.
 * -EINVAL for a NULL or empty name or one of TMEM_CLIENT_NAME_MAX bytes
 * or more; -EEXIST when a live client (or the built-in "shared") has it.
 */
int store_client_create(struct tmem_store *store, const char *name,
			struct tmem_client **out);

/*
 * Who a client is beyond its name, kept with it across restarts: a Xen
 * domain's handle, a local client's session token.  Opaque to the store.
 */
#define TMEM_IDENT_LEN 32
struct tmem_ident {
	uint8_t b[TMEM_IDENT_LEN];
};
/* store_client_create() with an identity (NULL: all zero).  A detached
 * client of that name is destroyed first: a newcomer starts fresh. */
int store_client_create_ident(struct tmem_store *store, const char *name,
			      const struct tmem_ident *ident,
			      struct tmem_client **out);
/*
 * Take back a client recovered by store_open(), with its pools,
 * their ids and pages.  0 and *out; -ENOENT no detached client has that
 * name; -EPERM one has, with another identity (it stays detached).
 */
int store_client_claim(struct tmem_store *store, const char *name,
		       const struct tmem_ident *ident,
		       struct tmem_client **out);
void store_client_ident(const struct tmem_client *client, struct tmem_ident *out);
/*
 * Change c's identity in its record, byte 0 last: a migration stages an
 * incoming client under an identity no guest has and makes it the
 * guest's with one store of that byte (man/tmem.7, "Migration between
 * hosts").  Killed before that store, the client is still the staged one.
 */
void store_client_set_ident(struct tmem_client *c, const struct tmem_ident *ident);
/*
 * Leave c detached instead of destroying it: the caller is going away,
 * not the client (tmemd stopping).  It can be claimed again, here or
 * after the next store_open(); store_destroy() frees it.
 */
void store_client_detach(struct tmem_client *c);
/*
 * Detached clients: call fn for each (name, identity) under the store
 * lock (fn must not call into the store).  store_drop_detached()
 * destroys the one called name (-ENOENT none), or with name NULL every
 * one left, returning how many.
 */
int store_for_each_detached(struct tmem_store *store,
			    int (*fn)(const char *name,
					   const struct tmem_ident *ident,
					   void *ctx),
				 void *ctx);
int store_drop_detached(struct tmem_store *store, const char *name);
struct tmem_page_counts;
/* The pages charged to the detached client called name: 0, -ENOENT. */
int store_detached_page_counts(struct tmem_store *store, const char *name,
			       struct tmem_page_counts *out);
/* Frees every private pool and drops its shared-pool refs.  Accepts NULL. */
void store_client_destroy(struct tmem_client *client);
uint32_t store_client_id(const struct tmem_client *client);
/* How c's later puts are stored; pages already stored stay as they are.
 * -EINVAL for a bad algo or level.  Not kept in the arena: the caller
 * sets it again on a claimed client. */
int store_client_set_compress(struct tmem_client *c, const struct tmem_compress *cz);
void store_client_get_compress(const struct tmem_client *c, struct tmem_compress *out);
const char *store_client_name(const struct tmem_client *client);
/* The built-in client that owns all shared pools' pages. */
struct tmem_client *store_shared_client(struct tmem_store *store);

/*
 * The guest ops, with Xen's semantics (tmem(7), SEMANTICS).
 *
 * store_new_pool: flags as in TMEM_POOL_*; uuid is read only for SHARED.
 * Returns the pool id (>= 0), -EINVAL for bad flags, -EPERM for a shared
 * pool the client is not authorised for, -ENOSPC when the client has
 * TMEM_MAX_POOLS_PER_CLIENT pools (or the store TMEM_MAX_SHARED_POOLS,
 * or 16384 pools in all).  Joining a shared pool the client already
 * holds returns the same id.  Pool ids are per-client handles (the
 * lowest free one is used), so no client can name another's pool.
 */
int store_new_pool(struct tmem_client *c, uint32_t flags,
		   const struct tmem_uuid *uuid);
/* 1 destroyed (a shared pool: this client's reference dropped, the pool
 * goes with the last one); -ENOENT no such pool id; -EINVAL NULL client. */
int store_destroy_pool(struct tmem_client *c, int32_t pool_id);

/*
 * What policy/ hands a put, so that the store answers it under one
 * pool lock, asking nothing back: both caps (the store picks the one of
 * the pool's kind) and which refusals policy/ will retry after evicting.
 * A refusal not in retry is the put's last word: the store counts it
 * (puts, failed_puts[reason]) under the same lock.
 */
#define TMEM_PUT_RETRY_FULL 1u      /* -ENOSPC: evict anyone's ephemeral pages */
#define TMEM_PUT_RETRY_OWN 2u       /* -EDQUOT in an ephemeral pool with a cap
				     * above 0: evict the client's own pages */
#define TMEM_PUT_RETRY_QUOTA 4u     /* any other -EDQUOT */
#define TMEM_PUT_RETRY_ALL 7u       /* count no refusal */
struct tmem_put_args {
	uint64_t ephemeral_max;     /* pages, TMEM_NO_CAP for none */
	uint64_t persistent_max;
	unsigned int retry;         /* TMEM_PUT_RETRY_* */
};

/*
 * Store one page under the cap args give for the pool's kind: the most
 * pages of that kind the charged client may hold.  Returns 1 stored;
 * -EDQUOT over cap; -ENOSPC no free arena page; -ENOENT no such pool;
 * -EINVAL bad argument.  On -EDQUOT and -ENOSPC an existing page at that
 * handle has been removed (put-put-get coherency).  A put that replaces
 * an existing page never fails on the cap, since it does not grow the
 * charge (with the raw allocator it never fails at all: the data is
 * replaced in place).  The charge is taken atomically, so racing puts
 * never take a client past cap.
 * Counting: a stored page counts in puts and succ_puts; a refusal that
 * args->retry does not name counts in puts and failed_puts (quota or
 * full), and the return is then 0 (refused, counted) rather than -EDQUOT
 * or -ENOSPC.  One pool lock in all.
 */
int store_put_page(struct tmem_client *c, int32_t pool_id,
		   const struct tmem_oid *oid, uint32_t index,
		   const void *src, const struct tmem_put_args *args);
/*
 * A page as stored (transfer.c), to move it to another store without
 * decoding it: codec is TMEM_CODEC_NONE (len 4096), TMEM_CODEC_LZ4 or
 * TMEM_CODEC_ZSTD (len bytes of compressed data), or TMEM_STORED_SAME
 * (a page filled with word; no bytes).  bytes stays valid only for the
 * callback it is given to.
 */
#define TMEM_STORED_SAME 0xffu
struct tmem_stored_page {
	struct tmem_oid oid;
	uint32_t index;
	uint32_t len;
	uint8_t codec;
	uint64_t word;
	const void *bytes;
};
/* Where an export stopped; all zero to start.  done: nothing left. */
struct tmem_export_cursor {
	uint32_t bucket, obj, page, done;
};
/*
 * Calls fn for each page of the pool from cur on, with the pool locked
 * (fn must only copy).  fn returns 0 to go on, non-zero to stop: that
 * page is the first one given next time.  The cursor is only good while
 * nobody changes the pool (a parked client).  0 (cur->done says whether
 * it finished), fn's negative return, -ENOENT no such pool, -EIO a page
 * whose bytes do not check out, -EINVAL.
 */
int store_export_pages(struct tmem_client *c, int32_t pool_id,
		       struct tmem_export_cursor *cur,
		       int (*fn)(void *ctx, const struct tmem_stored_page *p), void *ctx);
/*
 * Puts a page given as stored, as store_put_page() does a guest's, after
 * checking that it decodes to a whole page: -EBADMSG when it does not
 * (nothing is changed).
 */
int store_import_page(struct tmem_client *c, int32_t pool_id,
		      const struct tmem_stored_page *p, const struct tmem_put_args *args);
/* The check alone: 0, or -EBADMSG (-EINVAL for NULL). */
int store_stored_page_check(const struct tmem_stored_page *p);
/* store_import_page() of a page store_stored_page_check() passed (its
 * bytes unchanged since): only the fields are checked again. */
int store_import_checked(struct tmem_client *c, int32_t pool_id,
			 const struct tmem_stored_page *p, const struct tmem_put_args *args);
/* Both caps cap, every refusal left to the caller (tests, benchmarks). */
#define TMEM_PUT_CAP(cap) \
	(&(const struct tmem_put_args){ .ephemeral_max = (cap), .persistent_max = (cap), \
					.retry = TMEM_PUT_RETRY_ALL })
/* 1 hit (page copied to dst), 0 miss, -errno.  Exclusive on private ephemeral pools.
 * A page in the host tier is read back before it returns (on this thread). */
int store_get_page(struct tmem_client *c, int32_t pool_id,
		   const struct tmem_oid *oid, uint32_t index, void *dst);
/*
 * store_get_page() in two halves, so that a read-back from the host tier
 * need not hold up the caller's thread: store_get_page_start() returns
 * as store_get_page() does, except for a page in the tier, where it
 * returns TMEM_GET_READBACK with *rb filled (the get counted, the
 * tier's space pinned, no lock held) and nothing yet in dst; then
 * store_readback_finish(rb, dst), from any thread, exactly once, reads
 * it: 1, or -EIO when the bytes do not check out.  c must not be
 * destroyed in between.  The page read is the one there at the start,
 * whatever a flush or a put does to the handle meanwhile.
 */
#define TMEM_GET_READBACK 2
struct tmem_readback {
	struct tmem_store *store;
	struct tmem_client *owner;
	uint64_t te;               /* where the page is (pools/durable.h) */
	uint32_t page;
	uint64_t t0;               /* CLOCK_MONOTONIC ns at the start: the latency */
};
int store_get_page_start(struct tmem_client *c, int32_t pool_id,
			 const struct tmem_oid *oid, uint32_t index, void *dst,
			 struct tmem_readback *rb);
int store_readback_finish(struct tmem_readback *rb, void *dst);
/* store_readback_finish() if it need not wait for the device (the bytes
 * are in the page cache: preadv2 RWF_NOWAIT); -EAGAIN, nothing done,
 * when it would: then store_readback_finish() as before. */
int store_readback_try(struct tmem_readback *rb, void *dst);
/* 1 a page was removed, 0 none, -errno. */
int store_flush_page(struct tmem_client *c, int32_t pool_id,
		     const struct tmem_oid *oid, uint32_t index);
/* 1 the object existed and was removed, 0 none, -errno. */
int store_flush_object(struct tmem_client *c, int32_t pool_id,
		       const struct tmem_oid *oid);

/*
 * Shared-pool authorisation, deny by default.  principal is canonical
 * principal text (proto/tmem_names.h: "uuid:U", "domid:N" or a name);
 * the client whose name (its key) is that principal may join, matched by
 * kind and uuid, domid or name.  A grant to another of a domain's names
 * (its xl name, its domid) reaches it because the daemon authorises its
 * key as well (daemon/control_glue.c).  Revoking stops future joins; a client that already
 * joined keeps its reference until it leaves.  Returns 0, -EINVAL for a
 * text that is not a canonical principal, or -ENOSPC when the
 * authorisation table is full.
 */
int store_shared_auth(struct tmem_store *store, const struct tmem_uuid *uuid,
		      const char *principal, bool allow);

#define TMEM_MAX_SHARED_AUTH 256 /* (uuid, principal) pairs in the store */

struct tmem_shared_pool_info {
	struct tmem_uuid uuid;
	uint32_t sharers;          /* clients holding a reference */
	uint64_t pages;
	uint64_t objects;
	uint32_t nr_principals;    /* principals authorised for this uuid (canonical text) */
	const char *principals[TMEM_MAX_SHARED_AUTH];
};

/*
 * Stats iterators, for the daemon's control server.  Each calls fn with
 * the store lock held, so fn must not call into the store; the strings
 * are valid during the call only.  They stop at and return fn's first
 * non-zero; -EINVAL for a NULL store or fn, -ENOMEM.
 * for_each_shared_auth also lists authorisations for pools that do not
 * exist (yet).
 */
int store_for_each_shared_pool(struct tmem_store *store,
			       int (*fn)(const struct tmem_shared_pool_info *, void *),
			       void *ctx);
int store_for_each_shared_auth(struct tmem_store *store,
			       int (*fn)(const struct tmem_uuid *, const char *, void *),
			       void *ctx);

/*
 * Hooks for policy/.
 *
 * store_client_evict_oldest: remove the LRU-oldest ephemeral page the
 * client is charged for.  Returns 1 evicted, 0 nothing evictable (or
 * every candidate was busy).  Never touches persistent pages.  It holds
 * the client's LRU lock and only trylocks the victim's pool, skipping
 * pages whose pool is busy (up to 32), so it cannot deadlock with puts
 * and gets on the victim's pools; the price is that LRU order is
 * approximate under contention.  Safe to call from any thread, but not
 * while holding anything of the store's.
 */
int store_client_evict_oldest(struct tmem_client *c);
/*
 * For policy/: up to n ephemeral pages of detached clients (see
 * store_client_claim()), oldest first within each.  Their owners are
 * away, so their pages go before anyone's.  Returns how many went.
 * Safe to call from any thread, holding nothing of the store's.
 */
unsigned int store_evict_detached(struct tmem_store *store, unsigned int n);
/*
 * For policy/: the same, for up to n pages in one call, holding the
 * LRU lock throughout and each victim pool's lock across its run of
 * consecutive LRU pages, so a batch pays the locks about once.  Returns
 * how many were evicted (fewer than n when nothing more is evictable or
 * 32 candidates were busy).
 */
unsigned int store_client_evict_oldest_n(struct tmem_client *c, unsigned int n);
/*
 * The same for an administrator's flush (tmemctl flush): the pages go
 * the same way, but count as admin_flushes, not evictions, so the
 * evictions stay a signal of memory pressure.
 */
unsigned int store_client_admin_flush_n(struct tmem_client *c, unsigned int n);

/*
 * 1 when pool_id is a persistent pool of c, 0 when an ephemeral one,
 * -ENOENT when c has no such pool, -EINVAL for a NULL client.  One pool
 * lock.  (A put does not need it: store_put_page() picks the cap.)
 */
int store_client_pool_kind(struct tmem_client *c, int32_t pool_id);

/*
 * For policy/: remove the page at (oid, index) like
 * store_flush_page(), but as the host's own doing (e.g. a refused put
 * clearing an older copy), so it is not counted as a guest flush_page.
 * Returns 1 removed, 0 none there, -EINVAL / -ENOENT as store_flush_page().
 */
int store_discard_page(struct tmem_client *c, int32_t pool_id,
		       const struct tmem_oid *oid, uint32_t index);

struct tmem_page_counts {
	uint64_t ephemeral;  /* pages charged, ephemeral pools */
	uint64_t persistent; /* pages charged, persistent pools */
};
void store_client_page_counts(const struct tmem_client *c,
			      struct tmem_page_counts *out);

struct tmem_arena_counts {
	uint64_t total_pages;  /* current arena size (the ceiling), in 4 KiB frames */
	uint64_t limit_pages;  /* frames that may be in use: the target, at most total */
	uint64_t used_pages;   /* frames in use (data and spans) */
	uint64_t free_pages;   /* limit_pages - used_pages: physical room, not pages */
	uint64_t ephemeral;    /* over all clients, shared included */
	uint64_t persistent;
};
void store_arena_counts(struct tmem_store *store,
			struct tmem_arena_counts *out);

/*
 * Change the arena size.  Growing is immediate.  Shrinking moves stored
 * pages out of the released range; it fails with -EBUSY, changing
 * nothing, when more pages are in use than new_pages (the caller evicts
 * ephemeral pages first), and with -EINVAL above max_arena_bytes.
 */
int store_resize(struct tmem_store *store, uint64_t new_pages);

/*
 * The elastic size: puts stop finding room once this many frames are in
 * use (ephemeral pages are then evicted to make room, by policy/), even
 * when the arena is larger.  Nothing stored moves or goes; 0 = the arena
 * size.  policy/ evicts down to it (tmem_policy_set_target()).
 */
void store_set_target(struct tmem_store *store, uint64_t pages);

/*
 * Gives back to the host the free frames that no put has reached since
 * the last call, keeping keep_pages of them resident for the next puts.
 * Call it at a steady interval (tmemd: every second): a frame free for a
 * whole interval is cold.  Returns the frames punched out.
 */
uint64_t store_release_cold(struct tmem_store *store, uint64_t keep_pages);
/* What tmemd keeps resident and warm (store_release_cold()'s keep_pages
 * and cfg->warm_frames out of pressure): 8 MiB. */
#define TMEM_WARM_FRAMES 2048u

/*
 * The host tier (store config tier_fd, tier_bytes; pools/COMMIT.md,
 * "Host tier").  store_spill() moves up to pages of the coldest
 * persistent pages in RAM there (the client with the most in RAM first,
 * oldest put first, a page got since the last pass spared once), as
 * stored, in batches of up to 256 pages: one write per run of adjacent
 * units, then fdatasync(), and only then is their RAM freed.  It blocks
 * on the device: call it from a thread that serves no ring, holding
 * nothing of the store's.  Returns the pages moved, or when none moved 0
 * (nothing to move) or -errno: -ENODEV no tier, -ENOSPC the tier (or
 * every client's spill limit) is full, -EIO or another write error, the
 * pages left in RAM.  A get of a page in the tier reads it back (with
 * its pool unlocked during the read) and leaves it there.
 */
int64_t store_spill(struct tmem_store *store, uint64_t pages);
/* The most bytes (as stored) c may have in the tier; TMEM_NO_CAP = no
 * limit (the default).  In memory only: set it again on a claimed
 * client.  -EINVAL for NULL. */
int store_client_set_spill_max(struct tmem_client *c, uint64_t bytes);
uint64_t store_client_spill_max(const struct tmem_client *c);

/* Latencies are from a histogram of quarter octaves: a quantile is its
 * bucket's upper bound (within 19 %). */
struct tmem_tier_stats {
	uint64_t pages;            /* in the tier now */
	uint64_t bytes;            /* their stored bytes */
	uint64_t spilled;          /* pages ever moved there */
	uint64_t readbacks;        /* gets served from it */
	uint64_t readback_p50_ns, readback_p99_ns;
};

struct tmem_tier_info {
	bool configured;
	uint64_t capacity_bytes;   /* for objects: the size less the header */
	uint64_t used_bytes;       /* units in use (objects rounded up to 64 B) */
	uint64_t free_bytes;
	struct tmem_tier_stats st;
	uint64_t spilled_bytes;    /* stored bytes ever moved there */
	uint64_t writes;           /* write calls (runs of adjacent objects) */
	uint64_t write_errors;     /* failed spills: their pages stayed in RAM */
	uint64_t aborted;          /* pages changed during their spill: stayed */
	uint64_t read_errors;      /* read-backs that returned -EIO */
	uint64_t spill_nsec;       /* time spent in store_spill() */
	int last_error;            /* -errno of the last failed spill, or 0 */
};
void store_tier_info(struct tmem_store *store, struct tmem_tier_info *out);

/*
 * Compaction: move compressed pages out of the emptiest spans of each
 * size class, so that at most one span's worth of slots per class stays
 * free.  Runs on shrink by itself; the daemon also calls it in the
 * background.  Pages whose pool is busy are skipped.  Returns pages moved.
 */
uint64_t store_compact(struct tmem_store *store);

/*
 * Counters.  Each is a monotonically increasing count, read without
 * stopping the store, so a snapshot may be off by the ops in flight.
 */
enum tmem_put_fail {
	TMEM_PUT_FAIL_QUOTA,
	TMEM_PUT_FAIL_FULL,
	TMEM_PUT_FAIL_FROZEN,
	TMEM_PUT_FAIL_NR,
};

struct tmem_op_counters {
	uint64_t puts, succ_puts;
	uint64_t failed_puts[TMEM_PUT_FAIL_NR];
	uint64_t gets, succ_gets, failed_gets;
	uint64_t flush_pages, flush_objects;
	uint64_t evictions;        /* dropped by the store to make room */
	uint64_t admin_flushes;    /* dropped by an admin (store_client_admin_flush_n) */
};

/* policy/ records the reason a put was refused outside store_put_page()
 * (a frozen client's). */
void store_count_put_failure(struct tmem_client *c, int32_t pool_id,
			     enum tmem_put_fail why);

/*
 * What compression does for some pages in memory (a pool's, a client's,
 * the store's; pages in the host tier are counted in its stats).  Names
 * follow zram's mm_stat where they match.
 */
struct tmem_zstats {
	uint64_t pages;            /* logical pages stored in memory */
	uint64_t compr_data_size;  /* bytes they take: compressed, 4096 a raw page, 0 same-filled */
	uint64_t same_pages;       /* stored as their word */
	uint64_t huge_pages;       /* incompressible: over the threshold, stored raw */
};

struct tmem_pool_info {
	int32_t id;
	bool persistent;
	bool shared;
	struct tmem_uuid uuid;     /* zero unless shared */
	uint32_t sharers;          /* 1 for private pools */
	uint64_t pages;
	uint64_t objects;
	struct tmem_zstats z;
	struct tmem_op_counters ops; /* this client's ops on this pool */
	uint64_t tier_pages;       /* of pages, in the host tier */
	uint64_t tier_bytes;
	uint64_t readbacks;
};

struct tmem_client_info {
	uint32_t id;
	char name[TMEM_CLIENT_NAME_MAX];
	struct tmem_page_counts pages;
	struct tmem_op_counters ops;
	/* The same by the kind of pool: [0] ephemeral, [1] persistent, its
	 * pools gone included (the saved view: hits, swap I/O avoided). */
	struct tmem_op_counters ops_kind[2];
	uint32_t nr_pools;
	struct tmem_zstats z;      /* over its pools (shared ones included) */
	struct tmem_compress compress;
	struct tmem_tier_stats tier; /* its pages in the host tier */
	uint64_t spill_max;        /* bytes; TMEM_NO_CAP: no limit */
	/* Tier bytes it may still take: the tier's free space, or less
	 * under its spill_max; 0 without a tier. */
	uint64_t tier_free_bytes;
};

struct tmem_store_info {
	struct tmem_arena_counts arena;
	uint64_t evictions;
	uint32_t nr_clients;       /* not counting the built-in shared client */
	uint32_t nr_detached;      /* of those, recovered and not yet claimed */
	uint64_t clients_reattached; /* claimed since the store was opened */
	uint64_t clients_expired;    /* dropped detached since then */
	/* Bytes of descriptors and the free-frame stack (up to their
	 * high-water marks), hash tables and client/pool structs: what the
	 * store holds besides the data. */
	uint64_t metadata_bytes;
	/* Every client's ops by the kind of pool ([0] ephemeral, [1]
	 * persistent), those of clients gone included: totals that outlive
	 * clients, for rates over a day. */
	struct tmem_op_counters ops_kind[2];
	/* Compression over the whole store, and by the kind of pool ([0]
	 * ephemeral, [1] persistent; shared pools are ephemeral). */
	struct tmem_zstats z;
	struct tmem_zstats z_kind[2];
	uint64_t mem_used_total;   /* physical bytes: frames in use x 4096 */
	uint64_t mem_used_max;     /* its peak since the store was opened */
	/* Frames that hold memory: in use, or free and not given back yet. */
	uint64_t mem_resident;     /* bytes */
	uint64_t frames_released;  /* free frames given back to the host, ever */
	uint64_t frames_warmed;    /* free frames faulted in ahead of the puts, ever */
	uint64_t frames_cold_taken; /* frames a put took not resident (its first touch), ever */
	uint64_t zs_overhead;      /* span bytes not holding data: headers, class rounding, span tails */
	uint64_t zs_fragmentation; /* bytes of free slots in live spans */
	uint64_t compactions;      /* compaction runs that moved a page */
	uint64_t pages_compacted;  /* pages moved by compaction */
	uint64_t decode_errors;    /* gets refused: stored bytes did not decode */
};

void store_info(struct tmem_store *store, struct tmem_store_info *out);
void store_client_info(struct tmem_client *c, struct tmem_client_info *out);
/* Calls fn for each pool of c (from a snapshot, without locks held, so fn
 * may call into the store); stops at and returns fn's first non-zero;
 * -EINVAL for a NULL client or fn. */
int store_client_for_each_pool(struct tmem_client *c,
			       int (*fn)(const struct tmem_pool_info *, void *),
			       void *ctx);

#endif /* TMEM_STORE_H */
