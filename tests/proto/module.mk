# tests/proto/: the ABI's constants and ring helpers (test_proto), and
# freestanding.c, which proto/module.mk builds with no libc.
TEST_PROTO := $(BUILD)/tests/proto/test_proto
UNIT_TESTS += $(TEST_PROTO)

$(TEST_PROTO): $(BUILD)/tests/proto/test_proto.o $(TEST_COMMON_LIB)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(call pkg_libs,check) -o $@

$(BUILD)/tests/proto/%.o: EXTRA_CFLAGS += $(call pkg_cflags,check)
