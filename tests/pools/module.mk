# tests/pools: the page store's Check suites.  test_pools: semantics,
# resize and the model-based random test; test_pools_stress: threads
# (also run under ThreadSanitizer).

TEST_POOLS := $(BUILD)/tests/pools/test_pools
TEST_POOLS_STRESS := $(BUILD)/tests/pools/test_pools_stress
UNIT_TESTS += $(TEST_POOLS) $(TEST_POOLS_STRESS)
TSAN_TESTS += $(TEST_POOLS_STRESS)

TEST_POOLS_OBJS := $(addprefix $(BUILD)/tests/pools/,test_pools.o \
	test_semantics.o test_resize.o test_release.o test_model.o test_hooks.o test_durable.o \
	test_crash.o test_compress.o test_layout.o test_transfer.o test_tier.o)

$(TEST_POOLS): $(TEST_POOLS_OBJS) $(TEST_COMMON_LIB) $(POOLS_LIB)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(POOLS_LDLIBS) $(call pkg_libs,check) -o $@

$(TEST_POOLS_STRESS): $(BUILD)/tests/pools/test_stress.o $(TEST_COMMON_LIB) $(POOLS_LIB)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(POOLS_LDLIBS) $(call pkg_libs,check) -o $@

$(BUILD)/tests/pools/%.o: EXTRA_CFLAGS += $(call pkg_cflags,check)

# Every pools/ suite runs once per compression mode: unit-tests runs them
# with the tests' default (lz4, the product's), this with off and zstd.
pools-compress-modes: $(TEST_POOLS) $(TEST_POOLS_STRESS)
	$(call run_tests,$^,TMEM_TEST_COMPRESS=off,pools (TMEM_TEST_COMPRESS=off))
	$(call run_tests,$^,TMEM_TEST_COMPRESS=zstd,pools (TMEM_TEST_COMPRESS=zstd))
CHECK_EXTRA_pools += pools-compress-modes
.PHONY: pools-compress-modes
