# tests/policy: Check suites for policy/, against the real store.
TEST_POLICY := $(BUILD)/tests/policy/test_policy
TEST_POLICY_MT := $(BUILD)/tests/policy/test_policy_mt
POLICY_FIXTURE_OBJ := $(BUILD)/tests/policy/policy_fixture.o

# test_put_locks: every mutex the put path takes is seen through --wrap.
TEST_POLICY_LOCKS := $(BUILD)/tests/policy/test_put_locks

UNIT_TESTS += $(TEST_POLICY) $(TEST_POLICY_MT) $(TEST_POLICY_LOCKS)
TSAN_TESTS += $(TEST_POLICY_MT)

$(TEST_POLICY) $(TEST_POLICY_MT): %: %.o $(POLICY_FIXTURE_OBJ) $(TEST_COMMON_LIB) \
		$(LIBTMEMPOLICY) $(POOLS_LIB)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(POOLS_LDLIBS) $(call pkg_libs,check) -o $@

$(TEST_POLICY_LOCKS): %: %.o $(POLICY_FIXTURE_OBJ) $(TEST_COMMON_LIB) \
		$(LIBTMEMPOLICY) $(POOLS_LIB)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -Wl,--wrap=pthread_mutex_lock,--wrap=pthread_mutex_trylock \
		$^ $(POOLS_LDLIBS) $(call pkg_libs,check) -o $@

$(BUILD)/tests/policy/%.o: EXTRA_CFLAGS += $(call pkg_cflags,check)

