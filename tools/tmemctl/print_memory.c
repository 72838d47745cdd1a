/* SPDX-License-Identifier: MIT */
/*
 * The elastic pool's line of status, stats and top: what tmem costs the
 * host now (physical bytes), and where its target stands.
 */
#include "tmemctl.h"
#include "tmem_proto.h"

static void hbytes_at(char *buf, size_t len, struct hout *o, json_t *doc, const char *path)
{
	fmt_bytes(buf, len, hu64(o, doc, path));
}

void print_memory_summary(struct hout *o, json_t *doc)
{
	char ceil[16], target[16], used[16], peak[16], res[16];
	json_t *m = json_object_get(doc, "memory");

	if (!json_is_object(m))
		return;
	hbytes_at(ceil, sizeof(ceil), o, doc, "memory.ceiling_bytes");
	hbytes_at(target, sizeof(target), o, doc, "memory.target_bytes");
	hbytes_at(used, sizeof(used), o, doc, "memory.used_bytes");
	hbytes_at(peak, sizeof(peak), o, doc, "memory.peak_bytes");
	hbytes_at(res, sizeof(res), o, doc, "memory.resident_bytes");
	fprintf(o->f, "memory (host bytes): ceiling %s  target %s  in use %s  peak %s  "
		"resident %s%s%s\n", ceil, target, used, peak, res,
		json_is_true(json_object_get(m, "pressure")) ? "  [host under pressure]" : "",
		json_is_true(json_object_get(m, "refusing_persistent")) ?
			"  [persistent puts refused: target full]" : "");
}
