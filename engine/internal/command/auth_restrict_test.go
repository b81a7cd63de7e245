package command

import (
	"testing"

	"github.com/xdg-go/scram"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// scramLogin runs a SCRAM-SHA-256 conversation on c and returns the last
// reply.
func scramLogin(t *testing.T, e *Env, c *Conn, user, pwd, db string) bson.Raw {
	t.Helper()
	cl, _ := scram.SHA256.NewClient(user, pwd, "")
	conv := cl.NewConversation()
	msg, _ := conv.Step("")
	r := dispatchOn(t, e, c, bson.D{{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: "SCRAM-SHA-256"},
		{Key: "payload", Value: bson.Binary{Data: []byte(msg)}}, {Key: "options", Value: bson.D{{Key: "skipEmptyExchange", Value: true}}}, {Key: "$db", Value: db}})
	if _, err := r.LookupErr("payload"); err != nil {
		return r
	}
	msg, err := conv.Step(payloadOf(t, r))
	if err != nil {
		t.Fatal(err)
	}
	return dispatchOn(t, e, c, bson.D{{Key: "saslContinue", Value: 1}, {Key: "conversationId", Value: int32(1)},
		{Key: "payload", Value: bson.Binary{Data: []byte(msg)}}, {Key: "$db", Value: db}})
}

func TestAuthenticationRestrictions(t *testing.T) {
	e := newEnv(t)
	admin := e.NewConn("127.0.0.1:1", "127.0.0.1:27017")
	mk := func(user string, restr bson.A) bson.Raw {
		return dispatchOn(t, e, admin, bson.D{{Key: "createUser", Value: user}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{}},
			{Key: "authenticationRestrictions", Value: restr}, {Key: "$db", Value: "admin"}})
	}
	mk("lan", bson.A{bson.D{{Key: "clientSource", Value: bson.A{"10.0.0.0/8"}}}})
	mk("local", bson.A{bson.D{{Key: "clientSource", Value: bson.A{"127.0.0.1"}}, {Key: "serverAddress", Value: bson.A{"127.0.0.0/8"}}}})
	if r := mk("bad", bson.A{bson.D{{Key: "clientSource", Value: bson.A{"not-an-ip"}}}}); r.Lookup("code").Int32() != 2 {
		t.Fatalf("invalid CIDR accepted: %s", r)
	}
	cases := []struct {
		user, remote string
		ok           bool
	}{
		{"lan", "127.0.0.1:5", false},
		{"lan", "10.1.2.3:5", true},
		{"local", "127.0.0.1:5", true},
		{"local", "10.1.2.3:5", false},
	}
	for _, tc := range cases {
		c := e.NewConn(tc.remote, "127.0.0.1:27017")
		r := scramLogin(t, e, c, tc.user, "pw", "admin")
		done := r.Lookup("done").Type == bson.TypeBoolean && r.Lookup("done").Boolean()
		if done != tc.ok {
			t.Errorf("%s from %s: %s", tc.user, tc.remote, r)
		}
		if !tc.ok && r.Lookup("code").Int32() != 18 {
			t.Errorf("%s from %s: %s, want AuthenticationFailed", tc.user, tc.remote, r)
		}
	}
}
