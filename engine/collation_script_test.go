package engine_test

import "testing"

// TestCollationScripts runs testdata/collation: collation specs and their
// errors, collation-aware queries, sorts, grouping and indexes, and a
// collection's default collation, through the driver.
func TestCollationScripts(t *testing.T) { runScripts(t, "collation") }
