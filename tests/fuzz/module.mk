# tests/fuzz/: running the libFuzzer targets (clang), their kept corpora
# (tests/fuzz/corpus/TARGET/) and the handshake and state-file targets.
#
#   make fuzz-replay   every target runs every input of its corpus once
#                      (part of make check; seconds)
#   make fuzz-ci       every target fuzzes for FUZZ_SECONDS (60) from a
#                      copy of its corpus (.ci/run); a crash is written to
#                      build/fuzz/artifacts/ and fails the run
#   make fuzz-NAME     one target, as fuzz-ci does it
#
# A target registers itself: FUZZ_TARGETS += NAME and FUZZ_BIN_NAME :=
# its binary (FUZZ_FLAGS_NAME: extra libFuzzer flags).  An input that
# crashed a target goes into its corpus with the fix.  Recipes expand
# these lists when they run, after every module.mk is read.
#
# A fuzz binary links objects built by clang from each source with its
# own folder's -I paths (src_inc, as the build's: a harness in tests/ gets
# INC_tests, daemon/config.c INC_daemon), so the include guard holds here
# too: $(call fuzz_objs,SOURCES) names them.  This file is read before
# the other tests/ folders, whose fuzz targets use it.

FUZZ_SECONDS ?= 60
# Slowness fails as a crash does: an input that takes longer than
# FUZZ_TIMEOUT seconds (under ASan and UBSan at -O1), or a run that
# takes more than FUZZ_RSS_MB, is a finding, written to
# build/fuzz/artifacts/ (timeout-*, oom-*), and libFuzzer exits non-zero.
FUZZ_TIMEOUT ?= 5
FUZZ_RSS_MB ?= 1024
FUZZ_LIMITS = -timeout=$(FUZZ_TIMEOUT) -rss_limit_mb=$(FUZZ_RSS_MB)
FUZZ_CC = clang -std=gnu11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined
FUZZ_OBJ := build/fuzz/obj
FUZZ_PKG_CFLAGS = $(call pkg_cflags,inih jansson $(XEN_PKGS))
fuzz_objs = $(patsubst %.c,$(FUZZ_OBJ)/%.o,$(1))

$(FUZZ_OBJ)/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(call quiet,CLANG,$@)
	$(Q)$(FUZZ_CC) -MMD -MP $(call src_inc,$<) $(FUZZ_PKG_CFLAGS) -c $< -o $@

# $(call fuzz_link): a fuzz binary from its prerequisites (objects and
# libraries) and LIBS.
define fuzz_link
	@mkdir -p $(@D)
	$(call quiet,CLANG,$@)
	$(Q)$(FUZZ_CC) $^ $(1) -o $@
endef

fuzz_corpus = tests/fuzz/corpus/$(1)

# One campaign: fuzz_run NAME.
define fuzz_run
	@rm -rf build/fuzz/work/$(1) && mkdir -p build/fuzz/work/$(1) build/fuzz/artifacts
	@cp $(call fuzz_corpus,$(1))/* build/fuzz/work/$(1)/
	@echo "== $(1): $(FUZZ_SECONDS) s from $(call fuzz_corpus,$(1))"
	$(Q)$(FUZZ_BIN_$(1)) -max_total_time=$(FUZZ_SECONDS) $(FUZZ_LIMITS) \
		-print_final_stats=1 $(FUZZ_FLAGS_$(1)) \
		-artifact_prefix=build/fuzz/artifacts/$(1)- build/fuzz/work/$(1)
endef

# Replays: each input of the corpus once (files as arguments).
fuzz_replay_cmd = echo "== $(1): replaying $(words $(wildcard $(call fuzz_corpus,$(1))/*)) inputs" && \
	$(FUZZ_BIN_$(1)) $(FUZZ_LIMITS) $(FUZZ_FLAGS_$(1)) \
		$(wildcard $(call fuzz_corpus,$(1))/*) >build/fuzz/replay-$(1).log 2>&1 || \
	{ cat build/fuzz/replay-$(1).log; echo "FAILED: replay of $(1)"; exit 1; }

fuzz-replay: | $(DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory $(foreach t,$(FUZZ_TARGETS),$(FUZZ_BIN_$(t)))
	$(Q)$(foreach t,$(FUZZ_TARGETS),$(call fuzz_replay_cmd,$(t)) &&) true

fuzz-ci: | $(DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory $(foreach t,$(FUZZ_TARGETS),$(FUZZ_BIN_$(t)))
	$(Q)for t in $(FUZZ_TARGETS); do \
		$(MAKE) --no-print-directory $$t || exit 1; \
	done

CHECK_EXTRA_fuzz += fuzz-replay

# The local transport's handshake: hello plus fds (fuzz_handshake.c
# includes daemon/local/transport_local.c; the rest of tmemd comes from source
# as for fuzz-dispatch).
FUZZ_HANDSHAKE := build/fuzz/fuzz_handshake
FUZZ_TARGETS += fuzz-handshake
FUZZ_BIN_fuzz-handshake := $(FUZZ_HANDSHAKE)
fuzz-handshake: $(FUZZ_HANDSHAKE)
	$(call fuzz_run,fuzz-handshake)

$(FUZZ_HANDSHAKE): $(call fuzz_objs,tests/fuzz/fuzz_handshake.c \
		$(filter-out daemon/local/transport_local.c daemon/service.c daemon/control_glue.c,$(DAEMON_SRCS)) \
		$(DAEMON_XEN_SRCS) daemon/systemd/sd_log.c daemon/systemd/sd_fdstore.c \
		$(POOLS_SRCS) $(POLICY_SRCS))
	$(call fuzz_link,$(DAEMON_LDLIBS) $(LIBTMEMD_SYSTEMD_LDLIBS) -lpthread)

# The control server's state file.
FUZZ_STATE := build/fuzz/fuzz_state
FUZZ_TARGETS += fuzz-state
FUZZ_BIN_fuzz-state := $(FUZZ_STATE)
# Inputs up to one byte over the state file's cap (CTL_STATE_MAX_BYTES,
# 4 MiB), so the cap and a file at it are reached.
FUZZ_FLAGS_fuzz-state := -max_len=4194305
fuzz-state: $(FUZZ_STATE)
	$(call fuzz_run,fuzz-state)

$(FUZZ_STATE): $(call fuzz_objs,tests/fuzz/fuzz_state.c daemon/control/ctl_state.c \
		daemon/control/ctl_proto.c pools/zmode.c)
	$(call fuzz_link,$(call pkg_libs,jansson))

.PHONY: fuzz-replay fuzz-ci fuzz-handshake fuzz-state

# Compression and the size-class allocator (pools/codec.c, pools/zs.c):
# any page compresses and comes back exact, any bytes decompress without
# an overrun, and a damaged arena is survived, live and after recovery.
FUZZ_COMPRESS := build/fuzz/fuzz_compress
FUZZ_TARGETS += fuzz-compress
FUZZ_BIN_fuzz-compress := $(FUZZ_COMPRESS)
fuzz-compress: $(FUZZ_COMPRESS)
	$(call fuzz_run,fuzz-compress)

$(FUZZ_COMPRESS): $(call fuzz_objs,tests/fuzz/fuzz_compress.c $(POOLS_SRCS))
	$(call fuzz_link,$(POOLS_LDLIBS) -lpthread)
.PHONY: fuzz-compress

# The migration protocol between two tmemds (daemon/migrate/mig_wire.c)
# and the import of the pages it carries (pools/transfer.c).
FUZZ_MIGRATE := build/fuzz/fuzz_migrate
FUZZ_TARGETS += fuzz-migrate
FUZZ_BIN_fuzz-migrate := $(FUZZ_MIGRATE)
FUZZ_FLAGS_fuzz-migrate := -max_len=65536
fuzz-migrate: $(FUZZ_MIGRATE)
	$(call fuzz_run,fuzz-migrate)

$(FUZZ_MIGRATE): $(call fuzz_objs,tests/fuzz/fuzz_migrate.c daemon/migrate/mig_wire.c $(POOLS_SRCS))
	$(call fuzz_link,$(POOLS_LDLIBS) -lpthread)
.PHONY: fuzz-migrate
