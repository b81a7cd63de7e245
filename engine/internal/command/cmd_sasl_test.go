package command

import (
	"context"
	"strings"
	"testing"

	"github.com/xdg-go/scram"
	"go.mongodb.org/mongo-driver/v2/bson"
)

func dispatchOn(t *testing.T, e *Env, c *Conn, cmd bson.D) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(cmd)
	if err != nil {
		t.Fatal(err)
	}
	return e.Dispatch(context.Background(), c, b)
}

func payloadOf(t *testing.T, reply bson.Raw) string {
	t.Helper()
	v, err := reply.LookupErr("payload")
	if err != nil {
		t.Fatalf("no payload in %s", reply)
	}
	_, b := v.Binary()
	return string(b)
}

// TestSpeculativeAuthenticate runs the handshake drivers use: the first
// SCRAM step inside hello, the second in saslContinue with
// skipEmptyExchange.
func TestSpeculativeAuthenticate(t *testing.T) {
	e := newEnv(t)
	e.Config.Auth = true
	c := e.NewConn("127.0.0.1:1", "127.0.0.1:2")
	reply := dispatchOn(t, e, c, bson.D{{Key: "createUser", Value: "u"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"root"}}, {Key: "$db", Value: "admin"}})
	if ok, _ := reply.Lookup("ok").AsFloat64OK(); ok != 1 {
		t.Fatal(reply)
	}
	cl, _ := scram.SHA256.NewClient("u", "pw", "")
	conv := cl.NewConversation()
	first, _ := conv.Step("")
	conn := e.NewConn("127.0.0.1:3", "127.0.0.1:2")
	hello := dispatchOn(t, e, conn, bson.D{{Key: "hello", Value: 1}, {Key: "saslSupportedMechs", Value: "admin.u"},
		{Key: "speculativeAuthenticate", Value: bson.D{{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: "SCRAM-SHA-256"},
			{Key: "payload", Value: bson.Binary{Data: []byte(first)}}, {Key: "db", Value: "admin"},
			{Key: "options", Value: bson.D{{Key: "skipEmptyExchange", Value: true}}}}}, {Key: "$db", Value: "admin"}})
	if got := hello.Lookup("saslSupportedMechs").String(); got != `["SCRAM-SHA-1","SCRAM-SHA-256"]` {
		t.Fatalf("saslSupportedMechs = %s", got)
	}
	spec, ok := hello.Lookup("speculativeAuthenticate").DocumentOK()
	if !ok {
		t.Fatalf("hello = %s", hello)
	}
	if id, _ := spec.Lookup("conversationId").Int32OK(); id != 1 || spec.Lookup("done").Boolean() {
		t.Fatalf("speculativeAuthenticate = %s", spec)
	}
	final, err := conv.Step(payloadOf(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	// Before the last step the connection is not authenticated yet.
	r := dispatchOn(t, e, conn, bson.D{{Key: "find", Value: "c"}, {Key: "$db", Value: "test"}})
	if msg, _ := r.Lookup("errmsg").StringValueOK(); msg != "Command find requires authentication" {
		t.Fatalf("find mid-conversation = %s", r)
	}
	r = dispatchOn(t, e, conn, bson.D{{Key: "saslContinue", Value: 1}, {Key: "conversationId", Value: int32(1)},
		{Key: "payload", Value: bson.Binary{Data: []byte(final)}}, {Key: "$db", Value: "admin"}})
	if !r.Lookup("done").Boolean() {
		t.Fatalf("saslContinue = %s", r)
	}
	if _, err := conv.Step(payloadOf(t, r)); err != nil || !conv.Valid() {
		t.Fatalf("server signature rejected: %v", err)
	}
	r = dispatchOn(t, e, conn, bson.D{{Key: "find", Value: "c"}, {Key: "$db", Value: "test"}})
	if ok, _ := r.Lookup("ok").AsFloat64OK(); ok != 1 {
		t.Fatalf("find after authentication = %s", r)
	}
	// A failed speculative step leaves hello without the field.
	bad := dispatchOn(t, e, e.NewConn("127.0.0.1:4", "x"), bson.D{{Key: "hello", Value: 1},
		{Key: "speculativeAuthenticate", Value: bson.D{{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: "SCRAM-SHA-256"},
			{Key: "payload", Value: bson.Binary{Data: []byte("n,,n=ghost,r=abc")}}, {Key: "db", Value: "admin"}}}, {Key: "$db", Value: "admin"}})
	if _, err := bad.LookupErr("speculativeAuthenticate"); err == nil || bad.Lookup("ok").Double() != 1 {
		t.Fatalf("hello with a failing speculative step = %s", bad)
	}
}

func TestSaslErrors(t *testing.T) {
	e := newEnv(t)
	c := e.NewConn("127.0.0.1:1", "x")
	cases := []struct {
		cmd  bson.D
		code int32
		msg  string
	}{
		{bson.D{{Key: "saslContinue", Value: 1}, {Key: "conversationId", Value: int32(1)}, {Key: "payload", Value: bson.Binary{}}, {Key: "$db", Value: "admin"}},
			17, "No SASL session state found"},
		{bson.D{{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: "PLAIN"}, {Key: "payload", Value: bson.Binary{}}, {Key: "$db", Value: "admin"}},
			334, "Received authentication for mechanism PLAIN which is unknown or not enabled"},
		{bson.D{{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: "SCRAM-SHA-256"}, {Key: "payload", Value: bson.Binary{Data: []byte("n,,n=nobody,r=abc")}}, {Key: "$db", Value: "admin"}},
			18, "Authentication failed."},
		{bson.D{{Key: "saslStart", Value: 1}, {Key: "payload", Value: bson.Binary{}}, {Key: "$db", Value: "admin"}},
			40414, "BSON field 'saslStart.mechanism' is missing but a required field"},
		{bson.D{{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: "SCRAM-SHA-1"}, {Key: "payload", Value: int32(3)}, {Key: "$db", Value: "admin"}},
			14, "BSON field 'saslStart.payload' is the wrong type 'int', expected types '[string, binData]'"},
	}
	for _, tc := range cases {
		r := dispatchOn(t, e, c, tc.cmd)
		code, _ := r.Lookup("code").Int32OK()
		msg, _ := r.Lookup("errmsg").StringValueOK()
		if code != tc.code || msg != tc.msg {
			t.Errorf("%s: got %d %q, want %d %q", tc.cmd[0].Key, code, msg, tc.code, tc.msg)
		}
	}
}

// TestPasswordHiddenFromProfiler checks that createUser's pwd reaches
// neither system.profile nor an Unauthorized message.
func TestPasswordHiddenFromProfiler(t *testing.T) {
	e := newEnv(t)
	c := e.NewConn("127.0.0.1:1", "x")
	dispatchOn(t, e, c, bson.D{{Key: "profile", Value: 2}, {Key: "$db", Value: "admin"}})
	r := dispatchOn(t, e, c, bson.D{{Key: "createUser", Value: "u"}, {Key: "pwd", Value: "topsecret"}, {Key: "roles", Value: bson.A{"read"}}, {Key: "$db", Value: "admin"}})
	if ok, _ := r.Lookup("ok").AsFloat64OK(); ok != 1 {
		t.Fatal(r)
	}
	r = dispatchOn(t, e, c, bson.D{{Key: "find", Value: "system.profile"}, {Key: "$db", Value: "admin"}})
	if s := r.String(); strings.Contains(s, "topsecret") || !strings.Contains(s, `"pwd": "xxx"`) && !strings.Contains(s, `"pwd":"xxx"`) {
		t.Fatalf("system.profile = %s", s)
	}
}

// TestReauthenticateAsAnotherUser checks mongod's one-user-per-connection
// rule.
func TestReauthenticateAsAnotherUser(t *testing.T) {
	e := newEnv(t)
	c := e.NewConn("127.0.0.1:1", "x")
	for _, u := range []string{"a", "b"} {
		dispatchOn(t, e, c, bson.D{{Key: "createUser", Value: u}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{}}, {Key: "$db", Value: "admin"}})
	}
	dispatchOn(t, e, c, bson.D{{Key: "createUser", Value: "a"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{}}, {Key: "$db", Value: "test"}})
	login := func(user, db string) bson.Raw {
		cl, _ := scram.SHA256.NewClient(user, "pw", "")
		conv := cl.NewConversation()
		msg, _ := conv.Step("")
		r := dispatchOn(t, e, c, bson.D{{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: "SCRAM-SHA-256"},
			{Key: "payload", Value: bson.Binary{Data: []byte(msg)}}, {Key: "options", Value: bson.D{{Key: "skipEmptyExchange", Value: true}}}, {Key: "$db", Value: db}})
		msg, err := conv.Step(payloadOf(t, r))
		if err != nil {
			t.Fatal(err)
		}
		return dispatchOn(t, e, c, bson.D{{Key: "saslContinue", Value: 1}, {Key: "conversationId", Value: int32(1)},
			{Key: "payload", Value: bson.Binary{Data: []byte(msg)}}, {Key: "$db", Value: db}})
	}
	if r := login("a", "admin"); !r.Lookup("done").Boolean() {
		t.Fatal(r)
	}
	if r := login("a", "admin"); !r.Lookup("done").Boolean() {
		t.Fatalf("same user again: %s", r)
	}
	r := login("b", "admin")
	if code, _ := r.Lookup("code").Int32OK(); code != 5626701 {
		t.Fatalf("another user: %s", r)
	}
	r = login("a", "test")
	if code, _ := r.Lookup("code").Int32OK(); code != 5626702 {
		t.Fatalf("another database: %s", r)
	}
}
