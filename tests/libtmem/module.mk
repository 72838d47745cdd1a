# tests/libtmem/: libtmem against a real tmemd.  Also a TSan test: under
# SANITIZE=thread both the test and the tmemd it starts ($(BUILD)/tmemd)
# are ThreadSanitizer builds.

TEST_LIBTMEM := $(BUILD)/tests/libtmem/test_libtmem
INTEGRATION_TESTS += $(TEST_LIBTMEM)
TSAN_TESTS += $(TEST_LIBTMEM)

$(BUILD)/tests/libtmem/%.o: EXTRA_CFLAGS += $(call pkg_cflags,check jansson) -Itests/daemon

$(TEST_LIBTMEM): $(BUILD)/tests/libtmem/test_libtmem.o $(DAEMON_TEST_HARNESS) \
		$(TEST_COMMON_LIB) $(LIBTMEM_A) | $(TMEMD)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(call pkg_libs,check jansson) -o $@

# test_restart: tmemd killed and restarted under libtmem clients (issue 15);
# make soak-restart runs its kill -9 soak with 50 kills per mode.
TEST_RESTART := $(BUILD)/tests/libtmem/test_restart
INTEGRATION_TESTS += $(TEST_RESTART)

$(BUILD)/tests/daemon/restart_harness.o: EXTRA_CFLAGS += -DTMEMD_DEFAULT_BIN='"$(TMEMD)"'
$(BUILD)/tests/libtmem/test_restart.o: EXTRA_CFLAGS += -DTMEMCTL_BIN='"$(TMEMCTL)"'

$(TEST_RESTART): $(BUILD)/tests/libtmem/test_restart.o $(BUILD)/tests/daemon/restart_harness.o \
		$(DAEMON_TEST_HARNESS) $(TEST_COMMON_LIB) $(LIBTMEM_A) | $(TMEMD) $(TMEMCTL)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(call pkg_libs,check jansson) -o $@

# test_spill: the host tier under libtmem clients (issue 29): a full pool,
# a kill -9 soak (20 kills; make soak-spill: 100), the target halving,
# bad tiers and a full disk.
TEST_SPILL := $(BUILD)/tests/libtmem/test_spill
INTEGRATION_TESTS += $(TEST_SPILL)

$(BUILD)/tests/libtmem/test_spill.o: EXTRA_CFLAGS += -DTMEMCTL_BIN='"$(TMEMCTL)"'
$(TEST_SPILL): $(BUILD)/tests/libtmem/test_spill.o $(BUILD)/tests/daemon/restart_harness.o \
		$(DAEMON_TEST_HARNESS) $(TEST_COMMON_LIB) $(LIBTMEM_A) | $(TMEMD) $(TMEMCTL)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(call pkg_libs,check jansson) -o $@

# The host tier's spills and read-backs (worker, spiller and read-back
# threads) against an ASan+UBSan and a TSan tmemd, as the daemon's
# integration tests are (tests/daemon/module.mk).
ifeq ($(SANITIZE),)
libtmem-san-spill: $(TEST_SPILL) | $(DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory SANITIZE=address,undefined build/san-address-undefined/tmemd
	$(call run_tests,$(TEST_SPILL),TMEMD_BIN=build/san-address-undefined/tmemd,$@ (ASan+UBSan tmemd))
	$(Q)$(MAKE) --no-print-directory SANITIZE=thread build/san-thread/tmemd
	$(call run_tests,$(TEST_SPILL),TMEMD_BIN=build/san-thread/tmemd,$@ (TSan tmemd))
CHECK_EXTRA_libtmem += libtmem-san-spill
.PHONY: libtmem-san-spill
endif

soak-spill: $(TEST_SPILL)
	$(Q)CK_RUN_CASE=soak TMEM_SOAK_KILLS=100 $(TEST_SPILL)
.PHONY: soak-spill

soak-restart: $(TEST_RESTART)
	$(Q)CK_RUN_CASE=soak TMEM_SOAK_KILLS=50 $(TEST_RESTART)
.PHONY: soak-restart

# test_migrate: two tmemds migrating libtmem clients between them, under
# kill -9 of either (issue 27).
TEST_MIGRATE := $(BUILD)/tests/libtmem/test_migrate
INTEGRATION_TESTS += $(TEST_MIGRATE)

$(TEST_MIGRATE): $(BUILD)/tests/libtmem/test_migrate.o $(BUILD)/tests/libtmem/migrate_fixture.o \
		$(BUILD)/tests/daemon/restart_harness.o \
		$(DAEMON_TEST_HARNESS) $(TEST_COMMON_LIB) $(LIBTMEM_A) | $(TMEMD)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(call pkg_libs,check jansson) -o $@

# test_migrate_hostile: a hostile peer of a real tmemd, played with the
# daemon's own link code; tmemctl migrate-check and migrate-push.
TEST_MIGRATE_HOSTILE := $(BUILD)/tests/libtmem/test_migrate_hostile
INTEGRATION_TESTS += $(TEST_MIGRATE_HOSTILE)
MIGRATE_LINK_OBJS := $(addprefix $(BUILD)/daemon/migrate/,mig_tls.o mig_keys.o mig_wire.o)

$(BUILD)/tests/libtmem/test_migrate_hostile.o: EXTRA_CFLAGS += -DTMEMCTL_BIN='"$(TMEMCTL)"'
$(TEST_MIGRATE_HOSTILE): $(BUILD)/tests/libtmem/test_migrate_hostile.o \
		$(BUILD)/tests/libtmem/migrate_fixture.o $(BUILD)/tests/daemon/restart_harness.o \
		$(MIGRATE_LINK_OBJS) $(DAEMON_TEST_HARNESS) $(TEST_COMMON_LIB) $(LIBTMEM_A) \
		| $(TMEMD) $(TMEMCTL)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(call pkg_libs,check jansson libssl libcrypto) -o $@
