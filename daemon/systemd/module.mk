# daemon/systemd/: sd_notify helpers and the journal log sink, as a static
# library the daemon links.  daemon/module.mk is read before this file, so
# name the library there by its path, not by $(LIBTMEMD_SYSTEMD) (still
# empty when a rule's prerequisites are expanded):
#
#   $(TMEMD): ... $(BUILD)/libtmemd-systemd.a
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
