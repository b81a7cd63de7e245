package advisor

import (
	"bufio"
	"bytes"
	"context"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// op is one recorded operation, from a system.profile document or a
// logv2 slow-query line, with the statement it ran.
type op struct {
	ns, name string
	cmd      bson.D // find/aggregate/… command, or one update/delete statement
	keys     int64
	docs     int64
	nret     int64
	millis   int64
	hasSort  bool
	usedDisk bool
	errCode  int64
	summary  string
}

// codeNoDiskUse is QueryExceededMemoryLimitNoDiskUseAllowed.
const codeNoDiskUse = 292

// parseEntry reads a system.profile document or a logv2 line (already
// decoded) into ops; ok is false for what is not a shapeable operation or
// is the advisor's own.
func parseEntry(doc bson.Raw) ([]op, bool) {
	if attr, ok := doc.Lookup("attr").DocumentOK(); ok {
		return parseLogLine(attr)
	}
	if isOwn(doc) {
		return nil, false
	}
	ns, _ := doc.Lookup("ns").StringValueOK()
	cmdRaw, ok := doc.Lookup("command").DocumentOK()
	if !ok || ns == "" {
		return nil, false
	}
	base := op{ns: ns,
		keys: asInt(doc.Lookup("keysExamined")), docs: asInt(doc.Lookup("docsExamined")),
		nret: asInt(doc.Lookup("nreturned")), millis: asInt(doc.Lookup("millis")),
		errCode: asInt(doc.Lookup("errCode"))}
	base.hasSort, _ = doc.Lookup("hasSortStage").BooleanOK()
	base.usedDisk, _ = doc.Lookup("usedDisk").BooleanOK()
	base.summary, _ = doc.Lookup("planSummary").StringValueOK()
	opName, _ := doc.Lookup("op").StringValueOK()
	return expand(base, opName, cmdRaw)
}

// parseLogLine reads the attr of a logv2 "Slow query" line.
func parseLogLine(attr bson.Raw) ([]op, bool) {
	ns, _ := attr.Lookup("ns").StringValueOK()
	cmdRaw, ok := attr.Lookup("command").DocumentOK()
	if !ok || ns == "" {
		return nil, false
	}
	if c, _ := cmdRaw.Lookup("comment").StringValueOK(); c == Comment {
		return nil, false
	}
	base := op{ns: ns,
		keys: asInt(attr.Lookup("keysExamined")), docs: asInt(attr.Lookup("docsExamined")),
		nret: asInt(attr.Lookup("nreturned")), millis: asInt(attr.Lookup("durationMillis")),
		errCode: asInt(attr.Lookup("errCode"))}
	base.hasSort, _ = attr.Lookup("hasSortStage").BooleanOK()
	base.usedDisk, _ = attr.Lookup("usedDisk").BooleanOK()
	base.summary, _ = attr.Lookup("planSummary").StringValueOK()
	typ, _ := attr.Lookup("type").StringValueOK()
	return expand(base, typ, cmdRaw)
}

// isOwn reports whether a profile entry is one of the advisor's commands.
func isOwn(doc bson.Raw) bool {
	for _, path := range [][]string{{"command", "comment"}, {"originatingCommand", "comment"}} {
		if c, _ := doc.Lookup(path...).StringValueOK(); c == Comment {
			return true
		}
	}
	return false
}

// expand turns one entry's command into ops: a whole command (find,
// aggregate…), or each statement of an update or delete, which mongod
// profiles as {q, u} and the log as the statement too.
func expand(base op, kind string, cmdRaw bson.Raw) ([]op, bool) {
	var cmd bson.D
	if err := bson.Unmarshal(cmdRaw, &cmd); err != nil || len(cmd) == 0 {
		return nil, false
	}
	first := cmd[0].Key
	switch {
	case first == "q" || first == "u" || (kind == "update" || kind == "remove" || kind == "delete") && lookup(cmd, "q") != nil:
		name := "update"
		if kind == "remove" || kind == "delete" {
			name = "delete"
		}
		base.name, base.cmd = name, cmd
		return []op{base}, true
	case first == "update" || first == "delete":
		key := "updates"
		if first == "delete" {
			key = "deletes"
		}
		stmts, _ := lookup(cmd, key).(bson.A)
		var out []op
		for i, s := range stmts {
			sd, ok := s.(bson.D)
			if !ok {
				continue
			}
			o := base
			if i > 0 {
				o.keys, o.docs, o.nret, o.millis = 0, 0, 0, 0
			}
			o.name, o.cmd = first, sd
			out = append(out, o)
			if len(out) == 100 {
				break
			}
		}
		return out, len(out) > 0
	case first == "find" || first == "aggregate" || first == "count" || first == "distinct" ||
		first == "findAndModify" || first == "findandmodify" || first == "insert":
		if first == "aggregate" {
			if _, ok := cmd[0].Value.(string); !ok {
				return nil, false // a database aggregation ($currentOp…)
			}
		}
		base.name = first
		if first == "findandmodify" {
			base.name = "findAndModify"
		}
		base.cmd = cmd
		return []op{base}, true
	}
	return nil, false
}

// lookup returns the value of key in d, or nil.
func lookup(d bson.D, key string) any {
	for _, e := range d {
		if e.Key == key {
			return e.Value
		}
	}
	return nil
}

// docOf returns v as a document, or nil.
func docOf(v any) bson.D {
	x, _ := v.(bson.D)
	return x
}

// shapes groups ops by shape.
type shapes struct {
	byKey map[string]*Shape
}

// add records one op under its shape.
func (s *shapes) add(o op) {
	db, coll, _ := strings.Cut(o.ns, ".")
	var norm bson.D
	sh := &Shape{NS: o.ns, Op: o.name, DB: db, Collection: coll}
	switch o.name {
	case "find":
		sh.Filter = docOf(lookup(o.cmd, "filter"))
		sh.Sort = docOf(lookup(o.cmd, "sort"))
		norm = bson.D{{Key: "filter", Value: normalize(sh.Filter, 0)}}
		if sh.Sort != nil {
			norm = append(norm, bson.E{Key: "sort", Value: sh.Sort})
		}
		if p := docOf(lookup(o.cmd, "projection")); p != nil {
			norm = append(norm, bson.E{Key: "projection", Value: p})
		}
		if v := lookup(o.cmd, "skip"); v != nil {
			sh.MaxSkip = int64(asNumber(v))
			norm = append(norm, bson.E{Key: "skip", Value: "?n"})
		}
		if v := lookup(o.cmd, "limit"); v != nil {
			norm = append(norm, bson.E{Key: "limit", Value: "?n"})
		}
		sh.AllowDisk, _ = lookup(o.cmd, "allowDiskUse").(bool)
		sh.Hint = lookup(o.cmd, "hint")
	case "aggregate":
		arr, _ := lookup(o.cmd, "pipeline").(bson.A)
		for _, st := range arr {
			if sd, ok := st.(bson.D); ok {
				sh.Pipeline = append(sh.Pipeline, sd)
				if len(sd) == 1 && sd[0].Key == "$skip" {
					sh.MaxSkip = max(sh.MaxSkip, int64(asNumber(sd[0].Value)))
				}
			}
		}
		// The leading $match and $sort run as the pipeline's query.
		rest := sh.Pipeline
		if len(rest) > 0 && len(rest[0]) == 1 && rest[0][0].Key == "$match" {
			sh.Filter = docOf(rest[0][0].Value)
			rest = rest[1:]
		}
		if len(rest) > 0 && len(rest[0]) == 1 && rest[0][0].Key == "$sort" {
			sh.Sort = docOf(rest[0][0].Value)
		}
		norm = bson.D{{Key: "pipeline", Value: normalizePipeline(sh.Pipeline)}}
		sh.AllowDisk, _ = lookup(o.cmd, "allowDiskUse").(bool)
	case "update", "findAndModify":
		qk, uk := "q", "u"
		if o.name == "findAndModify" {
			qk, uk = "query", "update"
			sh.Sort = docOf(lookup(o.cmd, "sort"))
		}
		sh.Filter = docOf(lookup(o.cmd, qk))
		sh.Update = lookup(o.cmd, uk)
		u := sh.Update
		if ud, ok := u.(bson.D); ok {
			u = normalize(ud, 0)
		}
		norm = bson.D{{Key: "q", Value: normalize(sh.Filter, 0)}, {Key: "u", Value: u}}
		if m, _ := lookup(o.cmd, "multi").(bool); m {
			norm = append(norm, bson.E{Key: "multi", Value: true})
		}
	case "delete":
		sh.Filter = docOf(lookup(o.cmd, "q"))
		norm = bson.D{{Key: "q", Value: normalize(sh.Filter, 0)}}
	case "count":
		sh.Filter = docOf(lookup(o.cmd, "query"))
		norm = bson.D{{Key: "query", Value: normalize(sh.Filter, 0)}}
	case "distinct":
		sh.Filter = docOf(lookup(o.cmd, "query"))
		norm = bson.D{{Key: "key", Value: lookup(o.cmd, "key")}, {Key: "query", Value: normalize(sh.Filter, 0)}}
	case "insert":
		norm = bson.D{}
	}
	sh.Text = o.name + " " + shapeText(norm)
	sh.Key = o.ns + " " + sh.Text
	if s.byKey == nil {
		s.byKey = map[string]*Shape{}
	}
	got := s.byKey[sh.Key]
	if got == nil {
		got = sh
		s.byKey[sh.Key] = sh
	} else {
		got.MaxSkip = max(got.MaxSkip, sh.MaxSkip)
	}
	got.Count++
	got.KeysExamined += o.keys
	got.DocsExamined += o.docs
	got.NReturned += o.nret
	got.Millis += o.millis
	got.MaxMillis = max(got.MaxMillis, o.millis)
	if o.hasSort {
		got.SortStages++
	}
	if o.usedDisk {
		got.UsedDisk++
	}
	if o.errCode == codeNoDiskUse {
		got.MemoryErrors++
	}
	if o.summary != "" {
		got.PlanSummary = o.summary
	}
}

// list returns the shapes, most expensive first: total time, then count.
func (s *shapes) list() []*Shape {
	out := make([]*Shape, 0, len(s.byKey))
	for _, sh := range s.byKey {
		out = append(out, sh)
	}
	slices.SortFunc(out, func(a, b *Shape) int {
		switch {
		case a.Millis != b.Millis:
			return int(b.Millis - a.Millis)
		case a.Count != b.Count:
			return int(b.Count - a.Count)
		}
		return strings.Compare(a.Key, b.Key)
	})
	return out
}

// ParseWorkload reads JSON lines — mongod logv2 lines (only "Slow query"
// entries are used) or system.profile documents, as relaxed or canonical
// Extended JSON — and groups them into shapes. At most limit lines are
// read; entries and skipped count what was used and left out.
func ParseWorkload(data []byte, limit int) (list []*Shape, entries, skipped int) {
	var s shapes
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() && entries+skipped < limit {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var doc bson.Raw
		if err := bson.UnmarshalExtJSON(line, false, &doc); err != nil {
			skipped++
			continue
		}
		ops, ok := parseEntry(doc)
		if !ok {
			skipped++
			continue
		}
		entries++
		for _, o := range ops {
			s.add(o)
		}
	}
	return s.list(), entries, skipped
}

// collectWorkload reads the workload: the file given, or each inspected
// database's system.profile (after enabling the profiler when asked).
func collectWorkload(ctx context.Context, c *conn, p *plan, snap *Snapshot) {
	if p.o.Workload != nil {
		name := p.o.ProfileFrom
		if name == "" {
			name = "workload file"
		}
		snap.Workload.Source = name
		snap.Shapes, snap.Workload.Entries, snap.Workload.Skipped = ParseWorkload(p.o.Workload, p.o.MaxProfile)
		return
	}
	snap.Workload.Source = ProfileSource
	var s shapes
	for _, db := range snap.Databases {
		if p.o.EnableProfiler && db.Profiler == 0 {
			if _, err := c.run(ctx, db.Name, bson.D{{Key: "profile", Value: 1}}); err != nil {
				snap.note("%s: enable profiler: %v", db.Name, err)
			} else {
				db.Profiler = 1
				snap.note("%s: profiler enabled at level 1 (slow operations); run the advisor again after a while of traffic", db.Name)
			}
		}
		left := p.o.MaxProfile - snap.Workload.Entries - snap.Workload.Skipped
		if left <= 0 {
			snap.note("workload: stopped after %d profiler entries", p.o.MaxProfile)
			break
		}
		docs, err := c.cursor(ctx, db.Name, bson.D{
			{Key: "find", Value: "system.profile"},
			{Key: "sort", Value: d("$natural", -1)},
			{Key: "limit", Value: left},
		})
		if err != nil {
			snap.note("%s: read system.profile: %v", db.Name, err)
			continue
		}
		for _, doc := range docs {
			ops, ok := parseEntry(doc)
			if !ok {
				snap.Workload.Skipped++
				continue
			}
			snap.Workload.Entries++
			for _, o := range ops {
				s.add(o)
			}
		}
	}
	snap.Shapes = s.list()
}
