package advisor

import (
	"strings"
	"testing"
)

// FuzzParseWorkload: any bytes give shapes or skipped lines, never a
// panic, and never more lines than the limit.
func FuzzParseWorkload(f *testing.F) {
	for _, line := range strings.Split(workloadLines("shop"), "\n") {
		f.Add([]byte(line))
	}
	f.Add([]byte(`{"op":"update","ns":"a.b","command":{"update":"b","updates":[{"q":{"$and":[{"a":{"$in":[1,2]}}]},"u":[{"$set":{"x":1}}]}]}}`))
	f.Add([]byte(`{"attr":{"type":"command","ns":"a.b","command":{"aggregate":"b","pipeline":[{"$match":{"a":{"$regex":"^x","$options":"i"}}},{"$sort":{"a":1}},{"$skip":5}]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		shapes, entries, skipped := ParseWorkload(data, 50)
		if entries+skipped > 50 {
			t.Fatalf("%d lines read past the limit", entries+skipped)
		}
		for _, sh := range shapes {
			if sh.Count < 1 || sh.Key == "" {
				t.Fatalf("shape %+v", sh)
			}
			// The checks' parsers of a shape must hold too.
			ff := splitFilter(sh.Filter)
			esrKeys(ff, sh.Sort)
			positionalArrays(sh.Update)
			stageFields(sh.Filter)
		}
	})
}

// TestNormalizeDepth: a filter nested past maxShapeDepth is cut, not
// followed.
func TestNormalizeDepth(t *testing.T) {
	line := `{"op":"query","ns":"a.b","command":{"find":"b","filter":` + strings.Repeat(`{"$and":[`, 60) + `{"x":1}` + strings.Repeat(`]}`, 60) + `}}`
	shapes, entries, _ := ParseWorkload([]byte(line), 10)
	if entries != 1 || len(shapes) != 1 || !strings.Contains(shapes[0].Text, "?deep") {
		t.Fatalf("entries %d, shapes %+v", entries, shapes)
	}
	if ff := splitFilter(shapes[0].Filter); ff.OK {
		t.Error("a filter nested past the bound split as if whole")
	}
}
