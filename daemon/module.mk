# daemon/: tmemd.  Everything but main.c also goes into a static library
# so unit tests and fuzz targets link the same objects.  daemon/local/ (the
# local transport) is part of it; daemon/xen/ adds itself (its module.mk).

DAEMON_SRCS := $(filter-out daemon/main.c,$(wildcard daemon/*.c daemon/local/*.c))
DAEMON_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(DAEMON_SRCS))
DAEMON_CORE := $(BUILD)/daemon/libtmemd-core.a
TMEMD := $(BUILD)/tmemd
# pools/ and policy/ link order: policy needs pools.
TMEM_CORE_LIBS := $(BUILD)/libtmempolicy.a $(BUILD)/libtmempools.a
DAEMON_LDLIBS = $(call pkg_libs,inih jansson libxxhash) $(POOLS_LDLIBS)

PROGRAMS += $(TMEMD)

$(BUILD)/daemon/%.o: EXTRA_CFLAGS += $(call pkg_cflags,inih jansson)

$(DAEMON_CORE): $(DAEMON_OBJS)
	$(call quiet,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# The control server (daemon/control/) and the systemd glue
# (daemon/systemd/) are their own libraries, built by their own module.mk.
# They are named by path rather than by those files' variables, so this
# rule does not depend on the order the module.mk files are read in
# (daemon/systemd/module.mk is read after this one).
TMEMD_SUBLIBS := $(BUILD)/libtmemd-control.a $(BUILD)/libtmemd-systemd.a

$(TMEMD): $(BUILD)/daemon/main.o $(DAEMON_CORE) $(TMEMD_SUBLIBS) $(TMEM_CORE_LIBS)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(DAEMON_LDLIBS) $(call pkg_libs,libsystemd) -o $@
