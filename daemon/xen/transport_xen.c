/* SPDX-License-Identifier: MIT */
/*
 * The xen transport: guests are Xen domUs that reach tmemd through a
 * xenbus device (device/tmem/0, man/tmem.7), grant-mapped rings and
 * interdomain event channels.  This file only opens the real libraries
 * and hands them to the backend (backend.c), which tests drive with
 * fakes instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "transport.h"
#include "xen/backend.h"

static bool dev_opens(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Every device the libraries need, and a xenstore that answers. */
static bool xen_usable(void)
{
	struct tmemd_xs xs;

	if (!dev_opens("/dev/xen/evtchn") || !dev_opens("/dev/xen/gntdev") ||
	    !dev_opens("/dev/xen/privcmd"))
		return false;
	if (tmemd_xs_open_lib(&xs))
		return false;
	xs.ops->close(xs.h);
	return true;
}

/* Our own domain id: 0 in dom0; a driver domain's xenstore says. */
static uint32_t self_domid(const struct tmemd_xs *xs)
{
	uint32_t id = 0;
	char *v = NULL;

	if (!xs->ops->read(xs->h, TMEMD_XS_NO_TX, "domid", &v) &&
	    tmemd_xen_parse_u32(v, UINT32_MAX, &id))
		id = 0;
	free(v);
	return id;
}

static int xen_start(const struct tmemd_env *env, void **state)
{
	struct tmemd_xen_backend *be;
	struct tmemd_xs xs;
	struct tmemd_hyp hyp;
	int rc;

	rc = tmemd_xs_open_lib(&xs);
	if (rc) {
		log_err("xen: cannot open the xenstore: %s", strerror(-rc));
		return rc;
	}
	rc = tmemd_hyp_open_lib(&hyp);
	if (rc) {
		log_err("xen: cannot open the grant and event channel devices: %s",
			strerror(-rc));
		xs.ops->close(xs.h);
		return rc;
	}
	rc = tmemd_xen_backend_create(env, xs, hyp, self_domid(&xs), &be);
	if (rc)
		return rc; /* logged; xs and hyp closed */
	log_info("xen transport: watching for domains");
	*state = be;
	return 0;
}

static void xen_stop(void *state)
{
	tmemd_xen_backend_destroy(state);
}

const struct tmem_transport_ops tmemd_transport_xen = {
	.name = "xen",
	.usable = xen_usable,
	.start = xen_start,
	.stop = xen_stop,
};
