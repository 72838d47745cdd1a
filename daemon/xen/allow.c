/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "config.h"
#include "xen/allow.h"
#include "xen/front.h"

/* "N" or "N-M" with 1 <= N <= M <= TMEMD_XEN_DOMID_MAX. */
static int parse_range(char *item, struct tmemd_xen_allow_item *it)
{
	char *dash = strchr(item, '-');

	if (dash)
		*dash = '\0';
	if (tmemd_xen_parse_u32(item, TMEMD_XEN_DOMID_MAX, &it->lo) ||
	    tmemd_xen_parse_u32(dash ? dash + 1 : item, TMEMD_XEN_DOMID_MAX, &it->hi) ||
	    it->lo == 0 || it->lo > it->hi)
		return -EINVAL;
	return 0;
}

static int parse_item(char *item, struct tmemd_xen_allow_item *it,
		      const char **why)
{
	memset(it, 0, sizeof(*it));
	if (isdigit((unsigned char)item[0])) {
		if (parse_range(item, it)) {
			*why = "a domain id or range must be 1..32751 (N or N-M, N <= M)";
			return -EINVAL;
		}
		return 0;
	}
	/* A leading '-' is a range gone wrong, not a name. */
	if (item[0] == '-' || tmemd_check_client_name(item)) {
		*why = "a domain name must be 1..63 of A-Z a-z 0-9 . _ : - (not first -)";
		return -EINVAL;
	}
	strcpy(it->name, item);
	return 0;
}

int tmemd_xen_allow_parse(const char *spec, struct tmemd_xen_allow *out,
			  const char **why)
{
	char buf[1024], *save = NULL, *tok;

	memset(out, 0, sizeof(*out));
	if (strlen(spec) >= sizeof(buf)) {
		*why = "list too long";
		return -EINVAL;
	}
	strcpy(buf, spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end = tok + strlen(tok);

		while (isspace((unsigned char)*tok))
			tok++;
		while (end > tok && isspace((unsigned char)end[-1]))
			*--end = '\0';
		if (!strcmp(tok, "all")) {
			out->all = true;
			continue;
		}
		if (out->nr == TMEMD_XEN_ALLOW_MAX) {
			*why = "more than 64 entries";
			return -EINVAL;
		}
		if (parse_item(tok, &out->items[out->nr], why))
			return -EINVAL;
		out->nr++;
	}
	if (out->nr == 0)
		out->all = true;
	return 0;
}

bool tmemd_xen_allow_match(const struct tmemd_xen_allow *a, uint32_t domid,
			   const char *name)
{
	if (a->all)
		return true;
	for (unsigned i = 0; i < a->nr; i++) {
		const struct tmemd_xen_allow_item *it = &a->items[i];

		if (it->name[0] ? name && !strcmp(name, it->name)
				: domid >= it->lo && domid <= it->hi)
			return true;
	}
	return false;
}
