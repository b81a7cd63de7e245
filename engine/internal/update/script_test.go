package update

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata scripts")

// scriptNow is the clock of every script: $currentDate writes it.
var scriptNow = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

// TestScripts runs engine/testdata/update/*.txt against an in-memory
// collection: Compile, Apply and Upsert driven by the update command's
// statements, matching with the match package.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("../../testdata/update/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { runScript(t, f) })
	}
}

type scriptCase struct {
	line      int
	directive string
	input     string
	expected  string
}

func parseScript(t *testing.T, path string) []scriptCase {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []scriptCase
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	lineNo := 0
	var cur *scriptCase
	state := 0 // 0 between cases, 1 input, 2 expected
	var in, out []string
	flush := func() {
		if cur != nil {
			cur.input = strings.Join(in, "\n")
			cur.expected = strings.Join(out, "\n")
			cases = append(cases, *cur)
		}
		cur, in, out, state = nil, nil, nil, 0
	}
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		switch state {
		case 0:
			if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
				continue
			}
			cur = &scriptCase{line: lineNo, directive: strings.TrimSpace(line)}
			state = 1
		case 1:
			if line == "----" {
				state = 2
				continue
			}
			in = append(in, line)
		case 2:
			if strings.TrimSpace(line) == "" {
				flush()
				continue
			}
			out = append(out, line)
		}
	}
	flush()
	return cases
}

func runScript(t *testing.T, path string) {
	cases := parseScript(t, path)
	newObjectID = sequentialIDs()
	var coll []bson.Raw
	var rewritten strings.Builder
	failed := false
	for i, c := range cases {
		var got string
		switch c.directive {
		case "docs":
			coll = nil
			for _, l := range strings.Split(c.input, "\n") {
				if strings.TrimSpace(l) == "" {
					continue
				}
				coll = append(coll, mustJSON(t, path, c.line, l))
			}
		case "cmd":
			got = runCmd(t, path, c, &coll)
		default:
			t.Fatalf("%s:%d: unknown directive %q", path, c.line, c.directive)
		}
		if *rewrite {
			if i > 0 {
				rewritten.WriteString("\n")
			}
			rewritten.WriteString(c.directive + "\n" + c.input + "\n----\n")
			if got != "" {
				rewritten.WriteString(got + "\n")
			}
			continue
		}
		if got != c.expected {
			failed = true
			t.Errorf("%s:%d:\n%s\ngot:\n%s\nwant:\n%s", path, c.line, c.input, got, c.expected)
		}
	}
	if *rewrite {
		header := leadingComments(path)
		if err := os.WriteFile(path, []byte(header+rewritten.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_ = failed
}

// leadingComments keeps the comment block at the top of a script.
func leadingComments(path string) string {
	data, _ := os.ReadFile(path)
	var b strings.Builder
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(l, "#") {
			break
		}
		b.WriteString(l + "\n")
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	return b.String()
}

func sequentialIDs() func() bson.ObjectID {
	n := 0
	return func() bson.ObjectID {
		n++
		var id bson.ObjectID
		id[0] = 0x65
		id[11] = byte(n)
		id[10] = byte(n >> 8)
		return id
	}
}

func mustJSON(t *testing.T, path string, line int, s string) bson.Raw {
	var doc bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(s), false, &doc); err != nil {
		t.Fatalf("%s:%d: %v: %s", path, line, err, s)
	}
	return doc
}

func canonical(doc bson.Raw) string {
	b, err := bson.MarshalExtJSON(doc, true, false)
	if err != nil {
		return "<invalid: " + err.Error() + ">"
	}
	return string(b)
}

func errLine(err error) string {
	me := mongoerr.As(err)
	return fmt.Sprintf("error %s(%d): %s", me.Code.Name(), int32(me.Code), me.Msg)
}

func runCmd(t *testing.T, path string, c scriptCase, coll *[]bson.Raw) string {
	cmd := mustJSON(t, path, c.line, strings.ReplaceAll(c.input, "\n", " "))
	first := cmd.Index(0).Key()
	switch first {
	case "find":
		var lines []string
		var q queryMatcher
		if f, err := cmd.LookupErr("filter"); err == nil {
			m, err := compileQuery(f.Document())
			if err != nil {
				return errLine(err)
			}
			q = m
		}
		for _, d := range *coll {
			if q == nil || q.matchDoc(d) {
				lines = append(lines, canonical(d))
			}
		}
		return strings.Join(lines, "\n")
	case "update":
		return runUpdate(cmd, coll)
	}
	t.Fatalf("%s:%d: unknown command %q", path, c.line, first)
	return ""
}

func runUpdate(cmd bson.Raw, coll *[]bson.Raw) string {
	stmts, _ := cmd.Lookup("updates").Array().Values()
	n, nModified := 0, 0
	var upserted []string
	var werr error
	for i, s := range stmts {
		st := s.Document()
		var filters []bson.Raw
		if af, err := st.LookupErr("arrayFilters"); err == nil {
			vals, _ := af.Array().Values()
			for _, v := range vals {
				filters = append(filters, v.Document())
			}
		}
		multi := false
		if m, err := st.LookupErr("multi"); err == nil {
			multi = m.Boolean()
		}
		upsert := false
		if m, err := st.LookupErr("upsert"); err == nil {
			upsert = m.Boolean()
		}
		u, err := Compile(st.Lookup("u"), filters)
		if err != nil {
			werr = err
			break
		}
		qdoc := st.Lookup("q").Document()
		q, err := compileQuery(qdoc)
		if err != nil {
			werr = err
			break
		}
		matched := false
		for j, d := range *coll {
			ok, pos := q.matchPos(d)
			if !ok {
				continue
			}
			matched = true
			out, changed, err := u.Apply(d, pos, scriptNow)
			if err != nil {
				werr = err
				break
			}
			if err := out.Validate(); err != nil {
				werr = fmt.Errorf("invalid output: %v", err)
				break
			}
			n++
			if changed {
				nModified++
				(*coll)[j] = out
			}
			if !multi {
				break
			}
		}
		if werr != nil {
			break
		}
		if !matched && upsert {
			doc, err := u.Upsert(qdoc, scriptNow)
			if err != nil {
				werr = err
				break
			}
			*coll = append(*coll, doc)
			n++
			id := doc.Lookup("_id")
			upserted = append(upserted, fmt.Sprintf(`{"index": %d, "_id": %s}`, i, idJSON(id)))
		}
	}
	res := fmt.Sprintf(`{"n": %d, "nModified": %d`, n, nModified)
	if len(upserted) > 0 {
		res += `, "upserted": [` + strings.Join(upserted, ", ") + `]`
	}
	res += "}"
	if werr != nil {
		res += "\n" + errLine(werr)
	}
	return res
}

func idJSON(v bson.RawValue) string {
	doc := wrapValue("v", v)
	s := canonical(doc)
	return strings.TrimSuffix(strings.TrimPrefix(s, `{"v":`), "}")
}
