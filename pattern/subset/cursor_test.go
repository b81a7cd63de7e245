package subset

import (
	"context"
	"slices"
	"testing"
)

// TestCursorText pages through a parent's children with the cursor
// carried as text between pages, as a web page's "next" link does.
func TestCursorText(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, reviewConfig())
	f.product(t, "p1")
	for n := range 7 {
		f.add(t, "p1", n)
	}
	var got []string
	token := ""
	for {
		var after Cursor
		if err := after.UnmarshalText([]byte(token)); err != nil {
			t.Fatal(err)
		}
		p, err := f.w.Page(ctx, "p1", after, 3)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, reviewIDs(p.Children)...)
		if p.Next == nil {
			break
		}
		b, err := p.Next.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		token = string(b)
	}
	if want := []string{"p1-r06", "p1-r05", "p1-r04", "p1-r03", "p1-r02", "p1-r01", "p1-r00"}; !slices.Equal(got, want) {
		t.Fatalf("pages %v, want %v", got, want)
	}
	for _, bad := range []string{"!!", "AAAA", "BQAAAAA", string(make([]byte, 5000))} {
		var c Cursor
		if err := c.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("UnmarshalText(%.10q) succeeded", bad)
		}
	}
}

// FuzzCursorText: any text decodes to a cursor or an error, and a
// decoded cursor encodes back to text that decodes the same.
func FuzzCursorText(f *testing.F) {
	f.Add("")
	f.Add("FQAAAAl0AAAAAAAAAAAAAmlkAAIAAABhAAA")
	f.Fuzz(func(t *testing.T, s string) {
		var c Cursor
		if err := c.UnmarshalText([]byte(s)); err != nil {
			return
		}
		b, err := c.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var d Cursor
		if err := d.UnmarshalText(b); err != nil || !d.ID.Equal(c.ID) || !d.Time.Equal(c.Time) {
			t.Fatalf("round trip of %q: %v", s, err)
		}
	})
}
