package advisor

import (
	"fmt"
	"strconv"
	"strings"
)

// fig builds a Figure.
func fig(name string, v float64, unit string) Figure { return Figure{Name: name, Value: v, Unit: unit} }

// count builds a unitless Figure from an integer.
func count(name string, v int64) Figure { return Figure{Name: name, Value: float64(v)} }

// share returns n/total, 0 when total is 0.
func share(n, total int64) float64 {
	if total == 0 {
		return 0
	}
	return float64(n) / float64(total)
}

// sampleMethod describes how a collection's schema was measured.
func sampleMethod(c *Collection, what string) string {
	return fmt.Sprintf("$sample of %d of %d documents; %s computed on the server with $group", c.Schema.Sampled, c.Count, what)
}

// shapeMethod describes how a shape's figures were measured.
func shapeMethod(e *checkEnv, what string) string {
	src := e.snap.Workload.Source
	if src == "" {
		src = "the workload"
	}
	m := fmt.Sprintf("%d operations from %s grouped by query shape", e.snap.Workload.Entries, src)
	if what != "" {
		m += "; " + what
	}
	return m
}

// shapeFigures are the figures every workload finding shows.
func shapeFigures(sh *Shape) []Figure {
	out := []Figure{count("executions", sh.Count)}
	if sh.Count > 0 {
		out = append(out,
			fig("keys examined per execution", float64(sh.KeysExamined)/float64(sh.Count), ""),
			fig("documents examined per execution", float64(sh.DocsExamined)/float64(sh.Count), ""),
			fig("documents returned per execution", float64(sh.NReturned)/float64(sh.Count), ""),
			fig("mean time", float64(sh.Millis)/float64(sh.Count), "ms"))
	}
	return out
}

// round2 rounds to two decimals, so evidence prints and compares exactly.
func round2(v float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', 2, 64), 64)
	return f
}

// createIndex is the mongosh command that creates keys on coll.
func createIndex(coll string, keys []Key) string {
	return fmt.Sprintf("db.getCollection(%s).createIndex(%s)", strconv.Quote(coll), keysString(keys))
}

// collRef is a collection as mongosh names it.
func collRef(coll string) string { return fmt.Sprintf("db.getCollection(%s)", strconv.Quote(coll)) }

// useDB is the mongosh line selecting database db.
func useDB(db string) string { return "use " + db }

// goIdent turns a path into a Go-ish placeholder name.
func goIdent(s string) string {
	return strings.NewReplacer(".", "_", "$", "").Replace(s)
}
