package computed

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// planStage is one stage of an explained winning plan.
type planStage struct {
	Stage string
	Index string // indexName, for index scans
}

// winningPlan explains cmd (queryPlanner verbosity) and returns the
// stages of the winning plan, outermost first. It walks both the classic
// shape (winningPlan.inputStage(s)) and the slot-based one
// (winningPlan.queryPlan), and aggregate's stages[].$cursor.
func winningPlan(t *testing.T, db *mongo.Database, cmd bson.D) []planStage {
	t.Helper()
	reply, err := db.RunCommand(context.Background(),
		bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: "queryPlanner"}}).Raw()
	if err != nil {
		t.Fatalf("explain %v: %v", cmd, err)
	}
	var out []planStage
	walkPlan(reply, &out)
	if len(out) == 0 {
		t.Fatalf("explain %v: no winning plan in %v", cmd, reply)
	}
	return out
}

// walkPlan appends the stages found under doc, skipping rejected plans.
func walkPlan(doc bson.Raw, out *[]planStage) {
	if s, ok := doc.Lookup("stage").StringValueOK(); ok {
		idx, _ := doc.Lookup("indexName").StringValueOK()
		*out = append(*out, planStage{Stage: s, Index: idx})
	}
	for _, key := range []string{"queryPlanner", "winningPlan", "queryPlan", "inputStage", "$cursor"} {
		if d, ok := doc.Lookup(key).DocumentOK(); ok {
			walkPlan(d, out)
		}
	}
	for _, key := range []string{"inputStages", "stages", "shards"} {
		arr, ok := doc.Lookup(key).ArrayOK()
		if !ok {
			continue
		}
		vals, _ := arr.Values()
		for _, v := range vals {
			if d, ok := v.DocumentOK(); ok {
				walkPlan(d, out)
			}
		}
	}
}

// requireIndexScan fails t unless the plan scans index and has no
// collection scan; with noSort it also fails on a blocking SORT stage.
func requireIndexScan(t *testing.T, plan []planStage, index string, noSort bool) {
	t.Helper()
	found := false
	for _, s := range plan {
		switch s.Stage {
		case "COLLSCAN":
			t.Fatalf("plan %v has a COLLSCAN", plan)
		case "SORT":
			if noSort {
				t.Fatalf("plan %v has a blocking SORT", plan)
			}
		case "IXSCAN", "EXPRESS_IXSCAN":
			found = found || s.Index == index
		}
	}
	if !found {
		t.Fatalf("plan %v does not scan index %q", plan, index)
	}
}

// hasStage reports whether plan has a stage named stage.
func hasStage(plan []planStage, stage string) bool {
	for _, s := range plan {
		if s.Stage == stage {
			return true
		}
	}
	return false
}
