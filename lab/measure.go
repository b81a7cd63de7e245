package lab

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// env is what a scenario runs with: the scratch database, the monitor of
// the client's commands, the scenario's own seeded generator, the scale
// and a progress step. Scenarios run one at a time.
type env struct {
	ctx   context.Context
	db    *mongo.Database
	mon   *monitor
	gen   *gen
	scale int
	step  func()
}

// n scales a count given for the default scale (100), with a floor.
func (e *env) n(atDefault, floor int) int {
	return max(floor, atDefault*e.scale/DefaultScale)
}

// coll returns a collection of the scratch database.
func (e *env) coll(name string) *mongo.Collection { return e.db.Collection(name) }

// opStats summarise one logical operation run many times: per-operation
// averages of what the monitor counted, and latency percentiles.
type opStats struct {
	N            int
	RoundTrips   float64
	BytesSent    float64
	BytesRecv    float64
	DocsReturned float64
	DocsWritten  float64
	P50, P99     float64   // microseconds
	Samples      []float64 // microseconds, in run order
	// TimeByName is the driver-observed duration of each command name,
	// per operation, in microseconds.
	TimeByName map[string]float64
}

// warmup is how many operations run unmeasured before a timed run.
const warmup = 5

// run runs fn(i) for i in [0, n) with the monitor counting, timing each
// call, after a few unmeasured calls fn(n..n+warmup) when warm is true.
func (e *env) run(n int, warm bool, fn func(i int) error) (opStats, error) {
	if warm {
		for i := range warmup {
			if err := fn(n + i); err != nil {
				return opStats{}, err
			}
		}
	}
	st := opStats{N: n, Samples: make([]float64, 0, n)}
	e.mon.start(false)
	for i := range n {
		if err := e.ctx.Err(); err != nil {
			e.mon.stop()
			return opStats{}, err
		}
		t0 := time.Now()
		err := fn(i)
		st.Samples = append(st.Samples, float64(time.Since(t0).Nanoseconds())/1e3)
		if err != nil {
			e.mon.stop()
			return opStats{}, err
		}
	}
	c, _ := e.mon.stop()
	if n > 0 {
		f := float64(n)
		st.RoundTrips = float64(c.RoundTrips) / f
		st.BytesSent = float64(c.BytesSent) / f
		st.BytesRecv = float64(c.BytesRecv) / f
		st.DocsReturned = float64(c.DocsReturned) / f
		st.DocsWritten = float64(c.DocsWritten) / f
		st.TimeByName = map[string]float64{}
		for k, d := range c.TimeByName {
			st.TimeByName[k] = float64(d.Nanoseconds()) / 1e3 / f
		}
	}
	st.P50, st.P99 = percentile(st.Samples, 0.50), percentile(st.Samples, 0.99)
	return st, nil
}

// readResult is a read's opStats with what explain says it examined.
type readResult struct {
	opStats
	DocsExamined, KeysExamined float64
}

// explainSamples is how many calls of a read are explained.
const explainSamples = 20

// read explains the first calls of fn, then times n calls.
func (e *env) read(n int, fn func(i int) error) (readResult, error) {
	d, k, err := e.examined(min(n, explainSamples), fn)
	if err != nil {
		return readResult{}, err
	}
	st, err := e.run(n, true, fn)
	if err != nil {
		return readResult{}, err
	}
	return readResult{opStats: st, DocsExamined: d, KeysExamined: k}, nil
}

// percentile returns the q-quantile of xs (nearest rank), 0 when empty.
func percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(q*float64(len(s)) + 0.5)
	return s[min(max(i-1, 0), len(s)-1)]
}

// examined runs fn(i) for i in [0, n) while capturing the commands it
// sends, then explains every read among them (find, aggregate, count,
// distinct) with executionStats and returns the documents and index keys
// examined per call, on average. Writes are not explained.
func (e *env) examined(n int, fn func(i int) error) (docs, keys float64, err error) {
	e.mon.start(true)
	for i := range n {
		if err := fn(i); err != nil {
			e.mon.stop()
			return 0, 0, err
		}
	}
	_, cmds := e.mon.stop()
	var d, k int64
	for _, cmd := range cmds {
		inner, ok := explainable(cmd)
		if !ok {
			continue
		}
		var reply bson.Raw
		err := e.db.RunCommand(e.ctx, bson.D{{Key: "explain", Value: inner}, {Key: "verbosity", Value: "executionStats"}}).Decode(&reply)
		if err != nil {
			return 0, 0, fmt.Errorf("explain %s: %w", firstKey(cmd), err)
		}
		dd, kk := examinedIn(reply, 0)
		d, k = d+dd, k+kk
	}
	if n == 0 {
		return 0, 0, nil
	}
	return float64(d) / float64(n), float64(k) / float64(n), nil
}

// firstKey returns a command's name.
func firstKey(cmd bson.Raw) string {
	elems, err := cmd.Elements()
	if err != nil || len(elems) == 0 {
		return "?"
	}
	return elems[0].Key()
}

// generic are the fields a driver adds to every command, which explain's
// inner command must not carry.
var generic = map[string]bool{
	"$db": true, "lsid": true, "$clusterTime": true, "txnNumber": true, "$readPreference": true,
	"readConcern": true, "writeConcern": true, "autocommit": true, "startTransaction": true,
	"apiVersion": true, "apiStrict": true, "apiDeprecationErrors": true, "$audit": true,
}

// explainable returns the read command inside a captured command, without
// the driver's generic fields, or false for a command that is not a read
// explain can run.
func explainable(cmd bson.Raw) (bson.D, bool) {
	switch firstKey(cmd) {
	case "find", "aggregate", "count", "distinct":
	default:
		return nil, false
	}
	elems, err := cmd.Elements()
	if err != nil {
		return nil, false
	}
	out := bson.D{}
	for _, el := range elems {
		if !generic[el.Key()] {
			out = append(out, bson.E{Key: el.Key(), Value: el.Value()})
		}
	}
	return out, true
}

// maxExplainDepth bounds the walk of an explain reply.
const maxExplainDepth = 64

// examinedIn adds up totalDocsExamined and totalKeysExamined of every
// executionStats document in an explain reply (a find's, each stage's
// $cursor, each shard's), without descending into one it counted, so
// that a sharded summary is not counted twice.
func examinedIn(doc bson.Raw, depth int) (docs, keys int64) {
	if depth > maxExplainDepth {
		return 0, 0
	}
	elems, err := doc.Elements()
	if err != nil {
		return 0, 0
	}
	for _, el := range elems {
		v := el.Value()
		if el.Key() == "executionStats" {
			if s, ok := v.DocumentOK(); ok {
				d, _ := s.Lookup("totalDocsExamined").AsInt64OK()
				k, _ := s.Lookup("totalKeysExamined").AsInt64OK()
				docs, keys = docs+d, keys+k
				continue
			}
		}
		var sub bson.Raw
		switch v.Type {
		case bson.TypeEmbeddedDocument:
			sub = v.Document()
		case bson.TypeArray:
			sub = bson.Raw(v.Array())
		default:
			continue
		}
		d, k := examinedIn(sub, depth+1)
		docs, keys = docs+d, keys+k
	}
	return docs, keys
}

// storage is what collStats says about a set of collections, added up.
type storage struct {
	Count     int64
	DataSize  int64 // uncompressed BSON bytes
	IndexSize int64
	Indexes   int64
}

// storageOf runs collStats on each collection and adds the figures up.
func (e *env) storageOf(names ...string) (storage, error) {
	var s storage
	for _, name := range names {
		var r bson.Raw
		if err := e.db.RunCommand(e.ctx, bson.D{{Key: "collStats", Value: name}}).Decode(&r); err != nil {
			return s, fmt.Errorf("collStats %s: %w", name, err)
		}
		num := func(k string) int64 { n, _ := r.Lookup(k).AsInt64OK(); return n }
		s.Count += num("count")
		s.DataSize += num("size")
		s.IndexSize += num("totalIndexSize")
		s.Indexes += num("nindexes")
	}
	return s, nil
}
