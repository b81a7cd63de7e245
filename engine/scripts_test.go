package engine_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/formworkdb/formwork/internal/scripttest"
	"github.com/formworkdb/formwork/internal/testenv"
)

// runScripts runs every script of testdata/<dir> through the driver,
// against the embedded engine or FORMWORK_TEST_URI. Re-record with
// -rewrite. On the embedded engine, which each test opens for itself, the
// scripts use the database "test", as package agg's own runner does, so
// that a stage naming its database ({$out: {db: "test", …}}) means the
// same on both.
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
			db := testenv.Database(t)
			if !testenv.Real() {
				db = testenv.Client(t).Database("test")
			}
			scripttest.Run(t, db, f)
		})
	}
}

// TestLetScripts runs testdata/let: the let option of find, count,
// update, delete and findAndModify.
func TestLetScripts(t *testing.T) { runScripts(t, "let") }

// TestAggScripts runs testdata/agg: aggregation pipelines through the
// aggregate command.
func TestAggScripts(t *testing.T) { runScripts(t, "agg") }

// TestExprScripts runs testdata/expr: aggregation expressions, each
// evaluated by the eval directive's pipeline ({$project: {r: <expr>}}) on
// the engine. The scripts' error messages are those package expr raises
// (its own runner evaluates without a pipeline); a server wraps parse
// errors as "Invalid $project :: caused by :: <message>", as mongod does,
// so here the error lines are checked by code only.
func TestExprScripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "expr", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in testdata/expr: %v", err)
	}
	dir := t.TempDir()
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, filepath.Base(f))
			if err := os.WriteFile(path, errorMessage.ReplaceAll(src, []byte("$1")), 0o644); err != nil {
				t.Fatal(err)
			}
			db := testenv.Database(t)
			if !testenv.Real() {
				db = testenv.Client(t).Database("test")
			}
			scripttest.Run(t, db, path)
		})
	}
}

// errorMessage matches an expected error line's message.
var errorMessage = regexp.MustCompile(`(?m)^(error [A-Za-z0-9]+\([0-9]+\)): .*$`)

// TestUpdatePipelineScripts runs testdata/updatepipe: pipeline-style
// updates, which only the engine runs (package update has no stages).
func TestUpdatePipelineScripts(t *testing.T) { runScripts(t, "updatepipe") }
