# systemd/: tmemd.service and the shipped tmemd.conf.  Installing them (and
# everything else) is mk/install.mk; their checks are tests/packaging/.

include mk/install.mk

# The package's preinst: debian/tmemd.preinst.in with the arena layout
# this tree reads (pools/durable.h), so an upgrade to a tmemd that cannot
# read the running one's arena is refused before anything stops (tmemd(8),
# UPGRADES).  debian/rules installs it; tests/packaging/upgrade-test.sh
# runs it.
TMEMD_PREINST := $(BUILD)/debian/tmemd.preinst

$(TMEMD_PREINST): debian/tmemd.preinst.in pools/durable.h
	@mkdir -p $(@D)
	$(call quiet,GEN,$@)
	$(Q)layout=$$(sed -n 's/^#define TMEM_ARENA_LAYOUT \([0-9]*\)u$$/\1/p' pools/durable.h) && \
		oldest=$$(sed -n 's/^#define TMEM_ARENA_LAYOUT_OLDEST \([0-9]*\)u$$/\1/p' pools/durable.h) && \
		[ -n "$$layout" ] && [ -n "$$oldest" ] && \
		sed -e "s/@ARENA_LAYOUT@/$$layout/" -e "s/@ARENA_LAYOUT_OLDEST@/$$oldest/" $< >$@.tmp && \
		chmod 755 $@.tmp && mv $@.tmp $@

all: $(TMEMD_PREINST)
