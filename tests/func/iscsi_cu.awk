# libiscsi's iscsi-test-cu in verbose mode (-v, the default) -> one line
# per test: "SUITE.TEST passed", "SUITE.TEST FAILED" or "SUITE.TEST
# SKIPPED<TAB>the first skip message" (a test that prints "[SKIPPED]",
# which CUnit counts as passed).  A test's lines run from "  Test: NAME
# ..." to the "passed" or "FAILED" that ends it, which what the test's
# teardown prints may follow on the same line.  Used by
# tests/func/test_iscsi_conformance.sh and bench/iscsi-test-cu-vs-tgt.sh.
/^Suite: / { suite = $2; next }
/^  Test: / { test = suite "." $2; skip = "" }
test != "" && /\[SKIPPED\]/ {
	r = $0
	sub(/.*\[SKIPPED\] */, "", r)
	if (skip == "")
		skip = r
}
test != "" && /(\.\.\.passed|^passed)/ {
	print test, (skip != "" ? "SKIPPED\t" skip : "passed")
	test = ""
	next
}
test != "" && /(\.\.\.FAILED|^FAILED)/ { print test, "FAILED"; test = ""; next }
