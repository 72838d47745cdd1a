# daemon/: tmemd.  Everything but main.c, and daemon/xen/'s objects, also
# go into a static library so unit tests and fuzz targets link the same
# objects; daemon/local/ (the local transport) is part of it.  The control
# server (daemon/control/), the systemd glue (daemon/systemd/) and the xen
# transport (daemon/xen/) are read before this file.

DAEMON_SRCS := $(filter-out daemon/main.c,$(wildcard daemon/*.c daemon/local/*.c daemon/migrate/*.c))
DAEMON_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(DAEMON_SRCS))
DAEMON_CORE := $(BUILD)/daemon/libtmemd-core.a
TMEMD := $(BUILD)/tmemd
# pools/ and policy/ link order: policy needs pools.
TMEM_CORE_LIBS := $(LIBTMEMPOLICY) $(POOLS_LIB)
DAEMON_LDLIBS = $(call pkg_libs,inih jansson libxxhash libssl libcrypto) $(POOLS_LDLIBS) $(DAEMON_XEN_LDLIBS)
# The core library needs these after it.
TMEMD_SUBLIBS := $(CONTROL_SERVER_LIB) $(LIBTMEMD_SYSTEMD)

PROGRAMS += $(TMEMD)

$(BUILD)/daemon/%.o: EXTRA_CFLAGS += $(call pkg_cflags,inih jansson libssl) $(TSAN_NO_FENCE_WARNING)

$(DAEMON_CORE): $(DAEMON_OBJS) $(DAEMON_XEN_OBJS)
	$(call quiet,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(TMEMD): $(BUILD)/daemon/main.o $(DAEMON_CORE) $(TMEMD_SUBLIBS) $(TMEM_CORE_LIBS)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(DAEMON_LDLIBS) $(LIBTMEMD_SYSTEMD_LDLIBS) -o $@
