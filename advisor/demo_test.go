package advisor

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testenv"
)

// TestDemoFindsEveryCheck builds the demo and checks that every check
// reports on it: the demo is the advisor's tour.
func TestDemoFindsEveryCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo takes seconds")
	}
	_, client := testenv.Engine(t, engine.Options{})
	ctx := context.Background()
	start := time.Now()
	if err := Demo(ctx, client.Database(DemoDatabase)); err != nil {
		t.Fatal(err)
	}
	built := time.Since(start)
	rep, err := Run(ctx, client, Options{Databases: []string{DemoDatabase}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("demo built in %v, advised in %v", built, time.Since(start)-built)
	var ids []string
	for _, f := range rep.Findings {
		ids = appendNew(ids, f.ID)
	}
	for _, c := range Checks() {
		if !slices.Contains(ids, c.ID) {
			t.Errorf("the demo has no %s finding", c.ID)
		}
	}
	if len(rep.Snapshot.Notes) > 0 {
		t.Errorf("notes: %v", rep.Snapshot.Notes)
	}
}
