package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func mustDoc(t testing.TB, d bson.D) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMessageRoundTripWithSequencesAndChecksum(t *testing.T) {
	body := mustDoc(t, bson.D{{Key: "insert", Value: "c"}, {Key: "$db", Value: "test"}})
	docs := []bson.Raw{mustDoc(t, bson.D{{Key: "_id", Value: 1}}), mustDoc(t, bson.D{{Key: "_id", Value: 2}})}
	for _, checksum := range []bool{false, true} {
		buf := AppendRequest(nil, 7, 0, body, []Sequence{{Identifier: "documents", Documents: docs}}, checksum)
		m, err := ReadMessage(bytes.NewReader(buf))
		if err != nil {
			t.Fatalf("checksum=%v: %v", checksum, err)
		}
		if m.Header.RequestID != 7 || m.Header.OpCode != OpMsg {
			t.Fatalf("header %+v", m.Header)
		}
		cmd, err := m.Command()
		if err != nil {
			t.Fatal(err)
		}
		arr, ok := cmd.Lookup("documents").ArrayOK()
		if !ok {
			t.Fatalf("documents not merged: %v", cmd)
		}
		vals, _ := arr.Values()
		if len(vals) != 2 || vals[1].Document().Lookup("_id").Int32() != 2 {
			t.Fatalf("merged documents = %v", arr)
		}
		if cmd.Lookup("$db").StringValue() != "test" {
			t.Fatalf("body fields lost: %v", cmd)
		}
	}
}

func TestChecksumMismatchIsRejected(t *testing.T) {
	body := mustDoc(t, bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})
	buf := AppendRequest(nil, 1, 0, body, nil, true)
	buf[len(buf)-1] ^= 0xff
	if _, err := ReadMessage(bytes.NewReader(buf)); !errors.Is(err, ErrChecksum) {
		t.Fatalf("err = %v, want ErrChecksum", err)
	}
}

func TestReadMessageRejects(t *testing.T) {
	body := mustDoc(t, bson.D{{Key: "ping", Value: 1}})
	good := AppendRequest(nil, 1, 0, body, nil, false)
	tooLarge := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(tooLarge, MaxMessageSize+1)
	badOp := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(badOp[12:], 2012)
	short := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(short, 10)
	unknownFlag := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(unknownFlag[16:], 1<<4)
	badKind := append([]byte(nil), good...)
	badKind[20] = 7
	badBSON := append([]byte(nil), good...)
	badBSON[len(badBSON)-1] = 1 // document terminator
	noBody := AppendRequest(nil, 1, 0, nil, []Sequence{{Identifier: "documents", Documents: []bson.Raw{body}}}, false)
	cases := map[string]struct {
		buf  []byte
		want error
	}{
		"too large":      {tooLarge, ErrTooLarge},
		"compressed":     {badOp, ErrUnsupportedOpCode},
		"short length":   {short, ErrMalformed},
		"unknown flag":   {unknownFlag, ErrMalformed},
		"section kind":   {badKind, ErrMalformed},
		"invalid bson":   {badBSON, ErrMalformed},
		"truncated":      {good[:len(good)-3], ErrMalformed},
		"no kind 0 body": {noBody, ErrMalformed},
	}
	for name, c := range cases {
		if _, err := ReadMessage(bytes.NewReader(c.buf)); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", name, err, c.want)
		}
	}
	if _, err := ReadMessage(bytes.NewReader(nil)); err != io.EOF {
		t.Errorf("empty stream: err = %v, want io.EOF", err)
	}
}

func TestOpQueryParsesLegacyHello(t *testing.T) {
	q := mustDoc(t, bson.D{{Key: "isMaster", Value: 1}})
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, 3)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(OpQuery))
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = append(b, "admin.$cmd\x00"...)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, 0xffffffff)
	b = append(b, q...)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	m, err := ReadMessage(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if m.FullCollectionName != "admin.$cmd" || m.Body.Lookup("isMaster").Int32() != 1 {
		t.Fatalf("parsed %+v", m)
	}
	reply := AppendReply(nil, 9, 3, q)
	if got := int(binary.LittleEndian.Uint32(reply)); got != len(reply) {
		t.Fatalf("reply length %d, want %d", got, len(reply))
	}
	if binary.LittleEndian.Uint32(reply[32:]) != 1 {
		t.Fatal("numberReturned != 1")
	}
}

func TestDuplicateSequenceFieldIsRejected(t *testing.T) {
	body := mustDoc(t, bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{}}})
	buf := AppendRequest(nil, 1, 0, body, []Sequence{{Identifier: "documents", Documents: []bson.Raw{body}}}, false)
	m, err := ReadMessage(bytes.NewReader(buf))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Command(); !errors.Is(err, ErrMalformed) {
		t.Fatalf("err = %v, want ErrMalformed", err)
	}
}

// FuzzReadMessage feeds arbitrary bytes to the decoder: it must return a
// message or an error, never panic, and a decoded message's command must
// be valid BSON.
func FuzzReadMessage(f *testing.F) {
	body, _ := bson.Marshal(bson.D{{Key: "insert", Value: "c"}, {Key: "$db", Value: "test"}})
	doc, _ := bson.Marshal(bson.D{{Key: "_id", Value: 1}})
	f.Add(AppendRequest(nil, 1, 0, body, nil, false))
	f.Add(AppendRequest(nil, 1, 0, body, []Sequence{{Identifier: "documents", Documents: []bson.Raw{doc, doc}}}, true))
	f.Add(AppendRequest(nil, 1, FlagMoreToCome, body, nil, false))
	f.Add([]byte{16, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0xd4, 7, 0, 0})
	// Two sequences with one identifier, and a body without its terminator.
	f.Add(AppendRequest(nil, 1, 0, body, []Sequence{{Identifier: "documents", Documents: []bson.Raw{doc}}, {Identifier: "documents", Documents: []bson.Raw{doc}}}, false))
	noTerm := AppendRequest(nil, 1, 0, body, nil, false)
	noTerm[len(noTerm)-1] = 'x'
	f.Add(noTerm)
	// A body and a sequence that both name a field.
	withDocs, _ := bson.Marshal(bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{}}, {Key: "$db", Value: "test"}})
	f.Add(AppendRequest(nil, 1, 0, withDocs, []Sequence{{Identifier: "documents", Documents: []bson.Raw{doc}}}, true))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ReadMessage(bytes.NewReader(b))
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) && (m == nil || m.Invalid != pe) {
				t.Fatalf("a ParseError must come with its message")
			}
			return
		}
		seen := map[string]bool{}
		for _, s := range m.Sequences {
			if seen[s.Identifier] {
				t.Fatalf("duplicate sequence %q accepted", s.Identifier)
			}
			seen[s.Identifier] = true
		}
		cmd, err := m.Command()
		if err != nil {
			return
		}
		if err := cmd.Validate(); err != nil {
			t.Fatalf("merged command is invalid BSON: %v", err)
		}
	})
}

// TestContentErrorsCarryMongodCodes checks that a correctly framed message
// with bad content returns a *ParseError with mongod's code and the message
// itself, so that the server can answer it.
func TestContentErrorsCarryMongodCodes(t *testing.T) {
	body := mustDoc(t, bson.D{{Key: "insert", Value: "c"}, {Key: "$db", Value: "test"}})
	doc := mustDoc(t, bson.D{{Key: "_id", Value: 1}})
	dupSeq := AppendRequest(nil, 1, 0, body, []Sequence{
		{Identifier: "documents", Documents: []bson.Raw{doc}},
		{Identifier: "documents", Documents: []bson.Raw{doc}},
	}, false)
	// A body whose last byte is not the terminating NUL.
	noTerm := AppendRequest(nil, 1, 0, body, nil, false)
	noTerm[len(noTerm)-1] = 'x'
	// A sequence document whose nested document lacks its terminator.
	nested := mustDoc(t, bson.D{{Key: "a", Value: bson.D{{Key: "b", Value: int32(1)}}}})
	nested[len(nested)-2] = 1
	badSeqDoc := AppendRequest(nil, 1, 0, body, []Sequence{{Identifier: "documents", Documents: []bson.Raw{nested}}}, false)
	twoBodies := AppendRequest(nil, 1, 0, body, nil, false)
	twoBodies = append(twoBodies, 0)
	twoBodies = append(twoBodies, body...)
	binary.LittleEndian.PutUint32(twoBodies, uint32(len(twoBodies)))
	cases := map[string]struct {
		buf  []byte
		code int32
	}{
		"duplicate sequence":        {dupSeq, 40431},
		"missing terminator":        {noTerm, 22},
		"nested missing terminator": {badSeqDoc, 22},
		"two bodies":                {twoBodies, 40430},
	}
	for name, c := range cases {
		m, err := ReadMessage(bytes.NewReader(c.buf))
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Code != c.code || !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err = %v, want code %d", name, err, c.code)
			continue
		}
		if m == nil || m.Invalid != pe || m.Header.RequestID != 1 {
			t.Errorf("%s: message = %+v", name, m)
		}
	}
	// Sequences with different identifiers are fine.
	ok := AppendRequest(nil, 1, 0, body, []Sequence{
		{Identifier: "documents", Documents: []bson.Raw{doc}},
		{Identifier: "other", Documents: []bson.Raw{doc}},
	}, false)
	if _, err := ReadMessage(bytes.NewReader(ok)); err != nil {
		t.Errorf("two distinct sequences: %v", err)
	}
}
