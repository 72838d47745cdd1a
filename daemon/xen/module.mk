# daemon/xen/: the xen transport (tmemd --transport xen).  Read before
# daemon/module.mk, which puts these objects into tmemd's core library (so
# tmemd and the tests that link the core library get them) and the
# libxen* libraries into DAEMON_LDLIBS.

DAEMON_XEN_SRCS := $(wildcard daemon/xen/*.c)
DAEMON_XEN_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(DAEMON_XEN_SRCS))
XEN_PKGS := xenstore xengnttab xenevtchn xencontrol
DAEMON_XEN_LDLIBS = $(call pkg_libs,$(XEN_PKGS))

$(BUILD)/daemon/xen/%.o: EXTRA_CFLAGS += $(call pkg_cflags,$(XEN_PKGS))
