package scripttest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestScriptFormat runs testdata/format.txt against fakeBackend, which answers
// each command with the reply the command carries, so the script pins
// down how the runner prints replies, errors and generated values.
func TestScriptFormat(t *testing.T) {
	RunBackend(t, &fakeBackend{colls: map[string][]bson.Raw{}, ids: map[string]bson.ObjectID{}}, "testdata/format.txt")
}

// fakeBackend answers a command {<name>: …, reply: {…}, more: [{…}]} with
// reply, and the getMores that follow with the entries of more in turn. A
// reply with ok: 0 comes back as a mongo.CommandError. In a reply, the
// strings "NEWID<n>", "NOW" and "NOWTS" stand for a fresh ObjectID (the
// same for the same n), the current date and a current timestamp. A find
// without reply returns the documents of the collection.
type fakeBackend struct {
	colls map[string][]bson.Raw
	ids   map[string]bson.ObjectID
	more  []bson.Raw
}

func (f *fakeBackend) Reset(_ context.Context, coll string, docs []bson.Raw) error {
	f.colls[coll] = docs
	return nil
}

func (f *fakeBackend) Command(_ context.Context, cmd bson.D) (bson.Raw, error) {
	b, err := bson.Marshal(cmd)
	if err != nil {
		return nil, err
	}
	raw := bson.Raw(b)
	if cmd[0].Key == "getMore" {
		if len(f.more) == 0 {
			return nil, mongo.CommandError{Code: 43, Name: "CursorNotFound", Message: "cursor id 5 not found"}
		}
		reply := f.more[0]
		f.more = f.more[1:]
		return f.resolve(reply)
	}
	rv, err := raw.LookupErr("reply")
	if err != nil {
		if cmd[0].Key != "find" {
			return nil, fmt.Errorf("fake: %s without reply", cmd[0].Key)
		}
		coll := cmd[0].Value.(string)
		batch := bson.A{}
		for _, d := range f.colls[coll] {
			batch = append(batch, d)
		}
		return bson.Marshal(bson.D{{Key: "cursor", Value: bson.D{{Key: "firstBatch", Value: batch}, {Key: "id", Value: int64(0)}, {Key: "ns", Value: "test." + coll}}}, {Key: "ok", Value: 1.0}})
	}
	f.more = nil
	if more, err := raw.LookupErr("more"); err == nil {
		vals, _ := more.Array().Values()
		for _, v := range vals {
			f.more = append(f.more, v.Document())
		}
	}
	return f.resolve(rv.Document())
}

// resolve replaces the stand-in strings of a reply and turns ok: 0 into a
// mongo.CommandError.
func (f *fakeBackend) resolve(reply bson.Raw) (bson.Raw, error) {
	js, err := bson.MarshalExtJSON(reply, true, false)
	if err != nil {
		return nil, err
	}
	s := string(js)
	now := time.Now()
	s = strings.ReplaceAll(s, `"NOWTS"`, fmt.Sprintf(`{"$timestamp":{"t":%d,"i":7}}`, now.Unix()))
	s = strings.ReplaceAll(s, `"NOW"`, fmt.Sprintf(`{"$date":{"$numberLong":"%d"}}`, now.UnixMilli()))
	for strings.Contains(s, `"NEWID`) {
		i := strings.Index(s, `"NEWID`)
		j := i + 1 + strings.IndexByte(s[i+1:], '"')
		name := s[i+1 : j]
		id, ok := f.ids[name]
		if !ok {
			id = bson.NewObjectID()
			f.ids[name] = id
		}
		s = s[:i] + `{"$oid":"` + id.Hex() + `"}` + s[j+1:]
	}
	var out bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(s), true, &out); err != nil {
		return nil, err
	}
	if ok, err := out.LookupErr("ok"); err == nil && ok.AsFloat64() == 0 {
		code, _ := out.Lookup("code").AsInt64OK()
		name, _ := out.Lookup("codeName").StringValueOK()
		msg, _ := out.Lookup("errmsg").StringValueOK()
		return nil, mongo.CommandError{Code: int32(code), Name: name, Message: msg}
	}
	return out, nil
}

func TestScriptElideMessages(t *testing.T) {
	for _, c := range []struct{ actual, expected, want string }{
		{"error BadValue(2): bad\n", "error BadValue(2)\n", "error BadValue(2)\n"},
		{"error BadValue(2): bad\n", "error BadValue(2): good\n", "error BadValue(2): bad\n"},
		{"error TypeMismatch(14): bad\n", "error BadValue(2)\n", "error TypeMismatch(14): bad\n"},
		{"{\"n\": 0}\nwriteError 1 Location51(51): x: y\n", "{\"n\": 0}\nwriteError 1 Location51(51)\n", "{\"n\": 0}\nwriteError 1 Location51(51)\n"},
		{"{\"n\": 0}\nwriteError 1 Location51(51): x\n", "{\"n\": 0}\nwriteError 0 Location51(51)\n", "{\"n\": 0}\nwriteError 1 Location51(51): x\n"},
		{"{\"a\":\"error BadValue(2): x\"}\n", "error BadValue(2)\n", "{\"a\":\"error BadValue(2): x\"}\n"},
	} {
		if got := elideMessages(c.actual, c.expected); got != c.want {
			t.Errorf("elideMessages(%q, %q) = %q, want %q", c.actual, c.expected, got, c.want)
		}
	}
}

// TestScriptNormalizerKeepsInput checks that normalizing returns a copy and
// leaves the reply it was given alone.
func TestScriptNormalizerKeepsInput(t *testing.T) {
	n := newNormalizer()
	id := bson.NewObjectID()
	in, err := bson.Marshal(bson.D{{Key: "_id", Value: id}, {Key: "at", Value: bson.NewDateTimeFromTime(time.Now())}, {Key: "a", Value: bson.A{id}}})
	if err != nil {
		t.Fatal(err)
	}
	before := string(in)
	out := n.doc(in)
	if string(in) != before {
		t.Fatal("normalizer modified its input")
	}
	want := `{"_id":{"$oid":"650000000000000000000001"},"at":{"$date":{"$numberLong":"1704164645000"}},"a":[{"$oid":"650000000000000000000001"}]}`
	if got, _ := bson.MarshalExtJSON(out, true, false); string(got) != want {
		t.Errorf("normalized %s, want %s", got, want)
	}
	n.learn(in)
	if got := n.doc(in); string(got) == string(in) {
		t.Error("a learned ObjectID must not make the date pass unchanged")
	}
}
