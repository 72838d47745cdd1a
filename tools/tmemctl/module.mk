# tools/tmemctl: the control CLI.  Everything but main.c also goes into a
# static library so tests/control links the same objects (size parsing,
# Prometheus output).

TMEMCTL := $(BUILD)/tmemctl
TMEMCTL_SRCS := $(filter-out tools/tmemctl/main.c,$(wildcard tools/tmemctl/*.c))
TMEMCTL_OBJS := $(TMEMCTL_SRCS:%.c=$(BUILD)/%.o)
TMEMCTL_CORE := $(BUILD)/tools/tmemctl/libtmemctl-cli.a
TMEMCTL_LDLIBS = $(call pkg_libs,jansson)
PROGRAMS += $(TMEMCTL)

$(BUILD)/tools/tmemctl/%.o: EXTRA_CFLAGS += $(call pkg_cflags,jansson)

$(TMEMCTL_CORE): $(TMEMCTL_OBJS)
	$(call quiet,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(TMEMCTL): $(BUILD)/tools/tmemctl/main.o $(TMEMCTL_CORE)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(TMEMCTL_LDLIBS) -o $@
