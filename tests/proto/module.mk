TEST_PROTO := $(BUILD)/tests/proto/test_proto
UNIT_TESTS += $(TEST_PROTO)

$(TEST_PROTO): $(BUILD)/tests/proto/test_proto.o
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(call pkg_libs,check) -o $@

$(BUILD)/tests/proto/%.o: EXTRA_CFLAGS += $(call pkg_cflags,check)
