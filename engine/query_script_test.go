package engine_test

import (
	"path/filepath"
	"testing"

	"github.com/formworkdb/formwork/internal/scripttest"
	"github.com/formworkdb/formwork/internal/testenv"
)

// TestQueryScripts runs the query, sort and projection scripts of
// testdata/query against the embedded engine, or against FORMWORK_TEST_URI
// when it is set. Re-record with -rewrite.
func TestQueryScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/query/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scripts in testdata/query")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			scripttest.Run(t, testenv.Database(t), f)
		})
	}
}
