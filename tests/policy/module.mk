# tests/policy: Check suites for policy/, against the real store.
TEST_POLICY := $(BUILD)/tests/policy/test_policy
TEST_POLICY_MT := $(BUILD)/tests/policy/test_policy_mt
POLICY_FIXTURE_OBJ := $(BUILD)/tests/policy/policy_fixture.o

UNIT_TESTS += $(TEST_POLICY) $(TEST_POLICY_MT)
TSAN_TESTS += $(TEST_POLICY_MT)

$(TEST_POLICY) $(TEST_POLICY_MT): %: %.o $(POLICY_FIXTURE_OBJ) $(TEST_COMMON_LIB) \
		$(LIBTMEMPOLICY) $(POOLS_LIB)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(POOLS_LDLIBS) $(call pkg_libs,check) -o $@

$(BUILD)/tests/policy/%.o: EXTRA_CFLAGS += $(call pkg_cflags,check)

