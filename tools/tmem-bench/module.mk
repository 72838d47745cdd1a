# tools/tmem-bench/: the load generator, and the demo and bench-daemon
# targets that start a real tmemd around it.

TMEM_BENCH := $(BUILD)/tmem-bench
TMEM_BENCH_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tools/tmem-bench/*.c))
PROGRAMS += $(TMEM_BENCH)

$(BUILD)/tools/tmem-bench/%.o: EXTRA_CFLAGS += $(call pkg_cflags,jansson)

$(TMEM_BENCH): $(TMEM_BENCH_OBJS) $(LIBTMEM_A)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(call pkg_libs,jansson liblz4) -o $@

# The demo's simulated guest (not installed; built by make, as the README
# names it).
TMEM_DEMO_GUEST := $(BUILD)/tmem-demo-guest
all: $(TMEM_DEMO_GUEST)
$(TMEM_DEMO_GUEST): $(BUILD)/tools/tmem-bench/demo/guest.o $(LIBTMEM_A)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ -o $@

# make demo: the README's run command.
demo: all $(TMEM_DEMO_GUEST)
	$(Q)BUILD=$(BUILD) tools/tmem-bench/demo.sh

# make bench-daemon: tmemd + tmem-bench, every number the issue asks for.
bench-daemon: all
	$(Q)BUILD=$(BUILD) tools/tmem-bench/bench-daemon.sh

BENCH_TARGETS += bench-daemon

# make bench-ab [REV=commit] [ROUNDS=n]: bench-daemon of this tree against
# REV's (default: the last commit before compression), alternating.  Not
# in make bench: it builds a second tree.
bench-ab: all
	$(Q)tools/tmem-bench/bench-ab.sh

# make check: the command lines of tmem-bench and tmem-demo-guest.
bench-cli-test: all $(TMEM_DEMO_GUEST)
	$(Q)BUILD=$(BUILD) tools/tmem-bench/cli-test.sh
CHECK_EXTRA += bench-cli-test

.PHONY: demo bench-daemon bench-ab bench-cli-test

# The page corpus of bench-compress (tests/bench) and bench-compress-daemon:
# 4 KiB pages of this machine's files, built once.
COMPRESS_CORPUS ?= $(BUILD)/bench/corpus.bin
$(COMPRESS_CORPUS):
	@mkdir -p $(@D)
	$(Q)tools/tmem-bench/make-corpus.sh $@

# make bench-compress-daemon: tmemd with compress = lz4 and tmem-bench
# --corpus (the corpus of bench-compress): the issue's speed points.
bench-compress-daemon: all $(COMPRESS_CORPUS)
	$(Q)BUILD=$(BUILD) CORPUS=$(COMPRESS_CORPUS) tools/tmem-bench/bench-compress-daemon.sh
BENCH_TARGETS += bench-compress-daemon
.PHONY: bench-compress-daemon
