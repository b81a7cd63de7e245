package command

import (
	"math/rand/v2"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// profileSettings is one database's profiler configuration.
type profileSettings struct {
	level  int
	filter bson.Raw
	f      *match.Filter
}

// profileCap bounds system.profile like mongod's default 1 MB capped
// collection: the oldest entries go first.
const profileCap = 1 << 20

// notProfiled are commands the profiler never records: handshakes and
// the profiler's own control.
var notProfiled = map[string]bool{
	"hello": true, "isMaster": true, "ping": true, "profile": true, "buildInfo": true,
	"endSessions": true, "saslStart": true, "saslContinue": true, "getLastError": true,
}

// beginOp returns the state of the command r, which its queries report
// to.
func (e *Env) beginOp(r *Request) *opState {
	op := &opState{env: e}
	x := e.ext()
	x.mu.Lock()
	op.profiled = x.profile[r.DB].level > 0
	x.mu.Unlock()
	return op
}

// endOp writes r's system.profile entry when the database's profiling
// level asks for it (level 2: every operation; level 1: operations at
// least slowms long, or those matching the level's filter), sampled at
// sampleRate. Failures to write the entry are logged, never returned.
func (e *Env) endOp(op *opState, r *Request, reply bson.D, err error, took time.Duration) {
	if !op.profiled || notProfiled[r.Name] {
		return
	}
	x := e.ext()
	x.mu.Lock()
	ps := x.profile[r.DB]
	slow, rate := x.slowMS, x.rate
	x.mu.Unlock()
	ns := opNamespace(r)
	if strings.HasSuffix(ns, ".system.profile") || ps.level == 0 {
		return
	}
	if rate < 1 && rand.Float64() >= rate {
		return
	}
	entry := e.profileEntry(op, r, ns, reply, err, took)
	raw, merr := bson.Marshal(entry)
	if merr != nil {
		e.log.Error("profile entry", "err", merr)
		return
	}
	switch {
	case ps.f != nil:
		if !ps.f.Match(raw) {
			return
		}
	case ps.level == 1 && took.Milliseconds() < slow:
		return
	}
	if werr := e.writeProfile(r.DB+".system.profile", raw); werr != nil {
		e.log.Error("write system.profile", "err", werr)
	}
}

// opNamespace returns the namespace an operation works on, "db.$cmd" for
// commands on no collection.
func opNamespace(r *Request) string {
	if r.Name == "getMore" {
		if v, err := r.Body.LookupErr("collection"); err == nil {
			if s, ok := v.StringValueOK(); ok {
				return r.DB + "." + s
			}
		}
	}
	if e, err := r.Body.IndexErr(0); err == nil {
		if s, ok := e.Value().StringValueOK(); ok && s != "" {
			return r.DB + "." + s
		}
	}
	return r.DB + ".$cmd"
}

func profileOp(name string) string {
	switch name {
	case "find":
		return "query"
	case "insert":
		return "insert"
	case "update":
		return "update"
	case "delete":
		return "remove"
	case "getMore":
		return "getmore"
	}
	return "command"
}

// profileEntry builds a system.profile document in mongod's field order.
func (e *Env) profileEntry(op *opState, r *Request, ns string, reply bson.D, err error, took time.Duration) bson.D {
	d := bson.D{
		{Key: "_id", Value: bson.NewObjectID()},
		{Key: "op", Value: profileOp(r.Name)},
		{Key: "ns", Value: ns},
		{Key: "command", Value: r.Body},
	}
	op.mu.Lock()
	if op.origin != nil {
		d = append(d, bson.E{Key: "originatingCommand", Value: op.origin})
	}
	if id, ok := profileCursorID(r, reply); ok {
		d = append(d, bson.E{Key: "cursorid", Value: id})
	}
	isQuery := op.planSummary != ""
	if isQuery {
		d = append(d,
			bson.E{Key: "keysExamined", Value: op.keys},
			bson.E{Key: "docsExamined", Value: op.docs})
		if op.hasSort {
			d = append(d, bson.E{Key: "hasSortStage", Value: true})
		}
		if op.usedDisk {
			d = append(d, bson.E{Key: "usedDisk", Value: true})
		}
		if op.multi {
			d = append(d, bson.E{Key: "fromMultiPlanner", Value: true})
		}
	}
	summary, qh, ck := op.planSummary, op.queryHash, op.cacheKey
	op.mu.Unlock()
	for _, f := range reply {
		switch f.Key {
		case "cursor":
			if c, ok := f.Value.(bson.D); ok {
				for _, cf := range c {
					if cf.Key == "id" {
						if id, ok := cf.Value.(int64); ok {
							d = append(d, bson.E{Key: "cursorExhausted", Value: id == 0})
						}
					}
				}
				for _, cf := range c {
					if cf.Key == "firstBatch" || cf.Key == "nextBatch" {
						d = append(d, bson.E{Key: "nreturned", Value: int64(batchLen(cf.Value))})
					}
				}
			}
		case "n":
			switch r.Name {
			case "insert":
				d = append(d, bson.E{Key: "ninserted", Value: f.Value})
			case "delete":
				d = append(d, bson.E{Key: "ndeleted", Value: f.Value})
			case "update":
				d = append(d, bson.E{Key: "nMatched", Value: f.Value})
			}
		case "nModified":
			d = append(d, bson.E{Key: "nModified", Value: f.Value})
		}
	}
	if isQuery {
		d = append(d, bson.E{Key: "queryHash", Value: qh}, bson.E{Key: "planCacheKey", Value: ck})
	}
	d = append(d,
		bson.E{Key: "numYield", Value: int32(0)},
		bson.E{Key: "locks", Value: bson.D{}},
	)
	if err != nil {
		me := mongoerr.As(err)
		d = append(d, bson.E{Key: "ok", Value: 0.0}, bson.E{Key: "errMsg", Value: me.Msg},
			bson.E{Key: "errName", Value: me.Code.Name()}, bson.E{Key: "errCode", Value: int32(me.Code)})
	}
	respLen := 0
	if b, merr := bson.Marshal(reply); merr == nil {
		respLen = len(b)
	}
	d = append(d,
		bson.E{Key: "responseLength", Value: int32(respLen)},
		bson.E{Key: "protocol", Value: "op_msg"},
		bson.E{Key: "millis", Value: took.Milliseconds()},
	)
	if isQuery {
		d = append(d, bson.E{Key: "planSummary", Value: summary})
	}
	client, app := "", ""
	if r.Conn != nil {
		client = r.Conn.Remote
		if i := strings.LastIndexByte(client, ':'); i > 0 {
			client = client[:i]
		}
		if v, err := r.Conn.Client.LookupErr("application", "name"); err == nil {
			app, _ = v.StringValueOK()
		}
	}
	d = append(d,
		bson.E{Key: "ts", Value: bson.NewDateTimeFromTime(time.Now())},
		bson.E{Key: "client", Value: client},
	)
	if app != "" {
		d = append(d, bson.E{Key: "appName", Value: app})
	}
	d = append(d, bson.E{Key: "allUsers", Value: bson.A{}}, bson.E{Key: "user", Value: ""})
	return d
}

// profileCursorID returns the cursor an entry reports as cursorid: a
// getMore's, or the one a command's reply leaves open.
func profileCursorID(r *Request, reply bson.D) (int64, bool) {
	if r.Name == "getMore" {
		return r.Body.Index(0).Value().Int64OK()
	}
	for _, f := range reply {
		if c, ok := f.Value.(bson.D); ok && f.Key == "cursor" {
			for _, cf := range c {
				if id, ok := cf.Value.(int64); ok && cf.Key == "id" && id != 0 {
					return id, true
				}
			}
		}
	}
	return 0, false
}

func batchLen(v any) int {
	switch b := v.(type) {
	case []bson.Raw:
		return len(b)
	case bson.A:
		return len(b)
	}
	return 0
}

// writeProfile appends an entry to ns (creating it as a capped-like
// collection) and drops the oldest entries past profileCap. It writes
// through storage directly: user writes to system collections are refused
// by the write commands, the profiler's are not.
//
// Divergence: entries carry an _id (storage keeps an _id index on every
// collection); mongod's system.profile entries have none.
func (e *Env) writeProfile(ns string, entry bson.Raw) error {
	x := e.ext()
	return e.Store.Write(func(w *storage.Writer) error {
		c := w.Collection(ns)
		created := c == nil
		if created {
			opts, _ := bson.Marshal(bson.D{{Key: "capped", Value: true}, {Key: "size", Value: int64(profileCap)}})
			var err error
			if c, err = w.CreateCollection(ns, opts); err != nil {
				return err
			}
		}
		x.mu.Lock()
		size, known := x.profSize[ns]
		x.mu.Unlock()
		if created {
			size, known = 0, true
		}
		if !known {
			st, err := storage.CollStats(w.Reader(), c)
			if err != nil {
				return err
			}
			size = st.Size
		}
		if _, err := w.Insert(c, entry); err != nil {
			return err
		}
		size += int64(len(entry))
		if size > profileCap {
			recs, err := w.Reader().Scan(c, false)
			if err != nil {
				return err
			}
			type old struct {
				rid int64
				doc bson.Raw
			}
			var drop []old
			for size > profileCap && recs.Next() {
				doc, err := recs.Doc()
				if err != nil {
					recs.Close()
					return err
				}
				drop = append(drop, old{recs.RecordID(), doc})
				size -= int64(len(doc))
			}
			recs.Close()
			for _, o := range drop {
				if err := w.Delete(c, o.rid, o.doc); err != nil {
					return err
				}
			}
		}
		x.mu.Lock()
		x.profSize[ns] = size
		x.mu.Unlock()
		return nil
	})
}

// numberOf returns a numeric field as float64.
func numberOf(v bson.RawValue) (float64, bool) {
	if !bsonkit.IsNumber(v.Type) {
		return 0, false
	}
	return bsonkit.Float64(v)
}
