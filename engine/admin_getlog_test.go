package engine_test

import (
	"encoding/json"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestGetLogGlobalHasRecentLines(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	admin := db.Client().Database("admin")
	// configureFailPoint logs a warning, as mongod does.
	if err := admin.RunCommand(ctx, bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "off"}}).Err(); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Total int32    `bson:"totalLinesWritten"`
		Log   []string `bson:"log"`
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "getLog", Value: "global"}}).Decode(&res); err != nil {
		t.Fatal(err)
	}
	if res.Total < 1 || len(res.Log) < 1 {
		t.Fatalf("getLog global: %+v", res)
	}
	last := res.Log[len(res.Log)-1]
	var line struct {
		T struct {
			Date string `json:"$date"`
		} `json:"t"`
		S   string
		Msg string
	}
	if err := json.Unmarshal([]byte(last), &line); err != nil {
		t.Fatalf("line %q: %v", last, err)
	}
	if line.S != "W" || !strings.Contains(line.Msg, "Set failpoint") || line.T.Date == "" {
		t.Fatalf("last line %q", last)
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "getLog", Value: "startupWarnings"}}).Decode(&res); err != nil {
		t.Fatal(err)
	}
	for _, l := range res.Log {
		if strings.Contains(l, "Set failpoint") {
			t.Fatalf("a warning after startup is in startupWarnings: %q", l)
		}
	}
}
