package advisor

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// workloadLines returns a workload file for namespace db.orders: two
// logv2 slow-query lines of one find shape, a system.profile document of
// the same shape, an update line, one of the advisor's own commands and
// a line that is not JSON.
func workloadLines(db string) string {
	return strings.Join([]string{
		fmt.Sprintf(`{"t":{"$date":"2026-01-01T00:00:00.000+00:00"},"s":"I","c":"COMMAND","id":51803,"ctx":"conn5","msg":"Slow query","attr":{"type":"command","ns":"%s.orders","command":{"find":"orders","filter":{"status":"open"},"sort":{"at":-1},"lsid":{"id":{"$uuid":"5f8a1c2e-8a2b-4c1d-9b7e-2f3a4b5c6d7e"}},"$db":"%[1]s"},"planSummary":"COLLSCAN","keysExamined":0,"docsExamined":5000,"hasSortStage":true,"nreturned":10,"durationMillis":120}}`, db),
		fmt.Sprintf(`{"t":{"$date":"2026-01-01T00:00:01.000+00:00"},"s":"I","c":"COMMAND","id":51803,"ctx":"conn5","msg":"Slow query","attr":{"type":"command","ns":"%s.orders","command":{"find":"orders","filter":{"status":"done"},"sort":{"at":-1},"$db":"%[1]s"},"planSummary":"COLLSCAN","keysExamined":0,"docsExamined":5000,"hasSortStage":true,"nreturned":8,"durationMillis":100}}`, db),
		fmt.Sprintf(`{"op":"query","ns":"%s.orders","command":{"find":"orders","filter":{"status":"late"},"sort":{"at":-1},"$db":"%[1]s"},"keysExamined":0,"docsExamined":4000,"hasSortStage":true,"nreturned":2,"millis":{"$numberLong":"80"}}`, db),
		fmt.Sprintf(`{"t":{"$date":"2026-01-01T00:00:02.000+00:00"},"s":"I","c":"WRITE","id":51803,"ctx":"conn6","msg":"Slow query","attr":{"type":"update","ns":"%s.pageViews","command":{"q":{"_id":"/"},"u":{"$inc":{"views":1}},"multi":false,"upsert":true},"keysExamined":1,"docsExamined":1,"durationMillis":3}}`, db),
		fmt.Sprintf(`{"op":"command","ns":"%s.orders","command":{"aggregate":"orders","pipeline":[],"comment":%q},"millis":1}`, db, Comment),
		`not json`,
		``,
	}, "\n")
}

func TestParseWorkload(t *testing.T) {
	shapes, entries, skipped := ParseWorkload([]byte(workloadLines("shop")), 100)
	if entries != 4 || skipped != 2 {
		t.Fatalf("entries %d skipped %d, want 4 and 2", entries, skipped)
	}
	if len(shapes) != 2 {
		t.Fatalf("%d shapes: %+v", len(shapes), shapes)
	}
	f := shapes[0]
	if f.NS != "shop.orders" || f.Op != "find" || f.Count != 3 || f.DocsExamined != 14000 || f.NReturned != 20 ||
		f.Millis != 300 || f.MaxMillis != 120 || f.SortStages != 3 {
		t.Errorf("find shape %+v", f)
	}
	if f.Text != `find {"filter":{"status":"?string"},"sort":{"at":{"$numberInt":"-1"}}}` && f.Text != `find {"filter":{"status":"?string"},"sort":{"at":-1}}` {
		t.Errorf("shape text %s", f.Text)
	}
	u := shapes[1]
	if u.NS != "shop.pageViews" || u.Op != "update" || u.Count != 1 || u.Millis != 3 {
		t.Errorf("update shape %+v", u)
	}
	if field, ok := incOnly(u.Update); !ok || field != "views" {
		t.Errorf("update %v", u.Update)
	}
	// The limit bounds the lines read.
	if _, entries, skipped := ParseWorkload([]byte(workloadLines("shop")), 2); entries+skipped != 2 {
		t.Errorf("limit 2 read %d lines", entries+skipped)
	}
}

// TestRunWorkloadFile advises from a workload file instead of
// system.profile: the blocking sort it records is found.
func TestRunWorkloadFile(t *testing.T) {
	db := newDB(t)
	insert(t, db.Collection("orders"), 30, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "status", Value: "open"}, {Key: "at", Value: i}}
	})
	rep, err := Run(context.Background(), db.Client(), Options{
		Databases: []string{db.Name()}, Workload: []byte(workloadLines(db.Name())), ProfileFrom: "slow.log",
		Thresholds: Thresholds{HotShape: 3}, Checks: []string{"blocking-sort"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if w := rep.Snapshot.Workload; w.Source != "slow.log" || w.Entries != 4 || w.Skipped != 2 {
		t.Errorf("workload %+v", w)
	}
	f := one(t, rep, "blocking-sort")
	wantFigure(t, f, "executions", 3)
	wantFigure(t, f, "documents examined per execution", 14000.0/3)
	wantFix(t, f, `createIndex({status: 1, at: -1})`)
}

// TestRunReadOnly checks I1 and I2: with the profiler on during a run,
// every command the advisor sent carries its comment, and none writes.
func TestRunReadOnly(t *testing.T) {
	db := newDB(t)
	customersAndOrders(t, db, 3)
	profile(t, db, 2)
	rep := advise(t, db, Thresholds{})
	profile(t, db, 0)
	if len(rep.Snapshot.Notes) > 0 {
		t.Errorf("notes: %v", rep.Snapshot.Notes)
	}
	var entries []bson.Raw
	cur, err := db.Collection("system.profile").Find(context.Background(), bson.D{})
	must(t, err)
	must(t, cur.All(context.Background(), &entries))
	own := 0
	for _, e := range entries {
		if isOwn(e) {
			own++
			switch op, _ := e.Lookup("op").StringValueOK(); op {
			case "insert", "update", "remove":
				t.Errorf("the advisor wrote: %v", e)
			}
			continue
		}
		name := ""
		if cmd, ok := e.Lookup("command").DocumentOK(); ok {
			if el, err := cmd.IndexErr(0); err == nil {
				name = el.Key()
			}
		}
		if name != "profile" {
			t.Errorf("a command without the advisor's comment: %v", e)
		}
	}
	if own == 0 {
		t.Error("no command of the advisor was profiled")
	}
}
