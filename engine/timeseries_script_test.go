package engine_test

import "testing"

// TestTimeseriesScripts runs testdata/timeseries: time series collections
// (create options and errors, listCollections, bucketing, reads through
// the unpacking view, indexes, updates, deletes and their restrictions).
func TestTimeseriesScripts(t *testing.T) { runScripts(t, "timeseries") }
