# guest-shim/libtmem/: the userspace client library, static and shared.

LIBTMEM_SRCS := $(wildcard guest-shim/libtmem/*.c)
LIBTMEM_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(LIBTMEM_SRCS))
LIBTMEM_A := $(BUILD)/libtmem.a
LIBTMEM_SO := $(BUILD)/libtmem.so

LIBS += $(LIBTMEM_A) $(LIBTMEM_SO)

$(LIBTMEM_A): $(LIBTMEM_OBJS)
	$(call quiet,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(LIBTMEM_SO): $(LIBTMEM_OBJS)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -shared -Wl,-soname,libtmem.so.0 $^ -o $@

# proto/tmem_barrier.h's fence under TSan: see TSAN_NO_FENCE_WARNING.
$(BUILD)/guest-shim/libtmem/%.o: EXTRA_CFLAGS += $(TSAN_NO_FENCE_WARNING)
