package engine_test

import (
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/engine/internal/wire"
)

func TestServeOverTCP(t *testing.T) {
	ctx := ctxT(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	db, err := engine.Open(ctx, engine.Options{Host: l.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- db.Serve(l) }()
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://" + l.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	c := client.Database("test").Collection("c")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if n, err := c.CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Fatalf("count = %d %v", n, err)
	}
	client.Disconnect(ctx)
	db.Close()
	select {
	case err := <-done:
		if err != engine.ErrClosed {
			t.Fatalf("Serve returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after Close")
	}
}

// TestRetryableWriteExecutesOnce sends the same (lsid, txnNumber) twice:
// the second reply is the first one and the write happens once.
func TestRetryableWriteExecutesOnce(t *testing.T) {
	edb, db := newDB(t)
	rc := dialRaw(t, edb)
	lsid := bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: make([]byte, 16)}}}
	cmd := bson.D{
		{Key: "update", Value: "c"},
		{Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}}, {Key: "upsert", Value: true}}}},
		{Key: "lsid", Value: lsid},
		{Key: "txnNumber", Value: int64(1)},
		{Key: "$db", Value: "test"},
	}
	first := rc.run(cmd)
	second := rc.run(cmd)
	if first.Lookup("n").Int32() != 1 || second.Lookup("n").Int32() != 1 {
		t.Fatalf("replies %v / %v", first, second)
	}
	if second.Lookup("upserted").Type != bson.TypeArray {
		t.Fatalf("retry reply differs: %v", second)
	}
	var doc bson.M
	if err := db.Collection("c").FindOne(ctxT(t), bson.D{}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc["n"] != int32(1) {
		t.Fatalf("write applied twice: %v", doc)
	}
	cmd[3].Value = int64(2)
	rc.run(cmd)
	cmd[3].Value = int64(1)
	old := rc.run(cmd)
	if old.Lookup("code").Int32() != 225 {
		t.Fatalf("older txnNumber: %v", old)
	}
}

func TestMoreToComeGetsNoReply(t *testing.T) {
	edb, db := newDB(t)
	rc := dialRaw(t, edb)
	body := mustMarshal(t, bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}}, {Key: "writeConcern", Value: bson.D{{Key: "w", Value: 0}}}, {Key: "$db", Value: "test"}})
	rc.send(wire.AppendRequest(nil, 1, wire.FlagMoreToCome, body, nil, false))
	reply := rc.run(bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})
	if reply.Lookup("ok").Double() != 1 {
		t.Fatalf("ping after moreToCome: %v", reply)
	}
	if n, _ := db.Collection("c").CountDocuments(ctxT(t), bson.D{}); n != 1 {
		t.Fatalf("unacknowledged insert not applied: %d", n)
	}
}

func TestBadFramesCloseOnlyThatConnection(t *testing.T) {
	edb, db := newDB(t)
	ctx := ctxT(t)
	if _, err := db.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	good := wire.AppendRequest(nil, 1, 0, mustMarshal(t, bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}}), nil, true)
	badCRC := append([]byte(nil), good...)
	badCRC[len(badCRC)-1] ^= 1
	badOp := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(badOp[12:], 2004+1)
	huge := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(huge, 1<<30)
	garbage := []byte{20, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0xdd, 7, 0, 0, 9, 9, 9, 9}
	var wg sync.WaitGroup
	for _, frame := range [][]byte{badCRC, badOp, huge, garbage} {
		wg.Add(1)
		go func(frame []byte) {
			defer wg.Done()
			c, _ := edb.Dialer().DialContext(ctx, "", "")
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			c.Write(frame)
			if _, err := io.ReadAll(c); err != nil {
				t.Errorf("expected a clean close, got %v", err)
			}
		}(frame)
	}
	wg.Wait()
	rc := dialRaw(t, edb)
	reply := rc.run(bson.D{{Key: "find", Value: "c"}, {Key: "$db", Value: "test"}})
	if reply.Lookup("ok").Double() != 1 {
		t.Fatalf("server stopped serving: %v", reply)
	}
	if n, err := db.Collection("c").CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Fatalf("data after bad frames: %d %v", n, err)
	}
}

func TestLegacyOpQueryHello(t *testing.T) {
	edb, _ := newDB(t)
	rc := dialRaw(t, edb)
	q := mustMarshal(t, bson.D{{Key: "isMaster", Value: 1}, {Key: "helloOk", Value: true}})
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, 9)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(wire.OpQuery))
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = append(b, "admin.$cmd\x00"...)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, 0xffffffff)
	b = append(b, q...)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	rc.send(b)
	rc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var hdr [36]byte
	if _, err := io.ReadFull(rc.c, hdr[:]); err != nil {
		t.Fatal(err)
	}
	if op := binary.LittleEndian.Uint32(hdr[12:]); op != uint32(wire.OpReply) {
		t.Fatalf("reply opcode %d", op)
	}
	if binary.LittleEndian.Uint32(hdr[8:]) != 9 {
		t.Fatal("responseTo does not match")
	}
	size := binary.LittleEndian.Uint32(hdr[:]) - 36
	doc := make([]byte, size)
	if _, err := io.ReadFull(rc.c, doc); err != nil {
		t.Fatal(err)
	}
	r := bson.Raw(doc)
	if r.Lookup("ismaster").Boolean() != true || r.Lookup("helloOk").Boolean() != true {
		t.Fatalf("isMaster reply %v", r)
	}
}

// TestBadContentGetsAnErrorReply checks that a well-framed OP_MSG with
// invalid content is answered with mongod's code and the connection keeps
// serving: a document without its terminating byte is InvalidBSON, and
// two document sequences with one identifier are rejected (40431).
func TestBadContentGetsAnErrorReply(t *testing.T) {
	edb, db := newDB(t)
	rc := dialRaw(t, edb)
	body := mustMarshal(t, bson.D{{Key: "insert", Value: "c"}, {Key: "$db", Value: "test"}})
	doc := mustMarshal(t, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.D{{Key: "b", Value: int32(1)}}}})
	nested := append([]byte(nil), doc...)
	nested[len(nested)-2] = 'x' // the nested document's terminator
	dup := wire.AppendRequest(nil, 7, 0, body, []wire.Sequence{
		{Identifier: "documents", Documents: []bson.Raw{doc}},
		{Identifier: "documents", Documents: []bson.Raw{doc}},
	}, false)
	noTerm := wire.AppendRequest(nil, 8, 0, body, []wire.Sequence{{Identifier: "documents", Documents: []bson.Raw{nested}}}, false)
	for _, c := range []struct {
		frame []byte
		code  int32
	}{{dup, 40431}, {noTerm, 22}} {
		rc.send(c.frame)
		reply := rc.recv()
		if reply.Lookup("ok").Double() != 0 || reply.Lookup("code").Int32() != c.code {
			t.Errorf("reply = %v, want code %d", reply, c.code)
		}
	}
	if n, err := db.Collection("c").CountDocuments(ctxT(t), bson.D{}); err != nil || n != 0 {
		t.Fatalf("rejected inserts wrote %d documents (%v)", n, err)
	}
	if reply := rc.run(bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}}); reply.Lookup("ok").Double() != 1 {
		t.Fatalf("connection stopped serving: %v", reply)
	}
}
