# daemon/xen/: the xen transport (tmemd --transport xen).  Its objects go
# into tmemd's core library, so tmemd and the tests that link the core
# library get them; the libxen* libraries are added to DAEMON_LDLIBS.

DAEMON_XEN_SRCS := $(wildcard daemon/xen/*.c)
DAEMON_XEN_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(DAEMON_XEN_SRCS))
XEN_PKGS := xenstore xengnttab xenevtchn xencontrol

$(DAEMON_CORE): $(DAEMON_XEN_OBJS)
$(BUILD)/daemon/xen/%.o: EXTRA_CFLAGS += $(call pkg_cflags,$(XEN_PKGS))
DAEMON_LDLIBS += $(call pkg_libs,$(XEN_PKGS))

# The request-path fuzzer (tests/daemon/) builds every daemon/*.c from
# source; transport.c names the xen transport, so it needs these too.
build/fuzz/fuzz_dispatch: $(DAEMON_XEN_SRCS)
