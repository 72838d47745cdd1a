# tests/xen-unit/: the Xen backend (daemon/xen/) without Xen, over an
# in-memory xenstore and memfd/eventfd grants and event channels.  It
# runs workers, so it is also a TSan test.

# test_xen_hosts: two such backends in one process, each with its own
# store and migration module, a guest moving between them (issue 27).

TEST_XEN_UNIT := $(BUILD)/tests/xen-unit/test_xen_unit
TEST_XEN_HOSTS := $(BUILD)/tests/xen-unit/test_xen_hosts
XEN_FAKE_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/xen-unit/fake_*.c))
XEN_UNIT_OBJS := $(XEN_FAKE_OBJS) $(BUILD)/tests/xen-unit/test_xen_unit.o

UNIT_TESTS += $(TEST_XEN_UNIT) $(TEST_XEN_HOSTS)
TSAN_TESTS += $(TEST_XEN_UNIT) $(TEST_XEN_HOSTS)

$(BUILD)/tests/xen-unit/%.o: EXTRA_CFLAGS += $(call pkg_cflags,check inih jansson)

# Linked as tmemd is (daemon/module.mk): the core needs its sublibraries.
$(TEST_XEN_UNIT): $(XEN_UNIT_OBJS) $(TEST_COMMON_LIB) $(DAEMON_CORE) $(TMEMD_SUBLIBS) \
		$(TMEM_CORE_LIBS)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(DAEMON_LDLIBS) $(call pkg_libs,check) \
		$(LIBTMEMD_SYSTEMD_LDLIBS) -o $@

$(TEST_XEN_HOSTS): $(XEN_FAKE_OBJS) $(BUILD)/tests/xen-unit/test_xen_hosts.o \
		$(TEST_COMMON_LIB) $(DAEMON_CORE) $(TMEMD_SUBLIBS) $(TMEM_CORE_LIBS)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(DAEMON_LDLIBS) $(call pkg_libs,check) \
		$(LIBTMEMD_SYSTEMD_LDLIBS) -o $@

# libFuzzer over the frontend's xenstore values and the allow-list
# (clang only; make check replays its corpus, tests/fuzz/module.mk).
# The rest of the daemon comes from the (uninstrumented) core library.
FUZZ_XEN := build/fuzz/fuzz_xen_front
FUZZ_TARGETS += fuzz-xen
FUZZ_BIN_fuzz-xen := $(FUZZ_XEN)
fuzz-xen: $(FUZZ_XEN)
	$(call fuzz_run,fuzz-xen)

$(FUZZ_XEN): $(call fuzz_objs,tests/xen-unit/fuzz_xen_front.c tests/xen-unit/fake_xs.c \
		daemon/xen/front.c daemon/xen/allow.c) \
		$(DAEMON_CORE) $(TMEMD_SUBLIBS) $(TMEM_CORE_LIBS)
	$(call fuzz_link,$(DAEMON_LDLIBS) $(LIBTMEMD_SYSTEMD_LDLIBS) -lpthread)
.PHONY: fuzz-xen
