#!/bin/bash
# The make-level test runner (the Makefile's run_tests).
#
#   mk/run-tests.sh LABEL PREFIX PROGRAM...
#       Runs each PROGRAM after the command prefix PREFIX (words the shell
#       reads, e.g. "CK_FORK=no valgrind -q", or empty).  Exit 0 is a
#       pass, 77 a skip (STYLE.md 13; tests/common/test_main.h), anything
#       else a failure.  Every program runs; then one line
#       "LABEL: N passed, N failed, N skipped", and the exit status: 1 if
#       one failed, or if one was skipped and CHECK_STRICT=1, else 0.
#       With TEST_RESULTS set, each result is appended there as a line
#       "pass|fail|skip LABEL PROGRAM".
#
#   mk/run-tests.sh --total FILE LABEL
#       The same line for every result in FILE (make check's end), with
#       the skipped and failed programs named.
set -uo pipefail

strict=${CHECK_STRICT:-0}

# summary LABEL PASS FAIL SKIP: the line, and the exit status.
summary() {
	echo "$1: $2 passed, $3 failed, $4 skipped"
	if (($3 > 0)); then
		return 1
	fi
	if (($4 > 0)) && [[ $strict == 1 ]]; then
		echo "$1: CHECK_STRICT=1: a skip is a failure (a prerequisite is missing)"
		return 1
	fi
	return 0
}

if [[ ${1:-} == --total ]]; then
	file=$2 label=$3
	[[ -f $file ]] || { echo "$label: no results in $file"; exit 1; }
	pass=$(grep -c '^pass ' "$file")
	fail=$(grep -c '^fail ' "$file")
	skip=$(grep -c '^skip ' "$file")
	grep '^skip ' "$file" | sed 's/^skip \(.*\)/  skipped: \1/'
	grep '^fail ' "$file" | sed 's/^fail \(.*\)/  failed: \1/'
	summary "$label" "$pass" "$fail" "$skip"
	exit
fi

label=$1 prefix=$2
shift 2
pass=0 fail=0 skip=0
record() {
	if [[ -n ${TEST_RESULTS:-} ]]; then
		mkdir -p "$(dirname "$TEST_RESULTS")"
		echo "$1 $label $2" >>"$TEST_RESULTS"
	fi
}
for t in "$@"; do
	echo "== $t"
	eval "$prefix \"\$t\""
	rc=$?
	case $rc in
	0)
		pass=$((pass + 1))
		record pass "$t"
		;;
	77)
		echo "SKIPPED: $t (exit 77)"
		skip=$((skip + 1))
		record skip "$t"
		;;
	*)
		echo "FAILED: $t (exit $rc)"
		fail=$((fail + 1))
		record fail "$t"
		;;
	esac
done
summary "$label" "$pass" "$fail" "$skip"
