# policy/: quotas, weights, admission, eviction choice, resize.
POLICY_SRCS := $(wildcard policy/*.c)
POLICY_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(POLICY_SRCS))
LIBTMEMPOLICY := $(BUILD)/libtmempolicy.a

LIBS += $(LIBTMEMPOLICY)
COVERAGE_DIRS += policy

$(LIBTMEMPOLICY): $(POLICY_OBJS)
	$(call quiet,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^
