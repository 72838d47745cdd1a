# guest-shim/kernel: tmem_shim.ko (Kbuild) and its kernel-independent
# core, whose objects the userspace harness in tests/shim/ links.
#
#   make shim              build guest-shim/kernel/tmem_shim.ko against KDIR
#   make shim-dkms         stage the DKMS source tree in build/dkms/: the
#                          same tree, dkms.conf (mk/dkms.conf.in), name and
#                          version as make install and tmem-shim-dkms
#   make check             also: shim-check (zero warnings against Debian's
#                          headers), shim-checkpatch, shim-dkms-check
# (tmem_shim.4 is linted with every other page by man-lint, tests/packaging.)
SHIM_DIR := guest-shim/kernel
SHIM_CORE_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard $(SHIM_DIR)/core/*.c))
SHIM_KSRCS := $(wildcard $(SHIM_DIR)/*.c $(SHIM_DIR)/*.h $(SHIM_DIR)/core/*.c $(SHIM_DIR)/core/*.h)
SHIM_KSRCS := $(filter-out %.mod.c,$(SHIM_KSRCS))
# The one file allowed to name LINUX_VERSION_CODE (see its comment).
SHIM_COMPAT_H := $(SHIM_DIR)/tmem_shim_compat.h

# Debian's headers (linux-headers-amd64): the newest installed.
SHIM_DEBIAN_KDIR = $(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n 1)
KDIR ?= $(or $(wildcard /lib/modules/$(shell uname -r)/build),$(SHIM_DEBIAN_KDIR))

CHECKPATCH_DIR := build/checkpatch
CHECKPATCH := $(CHECKPATCH_DIR)/checkpatch.pl
LINUX_SOURCE_TAR := /usr/src/linux-source-6.1.tar.xz

# proto/tmem_barrier.h's fence under TSan: see TSAN_NO_FENCE_WARNING.
$(BUILD)/guest-shim/kernel/core/%.o: EXTRA_CFLAGS += $(TSAN_NO_FENCE_WARNING)

# Run by make check and make check-shim.
CHECK_EXTRA_shim += shim-check shim-checkpatch shim-dkms-check

shim: | $(DEPS_STAMP)
	@test -d "$(KDIR)" || { echo "shim: no kernel build tree (KDIR=$(KDIR))"; exit 1; }
	$(Q)$(MAKE) --no-print-directory -C $(KDIR) M=$(abspath $(SHIM_DIR)) modules

# Zero warnings: -Werror, and any "warning" in the log fails too
# (modpost and Kbuild print theirs without failing).
shim-check: | $(DEPS_STAMP)
	@test -n "$(SHIM_DEBIAN_KDIR)" || { echo "shim-check: linux-headers-amd64 missing"; exit 1; }
	@mkdir -p build
	$(call quiet,KBUILD,$(SHIM_DIR)/tmem_shim.ko)
	$(Q)$(MAKE) --no-print-directory -C $(SHIM_DEBIAN_KDIR) M=$(abspath $(SHIM_DIR)) \
		KCFLAGS=-Werror modules > build/shim-kbuild.log 2>&1 || \
		{ cat build/shim-kbuild.log; exit 1; }
	$(Q)if grep -i 'warning' build/shim-kbuild.log; then \
		echo "shim-check: warnings (build/shim-kbuild.log)"; exit 1; fi

# checkpatch.pl is not in the headers package: take it (and the two
# files it reads) from Debian's linux-source-6.1, once.
$(CHECKPATCH): | $(DEPS_STAMP)
	@mkdir -p $(CHECKPATCH_DIR)
	$(call quiet,UNTAR,$@)
	$(Q)tar -xJf $(LINUX_SOURCE_TAR) -C $(CHECKPATCH_DIR) --strip-components=2 \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
	$(Q)touch $@

shim-checkpatch: $(CHECKPATCH)
	$(call quiet,CHKPATCH,$(SHIM_DIR))
	$(Q)perl $(CHECKPATCH) --no-tree -f --quiet $(filter-out $(SHIM_COMPAT_H),$(SHIM_KSRCS))
	$(Q)perl $(CHECKPATCH) --no-tree -f --quiet \
		--ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON $(SHIM_COMPAT_H)

# DKMS copies the module folder alone: stage it with proto/'s headers,
# exactly as make install does (install_dkms_tree, DKMS_NAME and VERSION
# are mk/install.mk's, included later: hence "=", not ":=").
SHIM_DKMS_DIR = build/dkms/$(DKMS_NAME)-$(VERSION)
shim-dkms: | $(DEPS_STAMP)
	$(Q)rm -rf build/dkms
	$(call install_dkms_tree,$(SHIM_DKMS_DIR))
	@echo "  DKMS    $(SHIM_DKMS_DIR) (dkms add $(SHIM_DKMS_DIR))"

# The staged tree builds on its own (no ../../proto to fall back on).
shim-dkms-check: shim-dkms
	@test -n "$(SHIM_DEBIAN_KDIR)" || { echo "shim-dkms-check: linux-headers-amd64 missing"; exit 1; }
	$(Q)(. $(SHIM_DKMS_DIR)/dkms.conf && \
		[[ "$$PACKAGE_NAME-$$PACKAGE_VERSION" == $(notdir $(SHIM_DKMS_DIR)) ]]) || \
		{ echo "shim-dkms-check: $(SHIM_DKMS_DIR)/dkms.conf names another package"; exit 1; }
	$(Q)rm -rf build/dkms-check && mkdir -p build/dkms-check && \
		cp -r $(SHIM_DKMS_DIR) build/dkms-check/src
	$(Q)$(MAKE) --no-print-directory -C $(SHIM_DEBIAN_KDIR) M=$(abspath build/dkms-check/src) \
		KCFLAGS=-Werror modules > build/dkms-check/kbuild.log 2>&1 || \
		{ cat build/dkms-check/kbuild.log; exit 1; }
	$(Q)test -f build/dkms-check/src/tmem_shim.ko

.PHONY: shim shim-check shim-checkpatch shim-dkms shim-dkms-check

# Kbuild writes next to the sources; make clean removes that too.
CLEAN_EXTRA += $(wildcard $(SHIM_DIR)/*.o $(SHIM_DIR)/*.ko $(SHIM_DIR)/*.mod \
	$(SHIM_DIR)/*.mod.c $(SHIM_DIR)/.*.cmd $(SHIM_DIR)/core/*.o \
	$(SHIM_DIR)/core/.*.cmd $(SHIM_DIR)/Module.symvers $(SHIM_DIR)/modules.order)
