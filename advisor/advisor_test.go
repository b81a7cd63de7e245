package advisor

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testenv"
)

// TestRunBoundsEveryCommand checks I2 with command monitoring: every
// command the advisor sends carries maxTimeMS and its comment.
func TestRunBoundsEveryCommand(t *testing.T) {
	if testenv.Real() {
		t.Skip("monitors a client of its own engine")
	}
	eng, setup := testenv.Engine(t, engine.Options{})
	db := setup.Database("shop")
	customersAndOrders(t, db, 2)
	withProfiler(t, db, func() {
		find(t, db.Collection("orders"), bson.D{{Key: "status", Value: "x"}}, options.Find().SetSort(bson.D{{Key: "_id", Value: -1}}))
	})
	var mu sync.Mutex
	var cmds []bson.Raw
	mon := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		mu.Lock()
		defer mu.Unlock()
		cmds = append(cmds, append(bson.Raw{}, e.Command...))
	}}
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://localhost:27017").SetDialer(eng.Dialer()).SetMonitor(mon))
	must(t, err)
	defer client.Disconnect(context.Background())
	if _, err := Run(context.Background(), client, Options{MaxTime: 3 * time.Second}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(cmds) < 10 {
		t.Fatalf("only %d commands", len(cmds))
	}
	for _, c := range cmds {
		name := c.Index(0).Key()
		if name == "getMore" || name == "endSessions" {
			continue
		}
		ms, ok := c.Lookup("maxTimeMS").AsInt64OK()
		comment, _ := c.Lookup("comment").StringValueOK()
		if !ok || ms < 1 || ms > 3000 || comment != Comment {
			t.Errorf("%s sent with maxTimeMS %v and comment %q", name, c.Lookup("maxTimeMS"), comment)
		}
		switch name {
		case "insert", "update", "delete", "findAndModify", "create", "createIndexes", "drop", "dropIndexes", "collMod":
			t.Errorf("the advisor sent %s", name)
		}
	}
}

// TestRunBudgetSpent: a spent budget stops the run before the first
// command.
func TestRunBudgetSpent(t *testing.T) {
	db := newDB(t)
	_, err := Run(context.Background(), db.Client(), Options{Budget: time.Nanosecond})
	if !errors.Is(err, errBudget) {
		t.Errorf("err %v, want the budget error", err)
	}
}

// TestRunOptionErrors: bad options are refused before any I/O.
func TestRunOptionErrors(t *testing.T) {
	for _, o := range []Options{{Sample: -1}, {Sample: 200000}, {Checks: []string{"nope"}}, {Budget: -time.Second}} {
		if _, err := Run(context.Background(), nil, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

// TestAnalyseSnapshot runs the checks on a Snapshot built by hand: no
// server involved (I4).
func TestAnalyseSnapshot(t *testing.T) {
	snap := &Snapshot{Databases: []*Database{{Name: "d", Collections: []*Collection{{
		DB: "d", Name: "c", Count: 10,
		Indexes: []*Index{{Name: "_id_", Keys: []Key{{Field: "_id", Dir: 1}}}, {Name: "a_1", Keys: []Key{{Field: "a", Dir: 1}}, Hidden: true, Size: 4096}},
	}}}}}
	rep, err := Analyse(snap, Options{Checks: []string{"hidden-index"}})
	if err != nil {
		t.Fatal(err)
	}
	f := one(t, rep, "hidden-index")
	wantFigure(t, f, "index size", 4096)
	if rep.AtLeast(Warning) || !rep.AtLeast(Info) || rep.Worst() != Info {
		t.Errorf("worst %v", rep.Worst())
	}
}

func TestThresholdsSet(t *testing.T) {
	var th Thresholds
	must(t, th.Set("arrayLen", "300"))
	must(t, th.Set("DRIFTSHARE", "0.2"))
	if th.ArrayLen != 300 || th.DriftShare != 0.2 {
		t.Errorf("%+v", th)
	}
	for _, bad := range [][2]string{{"nope", "1"}, {"arrayLen", "x"}, {"arrayLen", "1.5"}} {
		if err := th.Set(bad[0], bad[1]); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	d := th.withDefaults()
	if d.ArrayLen != 300 || d.HotShape != 20 || d.ColdDays != 365 {
		t.Errorf("defaults %+v", d)
	}
}

// TestRunEnableProfiler: the one write, only when asked: the profiler
// goes to level 1 and the report says so.
func TestRunEnableProfiler(t *testing.T) {
	db := newDB(t)
	insert(t, db.Collection("c"), 1, func(i int) bson.D { return bson.D{{Key: "_id", Value: i}} })
	level := func() int32 {
		var r struct {
			Was int32 `bson:"was"`
		}
		must(t, db.RunCommand(context.Background(), bson.D{{Key: "profile", Value: -1}}).Decode(&r))
		return r.Was
	}
	advise(t, db, Thresholds{})
	if l := level(); l != 0 {
		t.Fatalf("level %d after a plain run", l)
	}
	rep, err := Run(context.Background(), db.Client(), Options{Databases: []string{db.Name()}, EnableProfiler: true})
	must(t, err)
	if l := level(); l != 1 {
		t.Errorf("level %d after --enable-profiler", l)
	}
	if len(rep.Snapshot.Notes) != 1 || rep.Snapshot.Databases[0].Profiler != 1 {
		t.Errorf("notes %v", rep.Snapshot.Notes)
	}
	profile(t, db, 0)
}
