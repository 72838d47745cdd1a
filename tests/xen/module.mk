# tests/xen: the end-to-end test on a real Xen hypervisor (issue #8).
#
#   make e2e-xen   install mk/deps-xen.list, build tmemd, tmemctl, the
#                  guest workload and tmem_shim.ko (for Debian's stock 6.1
#                  kernel and for a frontswap test kernel built once per
#                  machine into /var/cache/tmemd-e2e), boot Xen 4.17
#                  under QEMU with tmemd in dom0, four PV guests (two
#                  swapping; pv-readcache reading a file set through the
#                  tmemcache target; pv-cleancache the same file set on
#                  ext4 with cleancache_ops, on the test kernel, which has
#                  cleancache restored) and a PVH guest, and check.
#                  E2E_PVH=0 leaves the PVH guest out (README, "Known
#                  platform limits"), E2E_CLEANCACHE=0 pv-cleancache.
#
# Not part of `make check` (it needs root, ~15 minutes and, the first
# time, a kernel build); .ci/run runs it.  Scratch: build/e2e-xen/.
E2E_XEN_DIR := tests/xen
E2E_WORKLOAD := $(BUILD)/tests/xen/e2e-workload
E2E_FILESET := $(BUILD)/tests/xen/e2e-fileset
# Issue 28's cgroup case: a libtmem client in dom0 (dynamic, like tmemd).
E2E_CGFILL := $(BUILD)/tests/xen/e2e-cgfill
E2E_WORK ?= $(BUILD)/e2e-xen

# Static: the guests' initramfs has no C library.
$(E2E_WORKLOAD): $(E2E_XEN_DIR)/workload.c $(E2E_XEN_DIR)/e2e_pattern.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(call quiet,CCLD,$@)
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE $(WARN) -O2 -static $< -o $@

$(E2E_FILESET): $(E2E_XEN_DIR)/fileset.c $(E2E_XEN_DIR)/e2e_pattern.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(call quiet,CCLD,$@)
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE $(WARN) -O2 -static $< -o $@

$(E2E_CGFILL): $(BUILD)/tests/xen/cgfill.o $(LIBTMEM_A)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ -o $@

e2e-xen-deps:
	$(Q)mk/deps.sh mk/deps-xen.list

e2e-xen: e2e-xen-deps
	$(Q)$(MAKE) --no-print-directory $(TMEMD) $(TMEMCTL) $(E2E_WORKLOAD) \
		$(E2E_FILESET) $(E2E_CGFILL) shim-dkms
	$(Q)E2E_WORK=$(abspath $(E2E_WORK)) TMEMD=$(abspath $(TMEMD)) \
		TMEMCTL=$(abspath $(TMEMCTL)) WORKLOAD=$(abspath $(E2E_WORKLOAD)) \
		FILESET=$(abspath $(E2E_FILESET)) CGFILL=$(abspath $(E2E_CGFILL)) \
		SHIM_SRC=$(abspath $(SHIM_DKMS_DIR)) $(E2E_XEN_DIR)/run-e2e.sh

# make e2e-xen-migrate: two nested Xen hosts in two QEMUs, a PVH guest
# swapping through tmem live-migrated between them (issue 27, point 2;
# run-migrate.sh).  Needs root and about 25 minutes; not in .ci/run
# (README).  Scratch: build/e2e-xen-migrate/.
E2E_MIG_WORK ?= $(BUILD)/e2e-xen-migrate

e2e-xen-migrate: e2e-xen-deps
	$(Q)$(MAKE) --no-print-directory $(TMEMD) $(TMEMCTL) $(E2E_WORKLOAD) \
		$(E2E_FILESET) $(E2E_CGFILL) shim-dkms
	$(Q)E2E_WORK=$(abspath $(E2E_MIG_WORK)) TMEMD=$(abspath $(TMEMD)) \
		TMEMCTL=$(abspath $(TMEMCTL)) WORKLOAD=$(abspath $(E2E_WORKLOAD)) \
		FILESET=$(abspath $(E2E_FILESET)) CGFILL=$(abspath $(E2E_CGFILL)) \
		SHIM_SRC=$(abspath $(SHIM_DKMS_DIR)) $(E2E_XEN_DIR)/run-migrate.sh

.PHONY: e2e-xen e2e-xen-deps e2e-xen-migrate
