# tests/libtmem/: libtmem against a real tmemd.  Also a TSan test: under
# SANITIZE=thread both the test and the tmemd it starts ($(BUILD)/tmemd)
# are ThreadSanitizer builds.

TEST_LIBTMEM := $(BUILD)/tests/libtmem/test_libtmem
INTEGRATION_TESTS += $(TEST_LIBTMEM)
TSAN_TESTS += $(TEST_LIBTMEM)

$(BUILD)/tests/libtmem/%.o: EXTRA_CFLAGS += $(call pkg_cflags,check jansson) -Itests/daemon

$(TEST_LIBTMEM): $(BUILD)/tests/libtmem/test_libtmem.o $(DAEMON_TEST_HARNESS) \
		$(BUILD)/libtmem.a | $(TMEMD)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(call pkg_libs,check jansson) -o $@
