package engine_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/engine/internal/wire"
	"github.com/formworkdb/formwork/internal/testenv"
)

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newDB returns a database on a fresh in-memory engine.
func newDB(t *testing.T) (*engine.DB, *mongo.Database) {
	t.Helper()
	db, client := testenv.Engine(t, engine.Options{})
	return db, client.Database("test")
}

// wantCode asserts that err is a server error with code and name.
func wantCode(t *testing.T, err error, code int, name string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s (%d)", name, code)
	}
	var ce mongo.CommandError
	if errors.As(err, &ce) {
		if int(ce.Code) != code || (name != "" && ce.Name != name) {
			t.Fatalf("got %s (%d) %q, want %s (%d)", ce.Name, ce.Code, ce.Message, name, code)
		}
		return
	}
	var we mongo.WriteException
	if errors.As(err, &we) && len(we.WriteErrors) > 0 {
		if we.WriteErrors[0].Code != code {
			t.Fatalf("got write error %d %q, want %d", we.WriteErrors[0].Code, we.WriteErrors[0].Message, code)
		}
		return
	}
	var se mongo.ServerError
	if errors.As(err, &se) {
		if !se.HasErrorCode(code) {
			t.Fatalf("got %v, want code %d", err, code)
		}
		return
	}
	t.Fatalf("got %T %v, want server error %s (%d)", err, err, name, code)
}

func mustMarshal(t testing.TB, v any) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rawConn speaks the wire protocol directly, for tests that need control
// over the bytes sent.
type rawConn struct {
	t  *testing.T
	c  net.Conn
	id int32
}

func dialRaw(t *testing.T, db *engine.DB) *rawConn {
	t.Helper()
	c, err := db.Dialer().DialContext(context.Background(), "tcp", "x")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, c: c}
}

// run sends cmd as an OP_MSG and returns the reply body.
func (r *rawConn) run(cmd bson.D) bson.Raw {
	r.t.Helper()
	r.id++
	r.send(wire.AppendRequest(nil, r.id, 0, mustMarshal(r.t, cmd), nil, false))
	return r.recv()
}

func (r *rawConn) send(b []byte) {
	r.t.Helper()
	r.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := r.c.Write(b); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

func (r *rawConn) recv() bson.Raw {
	r.t.Helper()
	r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	m, err := wire.ReadMessage(r.c)
	if err != nil {
		r.t.Fatalf("read reply: %v", err)
	}
	return m.Body
}
