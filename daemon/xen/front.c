/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xen/front.h"

int tmemd_xen_parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	uint64_t v = 0;
	size_t n = strlen(s);

	/* At most 10 digits, so v cannot overflow before the range check. */
	if (n == 0 || n > 10 || (s[0] == '0' && n > 1))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > max)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int tmemd_xen_parse_session(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (strlen(s) != 16)
		return -EINVAL;
	for (size_t i = 0; i < 16; i++) {
		unsigned d;

		if (s[i] >= '0' && s[i] <= '9')
			d = (unsigned)(s[i] - '0');
		else if (s[i] >= 'a' && s[i] <= 'f')
			d = (unsigned)(s[i] - 'a' + 10);
		else
			return -EINVAL;
		v = v << 4 | d;
	}
	if (!v)
		return -EINVAL;
	*out = v;
	return 0;
}

int tmemd_xen_read_u32(const struct tmemd_xs *xs, const char *dir,
		       const char *name, uint32_t max, uint32_t *out)
{
	char path[TMEMD_XS_PATH_MAX];
	char *v = NULL;
	int rc;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	rc = xs->ops->read(xs->h, TMEMD_XS_NO_TX, path, &v);
	if (rc)
		return rc;
	rc = tmemd_xen_parse_u32(v, max, out);
	free(v);
	return rc;
}

int tmemd_xen_read_state(const struct tmemd_xs *xs, const char *dir,
			 enum tmemd_xenbus_state *state)
{
	uint32_t v;
	int rc = tmemd_xen_read_u32(xs, dir, "state", TMEMD_XB_RECONFIGURED, &v);

	if (!rc)
		*state = (enum tmemd_xenbus_state)v;
	return rc;
}

/* -ENOENT stays -ENOENT (not published yet); anything else is garbage. */
static int field(const struct tmemd_xs *xs, const char *dir, const char *name,
		 uint32_t max, uint32_t *out, const char **why, const char *msg)
{
	int rc = tmemd_xen_read_u32(xs, dir, name, max, out);

	if (rc)
		*why = msg;
	return rc == -ENOENT ? -ENOENT : rc ? -EINVAL : 0;
}

static int read_refs(const struct tmemd_xs *xs, const char *fe_path,
		     struct tmemd_xen_front *f, const char **why)
{
	char name[24];

	for (uint32_t i = 0; i < f->nr_pages; i++) {
		snprintf(name, sizeof(name), "ring-ref%u", i);
		if (field(xs, fe_path, name, UINT32_MAX, &f->refs[i], why,
			  "ring-refN missing or not a grant reference"))
			return -EINVAL;
	}
	return 0;
}

/* Absent: 0 (a guest that holds no pools, or a shim before issue 27). */
static int read_session(const struct tmemd_xs *xs, const char *fe_path, uint64_t *out,
			const char **why)
{
	char path[TMEMD_XS_PATH_MAX], *v = NULL;
	int rc;

	*out = 0;
	snprintf(path, sizeof(path), "%s/session", fe_path);
	rc = xs->ops->read(xs->h, TMEMD_XS_NO_TX, path, &v);
	if (rc)
		return rc == -ENOENT ? 0 : rc;
	rc = tmemd_xen_parse_session(v, out);
	free(v);
	if (rc)
		*why = "session not 16 hex digits";
	return rc;
}

int tmemd_xen_read_front(const struct tmemd_xs *xs, const char *fe_path,
			 struct tmemd_xen_front *f, const char **why)
{
	uint64_t size;
	int rc;

	rc = field(xs, fe_path, "protocol-version", UINT32_MAX, &f->version,
		   why, "protocol-version missing or not a number");
	if (!rc && f->version != TMEM_RING_VERSION) {
		*why = "unsupported protocol-version";
		rc = -EPROTO;
	}
	rc = rc ?: field(xs, fe_path, "ring-entries", UINT32_MAX, &f->nr_entries,
			 why, "ring-entries missing or not a number");
	rc = rc ?: field(xs, fe_path, "nr-slots", UINT32_MAX, &f->nr_slots,
			 why, "nr-slots missing or not a number");
	if (!rc && tmem_ring_geometry_check(f->nr_entries, f->nr_slots)) {
		*why = "ring-entries/nr-slots out of range";
		rc = -EINVAL;
	}
	rc = rc ?: field(xs, fe_path, "ring-pages", TMEMD_XEN_MAX_RING_PAGES,
			 &f->nr_pages, why, "ring-pages missing or out of range");
	if (rc)
		return rc;
	size = tmem_region_size(f->nr_entries, f->nr_slots);
	if ((uint64_t)f->nr_pages * TMEM_PAGE_SIZE != size) {
		*why = "ring-pages does not match the geometry";
		return -EINVAL;
	}
	rc = read_refs(xs, fe_path, f, why);
	/* Port 0 is never a valid interdomain port. */
	rc = rc ?: field(xs, fe_path, "event-channel", UINT32_MAX, &f->port,
			 why, "event-channel missing or not a number");
	if (!rc && f->port == 0) {
		*why = "event-channel is 0";
		rc = -EINVAL;
	}
	return rc ?: read_session(xs, fe_path, &f->session, why);
}
