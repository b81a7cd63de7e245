package engine_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testcert"
)

// serveAuth serves an engine with access control (and TLS when withTLS)
// on a loopback port and returns its address and certificates.
func serveAuth(t *testing.T, withTLS bool, opts engine.Options) (addr string, certs testcert.Files) {
	t.Helper()
	opts.Auth = true
	if withTLS {
		certs = testcert.Write(t, t.TempDir())
		cfg, err := engine.ServerTLSConfig(certs.Cert, certs.Key, certs.CA)
		if err != nil {
			t.Fatal(err)
		}
		opts.TLSConfig = cfg
	}
	l := listenLoopback(t)
	serveOn(t, l, opts)
	return l.Addr().String(), certs
}

// authClient connects to addr, with cred when not nil.
func authClient(t *testing.T, addr string, certs testcert.Files, cred *options.Credential) *mongo.Client {
	t.Helper()
	uri := "mongodb://" + addr + "/?directConnection=true"
	if certs.CA != "" {
		uri += "&tls=true&tlsCAFile=" + url.QueryEscape(certs.CA)
	}
	o := options.Client().ApplyURI(uri).SetServerSelectionTimeout(5 * time.Second)
	if cred != nil {
		o.SetAuth(*cred)
	}
	c, err := mongo.Connect(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Disconnect(context.Background()) })
	return c
}

func cred(user, pwd, source, mech string) *options.Credential {
	return &options.Credential{Username: user, Password: pwd, AuthSource: source, AuthMechanism: mech}
}

// createUser runs createUser on db through c.
func createUser(t *testing.T, c *mongo.Client, db, user, pwd string, roles ...any) {
	t.Helper()
	err := c.Database(db).RunCommand(ctxT(t), bson.D{
		{Key: "createUser", Value: user}, {Key: "pwd", Value: pwd}, {Key: "roles", Value: bson.A(roles)},
	}).Err()
	if err != nil {
		t.Fatalf("createUser %s@%s: %v", user, db, err)
	}
}

// wantMessage asserts err is a server error with code and a message
// containing part.
func wantMessage(t *testing.T, err error, code int, part string) {
	t.Helper()
	wantCode(t, err, code, "")
	if !strings.Contains(err.Error(), part) {
		t.Fatalf("error %q does not contain %q", err.Error(), part)
	}
}

func TestAuthSCRAMOverTLS(t *testing.T) {
	t.Parallel()
	addr, certs := serveAuth(t, true, engine.Options{})
	ctx := ctxT(t)

	// Localhost exception: no user yet, a loopback client creates the first.
	anon := authClient(t, addr, certs, nil)
	err := anon.Database("test").Collection("c").FindOne(ctx, bson.D{}).Err()
	wantMessage(t, err, 13, `not authorized on test to execute command { find: "c"`)
	createUser(t, anon, "admin", "admin", "s3cret", "root")
	// The exception ends with the first user.
	err = anon.Database("test").Collection("c").FindOne(ctx, bson.D{}).Err()
	wantMessage(t, err, 13, "Command find requires authentication")
	err = anon.Database("admin").RunCommand(ctx, bson.D{{Key: "createUser", Value: "x"}, {Key: "pwd", Value: "y"}, {Key: "roles", Value: bson.A{}}}).Err()
	wantMessage(t, err, 13, "Command createUser requires authentication")

	for _, mech := range []string{"SCRAM-SHA-256", "SCRAM-SHA-1", ""} {
		t.Run("mech="+mech, func(t *testing.T) {
			c := authClient(t, addr, certs, cred("admin", "s3cret", "admin", mech))
			coll := c.Database("test").Collection("c")
			if _, err := coll.InsertOne(ctx, bson.D{{Key: "m", Value: mech}}); err != nil {
				t.Fatal(err)
			}
			var st bson.M
			if err := c.Database("admin").RunCommand(ctx, bson.D{{Key: "connectionStatus", Value: 1}}).Decode(&st); err != nil {
				t.Fatal(err)
			}
			info := fmt.Sprint(st["authInfo"])
			if !strings.Contains(info, "admin") || !strings.Contains(info, "root") {
				t.Fatalf("connectionStatus authInfo = %s", info)
			}
		})
	}

	// A wrong password fails the handshake with AuthenticationFailed.
	bad := authClient(t, addr, certs, cred("admin", "wrong", "admin", "SCRAM-SHA-256"))
	err = bad.Ping(ctx, nil)
	wantAuthFailed(t, err)
	// So does an unknown user, and a user looked up in the wrong database.
	wantAuthFailed(t, authClient(t, addr, certs, cred("nobody", "x", "admin", "SCRAM-SHA-1")).Ping(ctx, nil))
	wantAuthFailed(t, authClient(t, addr, certs, cred("admin", "s3cret", "test", "SCRAM-SHA-256")).Ping(ctx, nil))
}

// wantAuthFailed asserts a handshake failed with AuthenticationFailed (18).
func wantAuthFailed(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("authentication succeeded, want AuthenticationFailed")
	}
	var ce mongo.CommandError
	if errors.As(err, &ce) {
		if ce.Code != 18 || ce.Name != "AuthenticationFailed" || ce.Message != "Authentication failed." {
			t.Fatalf("got %s (%d) %q, want AuthenticationFailed (18)", ce.Name, ce.Code, ce.Message)
		}
		return
	}
	if !strings.Contains(err.Error(), "AuthenticationFailed") && !strings.Contains(err.Error(), "(18)") {
		t.Fatalf("got %v, want AuthenticationFailed (18)", err)
	}
}

// authFixture serves a plain (no TLS) engine with access control, a root
// user and one user per role under test.
func authFixture(t *testing.T) (addr string, root *mongo.Client) {
	t.Helper()
	addr, _ = serveAuth(t, false, engine.Options{})
	anon := authClient(t, addr, testcert.Files{}, nil)
	createUser(t, anon, "admin", "root", "pw", "root")
	root = authClient(t, addr, testcert.Files{}, cred("root", "pw", "admin", ""))
	return addr, root
}

func TestAuthRoleEnforcement(t *testing.T) {
	t.Parallel()
	addr, root := authFixture(t)
	ctx := ctxT(t)
	if _, err := root.Database("test").Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	users := map[string]any{
		"reader":     "read",
		"writer":     "readWrite",
		"dbadmin":    "dbAdmin",
		"useradm":    "userAdmin",
		"owner":      "dbOwner",
		"monitor":    bson.D{{Key: "role", Value: "clusterMonitor"}, {Key: "db", Value: "admin"}},
		"anyread":    bson.D{{Key: "role", Value: "readAnyDatabase"}, {Key: "db", Value: "admin"}},
		"otherdb":    bson.D{{Key: "role", Value: "readWrite"}, {Key: "db", Value: "other"}},
		"hostmgr":    bson.D{{Key: "role", Value: "hostManager"}, {Key: "db", Value: "admin"}},
		"clusteradm": bson.D{{Key: "role", Value: "clusterAdmin"}, {Key: "db", Value: "admin"}},
		"anyrw":      bson.D{{Key: "role", Value: "readWriteAnyDatabase"}, {Key: "db", Value: "admin"}},
		"anyuser":    bson.D{{Key: "role", Value: "userAdminAnyDatabase"}, {Key: "db", Value: "admin"}},
		"anydba":     bson.D{{Key: "role", Value: "dbAdminAnyDatabase"}, {Key: "db", Value: "admin"}},
		"backup":     bson.D{{Key: "role", Value: "backup"}, {Key: "db", Value: "admin"}},
		"restore":    bson.D{{Key: "role", Value: "restore"}, {Key: "db", Value: "admin"}},
	}
	for u, role := range users {
		createUser(t, root, "test", u, "pw", role)
	}
	clients := map[string]*mongo.Client{"root": nil}
	client := func(u string) *mongo.Client {
		if c := clients[u]; c != nil {
			return c
		}
		c := authClient(t, addr, testcert.Files{}, cred(u, "pw", "test", "SCRAM-SHA-256"))
		clients[u] = c
		return c
	}
	find := bson.D{{Key: "find", Value: "c"}}
	insert := bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{}}}}
	createIdx := bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}}}}}
	serverStatus := bson.D{{Key: "serverStatus", Value: 1}}
	mkUser := bson.D{{Key: "createUser", Value: "tmp"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{}}}
	listDBs := bson.D{{Key: "listDatabases", Value: 1}}
	usersInfo := bson.D{{Key: "usersInfo", Value: 1}}
	collMod := bson.D{{Key: "collMod", Value: "c"}}
	dropDB := bson.D{{Key: "dropDatabase", Value: 1}}
	sysUsers := bson.D{{Key: "find", Value: "system.users"}}
	cases := []struct {
		user string
		db   string
		cmd  bson.D
		ok   bool
	}{
		{"reader", "test", find, true},
		{"reader", "test", insert, false},
		{"reader", "test", createIdx, false},
		{"reader", "test", serverStatus, false},
		{"reader", "other", find, false},
		{"writer", "test", insert, true},
		{"writer", "test", createIdx, true},
		{"writer", "test", collMod, false},
		{"writer", "test", mkUser, false},
		{"dbadmin", "test", collMod, true},
		{"dbadmin", "test", find, false},
		{"dbadmin", "test", insert, false},
		{"useradm", "test", mkUser, true},
		{"useradm", "test", usersInfo, true},
		{"useradm", "test", find, false},
		{"owner", "test", insert, true},
		{"owner", "test", collMod, true},
		{"owner", "test", usersInfo, true},
		{"monitor", "admin", serverStatus, true},
		{"monitor", "admin", listDBs, true},
		{"monitor", "test", find, false},
		{"anyread", "other", find, true},
		{"anyread", "admin", listDBs, true},
		{"anyread", "other", insert, false},
		{"anyread", "admin", sysUsers, false},
		{"otherdb", "other", insert, true},
		{"otherdb", "test", find, false},
		{"hostmgr", "admin", serverStatus, false},
		{"clusteradm", "admin", serverStatus, true},
		{"clusteradm", "other", dropDB, true},
		{"clusteradm", "test", find, false},
		{"anyrw", "other", insert, true},
		{"anyrw", "test", collMod, false},
		{"anyuser", "other", usersInfo, true},
		{"anyuser", "admin", sysUsers, true},
		{"anyuser", "test", find, false},
		{"anydba", "other", collMod, true},
		{"anydba", "other", find, false},
		{"backup", "admin", sysUsers, true},
		{"backup", "test", insert, false},
		{"restore", "other", insert, true},
		{"restore", "other", find, false},
	}
	for _, tc := range cases {
		name := fmt.Sprintf("%s/%s/%s", tc.user, tc.db, tc.cmd[0].Key)
		err := client(tc.user).Database(tc.db).RunCommand(ctx, tc.cmd).Err()
		if tc.ok {
			if err != nil && strings.Contains(err.Error(), "Unauthorized") {
				t.Errorf("%s: %v, want authorized", name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: authorized, want Unauthorized", name)
			continue
		}
		var ce mongo.CommandError
		if !errors.As(err, &ce) || ce.Code != 13 || ce.Name != "Unauthorized" {
			t.Errorf("%s: %v, want Unauthorized (13)", name, err)
			continue
		}
		want := "not authorized on " + tc.db + " to execute command { " + tc.cmd[0].Key + ": "
		if !strings.HasPrefix(ce.Message, want) {
			t.Errorf("%s: message %q, want prefix %q", name, ce.Message, want)
		}
	}

	// listDatabases without the privilege lists the user's own databases,
	// as mongod's authorizedDatabases.
	// (the cases above created "other" through otherdb's insert)
	names, err := client("otherdb").ListDatabaseNames(ctx, bson.D{})
	if err != nil || len(names) != 1 || names[0] != "other" {
		t.Fatalf("otherdb's listDatabases = %v, %v", names, err)
	}
	err = client("otherdb").Database("admin").RunCommand(ctx, bson.D{{Key: "listDatabases", Value: 1}, {Key: "authorizedDatabases", Value: false}}).Err()
	wantCode(t, err, 13, "Unauthorized")
	if names, err := root.ListDatabaseNames(ctx, bson.D{}); err != nil || len(names) < 3 {
		t.Fatalf("root's listDatabases = %v, %v", names, err)
	}

	// A user may always describe itself and the roles it holds.
	rd := client("reader").Database("test")
	if err := rd.RunCommand(ctx, bson.D{{Key: "usersInfo", Value: "reader"}}).Err(); err != nil {
		t.Errorf("usersInfo of oneself: %v", err)
	}
	wantCode(t, rd.RunCommand(ctx, bson.D{{Key: "usersInfo", Value: "writer"}}).Err(), 13, "Unauthorized")
	if err := rd.RunCommand(ctx, bson.D{{Key: "rolesInfo", Value: "read"}}).Err(); err != nil {
		t.Errorf("rolesInfo of a held role: %v", err)
	}
	wantCode(t, rd.RunCommand(ctx, bson.D{{Key: "rolesInfo", Value: "dbAdmin"}}).Err(), 13, "Unauthorized")

	// The driver's InsertOne reports the same error.
	_, err = client("reader").Database("test").Collection("c").InsertOne(ctx, bson.D{})
	wantMessage(t, err, 13, `not authorized on test to execute command { insert: "c"`)
}

func TestAuthUnauthenticatedOnlyHandshake(t *testing.T) {
	t.Parallel()
	addr, _ := authFixture(t)
	anon := authClient(t, addr, testcert.Files{}, nil)
	ctx := ctxT(t)
	for _, cmd := range []string{"hello", "isMaster", "buildInfo", "ping", "connectionStatus"} {
		if err := anon.Database("admin").RunCommand(ctx, bson.D{{Key: cmd, Value: 1}}).Err(); err != nil {
			t.Errorf("%s: %v", cmd, err)
		}
	}
	for _, cmd := range []bson.D{
		{{Key: "find", Value: "c"}},
		{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{}}}},
		{{Key: "listDatabases", Value: 1}},
		{{Key: "serverStatus", Value: 1}},
		{{Key: "getCmdLineOpts", Value: 1}},
		{{Key: "setParameter", Value: 1}, {Key: "logLevel", Value: 1}},
		{{Key: "usersInfo", Value: 1}},
		{{Key: "listCollections", Value: 1}},
		{{Key: "endSessions", Value: bson.A{}}},
	} {
		err := anon.Database("admin").RunCommand(ctx, cmd).Err()
		wantMessage(t, err, 13, "Command "+cmd[0].Key+" requires authentication")
	}
	var st bson.M
	if err := anon.Database("admin").RunCommand(ctx, bson.D{{Key: "connectionStatus", Value: 1}}).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(st["authInfo"]); !strings.Contains(got, `"authenticatedUsers":[]`) {
		t.Fatalf("authInfo = %s", got)
	}
}

func TestAuthRestartDurability(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := ctxT(t)
	open := func() (*engine.DB, string) {
		db, err := engine.Open(ctx, engine.Options{Dir: dir, Auth: true})
		if err != nil {
			t.Fatal(err)
		}
		l := listenLoopback(t)
		go db.Serve(l)
		return db, l.Addr().String()
	}
	db, addr := open()
	anon := authClient(t, addr, testcert.Files{}, nil)
	createUser(t, anon, "admin", "boss", "pw1", "root")
	boss := authClient(t, addr, testcert.Files{}, cred("boss", "pw1", "admin", ""))
	createUser(t, boss, "app", "appuser", "pw2", "readWrite")
	if err := boss.Database("app").RunCommand(ctx, bson.D{{Key: "createRole", Value: "audit"},
		{Key: "privileges", Value: bson.A{bson.D{{Key: "resource", Value: bson.D{{Key: "db", Value: "app"}, {Key: "collection", Value: "log"}}}, {Key: "actions", Value: bson.A{"find"}}}}},
		{Key: "roles", Value: bson.A{}}}).Err(); err != nil {
		t.Fatal(err)
	}
	// The stored user holds SCRAM keys only, never the password.
	var doc bson.Raw
	if err := boss.Database("admin").Collection("system.users").FindOne(ctx, bson.D{{Key: "_id", Value: "app.appuser"}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(doc.String(), "pw2") || doc.Lookup("credentials", "SCRAM-SHA-256", "storedKey").Type == 0 {
		t.Fatalf("stored user = %s", doc)
	}
	// Ordinary writes cannot reach admin.system.users.
	_, err := boss.Database("admin").Collection("system.users").InsertOne(ctx, bson.D{{Key: "_id", Value: "x.y"}})
	wantCode(t, err, 73, "InvalidNamespace")
	anon.Disconnect(ctx)
	boss.Disconnect(ctx)
	db.Close()

	db, addr = open()
	defer db.Close()
	app := authClient(t, addr, testcert.Files{}, cred("appuser", "pw2", "app", "SCRAM-SHA-256"))
	if _, err := app.Database("app").Collection("c").InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	wantAuthFailed(t, authClient(t, addr, testcert.Files{}, cred("appuser", "wrong", "app", "")).Ping(ctx, nil))
	var roles struct {
		Roles []bson.M `bson:"roles"`
	}
	if err := authClient(t, addr, testcert.Files{}, cred("boss", "pw1", "admin", "SCRAM-SHA-1")).Database("app").
		RunCommand(ctx, bson.D{{Key: "rolesInfo", Value: "audit"}, {Key: "showPrivileges", Value: true}}).Decode(&roles); err != nil {
		t.Fatal(err)
	}
	if len(roles.Roles) != 1 || roles.Roles[0]["role"] != "audit" {
		t.Fatalf("rolesInfo after restart = %v", roles.Roles)
	}
	// The localhost exception does not come back: users exist.
	anon2 := authClient(t, addr, testcert.Files{}, nil)
	err = anon2.Database("admin").RunCommand(ctx, bson.D{{Key: "createUser", Value: "x"}, {Key: "pwd", Value: "y"}, {Key: "roles", Value: bson.A{}}}).Err()
	wantCode(t, err, 13, "Unauthorized")
}

func TestAuthCursorOwnership(t *testing.T) {
	t.Parallel()
	addr, root := authFixture(t)
	ctx := ctxT(t)
	docs := make([]any, 10)
	for i := range docs {
		docs[i] = bson.D{{Key: "i", Value: i}}
	}
	if _, err := root.Database("test").Collection("c").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	createUser(t, root, "test", "a", "pw", "read")
	createUser(t, root, "test", "b", "pw", "read")
	a := authClient(t, addr, testcert.Files{}, cred("a", "pw", "test", ""))
	b := authClient(t, addr, testcert.Files{}, cred("b", "pw", "test", ""))
	var res struct {
		Cursor struct {
			ID int64 `bson:"id"`
		} `bson:"cursor"`
	}
	if err := a.Database("test").RunCommand(ctx, bson.D{{Key: "find", Value: "c"}, {Key: "batchSize", Value: 2}}).Decode(&res); err != nil {
		t.Fatal(err)
	}
	if res.Cursor.ID == 0 {
		t.Fatal("no cursor")
	}
	getMore := bson.D{{Key: "getMore", Value: res.Cursor.ID}, {Key: "collection", Value: "c"}}
	err := b.Database("test").RunCommand(ctx, getMore).Err()
	wantMessage(t, err, 13, fmt.Sprintf("cursor id %d was not created by the authenticated user", res.Cursor.ID))
	err = b.Database("test").RunCommand(ctx, bson.D{{Key: "killCursors", Value: "c"}, {Key: "cursors", Value: bson.A{res.Cursor.ID}}}).Err()
	wantMessage(t, err, 13, "not authorized on test to execute command { killCursors: ")
	// (no deadline: the driver would add maxTimeMS, which getMore refuses)
	if err := a.Database("test").RunCommand(context.Background(), getMore).Err(); err != nil {
		t.Fatalf("owner's getMore: %v", err)
	}
	// root (killAnyCursor) may kill it.
	if err := root.Database("test").RunCommand(ctx, bson.D{{Key: "killCursors", Value: "c"}, {Key: "cursors", Value: bson.A{res.Cursor.ID}}}).Err(); err != nil {
		t.Fatal(err)
	}
}

func TestAuthUserAndRoleCommands(t *testing.T) {
	t.Parallel()
	addr, root := authFixture(t)
	ctx := ctxT(t)
	db := root.Database("test")
	run := func(cmd bson.D) bson.M {
		t.Helper()
		var m bson.M
		if err := db.RunCommand(ctx, cmd).Decode(&m); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
		return m
	}
	createUser(t, root, "test", "u", "pw", "read")
	err := db.RunCommand(ctx, bson.D{{Key: "createUser", Value: "u"}, {Key: "pwd", Value: "x"}, {Key: "roles", Value: bson.A{}}}).Err()
	wantMessage(t, err, 51003, `User "u@test" already exists`)
	err = db.RunCommand(ctx, bson.D{{Key: "createUser", Value: "v"}, {Key: "pwd", Value: "x"}, {Key: "roles", Value: bson.A{"nope"}}}).Err()
	wantMessage(t, err, 31, "Could not find role: nope@test")
	err = db.RunCommand(ctx, bson.D{{Key: "createUser", Value: "v"}, {Key: "pwd", Value: "x"}}).Err()
	wantMessage(t, err, 40414, "BSON field 'createUser.roles' is missing but a required field")
	err = db.RunCommand(ctx, bson.D{{Key: "createUser", Value: "v"}, {Key: "pwd", Value: "x"}, {Key: "roles", Value: bson.A{}}, {Key: "digestPassword", Value: false}}).Err()
	wantMessage(t, err, 2, "Use of SCRAM-SHA-256 requires undigested passwords")
	err = db.RunCommand(ctx, bson.D{{Key: "createUser", Value: "v"}, {Key: "pwd", Value: "x"}, {Key: "roles", Value: bson.A{}}, {Key: "mechanisms", Value: bson.A{"PLAIN"}}}).Err()
	wantMessage(t, err, 2, "Unknown auth mechanism 'PLAIN'")

	// A SCRAM-SHA-1-only user: hello's saslSupportedMechs says so and
	// SCRAM-SHA-256 fails.
	run(bson.D{{Key: "createUser", Value: "old"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"read"}}, {Key: "mechanisms", Value: bson.A{"SCRAM-SHA-1"}}})
	hello := run(bson.D{{Key: "hello", Value: 1}, {Key: "saslSupportedMechs", Value: "test.old"}})
	if fmt.Sprint(hello["saslSupportedMechs"]) != "[SCRAM-SHA-1]" {
		t.Fatalf("saslSupportedMechs = %v", hello["saslSupportedMechs"])
	}
	if _, ok := run(bson.D{{Key: "hello", Value: 1}, {Key: "saslSupportedMechs", Value: "test.ghost"}})["saslSupportedMechs"]; ok {
		t.Fatal("saslSupportedMechs for an unknown user")
	}
	if err := authClient(t, addr, testcert.Files{}, cred("old", "pw", "test", "SCRAM-SHA-1")).Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	wantAuthFailed(t, authClient(t, addr, testcert.Files{}, cred("old", "pw", "test", "SCRAM-SHA-256")).Ping(ctx, nil))

	filtered := run(bson.D{{Key: "usersInfo", Value: 1}, {Key: "filter", Value: bson.D{{Key: "mechanisms", Value: bson.D{{Key: "$size", Value: 1}}}}}})
	if got := fmt.Sprint(filtered["users"]); !strings.Contains(got, `"user":"old"`) || strings.Contains(got, `"user":"u"`) {
		t.Fatalf("usersInfo with a filter = %s", got)
	}
	info := run(bson.D{{Key: "usersInfo", Value: "u"}, {Key: "showPrivileges", Value: true}})
	got := fmt.Sprint(info["users"])
	for _, want := range []string{`"_id":"test.u"`, `"mechanisms":["SCRAM-SHA-1","SCRAM-SHA-256"]`, "inheritedPrivileges", `"find"`} {
		if !strings.Contains(got, want) {
			t.Fatalf("usersInfo = %s, missing %s", got, want)
		}
	}
	if strings.Contains(got, "credentials") {
		t.Fatalf("usersInfo shows credentials unasked: %s", got)
	}

	// Roles: create, grant to a user, privileges take effect at once.
	run(bson.D{{Key: "createRole", Value: "inserter"}, {Key: "privileges", Value: bson.A{bson.D{
		{Key: "resource", Value: bson.D{{Key: "db", Value: "test"}, {Key: "collection", Value: "c"}}},
		{Key: "actions", Value: bson.A{"insert"}}}}}, {Key: "roles", Value: bson.A{}}})
	u := authClient(t, addr, testcert.Files{}, cred("u", "pw", "test", ""))
	_, err = u.Database("test").Collection("c").InsertOne(ctx, bson.D{})
	wantCode(t, err, 13, "Unauthorized")
	run(bson.D{{Key: "grantRolesToUser", Value: "u"}, {Key: "roles", Value: bson.A{"inserter"}}})
	if _, err := u.Database("test").Collection("c").InsertOne(ctx, bson.D{}); err != nil {
		t.Fatalf("after grant: %v", err)
	}
	_, err = u.Database("test").Collection("d").InsertOne(ctx, bson.D{})
	wantCode(t, err, 13, "Unauthorized")
	run(bson.D{{Key: "grantPrivilegesToRole", Value: "inserter"}, {Key: "privileges", Value: bson.A{bson.D{
		{Key: "resource", Value: bson.D{{Key: "db", Value: "test"}, {Key: "collection", Value: "d"}}},
		{Key: "actions", Value: bson.A{"insert"}}}}}})
	if _, err := u.Database("test").Collection("d").InsertOne(ctx, bson.D{}); err != nil {
		t.Fatalf("after grantPrivilegesToRole: %v", err)
	}
	run(bson.D{{Key: "revokePrivilegesFromRole", Value: "inserter"}, {Key: "privileges", Value: bson.A{bson.D{
		{Key: "resource", Value: bson.D{{Key: "db", Value: "test"}, {Key: "collection", Value: "d"}}},
		{Key: "actions", Value: bson.A{"insert"}}}}}})
	_, err = u.Database("test").Collection("d").InsertOne(ctx, bson.D{})
	wantCode(t, err, 13, "Unauthorized")

	// Role graph: grantRolesToRole and its cycle check.
	run(bson.D{{Key: "createRole", Value: "outer"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{"inserter"}}})
	err = db.RunCommand(ctx, bson.D{{Key: "grantRolesToRole", Value: "inserter"}, {Key: "roles", Value: bson.A{"outer"}}}).Err()
	wantCode(t, err, 74, "InvalidRoleModification")
	err = db.RunCommand(ctx, bson.D{{Key: "createRole", Value: "read"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{}}}).Err()
	wantMessage(t, err, 2, "Cannot create roles with the same name as a built-in role")
	err = db.RunCommand(ctx, bson.D{{Key: "createRole", Value: "bad"}, {Key: "privileges", Value: bson.A{bson.D{
		{Key: "resource", Value: bson.D{{Key: "db", Value: "test"}, {Key: "collection", Value: ""}}},
		{Key: "actions", Value: bson.A{"fly"}}}}}, {Key: "roles", Value: bson.A{}}}).Err()
	wantMessage(t, err, 9, "Unrecognized action privilege string: fly")
	ri := run(bson.D{{Key: "rolesInfo", Value: "outer"}})
	if got := fmt.Sprint(ri["roles"]); !strings.Contains(got, `"inheritedRoles":[{"role":"inserter","db":"test"}]`) || !strings.Contains(got, `"isBuiltin":false`) {
		t.Fatalf("rolesInfo = %s", got)
	}
	ri = run(bson.D{{Key: "rolesInfo", Value: "read"}})
	if got := fmt.Sprint(ri["roles"]); !strings.Contains(got, `"isBuiltin":true`) {
		t.Fatalf("rolesInfo read = %s", got)
	}

	// Revoking and dropping take privileges away from live connections.
	run(bson.D{{Key: "dropRole", Value: "inserter"}})
	_, err = u.Database("test").Collection("c").InsertOne(ctx, bson.D{})
	wantCode(t, err, 13, "Unauthorized")
	err = db.RunCommand(ctx, bson.D{{Key: "dropRole", Value: "inserter"}}).Err()
	wantCode(t, err, 31, "RoleNotFound")

	// updateUser changes the password: the old one stops working.
	run(bson.D{{Key: "updateUser", Value: "u"}, {Key: "pwd", Value: "new"}})
	wantAuthFailed(t, authClient(t, addr, testcert.Files{}, cred("u", "pw", "test", "")).Ping(ctx, nil))
	if err := authClient(t, addr, testcert.Files{}, cred("u", "new", "test", "")).Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	err = db.RunCommand(ctx, bson.D{{Key: "updateUser", Value: "u"}}).Err()
	wantMessage(t, err, 2, "Must specify at least one field to update in updateUser")
	err = db.RunCommand(ctx, bson.D{{Key: "updateUser", Value: "ghost"}, {Key: "pwd", Value: "x"}}).Err()
	wantMessage(t, err, 11, `Could not find user "ghost" for db "test"`)

	// dropUser: the user's open connection loses its privileges.
	run(bson.D{{Key: "dropUser", Value: "u"}})
	err = u.Database("test").Collection("c").FindOne(ctx, bson.D{}).Err()
	wantCode(t, err, 13, "Unauthorized")
	err = db.RunCommand(ctx, bson.D{{Key: "dropUser", Value: "u"}}).Err()
	wantMessage(t, err, 11, "User 'u@test' not found")
	n := run(bson.D{{Key: "dropAllUsersFromDatabase", Value: 1}})
	if fmt.Sprint(n["n"]) != "1" {
		t.Fatalf("dropAllUsersFromDatabase = %v", n)
	}
}

func TestAuthOffStillAuthenticates(t *testing.T) {
	t.Parallel()
	eng, db := newDB(t)
	ctx := ctxT(t)
	client := db.Client()
	// Without access control every command runs unauthenticated...
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "createUser", Value: "u"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"read"}}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("c").InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	// ...and a client that sends credentials is still authenticated, as
	// by mongod without --auth.
	l := listenLoopback(t)
	go eng.Serve(l)
	if err := authClient(t, l.Addr().String(), testcert.Files{}, cred("u", "pw", "admin", "")).Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	wantAuthFailed(t, authClient(t, l.Addr().String(), testcert.Files{}, cred("u", "bad", "admin", "")).Ping(ctx, nil))
}

// TestAuthServeNonLoopbackWording checks that with access control the
// non-loopback warning says clients must authenticate instead of warning
// that anyone can read and change every database.
func TestAuthServeNonLoopbackWording(t *testing.T) {
	t.Parallel()
	wide := serveOn(t, wideAddr{listenLoopback(t)}, engine.Options{Auth: true})
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(wide.String(), "non-loopback") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	log := wide.String()
	if !strings.Contains(log, "with access control enabled: clients must authenticate") {
		t.Errorf("no access-control notice for 0.0.0.0; log:\n%s", log)
	}
	if strings.Contains(log, "without authentication") {
		t.Errorf("the no-authentication warning under --auth; log:\n%s", log)
	}
}
