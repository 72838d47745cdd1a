# tmemd: top-level GNU Makefile.  See README.md.
#
#   make              build everything under build/
#   make deps         apt-install missing Debian packages (every target needs it)
#   make check        every test, plus ASan+UBSan, TSan and valgrind runs of the
#                     unit tests; ends with "make check: N passed, N failed,
#                     N skipped" (CHECK_STRICT=1: a skip fails it, as in .ci/run)
#   make check-proto, check-pools, check-policy, check-daemon, check-control,
#        check-libtmem, check-xen-unit, check-shim, check-packaging, check-fuzz
#                     one tests/<folder>: builds and runs its test programs and
#                     its other checks (SANITIZE=... runs them in that build)
#   make check-headers  every header compiles alone (proto/ also freestanding,
#                     guest-shim/kernel/ also with Kbuild)
#   make bench        benchmarks; print numbers
#   make coverage     line coverage of pools/ and policy/ (fails under 90%)
#   make clean
#   V=1               show the commands
#   SANITIZE=address,undefined   build with sanitizers (into build/san-...)
#
# Each folder has a module.mk that adds its objects and programs; they are
# read in dependency order (MODULES below), so a module.mk may use the
# variables of every folder it depends on.  The folder a source lives in
# decides its -I paths (INC_<folder>), so a forbidden include fails to
# build (DESIGN.md: dependencies point down).

.DEFAULT_GOAL := all
SHELL := /bin/bash

V ?= 0
SANITIZE ?=
OPT ?= -O2 -g
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
DESTDIR ?=

ifeq ($(SANITIZE),)
BUILD ?= build
SAN_FLAGS :=
else
BUILD ?= build/san-$(subst $(comma),-,$(SANITIZE))
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif
comma := ,

ifeq ($(V),1)
Q :=
quiet = @true
else
Q := @
quiet = @printf '  %-7s %s\n' $(1) $(2)
endif

WARN := -Wall -Wextra -Werror -Wformat=2 -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wvla
BASE_CFLAGS := -std=gnu11 -pthread -fPIC -D_GNU_SOURCE -MMD -MP $(WARN)
ALL_CFLAGS = $(BASE_CFLAGS) $(OPT) $(SAN_FLAGS) $(CFLAGS)
ALL_LDFLAGS = -pthread $(SAN_FLAGS) $(LDFLAGS)

pkg_cflags = $(shell pkg-config --cflags $(1) 2>/dev/null)
pkg_libs = $(shell pkg-config --libs $(1) 2>/dev/null)

# Allowed include paths per folder: INC_<top folder>, or, where the halves
# of a folder may not include each other, INC_<top>/<sub>.  guest-shim's
# libtmem and kernel core both use proto/ only (the kernel's own files,
# guest-shim/kernel/*.c, are built by Kbuild: guest-shim/kernel/Kbuild).
# common/ holds header-only libc helpers the host programs share (hosted
# C, unlike proto/).
INC_proto := -Iproto
INC_common := -Icommon
INC_pools := -Iproto -Ipools
INC_policy := -Iproto -Ipools -Ipolicy
INC_daemon := -Iproto -Icommon -Ipools -Ipolicy -Idaemon
INC_guest-shim/libtmem := -Iproto -Iguest-shim/libtmem
INC_guest-shim/kernel := -Iproto -Iguest-shim/kernel/core
INC_tools := -Iproto -Icommon -Iguest-shim/libtmem -Itools
INC_tests := -Iproto -Icommon -Ipools -Ipolicy -Idaemon -Iguest-shim/libtmem \
	-Iguest-shim/kernel/core -Itools -Itests
# The -I paths of a source or header: INC_<a>/<b> for a path a/b/..., else
# INC_<a>.
src_top = $(firstword $(subst /, ,$(1)))
src_sub = $(call src_top,$(1))/$(word 2,$(subst /, ,$(1)))
src_inc = $(or $(INC_$(call src_sub,$(1))),$(INC_$(call src_top,$(1))))

# GCC 12 refuses the full fence of proto/tmem_barrier.h under TSan
# (-Wtsan): TSan does not model it.  The fence orders shared memory with
# the other process (or the other half of a ring), which TSan cannot see
# anyway, and every shared field it orders is an atomic.  The folders
# that include tmem_barrier.h add this to their objects' flags.
TSAN_NO_FENCE_WARNING := $(if $(findstring thread,$(SANITIZE)),-Wno-tsan)

# Filled by module.mk files.
PROGRAMS :=        # installed binaries under $(BUILD)
LIBS :=            # static/shared libraries under $(BUILD)
UNIT_TESTS :=      # Check programs: run by make check, also under ASan+UBSan
TSAN_TESTS :=      # Check programs also run under ThreadSanitizer
INTEGRATION_TESTS := # programs run by make check after the unit tests
CHECK_EXTRA :=     # further targets make check depends on
BENCH_TARGETS :=   # targets make bench runs
COVERAGE_DIRS :=   # source folders whose coverage make coverage reports
CLEAN_EXTRA :=

DEPS_STAMP := build/.deps-ok

all: $(DEPS_STAMP)

# Every other target depends on deps, as an order-only prerequisite.
deps:
	$(Q)mk/deps.sh mk/deps.list
	$(Q)mkdir -p build && touch $(DEPS_STAMP)

$(DEPS_STAMP): mk/deps.list mk/deps.sh
	$(Q)mk/deps.sh mk/deps.list
	$(Q)mkdir -p $(@D) && touch $@

# Dependency order: a folder after everything it builds on (DESIGN.md's
# table), so its module.mk can name their outputs by variable.  Within
# daemon/, the libraries tmemd links come before daemon/ itself; within
# tests/, the shared runner and the fuzz rules come first.  A new folder's
# module.mk must be added here (the check below says so).
MODULES := proto pools policy \
	daemon/control daemon/systemd daemon/xen daemon \
	guest-shim/libtmem guest-shim/kernel \
	tools/tmemctl tools/tmem-bench \
	systemd \
	tests/common tests/fuzz tests/proto tests/pools tests/policy tests/daemon \
	tests/control tests/libtmem tests/xen-unit tests/shim tests/packaging \
	tests/bench tests/xen
MODULE_FILES := $(addsuffix /module.mk,$(MODULES))
ifneq ($(sort $(MODULE_FILES)),$(sort $(wildcard */module.mk */*/module.mk */*/*/module.mk)))
$(error MODULES in the Makefile does not list every module.mk: \
	$(filter-out $(MODULE_FILES),$(wildcard */module.mk */*/module.mk */*/*/module.mk)))
endif
include $(MODULE_FILES)
include mk/headers.mk

all: $(LIBS) $(PROGRAMS)

$(BUILD)/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(call src_inc,$<) $(EXTRA_CFLAGS) -c $< -o $@

# ---- tests -----------------------------------------------------------------

# $(call run_tests,PROGRAMS,PREFIX,LABEL): runs each program (after the
# command prefix PREFIX, e.g. an environment or valgrind) through
# mk/run-tests.sh: exit 0 passes, 77 is a skip (tests/common/test_main.h),
# anything else fails.  Every program runs; the label's line
# "LABEL: N passed, N failed, N skipped" ends it, and it fails if one
# failed (or, with CHECK_STRICT=1, was skipped).  Each result is also
# appended to TEST_RESULTS, which make check totals at the end.
TEST_RESULTS := build/test-results
CHECK_STRICT ?= 0
run_tests = $(Q)TEST_RESULTS=$(TEST_RESULTS) CHECK_STRICT=$(CHECK_STRICT) \
	mk/run-tests.sh '$(or $(3),$@)' '$(2)' $(1)
# A new top-level make starts a new tally.
ifeq ($(MAKELEVEL),0)
$(shell rm -f $(TEST_RESULTS))
endif

# tests/<folder>s with a check-<folder> target.  CHECK_EXTRA_<folder>
# lists a folder's checks other than its programs (module.mk files
# outside tests/ add to it too); CHECK_EXTRA holds them all for make check.
TEST_FOLDERS := proto pools policy daemon control libtmem xen-unit shim packaging fuzz
CHECK_EXTRA += $(foreach f,$(TEST_FOLDERS),$(CHECK_EXTRA_$(f)))

unit-tests: $(UNIT_TESTS)
	$(call run_tests,$(UNIT_TESTS),,unit-tests$(if $(SANITIZE), ($(SANITIZE))))

integration-tests: $(INTEGRATION_TESTS) $(PROGRAMS) $(LIBS)
	$(call run_tests,$(INTEGRATION_TESTS))

tsan-tests: $(TSAN_TESTS)
	$(call run_tests,$(TSAN_TESTS),,tsan-tests)

asan-check: | $(DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory SANITIZE=address,undefined unit-tests

tsan-check: | $(DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory SANITIZE=thread tsan-tests

valgrind-check: $(UNIT_TESTS)
	$(call run_tests,$(UNIT_TESTS),CK_FORK=no TMEM_TEST_QUICK=1 valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite)

check: all unit-tests integration-tests $(CHECK_EXTRA)
	$(Q)$(MAKE) --no-print-directory asan-check
	$(Q)$(MAKE) --no-print-directory tsan-check
	$(Q)$(MAKE) --no-print-directory valgrind-check
	$(Q)CHECK_STRICT=$(CHECK_STRICT) mk/run-tests.sh --total '$(TEST_RESULTS)' 'make check'

# check-<folder>: one tests/<folder>'s programs (unit and integration) and
# its other checks (CHECK_EXTRA_<folder>, see TEST_FOLDERS).
folder_tests = $(filter $(BUILD)/tests/$(1)/%,$(UNIT_TESTS) $(INTEGRATION_TESTS))
define check_folder
check-$(1): $(call folder_tests,$(1)) \
		$(if $(filter $(call folder_tests,$(1)),$(INTEGRATION_TESTS)),$(PROGRAMS) $(LIBS)) \
		$(CHECK_EXTRA_$(1))
	$(if $(call folder_tests,$(1)),$$(call run_tests,$(call folder_tests,$(1)),,check-$(1)))
.PHONY: check-$(1)
endef
$(foreach f,$(TEST_FOLDERS),$(eval $(call check_folder,$(f))))

bench: all $(BENCH_TARGETS)

coverage: | $(DEPS_STAMP)
	$(Q)rm -rf build/cov
	$(Q)$(MAKE) --no-print-directory BUILD=build/cov OPT="-O0 -g --coverage" \
		LDFLAGS="--coverage" unit-tests
	$(Q)gcovr --root . --object-directory build/cov $(addprefix --filter ,$(addsuffix /,$(COVERAGE_DIRS))) \
		--print-summary --fail-under-line 90 build/cov

clean:
	rm -rf build $(CLEAN_EXTRA)

.PHONY: all deps check unit-tests integration-tests tsan-tests asan-check \
	tsan-check valgrind-check bench coverage clean

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
