# daemon/systemd/: sd_notify helpers and the journal log sink, as a static
# library the daemon links (daemon/module.mk, read after this file):
#
#   $(TMEMD): ... $(LIBTMEMD_SYSTEMD)
#   	... $^ $(DAEMON_LDLIBS) $(LIBTMEMD_SYSTEMD_LDLIBS) -o $@
#
# Sources include "systemd/sd.h" (daemon/ is on their -I path).

LIBTMEMD_SYSTEMD := $(BUILD)/libtmemd-systemd.a
LIBTMEMD_SYSTEMD_LDLIBS = $(call pkg_libs,libsystemd)
LIBTMEMD_SYSTEMD_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard daemon/systemd/*.c))
LIBS += $(LIBTMEMD_SYSTEMD)

$(BUILD)/daemon/systemd/%.o: EXTRA_CFLAGS += $(call pkg_cflags,libsystemd)

$(LIBTMEMD_SYSTEMD): $(LIBTMEMD_SYSTEMD_OBJS)
	$(call quiet,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^
