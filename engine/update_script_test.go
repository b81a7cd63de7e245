package engine_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/internal/scripttest"
	"github.com/formworkdb/formwork/internal/testenv"
)

// TestUpdateScripts runs the update scripts of testdata/update through the
// driver against the embedded engine, or against FORMWORK_TEST_URI when it
// is set. The same files run without the engine in the update package's
// TestScripts. Re-record with -rewrite, preferably against MongoDB 7.0.
func TestUpdateScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/update/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scripts in testdata/update")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			scripttest.Run(t, testenv.Database(t), f)
		})
	}
}

// TestScriptCodeNames checks that the script runner, which names the codes of
// writeErrors entries itself, knows every codeName the engine knows. The
// runner may know more.
func TestScriptCodeNames(t *testing.T) {
	for c := int32(0); c < 100000; c++ {
		engine := mongoerr.Code(c).Name()
		if strings.HasPrefix(engine, "Location") {
			continue
		}
		if runner := scripttest.CodeName(c); runner != engine {
			t.Errorf("code %d: engine names it %s, scripttest %s", c, engine, runner)
		}
	}
}
