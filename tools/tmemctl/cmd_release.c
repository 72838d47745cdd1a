/* SPDX-License-Identifier: MIT */
/*
 * tmemctl release SIZE: give SIZE of the pool back to the host now
 * (ephemeral pages go), and hold the pool that much smaller until it has
 * seen no pressure for memory-grow-delay; under Xen, dom0's balloon
 * target falls as much, so Xen has that memory free for a new domain.
 */
#include "args.h"
#include "tmem_proto.h"

static void human(struct hout *o, json_t *r)
{
	char asked[16], got[16];

	fmt_pages(asked, sizeof(asked), hu64(o, r, "asked_bytes") / TMEM_PAGE_SIZE);
	fmt_pages(got, sizeof(got), hu64(o, r, "released_bytes") / TMEM_PAGE_SIZE);
	fprintf(o->f, "released %s of %s asked\n", got, asked);
	print_memory_summary(o, r);
}

int cmd_release(const struct tmemctl_opts *gopts, int argc, char **argv)
{
	return run_size_command(gopts, argc, argv, "release", human);
}
