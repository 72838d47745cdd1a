# tests/bench: benchmark programs.  Each is built by `make` and run by a
# phony target that `make bench` runs (BENCH_TARGETS); they print numbers.
# To add one: a program rule, `all: PROGRAM`, and a phony run target.

$(BUILD)/tests/bench/%.o: EXTRA_CFLAGS += $(call pkg_cflags,jansson)

# store-bench: the page store alone vs plain memcpy (pools/).
$(BUILD)/bench/store-bench: $(BUILD)/tests/bench/store_bench.o $(POOLS_LIB)
	@mkdir -p $(@D)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(POOLS_LDLIBS) $(call pkg_libs,jansson) -o $@
all: $(BUILD)/bench/store-bench
bench-store: $(BUILD)/bench/store-bench
	$(Q)$<
BENCH_TARGETS += bench-store
.PHONY: bench-store

# policy-bench: puts into a full pool (each evicts) vs an empty one (policy/).
$(BUILD)/bench/policy-bench: $(BUILD)/tests/bench/policy_bench.o \
		$(LIBTMEMPOLICY) $(POOLS_LIB)
	@mkdir -p $(@D)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(POOLS_LDLIBS) -o $@
all: $(BUILD)/bench/policy-bench
bench-policy: $(BUILD)/bench/policy-bench
	$(Q)$<
BENCH_TARGETS += bench-policy
.PHONY: bench-policy

# spill-bench: the host tier (issue 29): spill throughput against the
# device's sequential write rate, read-back latency against a plain
# pread, and the victim order, in SPILL_BENCH_DIR (default /var/tmp).
$(BUILD)/bench/spill-bench: $(BUILD)/tests/bench/spill_bench.o $(POOLS_LIB)
	@mkdir -p $(@D)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(POOLS_LDLIBS) -o $@
all: $(BUILD)/bench/spill-bench
bench-spill: $(BUILD)/bench/spill-bench
	$(Q)$<
BENCH_TARGETS += bench-spill
.PHONY: bench-spill

# recovery-bench: adopting a full memfd arena after a restart (pools/recover.c).
$(BUILD)/bench/recovery-bench: $(BUILD)/tests/bench/recovery_bench.o $(POOLS_LIB)
	@mkdir -p $(@D)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(POOLS_LDLIBS) -o $@
all: $(BUILD)/bench/recovery-bench
bench-recovery: $(BUILD)/bench/recovery-bench
	$(Q)$<
BENCH_TARGETS += bench-recovery
.PHONY: bench-recovery

# kick-storm-bench: another client's p99 and tmemd's CPU while one client
# rings its doorbell in a tight loop (issue 19 item 9), against a real
# tmemd (the daemon tests' harness starts it).
$(BUILD)/tests/bench/kick_storm_bench.o: EXTRA_CFLAGS += $(call pkg_cflags,check)
$(BUILD)/bench/kick-storm-bench: $(BUILD)/tests/bench/kick_storm_bench.o \
		$(BUILD)/tests/daemon/harness.o $(LIBTMEM_A) | $(TMEMD)
	@mkdir -p $(@D)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(call pkg_libs,check jansson) -o $@
all: $(BUILD)/bench/kick-storm-bench
bench-kick-storm: $(BUILD)/bench/kick-storm-bench
	$(Q)$<
BENCH_TARGETS += bench-kick-storm
.PHONY: bench-kick-storm

# start-bench: tmemd's start with state.json at its cap, and over it
# (issue 32), against a real tmemd (the daemon tests' harnesses).
$(BUILD)/tests/bench/start_bench.o: EXTRA_CFLAGS += $(call pkg_cflags,check)
$(BUILD)/bench/start-bench: $(BUILD)/tests/bench/start_bench.o \
		$(BUILD)/tests/daemon/start_files.o $(BUILD)/tests/daemon/restart_harness.o \
		$(BUILD)/tests/daemon/harness.o $(LIBTMEM_A) | $(TMEMD)
	@mkdir -p $(@D)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(call pkg_libs,check jansson) -o $@
all: $(BUILD)/bench/start-bench
bench-start: $(BUILD)/bench/start-bench
	$(Q)$<
BENCH_TARGETS += bench-start
.PHONY: bench-start

# compress-bench: capacity, speed and churn of compression on a corpus of
# real pages (tests/bench/compress_bench.c; the corpus is built once from
# this machine's files: COMPRESS_CORPUS, tools/tmem-bench/module.mk).
$(BUILD)/bench/compress-bench: $(BUILD)/tests/bench/compress_bench.o $(POOLS_LIB)
	@mkdir -p $(@D)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(POOLS_LDLIBS) $(call pkg_libs,jansson) -o $@
all: $(BUILD)/bench/compress-bench
bench-compress: $(BUILD)/bench/compress-bench $(COMPRESS_CORPUS)
	$(Q)$< --corpus $(COMPRESS_CORPUS)
BENCH_TARGETS += bench-compress
.PHONY: bench-compress

# migrate-bench: a migration between two tmemds against a plain TCP
# stream of the same bytes (issue 27), against real tmemds.
$(BUILD)/tests/bench/migrate_bench.o: EXTRA_CFLAGS += $(call pkg_cflags,check) \
	-DTMEMCTL_BIN='"$(TMEMCTL)"'
$(BUILD)/bench/migrate-bench: $(BUILD)/tests/bench/migrate_bench.o \
		$(BUILD)/tests/libtmem/migrate_fixture.o $(BUILD)/tests/daemon/restart_harness.o \
		$(BUILD)/tests/daemon/harness.o $(TEST_COMMON_LIB) $(LIBTMEM_A) | $(TMEMD) $(TMEMCTL)
	@mkdir -p $(@D)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(call pkg_libs,check jansson) -o $@
all: $(BUILD)/bench/migrate-bench
# Then over shaped links (migrate-link.sh), where root and iproute2 allow.
MIGRATE_LINK_RATES ?= 1gbit 10gbit
bench-migrate: $(BUILD)/bench/migrate-bench
	$(Q)$<
	$(Q)if [ "$$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v tc >/dev/null && \
		command -v ip >/dev/null; then \
		for r in $(MIGRATE_LINK_RATES); do \
			unshare -n tests/bench/migrate-link.sh $$r $< || exit 1; \
		done; \
	else \
		echo "migrate-bench: over a shaped link: skipped (needs root, unshare, ip and tc)"; \
	fi
BENCH_TARGETS += bench-migrate
.PHONY: bench-migrate
