# proto/: headers only.  The freestanding check proves they build with no
# libc headers at all, as the kernel module includes them.

PROTO_HEADERS := $(wildcard proto/*.h)

$(BUILD)/proto/freestanding.ok: $(PROTO_HEADERS) tests/proto/freestanding.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(call quiet,FREESTD,$@)
	$(Q)$(CC) -std=gnu11 -ffreestanding -nostdinc \
		-isystem $(shell $(CC) -print-file-name=include) \
		$(WARN) -Iproto -c tests/proto/freestanding.c -o $(@D)/freestanding.o
	$(Q)$(CC) -std=gnu89 -ffreestanding -nostdinc \
		-isystem $(shell $(CC) -print-file-name=include) \
		-Wall -Wextra -Werror -Iproto -c tests/proto/freestanding.c -o $(@D)/freestanding89.o
	$(Q)touch $@

CHECK_EXTRA_proto += $(BUILD)/proto/freestanding.ok
