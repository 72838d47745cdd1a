# tests/common/: what every Check program links: tmem_test_main() (the one
# srunner body: CK_FORK, exit 0 / 1 / 77 for a skip; test_main.h) and the
# worker-thread checks (thread_check.h).  mk/run-tests.sh, the make-level
# runner, counts the 77s.  A test program lists $(TEST_COMMON_LIB) after
# its own objects.

TEST_COMMON_LIB := $(BUILD)/tests/common/libtmemtest.a
TEST_COMMON_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/common/*.c))

$(BUILD)/tests/common/%.o: EXTRA_CFLAGS += $(call pkg_cflags,check)

$(TEST_COMMON_LIB): $(TEST_COMMON_OBJS)
	$(call quiet,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^
