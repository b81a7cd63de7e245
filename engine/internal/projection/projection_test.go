package projection_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/projection"
	"github.com/formworkdb/formwork/internal/scripttest"
)

func raw(t testing.TB, s string) bson.Raw {
	t.Helper()
	r, err := scripttest.ParseDoc(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func relaxed(t testing.TB, r bson.Raw) string {
	b, err := bson.MarshalExtJSON(r, false, false)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestApply(t *testing.T) {
	doc := `{"_id":1,"a":{"b":1,"c":2},"x":[{"y":1,"z":2},3,[{"y":4}]],"s":[1,2,3,4,5],"t":"q"}`
	cases := []struct{ filter, spec, want string }{
		{`{}`, `{"t":1}`, `{"_id":1,"t":"q"}`},
		{`{}`, `{"t":1,"_id":0}`, `{"t":"q"}`},
		{`{}`, `{"t":0}`, `{"_id":1,"a":{"b":1,"c":2},"x":[{"y":1,"z":2},3,[{"y":4}]],"s":[1,2,3,4,5]}`},
		{`{}`, `{"a.b":1}`, `{"_id":1,"a":{"b":1}}`},
		{`{}`, `{"a":{"c":1}}`, `{"_id":1,"a":{"c":2}}`},
		{`{}`, `{"x.y":1}`, `{"_id":1,"x":[{"y":1},[{"y":4}]]}`},
		{`{}`, `{"x.y":0,"a":0,"s":0,"t":0}`, `{"_id":1,"x":[{"z":2},3,[{}]]}`},
		{`{}`, `{"t.u":1}`, `{"_id":1}`},
		{`{}`, `{"_id":1}`, `{"_id":1}`},
		{`{}`, `{"_id":0}`, `{"a":{"b":1,"c":2},"x":[{"y":1,"z":2},3,[{"y":4}]],"s":[1,2,3,4,5],"t":"q"}`},
		{`{}`, `{"_id":1,"t":0,"a":0,"x":0}`, `{"_id":1,"s":[1,2,3,4,5]}`},
		{`{}`, `{"s":{"$slice":2},"a":0,"x":0,"t":0}`, `{"_id":1,"s":[1,2]}`},
		{`{}`, `{"s":{"$slice":-2},"t":1}`, `{"_id":1,"s":[4,5],"t":"q"}`},
		{`{}`, `{"s":{"$slice":[1,2]},"_id":0,"t":1}`, `{"s":[2,3],"t":"q"}`},
		{`{}`, `{"s":{"$slice":[-2,5]},"_id":1}`, `{"_id":1,"s":[4,5]}`},
		{`{}`, `{"s":{"$slice":[10,1]},"_id":1}`, `{"_id":1,"s":[]}`},
		{`{}`, `{"t":{"$slice":1},"_id":1}`, `{"_id":1,"t":"q"}`},
		{`{}`, `{"x":{"$elemMatch":{"y":1}},"t":1}`, `{"_id":1,"t":"q","x":[{"y":1,"z":2}]}`},
		{`{}`, `{"s":{"$elemMatch":{"$gt":3}}}`, `{"_id":1,"s":[4]}`},
		{`{}`, `{"s":{"$elemMatch":{"$gt":9}}}`, `{"_id":1}`},
		{`{"s":{"$gte":3}}`, `{"s.$":1}`, `{"_id":1,"s":[3]}`},
		{`{"x.y":1}`, `{"x.$":1,"_id":0}`, `{"x":[{"y":1,"z":2}]}`},
	}
	for _, c := range cases {
		f, err := match.Compile(raw(t, c.filter))
		if err != nil {
			t.Fatal(err)
		}
		p, err := projection.Compile(raw(t, c.spec))
		if err != nil {
			t.Errorf("Compile(%s): %v", c.spec, err)
			continue
		}
		if err := p.Validate(f); err != nil {
			t.Errorf("Validate(%s): %v", c.spec, err)
			continue
		}
		out, err := p.Apply(raw(t, doc), f)
		if err != nil {
			t.Errorf("Apply(%s): %v", c.spec, err)
			continue
		}
		if got, want := relaxed(t, out), relaxed(t, raw(t, c.want)); got != want {
			t.Errorf("Apply(%s)\n got %s\nwant %s", c.spec, got, want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	for spec, code := range map[string]mongoerr.Code{
		`{"a":1,"b":0}`:                   31254,
		`{"a":0,"b":1}`:                   31253,
		`{"a":1,"a.b":1}`:                 31249,
		`{"a.b":1,"a":1}`:                 31250,
		`{"a.$":1,"b.$":1}`:               31276,
		`{"a.$":1,"b":{"$elemMatch":{}}}`: 31255,
		`{"b":{"$elemMatch":{}},"a.$":1}`: 31256,
		`{"a.$.b.$":1}`:                   31287,
		`{"a.$":{"x":1}}`:                 31271,
		`{"a.$":"x"}`:                     31308,
		`{"a":{"$slice":[1]}}`:            28667,
		`{"a":{"$slice":["x",1]}}`:        28724,
		`{"a":{"$slice":[1,"x"]}}`:        28724,
		`{"a":{"$slice":[1,0]}}`:          28724,
		`{"a":{"$slice":"x"}}`:            28667,
		`{"a":{"$elemMatch":1}}`:          31274,
		`{"a.b":{"$elemMatch":{}}}`:       31275,
		`{"a":{"$foo":1}}`:                31325,
		`{"a":{"$add":[1,2]},"b":0}`:      31254,
		`{"b":0,"a":{"$add":[1,2]}}`:      31252,
		`{"b":0,"a":"$x"}`:                31310,
		`{"a":"$x","a.b":1}`:              31249,
		`{"a":{"$add":1,"b":1}}`:          16410,
		`{"a":"$$nope"}`:                  17276,
		`{"a":{"$meta":"textScore"}}`:     mongoerr.NotImplemented,
		`{"b":0,"s":{"$slice":[1]}}`:      31252,
		`{"a":{}}`:                        51270,
		`{"$a":1}`:                        16410,
		`{"a..b":1}`:                      15998,
		`{"":1}`:                          40352,
	} {
		if _, err := projection.Compile(raw(t, spec)); !mongoerr.Is(err, code) {
			t.Errorf("Compile(%s) = %v, want %d", spec, err, code)
		}
	}
	p, err := projection.Compile(raw(t, `{"a.$":1}`))
	if err != nil {
		t.Fatal(err)
	}
	f, _ := match.Compile(raw(t, `{"b":1}`))
	if err := p.Validate(f); err != nil {
		t.Errorf("Validate = %v, want nil", err)
	}
	if _, err := p.Apply(raw(t, `{"a":[1],"b":1}`), f); !mongoerr.Is(err, 51246) {
		t.Errorf("Apply = %v, want 51246", err)
	}
	if err := p.Validate(nil); !mongoerr.Is(err, 51050) {
		t.Errorf("Validate(nil) = %v, want 51050", err)
	}
}
