/* SPDX-License-Identifier: MIT */
/*
 * The elastic pool under Xen (fallow.h's host hooks).  Fallow memory is
 * Xen's free memory, and dom0 reaches it only by ballooning up: tmemd
 * raises dom0's balloon target (/local/domain/0/memory/target, KiB; the
 * node xl and dom0's balloon driver use) up to dom0's maximum, leaving
 * xen-reserve free.  When the toolstack lowers that target (xl create's
 * autoballoon: freemem() asks dom0 for the new domain's memory, then
 * waits about 10 s, three tries), the watch below wakes the pool, which
 * drops ephemeral pages and gives their frames back at once, so that the
 * balloon driver finds free memory to hand to Xen.  What tmem could free
 * at once (its ephemeral bytes) is published beside the target, in
 * memory/tmem-freeable (KiB), as xl tmem-freeable used to print it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_internal.h"
#include "fallow.h"
#include "log.h"

#define XEN_PAGE 4096ull

static void node(const struct tmemd_xen_backend *be, char *buf, size_t len, const char *leaf)
{
	snprintf(buf, len, "/local/domain/%u/memory/%s", be->self, leaf);
}

static int read_kib(struct tmemd_xen_backend *be, const char *leaf, uint64_t *bytes)
{
	char path[TMEMD_XS_PATH_MAX], *v = NULL, *end;
	unsigned long long kib;
	int rc;

	node(be, path, sizeof(path), leaf);
	rc = be->xs.ops->read(be->xs.h, TMEMD_XS_NO_TX, path, &v);
	if (rc)
		return rc;
	errno = 0;
	kib = strtoull(v, &end, 10);
	rc = errno || end == v || *end ? -EINVAL : 0;
	free(v);
	if (!rc)
		*bytes = kib * 1024;
	return rc;
}

static int write_kib(struct tmemd_xen_backend *be, const char *leaf, uint64_t bytes)
{
	char path[TMEMD_XS_PATH_MAX], v[32];

	node(be, path, sizeof(path), leaf);
	snprintf(v, sizeof(v), "%" PRIu64, bytes / 1024);
	return be->xs.ops->write(be->xs.h, TMEMD_XS_NO_TX, path, v);
}

static int balloon_sample(void *ctx, struct tmemd_fallow_xen *out)
{
	struct tmemd_xen_backend *be = ctx;
	struct tmemd_xen_meminfo mi;
	int rc = be->hyp.ops->mem_info(be->hyp.h, be->self, &mi);

	if (rc)
		return rc;
	out->xen_free = mi.free_pages * XEN_PAGE;
	out->dom0_now = mi.tot_pages * XEN_PAGE;
	out->dom0_max = mi.max_pages * XEN_PAGE;
	if (read_kib(be, "target", &out->dom0_target))
		out->dom0_target = out->dom0_now;
	return 0;
}

static int balloon_set_target(void *ctx, uint64_t bytes)
{
	struct tmemd_xen_backend *be = ctx;
	int rc = write_kib(be, "target", bytes);

	if (rc)
		log_warn("cannot set dom0's balloon target to %" PRIu64 " KiB: %s",
			 bytes / 1024, strerror(-rc));
	return rc;
}

static void balloon_publish(void *ctx, uint64_t bytes)
{
	struct tmemd_xen_backend *be = ctx;

	/* A write only when it moved by a MiB: the xenstore is shared. */
	if (be->freeable_published != UINT64_MAX &&
	    (bytes > be->freeable_published ? bytes - be->freeable_published
					    : be->freeable_published - bytes) < (1u << 20))
		return;
	if (write_kib(be, "tmem-freeable", bytes) == 0)
		be->freeable_published = bytes;
}

/*
 * libxl keeps dom0's memory/static-max and freemem-slack beside its
 * target, and writes all three only when the target is missing: once
 * something else wrote a target (tmemd, or xen-init-dom0), xl's
 * autoballoon fails ("Cannot get memory info from .../static-max").  So
 * tmemd writes what is missing, as libxl would: dom0's maximum, and a
 * slack of 15% of the memory not dom0's, at most 128 MiB.
 */
static void libxl_nodes(struct tmemd_xen_backend *be)
{
	struct tmemd_xen_meminfo mi;
	uint64_t v, slack;

	if (be->hyp.ops->mem_info(be->hyp.h, be->self, &mi) < 0)
		return;
	if (read_kib(be, "static-max", &v) < 0)
		(void)write_kib(be, "static-max", mi.max_pages * XEN_PAGE);
	if (read_kib(be, "freemem-slack", &v) < 0) {
		slack = (mi.total_pages - mi.tot_pages) * XEN_PAGE * 15 / 100;
		(void)write_kib(be, "freemem-slack", slack < (128ull << 20) ? slack : 128ull << 20);
	}
	if (read_kib(be, "target", &v) < 0)
		(void)write_kib(be, "target", mi.tot_pages * XEN_PAGE);
}

static const struct tmemd_fallow_host_ops balloon_ops = {
	.sample = balloon_sample,
	.set_dom0_target = balloon_set_target,
	.publish_freeable = balloon_publish,
};

int xen_balloon_start(struct tmemd_xen_backend *be)
{
	char path[TMEMD_XS_PATH_MAX];
	int rc;

	if (!be->env.fallow || !be->hyp.ops->mem_info)
		return 0;
	be->freeable_published = UINT64_MAX;
	libxl_nodes(be);
	node(be, path, sizeof(path), "target");
	rc = be->xs.ops->watch(be->xs.h, path, XEN_TOKEN_BALLOON);
	if (rc) {
		log_warn("cannot watch %s: the pool will not follow dom0's balloon: %s",
			 path, strerror(-rc));
		return rc;
	}
	be->balloon_watched = true;
	tmemd_fallow_set_host(be->env.fallow, &balloon_ops, be);
	return 0;
}

void xen_balloon_target_changed(struct tmemd_xen_backend *be)
{
	tmemd_fallow_kick(be->env.fallow);
}

void xen_balloon_stop(struct tmemd_xen_backend *be)
{
	char path[TMEMD_XS_PATH_MAX];

	if (!be->balloon_watched)
		return;
	tmemd_fallow_set_host(be->env.fallow, NULL, NULL);
	node(be, path, sizeof(path), "target");
	be->xs.ops->unwatch(be->xs.h, path, XEN_TOKEN_BALLOON);
	node(be, path, sizeof(path), "tmem-freeable");
	be->xs.ops->rm(be->xs.h, TMEMD_XS_NO_TX, path);
	be->balloon_watched = false;
}
