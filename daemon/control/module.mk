# daemon/control: the control server (control.sock, JSON protocol, stats,
# state file) as a static library the daemon links: libtmemd-control.a.
# Link it with $(CONTROL_SERVER_LIBS) after it.

CONTROL_SRCS := $(wildcard daemon/control/*.c)
CONTROL_OBJS := $(CONTROL_SRCS:%.c=$(BUILD)/%.o)
CONTROL_SERVER_LIB := $(BUILD)/libtmemd-control.a
CONTROL_SERVER_LIBS = $(call pkg_libs,jansson)
LIBS += $(CONTROL_SERVER_LIB)

$(BUILD)/daemon/control/%.o: EXTRA_CFLAGS += $(call pkg_cflags,jansson)

$(CONTROL_SERVER_LIB): $(CONTROL_OBJS)
	$(call quiet,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^
