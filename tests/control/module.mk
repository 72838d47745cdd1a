# tests/control: the control server and tmemctl.
#   test_control_unit   request parser/validator, state file, sizes, UUIDs,
#                       Prometheus output (UNIT_TESTS)
#   test_ctl_peer       control.sock writers: peers with chosen groups
#                       (UNIT_TESTS; needs root)
#   test_auth_limit     one shared-auth limit, state.json and tmemd.conf
#                       (UNIT_TESTS)
#   test_control_integ  the real tmemctl against the real tmemd (local
#                       transport), its guests driven through libtmem
#                       (INTEGRATION_TESTS)
#   test_tmemctl_unit   tmemctl without a tmemd: its printers refuse a reply
#                       that lacks a figure (UNIT_TESTS)
#   test_admin_integ    the same, for what a new admin runs into: a second
#                       tmemd, status figures, sizes, reloads, exit codes
#                       (INTEGRATION_TESTS)
#   test_xl_habits      what an admin used to xl tmem-* expects: list --all,
#                       forget, one client's stats, -a, freeable, audit
#                       (INTEGRATION_TESTS)
#   test_admin_truth    issue 30: what an admin reads is true (check-config
#                       and start agree, reloads name what waits for a
#                       restart, one meaning per figure) (INTEGRATION_TESTS)
#   make fuzz-control   the libFuzzer target for the control JSON parser
#                       (clang; make check replays its corpus,
#                       tests/fuzz/corpus/fuzz-control)

TEST_CONTROL_UNIT := $(BUILD)/tests/control/test_control_unit
TEST_CONTROL_INTEG := $(BUILD)/tests/control/test_control_integ
TEST_ADMIN_INTEG := $(BUILD)/tests/control/test_admin_integ
TEST_TMEMCTL_UNIT := $(BUILD)/tests/control/test_tmemctl_unit
TEST_XL_HABITS := $(BUILD)/tests/control/test_xl_habits
TEST_ADMIN_TRUTH := $(BUILD)/tests/control/test_admin_truth
TEST_CTL_PEER := $(BUILD)/tests/control/test_ctl_peer
TEST_AUTH_LIMIT := $(BUILD)/tests/control/test_auth_limit
CONTROL_FUZZ := build/fuzz/fuzz_control_request
CONTROL_TEST_LIBS = $(call pkg_libs,check jansson libxxhash) $(POOLS_LDLIBS)

UNIT_TESTS += $(TEST_CONTROL_UNIT) $(TEST_TMEMCTL_UNIT) $(TEST_CTL_PEER) $(TEST_AUTH_LIMIT)
INTEGRATION_TESTS += $(TEST_CONTROL_INTEG) $(TEST_ADMIN_INTEG) $(TEST_XL_HABITS) \
	$(TEST_ADMIN_TRUTH)

$(BUILD)/tests/control/%.o: EXTRA_CFLAGS += $(call pkg_cflags,check jansson) \
	-DTEST_BUILD_DIR='"$(BUILD)"'

$(TEST_CONTROL_UNIT): $(BUILD)/tests/control/test_control_unit.o $(TEST_COMMON_LIB) \
		$(CONTROL_SERVER_LIB) $(TMEMCTL_CORE) $(TMEM_CORE_LIBS)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(CONTROL_TEST_LIBS) -o $@

# Who may write: real peers with chosen groups (needs root).
$(TEST_CTL_PEER): $(BUILD)/tests/control/test_ctl_peer.o $(TEST_COMMON_LIB) \
		$(CONTROL_SERVER_LIB) $(TMEM_CORE_LIBS)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(CONTROL_TEST_LIBS) -o $@

# One shared-auth limit in state.json and tmemd.conf (config.c is in the
# daemon core, which needs the control and systemd libraries).
$(BUILD)/tests/control/test_auth_limit.o: EXTRA_CFLAGS += $(call pkg_cflags,inih)
$(TEST_AUTH_LIMIT): $(BUILD)/tests/control/test_auth_limit.o $(TEST_COMMON_LIB) $(DAEMON_CORE) \
		$(TMEMD_SUBLIBS) $(TMEM_CORE_LIBS)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(DAEMON_LDLIBS) $(call pkg_libs,check) \
		$(LIBTMEMD_SYSTEMD_LDLIBS) -o $@

$(TEST_CONTROL_INTEG): $(BUILD)/tests/control/test_control_integ.o \
		$(BUILD)/tests/control/integ_util.o $(TEST_COMMON_LIB) $(LIBTMEM_A) \
		| $(TMEMD) $(TMEMCTL)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(CONTROL_TEST_LIBS) -lpthread -o $@

$(TEST_TMEMCTL_UNIT): $(BUILD)/tests/control/test_tmemctl_unit.o $(TEST_COMMON_LIB) \
		$(TMEMCTL_CORE)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(CONTROL_TEST_LIBS) -o $@

$(TEST_XL_HABITS): $(BUILD)/tests/control/test_xl_habits.o \
		$(BUILD)/tests/control/integ_util.o $(TEST_COMMON_LIB) $(TMEMCTL_CORE) \
		$(LIBTMEM_A) | $(TMEMD) $(TMEMCTL)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(CONTROL_TEST_LIBS) -lpthread -o $@

$(TEST_ADMIN_TRUTH): $(BUILD)/tests/control/test_admin_truth.o \
		$(BUILD)/tests/control/integ_util.o $(TEST_COMMON_LIB) $(TMEMCTL_CORE) \
		$(LIBTMEM_A) | $(TMEMD) $(TMEMCTL)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(CONTROL_TEST_LIBS) -lpthread -o $@

$(TEST_ADMIN_INTEG): $(BUILD)/tests/control/test_admin_integ.o \
		$(BUILD)/tests/control/integ_util.o $(TEST_COMMON_LIB) $(TMEMCTL_CORE) \
		$(LIBTMEM_A) | $(TMEMD) $(TMEMCTL)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(CONTROL_TEST_LIBS) -lpthread -o $@

$(CONTROL_FUZZ): $(call fuzz_objs,tests/control/fuzz_control_request.c \
		daemon/control/ctl_proto.c pools/zmode.c)
	$(call fuzz_link,$(call pkg_libs,jansson))

FUZZ_TARGETS += fuzz-control
FUZZ_BIN_fuzz-control := $(CONTROL_FUZZ)
FUZZ_FLAGS_fuzz-control := -max_len=70000
fuzz-control: $(CONTROL_FUZZ)
	$(call fuzz_run,fuzz-control)

.PHONY: fuzz-control
