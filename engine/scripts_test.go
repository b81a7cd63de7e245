package engine_test

import (
	"path/filepath"
	"testing"

	"github.com/formworkdb/formwork/internal/scripttest"
	"github.com/formworkdb/formwork/internal/testenv"
)

// runScripts runs every script of testdata/<dir> through the driver,
// against the embedded engine or FORMWORK_TEST_URI. Re-record with
// -rewrite.
func runScripts(t *testing.T, dir string) {
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no scripts in testdata/%s", dir)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			scripttest.Run(t, testenv.Database(t), f)
		})
	}
}

// TestLetScripts runs testdata/let: the let option of find, count,
// update, delete and findAndModify.
func TestLetScripts(t *testing.T) { runScripts(t, "let") }
