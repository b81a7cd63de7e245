package projection_test

import (
	"sync"
	"testing"
	"time"

	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/projection"
)

// TestCompileEnv checks that computed fields read the command's let
// variables and its $$NOW, and that one Projection serves concurrent
// Apply calls.
func TestCompileEnv(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	env := match.Env{Let: raw(t, `{"k": 10, "s": "x"}`), Now: now}
	p, err := projection.CompileEnv(raw(t, `{"_id": 0, "v": {"$add": ["$a", "$$k"]}, "s": "$$s", "n": "$$NOW"}`), env)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"v":12,"s":"x","n":{"$date":"2026-01-02T03:04:05Z"}}`
	doc := raw(t, `{"_id": 1, "a": 2}`)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				out, err := p.Apply(doc, nil)
				if err != nil {
					t.Error(err)
					return
				}
				if got := relaxed(t, out); got != want { // relaxed fails only on bad BSON
					t.Errorf("Apply = %s, want %s", got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	if !p.IsInclusion() {
		t.Error("a projection with computed fields is an inclusion")
	}
	if _, err := projection.Compile(raw(t, `{"v": "$$k"}`)); err == nil {
		t.Error("Compile without let accepted $$k")
	}
}
