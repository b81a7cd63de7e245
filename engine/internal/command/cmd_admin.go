package command

import (
	"context"
	"os"
	"runtime"
	"sort"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/wire"
)

func init() {
	register("ping", &spec{run: runPing, apiV1: true, help: "check that the server answers"})
	register("buildInfo", &spec{run: runBuildInfo, help: "server version and build"})
	register("getParameter", &spec{run: runGetParameter, adminOnly: true, help: "read server parameters"})
	register("setParameter", &spec{run: runSetParameter, adminOnly: true, help: "change server parameters"})
	register("getCmdLineOpts", &spec{run: runGetCmdLineOpts, adminOnly: true, help: "the server's options"})
	register("getLog", &spec{run: runGetLog, adminOnly: true, help: "recent log lines"})
	register("hostInfo", &spec{run: runHostInfo, help: "the host the server runs on"})
	register("serverStatus", &spec{run: runServerStatus, help: "server statistics"})
	register("connectionStatus", &spec{run: runConnectionStatus, help: "the connection's authentication state"})
	register("whatsmyuri", &spec{run: runWhatsMyURI, help: "the client's address as the server sees it"})
	register("listCommands", &spec{run: runListCommands, help: "the commands this server knows"})
	register("replSetGetStatus", &spec{run: runReplSetGetStatus, adminOnly: true, help: "replica set status"})
}

// Version is the MongoDB version the engine reports.
const Version = "7.0.14"

var versionArray = bson.A{int32(7), int32(0), int32(14), int32(0)}

func noFields(r *Request) error {
	return fields(r.Name, r.Body, func(k string, v bson.RawValue) error { return errUnknown })
}

func runPing(ctx context.Context, r *Request) (bson.D, error) {
	return bson.D{}, noFields(r)
}

// runBuildInfo reports a 7.0-compatible version.
// https://www.mongodb.com/docs/manual/reference/command/buildInfo/
func runBuildInfo(ctx context.Context, r *Request) (bson.D, error) {
	return bson.D{
		{Key: "version", Value: Version},
		{Key: "gitVersion", Value: "formwork"},
		{Key: "modules", Value: bson.A{}},
		{Key: "allocator", Value: "go"},
		{Key: "javascriptEngine", Value: "none"},
		{Key: "sysInfo", Value: "deprecated"},
		{Key: "versionArray", Value: versionArray},
		{Key: "openssl", Value: bson.D{{Key: "running", Value: "disabled"}, {Key: "compiled", Value: "disabled"}}},
		{Key: "buildEnvironment", Value: bson.D{{Key: "target_os", Value: runtime.GOOS}, {Key: "target_arch", Value: runtime.GOARCH}}},
		{Key: "bits", Value: int32(64)},
		{Key: "debug", Value: false},
		{Key: "maxBsonObjectSize", Value: int32(wire.MaxDocumentSize)},
		{Key: "storageEngines", Value: bson.A{"formwork"}},
	}, nil
}

// runGetParameter reads parameters named by fields set to a value, or all
// of them with getParameter: "*".
func runGetParameter(ctx context.Context, r *Request) (bson.D, error) {
	all := false
	if s, ok := r.Body.Index(0).Value().StringValueOK(); ok && s == "*" {
		all = true
	}
	if d, ok := r.Body.Index(0).Value().DocumentOK(); ok {
		if v, err := d.LookupErr("allParameters"); err == nil {
			all, _ = asBool(v)
		}
	}
	var names []string
	_ = fields("getParameter", r.Body, func(k string, v bson.RawValue) error {
		names = append(names, k)
		return nil
	})
	return r.Env.params.get(names, all)
}

// runSetParameter changes settable parameters and reports their old values.
func runSetParameter(ctx context.Context, r *Request) (bson.D, error) {
	var out bson.D
	err := fields("setParameter", r.Body, func(k string, v bson.RawValue) error {
		old, err := r.Env.params.set(k, v)
		if err == nil {
			out = append(out, bson.E{Key: "was", Value: old})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "no option found to set, use help:true to see options ")
	}
	return out, nil
}

func runGetCmdLineOpts(ctx context.Context, r *Request) (bson.D, error) {
	if err := noFields(r); err != nil {
		return nil, err
	}
	parsed := bson.D{{Key: "net", Value: bson.D{{Key: "bindIp", Value: r.Env.Config.Host}}}}
	if r.Env.Config.DBPath != "" {
		parsed = append(parsed, bson.E{Key: "storage", Value: bson.D{{Key: "dbPath", Value: r.Env.Config.DBPath}}})
	}
	if !r.Env.Config.Standalone {
		parsed = append(parsed, bson.E{Key: "replication", Value: bson.D{{Key: "replSet", Value: r.Env.Config.SetName}}})
	}
	argv := bson.A{}
	for _, a := range os.Args {
		argv = append(argv, a)
	}
	return bson.D{{Key: "argv", Value: argv}, {Key: "parsed", Value: parsed}}, nil
}

// runGetLog answers the log names mongosh asks for; the engine logs
// through slog rather than keeping lines in memory, so they are empty.
func runGetLog(ctx context.Context, r *Request) (bson.D, error) {
	name, err := wantString("getLog", "getLog", r.Body.Index(0).Value())
	if err != nil {
		return nil, err
	}
	switch name {
	case "*":
		return bson.D{{Key: "names", Value: bson.A{"global", "startupWarnings"}}}, nil
	case "global", "startupWarnings":
		return r.Env.getLog(name), nil
	}
	return nil, mongoerr.Newf(mongoerr.Code(0), "no RamLog named: %s", name)
}

func runHostInfo(ctx context.Context, r *Request) (bson.D, error) {
	host, _ := os.Hostname()
	return bson.D{
		{Key: "system", Value: bson.D{
			{Key: "currentTime", Value: bson.NewDateTimeFromTime(time.Now())},
			{Key: "hostname", Value: host},
			{Key: "cpuAddrSize", Value: int32(64)},
			{Key: "numCores", Value: int32(runtime.NumCPU())},
			{Key: "cpuArch", Value: runtime.GOARCH},
			{Key: "numaEnabled", Value: false},
		}},
		{Key: "os", Value: bson.D{{Key: "type", Value: runtime.GOOS}, {Key: "name", Value: runtime.GOOS}}},
		{Key: "extra", Value: bson.D{}},
	}, nil
}

func runConnectionStatus(ctx context.Context, r *Request) (bson.D, error) {
	return connectionStatus(r) // auth_status.go
}

func runWhatsMyURI(ctx context.Context, r *Request) (bson.D, error) {
	return bson.D{{Key: "you", Value: r.Conn.Remote}}, nil
}

func runListCommands(ctx context.Context, r *Request) (bson.D, error) {
	names := make([]string, 0, len(table))
	for n, s := range table {
		if s.testOnly && !r.Env.Config.EnableTestCommands {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	cmds := bson.D{}
	for _, n := range names {
		s := table[n]
		api := bson.A{}
		if s.apiV1 {
			api = append(api, "1")
		}
		cmds = append(cmds, bson.E{Key: n, Value: bson.D{
			{Key: "help", Value: s.help},
			{Key: "requiresAuth", Value: requiresAuth(n)},
			{Key: "secondaryOk", Value: true},
			{Key: "adminOnly", Value: s.adminOnly},
			{Key: "apiVersions", Value: api},
			{Key: "deprecatedApiVersions", Value: bson.A{}},
		}})
	}
	return bson.D{{Key: "commands", Value: cmds}}, nil
}

func runReplSetGetStatus(ctx context.Context, r *Request) (bson.D, error) {
	e := r.Env
	if e.Config.Standalone {
		return nil, mongoerr.New(mongoerr.NoReplicationEnabled, "not running with --replSet")
	}
	ts := e.clock.current()
	return bson.D{
		{Key: "set", Value: e.Config.SetName},
		{Key: "date", Value: bson.NewDateTimeFromTime(time.Now())},
		{Key: "myState", Value: int32(1)},
		{Key: "term", Value: int64(1)},
		{Key: "members", Value: bson.A{bson.D{
			{Key: "_id", Value: int32(0)},
			{Key: "name", Value: e.Config.Host},
			{Key: "health", Value: 1.0},
			{Key: "state", Value: int32(1)},
			{Key: "stateStr", Value: "PRIMARY"},
			{Key: "uptime", Value: int64(time.Since(e.started).Seconds())},
			{Key: "optime", Value: bson.D{{Key: "ts", Value: ts}, {Key: "t", Value: int64(1)}}},
			{Key: "self", Value: true},
		}}},
	}, nil
}
