# make check-headers (part of make check): every header compiles on its
# own, so none leans on what its includer happened to include first.
#
#   userspace     each header of proto/, common/, pools/, policy/, daemon/,
#                 guest-shim/libtmem/, guest-shim/kernel/core/, tools/ and
#                 tests/, alone, with its folder's -I paths (src_inc) and
#                 the build's flags
#   freestanding  each proto/ header also with -ffreestanding -nostdinc
#                 (no libc at all), in C11 and C89, as the kernel module
#                 and tests/proto/freestanding.c use them
#   kernel        guest-shim/kernel/'s headers (its own include linux/
#                 ones), core/'s (built into the module too, see
#                 core/shim_env.h) and proto/'s, each alone in a module
#                 built by Kbuild against Debian's headers with -Werror,
#                 with the -I paths guest-shim/kernel/Kbuild gives them
#
# Read from the top Makefile after every module.mk (it uses XEN_PKGS and
# SHIM_DEBIAN_KDIR).

HDR_DIR := $(BUILD)/hdrcheck
HDR_USER := $(sort $(wildcard proto/*.h common/*.h pools/*.h policy/*.h daemon/*.h daemon/*/*.h \
	guest-shim/libtmem/*.h guest-shim/kernel/core/*.h tools/*/*.h tests/*/*.h))
HDR_PROTO := $(sort $(wildcard proto/*.h))
HDR_KERNEL := $(sort $(wildcard guest-shim/kernel/*.h guest-shim/kernel/core/*.h)) $(HDR_PROTO)
# System include paths of the libraries the folders use (none of ours).
HDR_PKG_CFLAGS = $(call pkg_cflags,check jansson inih libsystemd $(XEN_PKGS))

HDR_USER_OBJS := $(patsubst %,$(HDR_DIR)/user/%.o,$(HDR_USER))
HDR_FREESTD_OBJS := $(patsubst %,$(HDR_DIR)/freestanding/%.o,$(HDR_PROTO)) \
	$(patsubst %,$(HDR_DIR)/freestanding89/%.o,$(HDR_PROTO))
HDR_KERNEL_OK := $(HDR_DIR)/kernel.ok
FREESTD_CFLAGS = -ffreestanding -nostdinc -isystem $(shell $(CC) -print-file-name=include) -Iproto

$(HDR_DIR)/user/%.h.o: %.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(call quiet,HDR,$<)
	$(Q)$(CC) $(ALL_CFLAGS) $(call src_inc,$<) $(HDR_PKG_CFLAGS) -x c -c $< -o $@

$(HDR_DIR)/freestanding/%.h.o: %.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(call quiet,HDR-FS,$<)
	$(Q)$(CC) -std=gnu11 -MMD -MP $(WARN) $(FREESTD_CFLAGS) -x c -c $< -o $@

$(HDR_DIR)/freestanding89/%.h.o: %.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(call quiet,HDR-FS89,$<)
	$(Q)$(CC) -std=gnu89 -MMD -MP -Wall -Wextra -Werror $(FREESTD_CFLAGS) -x c -c $< -o $@

# One object per header, each including only that header, in a module of
# its own (build/hdrcheck/kbuild/); any warning fails, as in shim-check.
HDR_KBUILD_DIR := $(HDR_DIR)/kbuild
hdr_kobj = hdr_$(subst /,_,$(subst .h,,$(1)))
$(HDR_KERNEL_OK): $(HDR_KERNEL) mk/headers.mk | $(DEPS_STAMP)
	@test -n "$(SHIM_DEBIAN_KDIR)" || { echo "check-headers: linux-headers-amd64 missing"; exit 1; }
	$(call quiet,KBUILD,$(HDR_KBUILD_DIR))
	$(Q)rm -rf $(HDR_KBUILD_DIR) && mkdir -p $(HDR_KBUILD_DIR)
	$(Q)$(foreach h,$(HDR_KERNEL),printf '#include "%s"\n' $(notdir $(h)) \
		>$(HDR_KBUILD_DIR)/$(call hdr_kobj,$(h)).c &&) true
	$(Q)printf '#include <linux/module.h>\nMODULE_LICENSE("GPL");\n' \
		>$(HDR_KBUILD_DIR)/hdrcheck_main.c
	$(Q){ echo 'obj-m := hdrcheck.o'; \
		echo 'hdrcheck-y := hdrcheck_main.o $(foreach h,$(HDR_KERNEL),$(call hdr_kobj,$(h)).o)'; \
		echo 'ccflags-y += -I$(abspath guest-shim/kernel) -I$(abspath guest-shim/kernel/core) -I$(abspath proto)'; \
		} >$(HDR_KBUILD_DIR)/Kbuild
	$(Q)$(MAKE) --no-print-directory -C $(SHIM_DEBIAN_KDIR) M=$(abspath $(HDR_KBUILD_DIR)) \
		KCFLAGS=-Werror modules >$(HDR_DIR)/kbuild.log 2>&1 || \
		{ cat $(HDR_DIR)/kbuild.log; exit 1; }
	$(Q)if grep -i 'warning' $(HDR_DIR)/kbuild.log; then \
		echo "check-headers: warnings ($(HDR_DIR)/kbuild.log)"; exit 1; fi
	$(Q)touch $@

check-headers: $(HDR_USER_OBJS) $(HDR_FREESTD_OBJS) $(HDR_KERNEL_OK)
	@echo "check-headers: $(words $(HDR_USER)) headers alone, $(words $(HDR_PROTO)) freestanding," \
		"$(words $(HDR_KERNEL)) with Kbuild"

CHECK_EXTRA += check-headers
.PHONY: check-headers
