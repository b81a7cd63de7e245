package engine_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestHelloDescribesSingleNodeReplicaSet(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	var got bson.M
	if err := db.Client().Database("admin").RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	checks := map[string]any{
		"isWritablePrimary":            true,
		"setName":                      "formwork",
		"minWireVersion":               int32(0),
		"maxWireVersion":               int32(21),
		"logicalSessionTimeoutMinutes": int32(30),
		"maxBsonObjectSize":            int32(16777216),
		"maxMessageSizeBytes":          int32(48000000),
		"maxWriteBatchSize":            int32(100000),
		"primary":                      "localhost:27017",
		"me":                           "localhost:27017",
	}
	for k, want := range checks {
		if got[k] != want {
			t.Errorf("hello.%s = %#v, want %#v", k, got[k], want)
		}
	}
	if _, ok := got["connectionId"]; !ok {
		t.Error("hello has no connectionId")
	}
	if _, ok := got["compression"]; ok {
		t.Error("hello advertises compression")
	}
}

func TestStandaloneHasNoSetName(t *testing.T) {
	db := openStandalone(t)
	var got bson.M
	if err := db.RunCommand(ctxT(t), bson.D{{Key: "isMaster", Value: 1}}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got["ismaster"] != true {
		t.Errorf("ismaster = %v", got["ismaster"])
	}
	if _, ok := got["setName"]; ok {
		t.Error("standalone reports setName")
	}
	err := db.Client().Database("admin").RunCommand(ctxT(t), bson.D{{Key: "replSetGetStatus", Value: 1}}).Err()
	wantCode(t, err, 76, "NoReplicationEnabled")
}

func TestAdminCommands(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	admin := db.Client().Database("admin")
	var bi struct {
		Version      string  `bson:"version"`
		VersionArray []int32 `bson:"versionArray"`
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&bi); err != nil {
		t.Fatal(err)
	}
	if bi.Version[:4] != "7.0." || len(bi.VersionArray) != 4 || bi.VersionArray[0] != 7 {
		t.Errorf("buildInfo = %+v", bi)
	}
	var fcv struct {
		FCV struct {
			Version string `bson:"version"`
		} `bson:"featureCompatibilityVersion"`
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "getParameter", Value: 1}, {Key: "featureCompatibilityVersion", Value: 1}}).Decode(&fcv); err != nil {
		t.Fatal(err)
	}
	if fcv.FCV.Version != "7.0" {
		t.Errorf("featureCompatibilityVersion = %q", fcv.FCV.Version)
	}
	for _, cmd := range []bson.D{
		{{Key: "ping", Value: 1}},
		{{Key: "getCmdLineOpts", Value: 1}},
		{{Key: "getLog", Value: "startupWarnings"}},
		{{Key: "hostInfo", Value: 1}},
		{{Key: "serverStatus", Value: 1}},
		{{Key: "connectionStatus", Value: 1}},
		{{Key: "whatsmyuri", Value: 1}},
		{{Key: "listCommands", Value: 1}},
		{{Key: "endSessions", Value: bson.A{}}},
		{{Key: "killSessions", Value: bson.A{}}},
		{{Key: "killAllSessions", Value: bson.A{}}},
		{{Key: "listDatabases", Value: 1}},
		{{Key: "replSetGetStatus", Value: 1}},
	} {
		var out bson.M
		if err := admin.RunCommand(ctx, cmd).Decode(&out); err != nil {
			t.Errorf("%s: %v", cmd[0].Key, err)
		}
	}
	var ss struct {
		Opcounters map[string]int64 `bson:"opcounters"`
		Conns      struct {
			Current int32 `bson:"current"`
		} `bson:"connections"`
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Decode(&ss); err != nil {
		t.Fatal(err)
	}
	if ss.Opcounters["command"] == 0 || ss.Conns.Current == 0 {
		t.Errorf("serverStatus counters = %+v", ss)
	}
	var lc struct {
		Commands map[string]bson.M `bson:"commands"`
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "listCommands", Value: 1}}).Decode(&lc); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"find", "insert", "update", "delete", "findAndModify", "hello", "getMore"} {
		if _, ok := lc.Commands[name]; !ok {
			t.Errorf("listCommands lacks %s", name)
		}
	}
}

func TestCommandErrors(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	cases := []struct {
		name string
		db   string
		cmd  bson.D
		code int
		cn   string
	}{
		{"unknown command", "test", bson.D{{Key: "noSuchCommand", Value: 1}}, 59, "CommandNotFound"},
		{"unknown field", "test", bson.D{{Key: "find", Value: "c"}, {Key: "bogus", Value: 1}}, 40415, "Location40415"},
		{"unsupported option", "test", bson.D{{Key: "find", Value: "c"}, {Key: "tailable", Value: true}}, 238, "NotImplemented"},
		{"unsupported create option", "test", bson.D{{Key: "create", Value: "c"}, {Key: "capped", Value: true}}, 238, "NotImplemented"},
		{"autocommit true", "test", bson.D{{Key: "find", Value: "c"}, {Key: "autocommit", Value: true}, {Key: "txnNumber", Value: int64(1)}}, 72, "InvalidOptions"},
		{"admin only", "test", bson.D{{Key: "listDatabases", Value: 1}}, 13, "Unauthorized"},
		{"bad collection", "test", bson.D{{Key: "find", Value: "a$b"}}, 73, "InvalidNamespace"},
		{"wrong type", "test", bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: 3}}, 14, "TypeMismatch"},
		{"negative skip", "test", bson.D{{Key: "find", Value: "c"}, {Key: "skip", Value: -1}}, 51024, "Location51024"},
		{"bad hint", "test", bson.D{{Key: "find", Value: "c"}, {Key: "hint", Value: "nope"}}, 2, "BadValue"},
		{"unknown getParameter", "admin", bson.D{{Key: "getParameter", Value: 1}, {Key: "noSuchParam", Value: 1}}, 72, "InvalidOptions"},
		{"getMore unknown cursor", "test", bson.D{{Key: "getMore", Value: int64(12345)}, {Key: "collection", Value: "c"}}, 43, "CursorNotFound"},
		{"apiVersion", "test", bson.D{{Key: "ping", Value: 1}, {Key: "apiVersion", Value: "2"}}, 322, "APIVersionError"},
		{"unknown collation locale", "test", bson.D{{Key: "find", Value: "c"}, {Key: "collation", Value: bson.D{{Key: "locale", Value: "xx"}}}}, 2, "BadValue"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := db.Client().Database(c.db).RunCommand(ctx, c.cmd).Err()
			wantCode(t, err, c.code, c.cn)
		})
	}
}
