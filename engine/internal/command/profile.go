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
	if r.Name == "update" || r.Name == "delete" {
		op.mu.Lock()
		stmts := op.stmts
		op.mu.Unlock()
		if len(stmts) > 0 {
			// mongod profiles each statement, not the command.
			for i := range stmts {
				e.profileWrite(r, ps, slow, e.stmtEntry(r, ns, &stmts[i]), stmts[i].took)
			}
			return
		}
	}
	e.profileWrite(r, ps, slow, e.profileEntry(op, r, ns, reply, err, took), took)
}

// profileWrite writes one entry unless the level's filter or slowms
// leaves it out.
func (e *Env) profileWrite(r *Request, ps profileSettings, slow int64, entry bson.D, took time.Duration) {
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

// profileFacts are the parts of one system.profile entry.
type profileFacts struct {
	op, ns      string
	command     any // bson.Raw or bson.D
	origin      bson.Raw
	cursorID    int64
	hasCursor   bool
	examined    bool
	keys, docs  int64
	hasSort     bool
	usedDisk    bool
	multi       bool
	counts      bson.D // nMatched, nModified, ninserted, ndeleted, nUpserted
	exhausted   *bool
	nreturned   int64
	hasReturned bool
	queryHash   string
	cacheKey    string
	err         error
	isCommand   bool // responseLength and protocol: a command's entry
	respLen     int
	millis      int64
	planSummary string
}

// profileEntry builds a command's system.profile document.
func (e *Env) profileEntry(op *opState, r *Request, ns string, reply bson.D, err error, took time.Duration) bson.D {
	f := profileFacts{op: profileOp(r.Name), ns: ns, command: r.Body, err: err, isCommand: true, millis: took.Milliseconds()}
	op.mu.Lock()
	f.origin = op.origin
	f.cursorID, f.hasCursor = profileCursorID(r, reply)
	f.examined = op.planSummary != ""
	f.keys, f.docs, f.hasSort, f.usedDisk, f.multi = op.keys, op.docs, op.hasSort, op.usedDisk, op.multi
	f.planSummary, f.queryHash, f.cacheKey = op.planSummary, op.queryHash, op.cacheKey
	op.mu.Unlock()
	for _, el := range reply {
		switch el.Key {
		case "cursor":
			c, _ := el.Value.(bson.D)
			for _, cf := range c {
				switch cf.Key {
				case "id":
					if id, ok := cf.Value.(int64); ok {
						x := id == 0
						f.exhausted = &x
					}
				case "firstBatch", "nextBatch":
					f.nreturned, f.hasReturned = int64(batchLen(cf.Value)), true
				}
			}
		case "n":
			switch r.Name {
			case "insert":
				f.counts = append(f.counts, bson.E{Key: "ninserted", Value: el.Value})
			case "delete":
				f.counts = append(f.counts, bson.E{Key: "ndeleted", Value: el.Value})
			case "update":
				f.counts = append(f.counts, bson.E{Key: "nMatched", Value: el.Value})
			}
		case "nModified":
			f.counts = append(f.counts, bson.E{Key: "nModified", Value: el.Value})
		case "lastErrorObject":
			if r.Name == "findAndModify" || r.Name == "findandmodify" {
				f.counts = findAndModifyCounts(r, el.Value)
			}
		}
	}
	if b, merr := bson.Marshal(reply); merr == nil {
		f.respLen = len(b)
	}
	return e.profileDoc(r, &f)
}

// stmtEntry builds the system.profile document of one update or delete
// statement: no responseLength or protocol, as mongod's statement
// entries have none.
func (e *Env) stmtEntry(r *Request, ns string, s *stmtProfile) bson.D {
	f := profileFacts{
		op: profileOp(r.Name), ns: ns, command: s.cmd,
		examined: true, keys: s.keys, docs: s.docs, hasSort: s.hasSort, multi: s.multi,
		counts: s.counts, queryHash: s.queryHash, cacheKey: s.cacheKey,
		err: s.err, millis: s.took.Milliseconds(), planSummary: s.planSummary,
	}
	return e.profileDoc(r, &f)
}

// profileNumber is a count as mongod's BSONObjBuilder::appendNumber
// writes it: an int when it is below 2^30 in magnitude, else a long.
func profileNumber(n int64) any {
	if n < 1<<30 && n > -(1<<30) {
		return int32(n)
	}
	return n
}

// profileDoc lays out an entry in mongod 7.0's field order
// (OpDebug::append, then ts, client, appName and the user).
func (e *Env) profileDoc(r *Request, f *profileFacts) bson.D {
	d := bson.D{
		{Key: "_id", Value: bson.NewObjectID()},
		{Key: "op", Value: f.op},
		{Key: "ns", Value: f.ns},
		{Key: "command", Value: truncateForProfile(f.command)},
	}
	if f.origin != nil {
		d = append(d, bson.E{Key: "originatingCommand", Value: truncateForProfile(f.origin)})
	}
	if f.hasCursor {
		d = append(d, bson.E{Key: "cursorid", Value: f.cursorID})
	}
	if f.examined {
		d = append(d, bson.E{Key: "keysExamined", Value: profileNumber(f.keys)}, bson.E{Key: "docsExamined", Value: profileNumber(f.docs)})
		if f.hasSort {
			d = append(d, bson.E{Key: "hasSortStage", Value: true})
		}
		if f.usedDisk {
			d = append(d, bson.E{Key: "usedDisk", Value: true})
		}
		if f.multi {
			d = append(d, bson.E{Key: "fromMultiPlanner", Value: true})
		}
	}
	for _, k := range []string{"nMatched", "nModified", "ninserted", "ndeleted", "nUpserted"} {
		for _, c := range f.counts {
			if c.Key == k {
				d = append(d, bson.E{Key: k, Value: countValue(c.Value)})
			}
		}
	}
	if f.exhausted != nil && *f.exhausted {
		d = append(d, bson.E{Key: "cursorExhausted", Value: true})
	}
	d = append(d, bson.E{Key: "numYield", Value: int32(0)})
	if f.hasReturned {
		d = append(d, bson.E{Key: "nreturned", Value: profileNumber(f.nreturned)})
	}
	if f.examined && f.queryHash != "" {
		d = append(d, bson.E{Key: "queryHash", Value: f.queryHash}, bson.E{Key: "planCacheKey", Value: f.cacheKey})
	}
	if f.examined {
		// Divergence: always "classic"; mongod 7.0 answers "sbe" for
		// the queries its slot-based engine runs ($group, $lookup).
		d = append(d, bson.E{Key: "queryFramework", Value: "classic"})
	}
	d = append(d, bson.E{Key: "locks", Value: bson.D{}}, bson.E{Key: "flowControl", Value: bson.D{}})
	if f.err != nil {
		me := mongoerr.As(f.err)
		d = append(d, bson.E{Key: "ok", Value: 0.0}, bson.E{Key: "errMsg", Value: me.Msg},
			bson.E{Key: "errName", Value: me.Code.Name()}, bson.E{Key: "errCode", Value: int32(me.Code)})
	}
	if f.isCommand {
		d = append(d, bson.E{Key: "responseLength", Value: profileNumber(int64(f.respLen))}, bson.E{Key: "protocol", Value: "op_msg"})
	}
	d = append(d, bson.E{Key: "millis", Value: profileNumber(f.millis)})
	if f.planSummary != "" {
		d = append(d, bson.E{Key: "planSummary", Value: f.planSummary})
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
	return append(d, bson.E{Key: "allUsers", Value: bson.A{}}, bson.E{Key: "user", Value: ""})
}

// countValue is a write count as appendNumber writes it.
func countValue(v any) any {
	switch n := v.(type) {
	case int32:
		return n
	case int64:
		return profileNumber(n)
	case int:
		return profileNumber(int64(n))
	}
	return v
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
// by the write commands, the profiler's are not. No transaction can
// write to a system collection, so no open transaction holds what it
// writes: a plain Store.Write neither waits nor makes one fail at commit.
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
