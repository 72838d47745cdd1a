# make install / make uninstall (included from systemd/module.mk).
#
#   make install PREFIX=/usr DESTDIR=/tmp/stage
#
# Installs what the build made; a program, library, header or man page that
# is missing stops the install with an error instead of being skipped.
#
#   $(SBINDIR)       tmemd
#   $(BINDIR)        tmemctl tmem-bench
#   $(LIBDIR)        libtmem.a, libtmem.so.$(VERSION) + libtmem.so.0 + libtmem.so,
#                    pkgconfig/libtmem.pc
#   $(INCLUDEDIR)    tmem.h tmem_raw.h tmem_proto.h tmem_barrier.h [tmem_local.h]
#   $(MANDIR)/manN   every man/*.N (tmemd.8 tmemctl.8 tmemd.conf.5 tmem.7
#                    tmem_shim.4 tmem-bench.1 at least)
#   $(SYSTEMDUNITDIR) tmemd.service (pkg-config systemd, else /lib/systemd/system)
#   $(SYSCONFDIR)/tmemd/tmemd.conf  only if there is none: an admin's edits stay
#   $(DKMSDIR)       the module's source and dkms.conf, for DKMS
#                    (/usr/src/tmem-shim-$(VERSION); "make shim-dkms" stages
#                    the same tree in build/dkms/, debian/ packages it)
#
# The unit runs "tmemd --foreground --config /etc/tmemd/tmemd.conf"; the
# shipped file sets nothing (every key commented out at its default), so it
# changes nothing until edited, and "systemctl reload" re-reads it.

# The version lives in one place, debian/changelog's first line (dpkg
# needs it there); the libtmem.so name, the DKMS tree and its dkms.conf
# take it from here.  debian/rules passes the same value on the command line.
ifneq ($(origin VERSION),command line)
VERSION := $(shell sed -n '1s/^[^ ]* (\([^)-]*\).*/\1/p' debian/changelog)
endif
ifeq ($(VERSION),)
$(error mk/install.mk: no version in debian/changelog's first line)
endif
# The module's DKMS name (dkms add/build -m), as Debian names it after the
# tmem-shim-dkms package.
DKMS_NAME := tmem-shim
LIBTMEM_SONAME := libtmem.so.0
LIBTMEM_REALNAME := libtmem.so.$(VERSION)
ifeq ($(origin SYSTEMDUNITDIR),undefined)
SYSTEMDUNITDIR = $(or $(shell pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null),/lib/systemd/system)
endif
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# bash-completion looks here (its pkg-config completionsdir on Debian).
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
DKMSDIR ?= /usr/src/$(DKMS_NAME)-$(VERSION)
INSTALL ?= install

INSTALL_SBIN := $(TMEMD)
INSTALL_BIN := $(TMEMCTL) $(TMEM_BENCH)
INSTALL_LIBS := $(LIBTMEM_A) $(LIBTMEM_SO)
INSTALL_HEADERS := guest-shim/libtmem/tmem.h guest-shim/libtmem/tmem_raw.h \
	proto/tmem_proto.h proto/tmem_barrier.h proto/tmem_local.h
INSTALL_MAN := $(sort man/tmemd.8 man/tmemctl.8 man/tmemd.conf.5 man/tmem.7 \
	man/tmem_shim.4 man/tmem-bench.1 $(wildcard man/*.[0-9]))
INSTALL_UNITS := systemd/tmemd.service
# The module's source as DKMS wants it: guest-shim/kernel/'s files at the
# top, core/ below, and proto/'s headers in ./proto/ (which the Kbuild
# prefers to ../../proto).  Build products of an in-tree "make shim"
# (*.o, *.ko, *.mod.c) are not sources.  dkms.conf is made from
# mk/dkms.conf.in, the only one.
INSTALL_DKMS_TOP := $(filter-out %.mod.c,$(wildcard guest-shim/kernel/Kbuild \
	guest-shim/kernel/Makefile guest-shim/kernel/*.[ch]))
INSTALL_DKMS_CORE := $(filter-out %.mod.c,$(wildcard guest-shim/kernel/core/*.[ch]))
INSTALL_DKMS_PROTO := $(wildcard proto/*.h)

# Each install line: mode, source, destination directory.
inst = $(INSTALL) -m $(1) $(2) '$(DESTDIR)$(3)/'
subst_paths = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@VERSION@|$(VERSION)|g' \
	-e 's|@DKMS_NAME@|$(DKMS_NAME)|g'

# The DKMS source tree in directory $(1): make install (under DESTDIR) and
# make shim-dkms (build/dkms/) both write it with this.
define install_dkms_tree
	$(Q)$(INSTALL) -d '$(1)/core' '$(1)/proto'
	$(Q)$(INSTALL) -m 0644 $(INSTALL_DKMS_TOP) '$(1)/'
	$(Q)$(INSTALL) -m 0644 $(INSTALL_DKMS_CORE) '$(1)/core/'
	$(Q)$(INSTALL) -m 0644 $(INSTALL_DKMS_PROTO) '$(1)/proto/'
	$(Q)$(subst_paths) mk/dkms.conf.in >'$(1)/dkms.conf'
endef

install: $(INSTALL_SBIN) $(INSTALL_BIN) $(INSTALL_LIBS) $(INSTALL_HEADERS) \
		$(INSTALL_MAN) $(INSTALL_UNITS) systemd/tmemd.conf \
		mk/libtmem.pc.in mk/dkms.conf.in tools/tmemctl/tmemctl.bash
	$(Q)soname=$$(readelf -d $(BUILD)/libtmem.so | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p'); \
	if [[ "$$soname" != $(LIBTMEM_SONAME) ]]; then \
		echo "install: $(BUILD)/libtmem.so has SONAME '$$soname', want $(LIBTMEM_SONAME)" \
			"(link it with -Wl,-soname,$(LIBTMEM_SONAME))" >&2; exit 1; fi
	$(Q)[[ -f guest-shim/kernel/Kbuild ]] || \
		{ echo "install: no guest-shim/kernel/Kbuild: the module source is not there" >&2; exit 1; }
	$(call quiet,INSTALL,'$(DESTDIR)$(PREFIX)')
	$(Q)$(INSTALL) -d '$(DESTDIR)$(SBINDIR)' '$(DESTDIR)$(BINDIR)' \
		'$(DESTDIR)$(LIBDIR)' '$(DESTDIR)$(PKGCONFIGDIR)' '$(DESTDIR)$(INCLUDEDIR)' \
		'$(DESTDIR)$(SYSTEMDUNITDIR)' '$(DESTDIR)$(SYSCONFDIR)/tmemd' \
		'$(DESTDIR)$(BASHCOMPDIR)' \
		$(foreach s,$(sort $(subst .,,$(suffix $(INSTALL_MAN)))),'$(DESTDIR)$(MANDIR)/man$(s)')
	$(Q)$(call inst,0755,$(INSTALL_SBIN),$(SBINDIR))
	$(Q)$(call inst,0755,$(INSTALL_BIN),$(BINDIR))
	$(Q)$(call inst,0644,$(BUILD)/libtmem.a,$(LIBDIR))
	$(Q)$(INSTALL) -m 0644 $(BUILD)/libtmem.so '$(DESTDIR)$(LIBDIR)/$(LIBTMEM_REALNAME)'
	$(Q)ln -sf $(LIBTMEM_REALNAME) '$(DESTDIR)$(LIBDIR)/$(LIBTMEM_SONAME)'
	$(Q)ln -sf $(LIBTMEM_SONAME) '$(DESTDIR)$(LIBDIR)/libtmem.so'
	$(Q)$(subst_paths) mk/libtmem.pc.in >'$(DESTDIR)$(PKGCONFIGDIR)/libtmem.pc'
	$(Q)$(call inst,0644,$(INSTALL_HEADERS),$(INCLUDEDIR))
	$(Q)$(foreach m,$(INSTALL_MAN),$(call inst,0644,$(m),$(MANDIR)/man$(subst .,,$(suffix $(m)))) &&) true
	$(Q)$(call inst,0644,$(INSTALL_UNITS),$(SYSTEMDUNITDIR))
	$(Q)$(INSTALL) -m 0644 tools/tmemctl/tmemctl.bash '$(DESTDIR)$(BASHCOMPDIR)/tmemctl'
	$(Q)[[ -e '$(DESTDIR)$(SYSCONFDIR)/tmemd/tmemd.conf' ]] || \
		$(INSTALL) -m 0644 systemd/tmemd.conf '$(DESTDIR)$(SYSCONFDIR)/tmemd/tmemd.conf'
	$(call install_dkms_tree,$(DESTDIR)$(DKMSDIR))

# Removes what install put there; the config only while it is unedited.
uninstall:
	$(call quiet,UNINST,'$(DESTDIR)$(PREFIX)')
	$(Q)rm -f $(foreach f,$(INSTALL_SBIN),'$(DESTDIR)$(SBINDIR)/$(notdir $(f))') \
		$(foreach f,$(INSTALL_BIN),'$(DESTDIR)$(BINDIR)/$(notdir $(f))') \
		'$(DESTDIR)$(LIBDIR)/libtmem.a' '$(DESTDIR)$(LIBDIR)/libtmem.so' \
		'$(DESTDIR)$(LIBDIR)/$(LIBTMEM_SONAME)' '$(DESTDIR)$(LIBDIR)/$(LIBTMEM_REALNAME)' \
		'$(DESTDIR)$(PKGCONFIGDIR)/libtmem.pc' \
		$(foreach f,$(INSTALL_HEADERS),'$(DESTDIR)$(INCLUDEDIR)/$(notdir $(f))') \
		$(foreach f,$(INSTALL_MAN),'$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(f)))/$(notdir $(f))') \
		$(foreach f,$(INSTALL_UNITS),'$(DESTDIR)$(SYSTEMDUNITDIR)/$(notdir $(f))') \
		'$(DESTDIR)$(BASHCOMPDIR)/tmemctl'
	$(Q)! cmp -s systemd/tmemd.conf '$(DESTDIR)$(SYSCONFDIR)/tmemd/tmemd.conf' || \
		rm -f '$(DESTDIR)$(SYSCONFDIR)/tmemd/tmemd.conf'
	$(Q)rmdir '$(DESTDIR)$(SYSCONFDIR)/tmemd' 2>/dev/null || true
	$(Q)if [[ -d '$(DESTDIR)$(DKMSDIR)' ]]; then cd '$(DESTDIR)$(DKMSDIR)' && \
		rm -f dkms.conf $(notdir $(INSTALL_DKMS_TOP)) \
			$(addprefix core/,$(notdir $(INSTALL_DKMS_CORE))) \
			$(addprefix proto/,$(notdir $(INSTALL_DKMS_PROTO))) && \
		rmdir core proto && rmdir '$(DESTDIR)$(DKMSDIR)'; fi

.PHONY: install uninstall
