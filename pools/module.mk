# pools/: the page store, built as a static library.  It links liblz4 and
# libzstd (POOLS_LDLIBS); xxHash is used header-only (XXH_INLINE_ALL).

POOLS_SRCS := $(wildcard pools/*.c)
POOLS_OBJS := $(POOLS_SRCS:%.c=$(BUILD)/%.o)
POOLS_LIB := $(BUILD)/libtmempools.a
# Programs linking $(POOLS_LIB) also link these (compression).
POOLS_LDLIBS = $(call pkg_libs,liblz4 libzstd)

LIBS += $(POOLS_LIB)
COVERAGE_DIRS += pools

$(POOLS_LIB): $(POOLS_OBJS)
	$(call quiet,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^
