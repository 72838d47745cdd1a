# pools/: the page store, built as a static library.  No link-time
# dependencies of its own: xxHash is used header-only (XXH_INLINE_ALL).

POOLS_SRCS := $(wildcard pools/*.c)
POOLS_OBJS := $(POOLS_SRCS:%.c=$(BUILD)/%.o)
POOLS_LIB := $(BUILD)/libtmempools.a

LIBS += $(POOLS_LIB)
COVERAGE_DIRS += pools

$(POOLS_LIB): $(POOLS_OBJS)
	$(call quiet,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^
