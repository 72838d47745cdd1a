# tests/shim: the kernel shim's translation core on libtmem's raw ring,
# against a real tmemd (integration: each test starts its own).
TEST_SHIM := $(BUILD)/tests/shim/test_shim
SHIM_HARNESS_OBJS := $(BUILD)/tests/shim/shim_harness.o $(BUILD)/tests/shim/shim_env_user.o \
	$(BUILD)/tests/shim/shim_test_util.o \
	$(BUILD)/tests/shim/tmemd_fixture.o

INTEGRATION_TESTS += $(TEST_SHIM)

$(TEST_SHIM): $(BUILD)/tests/shim/test_shim.o $(SHIM_HARNESS_OBJS) $(TEST_COMMON_LIB) \
		$(SHIM_CORE_OBJS) $(LIBTMEM_A) | $(TMEMD)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(call pkg_libs,check) -o $@

$(BUILD)/tests/shim/%.o: EXTRA_CFLAGS += $(call pkg_cflags,check) \
	-DSHIM_TEST_TMEMD='"$(abspath $(TMEMD))"'

# The core alone against an in-process fake backend: a unit test, so it
# also runs under ASan+UBSan, TSan and valgrind.
TEST_SHIM_CORE := $(BUILD)/tests/shim/test_shim_core
UNIT_TESTS += $(TEST_SHIM_CORE)
TSAN_TESTS += $(TEST_SHIM_CORE)

$(TEST_SHIM_CORE): $(BUILD)/tests/shim/test_shim_core.o \
		$(BUILD)/tests/shim/fake_backend.o \
		$(BUILD)/tests/shim/shim_env_user.o \
		$(BUILD)/tests/shim/shim_test_util.o $(TEST_COMMON_LIB) $(SHIM_CORE_OBJS)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(call pkg_libs,check) -o $@

# tmemcache's core (core/shim_rcache.c) on the fake backend and a fake
# disk: orderings, the write/read races, and a threaded model check.
TEST_SHIM_RCACHE := $(BUILD)/tests/shim/test_shim_rcache
RCACHE_TEST_OBJS := $(BUILD)/tests/shim/fake_disk.o $(BUILD)/tests/shim/rcache_stress.o \
	$(BUILD)/tests/shim/rcache_fixture.o
UNIT_TESTS += $(TEST_SHIM_RCACHE)
TSAN_TESTS += $(TEST_SHIM_RCACHE)

$(TEST_SHIM_RCACHE): $(BUILD)/tests/shim/test_shim_rcache.o \
		$(BUILD)/tests/shim/fake_backend.o $(RCACHE_TEST_OBJS) \
		$(BUILD)/tests/shim/shim_env_user.o \
		$(BUILD)/tests/shim/shim_test_util.o $(TEST_COMMON_LIB) $(SHIM_CORE_OBJS)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(call pkg_libs,check) -o $@

# The same core against a real tmemd: orderings, a million random racing
# requests with tmemd evicting, tmemd killed and restarted.
TEST_SHIM_RCACHE_TMEMD := $(BUILD)/tests/shim/test_shim_rcache_tmemd
INTEGRATION_TESTS += $(TEST_SHIM_RCACHE_TMEMD)

$(TEST_SHIM_RCACHE_TMEMD): $(BUILD)/tests/shim/test_shim_rcache_tmemd.o \
		$(RCACHE_TEST_OBJS) $(SHIM_HARNESS_OBJS) $(TEST_COMMON_LIB) $(SHIM_CORE_OBJS) \
		$(LIBTMEM_A) | $(TMEMD) $(TMEMCTL)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(call pkg_libs,check jansson) -o $@

$(BUILD)/tests/shim/test_shim_rcache_tmemd.o: EXTRA_CFLAGS += $(call pkg_cflags,jansson) \
	-DSHIM_TEST_TMEMCTL='"$(abspath $(TMEMCTL))"'

# proto/tmem_barrier.h's fence under TSan: see TSAN_NO_FENCE_WARNING
# (the store->load order of the sleep handshake; every shared field it
# orders is an atomic, so the race detection TSan does do is unaffected).
$(BUILD)/tests/shim/%.o: EXTRA_CFLAGS += $(TSAN_NO_FENCE_WARNING)

# bench-shim-blk: /dev/tmemswap0's core against tmemd, one page per ring
# round trip vs batches (shim_blk_rw); prints MiB/s and doorbells/page.
SHIM_BLK_BENCH := $(BUILD)/bench/shim-blk-bench
$(SHIM_BLK_BENCH): $(BUILD)/tests/shim/shim_blk_bench.o $(SHIM_HARNESS_OBJS) \
		$(SHIM_CORE_OBJS) $(LIBTMEM_A)
	@mkdir -p $(@D)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(call pkg_libs,check) -o $@
all: $(SHIM_BLK_BENCH)
bench-shim-blk: $(SHIM_BLK_BENCH) $(TMEMD)
	$(Q)$<
BENCH_TARGETS += bench-shim-blk
.PHONY: bench-shim-blk

# bench-shim-rcache: tmemcache's core against tmemd, the cost per 4 KiB
# block of a miss and of a hit, one block per call vs batches of 32.
SHIM_RCACHE_BENCH := $(BUILD)/bench/shim-rcache-bench
$(SHIM_RCACHE_BENCH): $(BUILD)/tests/shim/shim_rcache_bench.o \
		$(BUILD)/tests/shim/fake_disk.o $(SHIM_HARNESS_OBJS) \
		$(SHIM_CORE_OBJS) $(LIBTMEM_A)
	@mkdir -p $(@D)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(call pkg_libs,check) -o $@
all: $(SHIM_RCACHE_BENCH)
bench-shim-rcache: $(SHIM_RCACHE_BENCH) $(TMEMD)
	$(Q)$<
BENCH_TARGETS += bench-shim-rcache
.PHONY: bench-shim-rcache
