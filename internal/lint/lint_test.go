// Package lint holds tests that enforce the project's architecture: which
// packages may import which.
package lint

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/formworkdb/formwork/"

// forbidden maps a package directory (relative to the module root, a
// prefix) to the import prefixes it must not use. The engine is layered
// bottom-up: mongoerr, bsonkit, keystring; the query languages; index and
// storage; plan; command; server; the public engine package.
var forbidden = map[string][]string{
	"pattern/":                   {"engine/internal/"},
	"advisor/":                   {"engine/internal/"},
	"lab/":                       {"engine/internal/"},
	"engine/internal/mongoerr":   {"engine/internal/"},
	"engine/internal/wire":       {"engine/internal/"},
	"engine/internal/regex":      {"engine/internal/bsonkit", "engine/internal/keystring", "engine/internal/match", "engine/internal/order", "engine/internal/projection", "engine/internal/update", "engine/internal/expr", "engine/internal/agg", "engine/internal/index", "engine/internal/storage", "engine/internal/plan", "engine/internal/command", "engine/internal/server"},
	"engine/internal/collation":  {"engine/internal/bsonkit", "engine/internal/keystring", "engine/internal/match", "engine/internal/order", "engine/internal/projection", "engine/internal/update", "engine/internal/expr", "engine/internal/agg", "engine/internal/index", "engine/internal/storage", "engine/internal/plan", "engine/internal/command", "engine/internal/server"},
	"engine/internal/bsonkit":    {"engine/internal/storage", "engine/internal/command", "engine/internal/server", "engine/internal/match", "engine/internal/update", "engine/internal/plan"},
	"engine/internal/keystring":  {"engine/internal/storage", "engine/internal/command", "engine/internal/server", "engine/internal/plan"},
	"engine/internal/match":      {"engine/internal/storage", "engine/internal/command", "engine/internal/server", "engine/internal/plan", "engine/internal/update"},
	"engine/internal/schema":     {"engine/internal/match", "engine/internal/expr", "engine/internal/storage", "engine/internal/command", "engine/internal/server", "engine/internal/plan", "engine/internal/update", "engine/internal/agg"},
	"engine/internal/order":      {"engine/internal/storage", "engine/internal/command", "engine/internal/server", "engine/internal/plan"},
	"engine/internal/projection": {"engine/internal/storage", "engine/internal/command", "engine/internal/server", "engine/internal/plan"},
	"engine/internal/update":     {"engine/internal/storage", "engine/internal/command", "engine/internal/server", "engine/internal/plan"},
	"engine/internal/expr":       {"engine/internal/storage", "engine/internal/command", "engine/internal/server", "engine/internal/plan", "engine/internal/match", "engine/internal/update", "engine/internal/agg", "engine/internal/projection", "engine/internal/index"},
	"engine/internal/timeseries": {"engine/internal/storage", "engine/internal/command", "engine/internal/server", "engine/internal/plan", "engine/internal/agg", "engine/internal/match", "engine/internal/update", "engine/internal/index"},
	"engine/internal/agg":        {"engine/internal/storage", "engine/internal/command", "engine/internal/server"},
	"engine/internal/index":      {"engine/internal/storage", "engine/internal/command", "engine/internal/server", "engine/internal/plan"},
	"engine/internal/storage":    {"engine/internal/command", "engine/internal/server", "engine/internal/plan", "engine/internal/match", "engine/internal/update"},
	"engine/internal/plan":       {"engine/internal/command", "engine/internal/server"},
	"engine/internal/command":    {"engine/internal/server"},
	"engine/internal/auth":       {"engine/internal/storage", "engine/internal/command", "engine/internal/server", "engine/internal/plan", "engine/internal/match", "engine/internal/agg"},
	"internal/testenv":           {"engine/internal/"},
	"internal/cli":               {"engine/internal/"},
	"internal/workload":          {"engine"},
}

func root(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "..", "..")
}

func TestImportDirection(t *testing.T) {
	r := root(t)
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(r, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || strings.HasPrefix(n, ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(r, filepath.Dir(path))
		rel = filepath.ToSlash(rel) + "/"
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for pkg, bans := range forbidden {
			if !strings.HasPrefix(rel, strings.TrimSuffix(pkg, "/")+"/") {
				continue
			}
			for _, imp := range f.Imports {
				p := strings.Trim(imp.Path.Value, `"`)
				for _, ban := range bans {
					if strings.HasPrefix(p, module+ban) && !strings.HasPrefix(p+"/", module+rel) {
						t.Errorf("%s imports %s: %s must not depend on %s", path, p, pkg, ban)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("checked only %d files; is the walk rooted right?", checked)
	}
}
