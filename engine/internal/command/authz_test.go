package command

import (
	"sort"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/auth"
)

// TestAuthRulesCoverEveryCommand fails when a registered command has no
// authorization rule: every command must say what it needs under --auth.
func TestAuthRulesCoverEveryCommand(t *testing.T) {
	var missing []string
	for name := range table {
		if _, ok := authRules[name]; !ok {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("commands without an entry in authRules (authz_table.go): %v", missing)
	}
}

// TestAuthRootRunsEveryCommand checks that root is granted every
// command's needs (see the Divergence note on root in auth/builtin.go),
// and that the read role is not granted writes.
func TestAuthRootRunsEveryCommand(t *testing.T) {
	root, _ := auth.Builtin("root", "admin")
	read, _ := auth.Builtin("read", "test")
	for name, rule := range authRules {
		if rule.needs == nil {
			continue
		}
		body, _ := bson.Marshal(bson.D{{Key: name, Value: "c"}, {Key: "$db", Value: "test"}})
		r := &Request{DB: "test", Name: name, Body: body}
		alts := rule.needs(r)
		if len(alts) > 0 && !anyAllowed(auth.Set(root), alts) {
			t.Errorf("root is not granted %s: %v", name, alts)
		}
		if name == "insert" || name == "delete" || name == "drop" || name == "createUser" {
			if anyAllowed(auth.Set(read), alts) {
				t.Errorf("read is granted %s", name)
			}
		}
	}
}

func TestAuthIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:5000": true, "[::1]:27017": true, "pipe": true, "localhost:1": true,
		"10.0.0.1:5000": false, "[2001:db8::1]:1": false, "192.168.1.2:27017": false,
	} {
		if got := isLoopback(addr); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestAuthLocalhostExceptionRemoteClient checks that a client from
// another host gets no localhost exception.
func TestAuthLocalhostExceptionRemoteClient(t *testing.T) {
	e := newEnv(t)
	e.Config.Auth = true
	body, _ := bson.Marshal(bson.D{{Key: "createUser", Value: "u"}, {Key: "pwd", Value: "p"}, {Key: "roles", Value: bson.A{"root"}}, {Key: "$db", Value: "admin"}})
	remote := e.NewConn("10.1.2.3:40000", "10.1.2.4:27017")
	reply := e.Dispatch(t.Context(), remote, body)
	if code, _ := reply.Lookup("code").AsInt64OK(); code != 13 {
		t.Fatalf("remote createUser = %s, want Unauthorized", reply)
	}
	local := e.NewConn("127.0.0.1:40000", "127.0.0.1:27017")
	// Only users on admin: not on another database, and no roles.
	for _, cmd := range []bson.D{
		{{Key: "createUser", Value: "u"}, {Key: "pwd", Value: "p"}, {Key: "roles", Value: bson.A{"readWrite"}}, {Key: "$db", Value: "test"}},
		{{Key: "createRole", Value: "r"}, {Key: "privileges", Value: bson.A{}}, {Key: "roles", Value: bson.A{}}, {Key: "$db", Value: "admin"}},
	} {
		b, _ := bson.Marshal(cmd)
		reply := e.Dispatch(t.Context(), local, b)
		if msg, _ := reply.Lookup("errmsg").StringValueOK(); !strings.HasPrefix(msg, "not authorized on ") {
			t.Fatalf("%s under the localhost exception = %s", cmd[0].Key, reply)
		}
	}
	reply = e.Dispatch(t.Context(), local, body)
	if ok, _ := reply.Lookup("ok").AsFloat64OK(); ok != 1 {
		t.Fatalf("local createUser = %s, want ok", reply)
	}
	// Only createUser and createRole: other commands are checked as for a
	// user without privileges, as mongod's localhost bypass does.
	find, _ := bson.Marshal(bson.D{{Key: "find", Value: "c"}, {Key: "$db", Value: "test"}})
	e2 := newEnv(t)
	e2.Config.Auth = true
	reply = e2.Dispatch(t.Context(), e2.NewConn("127.0.0.1:1", "127.0.0.1:2"), find)
	if msg, _ := reply.Lookup("errmsg").StringValueOK(); !strings.HasPrefix(msg, `not authorized on test to execute command { find: "c"`) {
		t.Fatalf("find under the localhost exception = %s", reply)
	}
}
