/* Built with -ffreestanding -nostdinc by proto/module.mk: the ABI headers
 * must need nothing from libc, as the kernel module includes them. */
#include "tmem_compress.h"
#include "tmem_proto.h"
#include "tmem_names.h"
#include "tmem_size.h"

uint32_t tmem_freestanding_probe(void *region);

uint32_t tmem_freestanding_probe(void *region)
{
	struct tmem_ring_hdr *hdr = region;
	union tmem_ring_entry *e = tmem_ring_entries(region);
	struct tmem_principal who;
	struct tmem_size sz;
	struct tmem_compress cz;
	struct tmem_uuid uuid;
	char text[TMEM_UUID_TEXT];

	text[0] = '\0';
	if (tmem_uuid_parse("00112233-4455-6677-8899-aabbccddeeff", &uuid) == 0)
		tmem_uuid_format(&uuid, text);
	e[0].req.op = TMEM_OP_PUT_PAGE;
	tmem_store_release(&hdr->req_prod, 1);
	tmem_full_barrier();
	return tmem_load_acquire(&hdr->rsp_prod) + tmem_slot_offset(32) +
	       (uint32_t)tmem_size_parse("64K", TMEM_SIZE_ALLOW_NONE, &sz) +
	       (uint32_t)tmem_compress_parse("zstd:3", &cz) +
	       (uint32_t)tmem_name_valid("vm1") + (uint32_t)tmem_uuid_text_valid("x") +
	       (uint32_t)tmem_principal_parse("domid:5", 0, &who) + (uint32_t)text[0];
}
