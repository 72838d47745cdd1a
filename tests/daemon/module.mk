# tests/daemon/: daemon unit tests (parsers, validation, ring + dispatch;
# test_ctl_names: the control server naming domains by identity),
# integration tests against a real tmemd, the hostile-client test,
# issue 19's attacks (test_attacks) and issue 32's refusals
# (test_refusals; these, and test_tmemd, also against an ASan+UBSan and a
# TSan tmemd) and bounded start (test_start_stop), and libFuzzer targets for the request
# path and the config parser (make fuzz-dispatch, make fuzz-config;
# tests/fuzz/module.mk runs them, and make check replays their corpora).

TEST_DAEMON_UNIT := $(BUILD)/tests/daemon/test_daemon_unit
TEST_TMEMD := $(BUILD)/tests/daemon/test_tmemd
TEST_HOSTILE := $(BUILD)/tests/daemon/test_hostile
TEST_ATTACKS := $(BUILD)/tests/daemon/test_attacks
TEST_REFUSALS := $(BUILD)/tests/daemon/test_refusals
TEST_START_STOP := $(BUILD)/tests/daemon/test_start_stop
TEST_FALLOW := $(BUILD)/tests/daemon/test_fallow
DAEMON_TEST_HARNESS := $(BUILD)/tests/daemon/harness.o $(BUILD)/tests/daemon/rawclient.o

TEST_CTL_NAMES := $(BUILD)/tests/daemon/test_ctl_names
TEST_FALLOW_UNIT := $(BUILD)/tests/daemon/test_fallow_unit
UNIT_TESTS += $(TEST_DAEMON_UNIT) $(TEST_CTL_NAMES) $(TEST_FALLOW_UNIT)
INTEGRATION_TESTS += $(TEST_TMEMD) $(TEST_HOSTILE) $(TEST_ATTACKS) $(TEST_REFUSALS) \
	$(TEST_START_STOP) $(TEST_FALLOW)

$(BUILD)/tests/daemon/%.o: EXTRA_CFLAGS += $(call pkg_cflags,check jansson inih) \
	$(TSAN_NO_FENCE_WARNING)
$(BUILD)/tests/daemon/harness.o: EXTRA_CFLAGS += -DTMEMD_DEFAULT_BIN='"$(TMEMD)"'

# daemon/log.c writes through daemon/systemd/'s sink; the core's
# control_glue.c drives the control server.
$(TEST_DAEMON_UNIT): $(BUILD)/tests/daemon/test_daemon_unit.o $(BUILD)/tests/daemon/fake_ring.o \
		$(BUILD)/tests/daemon/test_readback.o \
		$(TEST_COMMON_LIB) $(DAEMON_CORE) $(TMEMD_SUBLIBS) $(TMEM_CORE_LIBS)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(DAEMON_LDLIBS) $(call pkg_libs,check) \
		$(LIBTMEMD_SYSTEMD_LDLIBS) -o $@

# Issue 28: the elastic pool's controller with a fake Xen.
$(TEST_FALLOW_UNIT): $(BUILD)/tests/daemon/test_fallow_unit.o $(TEST_COMMON_LIB) $(DAEMON_CORE) \
		$(TMEMD_SUBLIBS) $(TMEM_CORE_LIBS)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(DAEMON_LDLIBS) $(call pkg_libs,check) \
		$(LIBTMEMD_SYSTEMD_LDLIBS) -o $@

# Issue 25: the control server names domains by identity (its glue over
# a real registry, policy and store; no Xen backend).
$(TEST_CTL_NAMES): $(BUILD)/tests/daemon/test_ctl_names.o $(TEST_COMMON_LIB) $(DAEMON_CORE) \
		$(TMEMD_SUBLIBS) $(TMEM_CORE_LIBS)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(DAEMON_LDLIBS) $(call pkg_libs,check) \
		$(LIBTMEMD_SYSTEMD_LDLIBS) -o $@

$(TEST_TMEMD) $(TEST_HOSTILE) $(TEST_ATTACKS) $(TEST_REFUSALS): $(BUILD)/tests/daemon/%: $(BUILD)/tests/daemon/%.o \
		$(DAEMON_TEST_HARNESS) $(TEST_COMMON_LIB) $(LIBTMEM_A) | $(TMEMD)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(call pkg_libs,check jansson) -o $@

# Issue 32's bounded start: tmemd restarted on one --arena file
# (restart_harness.c), with state files at and over their cap.
$(TEST_START_STOP): $(BUILD)/tests/daemon/test_start_stop.o $(BUILD)/tests/daemon/start_files.o \
		$(BUILD)/tests/daemon/restart_harness.o $(DAEMON_TEST_HARNESS) $(TEST_COMMON_LIB) \
		$(LIBTMEM_A) | $(TMEMD)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(call pkg_libs,check jansson) -o $@

# Issue 28: resident memory and the elastic target, from outside.
$(TEST_FALLOW): $(BUILD)/tests/daemon/test_fallow.o $(BUILD)/tests/daemon/restart_harness.o \
		$(DAEMON_TEST_HARNESS) $(TEST_COMMON_LIB) $(LIBTMEM_A) | $(TMEMD)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(call pkg_libs,check jansson) -o $@

# The hostile test against a sanitizer build of tmemd: a crash, a UBSan
# report or a leak at exit makes tmemd exit non-zero, which fails it.
ifeq ($(SANITIZE),)
SAN_TMEMD := build/san-address-undefined/tmemd
daemon-asan-hostile: $(TEST_HOSTILE) $(TEST_TMEMD) $(TEST_ATTACKS) $(TEST_REFUSALS) | $(DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory SANITIZE=address,undefined $(SAN_TMEMD)
	$(call run_tests,$(TEST_HOSTILE) $(TEST_ATTACKS) $(TEST_TMEMD) $(TEST_REFUSALS),TMEMD_BIN=$(SAN_TMEMD),$@ ($(SAN_TMEMD)))
CHECK_EXTRA_daemon += daemon-asan-hostile

# And the integration tests against a ThreadSanitizer tmemd (its workers,
# main loop and stats writer race for real there); a report makes tmemd
# exit 66 at the clean stop, which fails the test.
TSAN_TMEMD := build/san-thread/tmemd
daemon-tsan-integration: $(TEST_TMEMD) $(TEST_HOSTILE) $(TEST_ATTACKS) $(TEST_REFUSALS) | $(DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory SANITIZE=thread $(TSAN_TMEMD)
	$(call run_tests,$(TEST_TMEMD) $(TEST_HOSTILE) $(TEST_ATTACKS) $(TEST_REFUSALS),TMEMD_BIN=$(TSAN_TMEMD),$@ ($(TSAN_TMEMD)))
CHECK_EXTRA_daemon += daemon-tsan-integration
.PHONY: daemon-asan-hostile daemon-tsan-integration
endif

# libFuzzer over the ring and dispatch path (clang only).
FUZZ_DISPATCH := build/fuzz/fuzz_dispatch
FUZZ_TARGETS += fuzz-dispatch
FUZZ_BIN_fuzz-dispatch := $(FUZZ_DISPATCH)
fuzz-dispatch: $(FUZZ_DISPATCH)
	$(call fuzz_run,fuzz-dispatch)

# Everything on the request path (transport.c names the xen transport,
# so daemon/xen/ too); not the control or systemd glue.
FUZZ_DAEMON_SRCS := $(filter-out daemon/service.c daemon/control_glue.c,$(DAEMON_SRCS))
$(FUZZ_DISPATCH): $(call fuzz_objs,tests/daemon/fuzz_dispatch.c tests/daemon/fake_ring.c \
		$(FUZZ_DAEMON_SRCS) $(DAEMON_XEN_SRCS) daemon/systemd/sd_log.c \
		daemon/systemd/sd_fdstore.c $(POOLS_SRCS) $(POLICY_SRCS))
	$(call fuzz_link,$(DAEMON_LDLIBS) $(LIBTMEMD_SYSTEMD_LDLIBS) -lpthread)

# libFuzzer over the tmemd.conf parser.
FUZZ_CONFIG := build/fuzz/fuzz_config
FUZZ_TARGETS += fuzz-config
FUZZ_BIN_fuzz-config := $(FUZZ_CONFIG)
# Inputs up to one byte over tmemd.conf's cap (TMEMD_CONFIG_MAX_BYTES, 1 MiB).
FUZZ_FLAGS_fuzz-config := -max_len=1048577
fuzz-config: $(FUZZ_CONFIG)
	$(call fuzz_run,fuzz-config)

$(FUZZ_CONFIG): $(call fuzz_objs,tests/daemon/fuzz_config.c daemon/config.c daemon/size.c \
		pools/zmode.c)
	$(call fuzz_link,$(call pkg_libs,inih jansson))
.PHONY: fuzz-dispatch fuzz-config
