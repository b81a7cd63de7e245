package command

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// FuzzSaslCommands sends arbitrary payloads (as BinData or as a base64
// string) through saslStart and saslContinue against a server with a
// user: every reply is a document, no input authenticates, nothing
// panics.
func FuzzSaslCommands(f *testing.F) {
	f.Add([]byte("n,,n=u,r=abcdef"), []byte("c=biws,r=abcdef,p=AAAA"), false, "SCRAM-SHA-256")
	f.Add([]byte("n,,n=u,r=x"), []byte{}, true, "SCRAM-SHA-1")
	f.Add([]byte{0xff, 0x00}, []byte("=="), true, "PLAIN")
	e := newEnv(f)
	e.Config.Auth = true
	setup := e.NewConn("127.0.0.1:1", "x")
	b, _ := bson.Marshal(bson.D{{Key: "createUser", Value: "u"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"root"}}, {Key: "$db", Value: "admin"}})
	e.Dispatch(f.Context(), setup, b)
	f.Fuzz(func(t *testing.T, first, second []byte, asString bool, mech string) {
		c := e.NewConn("10.0.0.1:1", "x")
		defer e.CloseConn(c)
		payload := func(p []byte) any {
			if asString {
				return string(p)
			}
			return bson.Binary{Data: p}
		}
		for i, cmd := range []bson.D{
			{{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: mech}, {Key: "payload", Value: payload(first)}, {Key: "$db", Value: "admin"}},
			{{Key: "saslContinue", Value: 1}, {Key: "conversationId", Value: int32(1)}, {Key: "payload", Value: payload(second)}, {Key: "$db", Value: "admin"}},
			{{Key: "saslContinue", Value: 1}, {Key: "conversationId", Value: int32(1)}, {Key: "payload", Value: payload(nil)}, {Key: "$db", Value: "admin"}},
		} {
			raw, err := bson.Marshal(cmd)
			if err != nil {
				return
			}
			reply := e.Dispatch(t.Context(), c, raw)
			if err := reply.Validate(); err != nil {
				t.Fatalf("step %d: invalid reply: %v", i, err)
			}
		}
		if c.authUser() != nil {
			t.Fatalf("authenticated from fuzzed payloads %q %q", first, second)
		}
	})
}
