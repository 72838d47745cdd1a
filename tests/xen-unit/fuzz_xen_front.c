/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer over what a guest controls in the xenstore: the input is
 * split at newlines into the values of a frontend's nodes (in the order
 * below, ring-refN last-but-one), which tmemd_xen_read_front() must
 * reject or accept without crashing; any accepted set must be
 * consistent.  The whole input is also tried as a xen-domains list.
 * make fuzz-xen (not part of make check).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_xs.h"
#include "xen/allow.h"
#include "xen/front.h"

static const char *const nodes[] = {
	"protocol-version", "ring-entries", "nr-slots", "ring-pages",
	"ring-ref0", "ring-ref1", "ring-ref2", "ring-ref3", "ring-ref4",
	"event-channel", "session",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tmemd_xen_front f;
	struct fake_xs *fx = fake_xs_new();
	struct tmemd_xs xs = fake_xs_handle(fx);
	struct tmemd_xen_allow allow;
	char *text = malloc(size + 1), *save = NULL, *tok, path[128];
	const char *why = NULL;
	unsigned i = 0;

	memcpy(text, data, size);
	text[size] = '\0';
	if (tmemd_xen_allow_parse(text, &allow, &why) == 0)
		(void)tmemd_xen_allow_match(&allow, 5, "web1");
	for (tok = strtok_r(text, "\n", &save); tok && i < sizeof(nodes) / sizeof(nodes[0]);
	     tok = strtok_r(NULL, "\n", &save), i++) {
		snprintf(path, sizeof(path), "/fe/%s", nodes[i]);
		fake_xs_write_as(fx, 0, path, tok);
	}
	if (tmemd_xen_read_front(&xs, "/fe", &f, &why) == 0 &&
	    (tmem_ring_geometry_check(f.nr_entries, f.nr_slots) ||
	     (uint64_t)f.nr_pages * TMEM_PAGE_SIZE !=
		     tmem_region_size(f.nr_entries, f.nr_slots) ||
	     f.port == 0))
		abort();
	free(text);
	fake_xs_free(fx);
	return 0;
}
