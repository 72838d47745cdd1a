# tests/packaging/: the systemd helpers (unit test), the notify protocol
# of a real tmemd (make notify-test), the unit files, man pages and the
# DESTDIR install (CHECK_EXTRA_packaging).

TEST_SD := $(BUILD)/tests/packaging/test_sd
UNIT_TESTS += $(TEST_SD)

$(TEST_SD): $(BUILD)/tests/packaging/test_sd.o $(BUILD)/tests/packaging/notify_sock.o \
		$(TEST_COMMON_LIB) $(LIBTMEMD_SYSTEMD)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(call pkg_libs,check) $(LIBTMEMD_SYSTEMD_LDLIBS) -o $@

$(BUILD)/tests/packaging/%.o: EXTRA_CFLAGS += $(call pkg_cflags,check)

# The notify protocol of a real tmemd (also its own target, notify-test).
TEST_NOTIFY := $(BUILD)/tests/packaging/test_notify
INTEGRATION_TESTS += $(TEST_NOTIFY)

$(TEST_NOTIFY): $(BUILD)/tests/packaging/test_notify.o $(BUILD)/tests/packaging/notify_sock.o \
		$(TEST_COMMON_LIB)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(call pkg_libs,check) -o $@

notify-test: $(TEST_NOTIFY) $(TMEMD)
	$(Q)$(TEST_NOTIFY) $(TMEMD)

.PHONY: notify-test

# ---- CHECK_EXTRA_packaging: unit files, man pages, DESTDIR install --------

# $(TEST_NOTIFY) is only built here, so it keeps compiling until it is wired.
CHECK_EXTRA_packaging += packaging-units man-lint install-test conf-check completion-test \
	upgrade-test $(TEST_NOTIFY)

packaging-units: | $(DEPS_STAMP)
	$(Q)tests/packaging/units.sh systemd man

man-lint: | $(DEPS_STAMP)
	$(Q)tests/packaging/man-lint.sh man

conf-check: $(TMEMD)
	$(Q)tests/packaging/conf-check.sh $(TMEMD) systemd/tmemd.conf

install-test: all | $(DEPS_STAMP)
	$(Q)tests/packaging/install-test.sh $(MAKE) $(VERSION) BUILD=$(BUILD)

completion-test:
	$(Q)tests/packaging/completion.sh tools/tmemctl/tmemctl.bash

# Issue 30: an upgrade from each of these commits (two builds: its tmemd
# and libtmem, kept in build/upgrade/REV) keeps the pages or is refused by
# the package's preinst before anything stops.  223faaa: the last arena
# layout 1 (refused); 6c4988f: main before issue 30 (layout 2, read as is
# since layout 3).
UPGRADE_FROM ?= 223faaa0d4553fb45b8218dab104a769a4192eef \
	6c4988f047d365c732d8edcac799a4487830c709
upgrade-test: $(TMEMD) $(TMEMCTL) $(TMEMD_PREINST)
	$(Q)tests/packaging/upgrade-test.sh $(TMEMD) $(TMEMCTL) $(TMEMD_PREINST) $(UPGRADE_FROM)

.PHONY: packaging-units man-lint install-test conf-check completion-test upgrade-test

# ---- Debian packages ---------------------------------------------------------
# make debs: dpkg-buildpackage -us -uc -b on a copy of the tree, then lintian
# (errors fail; the summary is printed).  make deb-smoke: install them here,
# run the installed tmemd, tmemctl and a libtmem client, reload it with the
# unit's ExecReload, run test_notify on /usr/sbin/tmemd, dkms build the
# module, purge and check nothing is left.  Both need root; .ci/run runs
# deb-smoke after make check.

DEB_OUT := build/debs
# make check has run the tests already; DEB_BUILD_OPTIONS= to run the unit
# tests inside the package build too.
DEB_BUILD_OPTIONS ?= nocheck

packaging-deps: | $(DEPS_STAMP)
	$(Q)mk/deps.sh mk/deps-packaging.list

debs: packaging-deps
	$(Q)DEB_BUILD_OPTIONS='$(DEB_BUILD_OPTIONS)' tests/packaging/build-debs.sh $(DEB_OUT)

deb-smoke: debs $(TEST_NOTIFY)
	$(Q)tests/packaging/deb-smoke.sh $(DEB_OUT) $(TEST_NOTIFY)

.PHONY: packaging-deps debs deb-smoke
