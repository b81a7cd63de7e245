package command

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// stmtProfile is one update or delete statement's profile: mongod 7.0
// writes one system.profile entry per statement (op "update" or
// "remove", command {q, u, multi, upsert} or {q, limit}) instead of one
// for the command.
type stmtProfile struct {
	cmd         bson.D
	keys, docs  int64
	planSummary string
	hasSort     bool
	multi       bool
	queryHash   string
	cacheKey    string
	counts      bson.D // nMatched, nModified, ndeleted, nUpserted
	err         error
	took        time.Duration
}

// stmtMark is an operation's counters when one statement starts.
type stmtMark struct {
	keys, docs int64
	start      time.Time
}

// beginStmt starts a statement of a write command: the plan facts
// restart so that each statement's entry reports its own.
func (op *opState) beginStmt() stmtMark {
	if op == nil || !op.profiled {
		return stmtMark{}
	}
	op.mu.Lock()
	defer op.mu.Unlock()
	op.planSummary, op.hasSort, op.multi, op.queryHash, op.cacheKey = "", false, false, "", ""
	return stmtMark{keys: op.keys, docs: op.docs, start: time.Now()}
}

// endStmt records the statement begun at m, whose command is cmd and
// whose counts are counts, for its own profile entry. At most
// maxStmtProfiles statements of one command are kept (a write batch has
// at most 100,000).
func (op *opState) endStmt(m stmtMark, cmd bson.D, counts bson.D, err error) {
	if op == nil || !op.profiled {
		return
	}
	op.mu.Lock()
	defer op.mu.Unlock()
	if len(op.stmts) >= maxStmtProfiles {
		return
	}
	op.stmts = append(op.stmts, stmtProfile{
		cmd: cmd, keys: op.keys - m.keys, docs: op.docs - m.docs,
		planSummary: op.planSummary, hasSort: op.hasSort, multi: op.multi,
		queryHash: op.queryHash, cacheKey: op.cacheKey,
		counts: counts, err: err, took: time.Since(m.start),
	})
}

// restartStmts forgets the statements recorded so far: a write that
// waited for a transaction runs all its statements again, and each must
// have one profile entry, from the attempt that counted.
func (op *opState) restartStmts() {
	if op == nil || !op.profiled {
		return
	}
	op.mu.Lock()
	op.stmts = op.stmts[:0]
	op.mu.Unlock()
}

// maxStmtProfiles bounds the statement entries one command keeps: the
// largest write batch mongod accepts.
const maxStmtProfiles = 100000

// updateStmtCommand is the command an update statement's entry shows.
func updateStmtCommand(st updateStmt) bson.D {
	d := bson.D{{Key: "q", Value: st.q}, {Key: "u", Value: st.u}}
	if len(st.arrayFilters) > 0 {
		d = append(d, bson.E{Key: "arrayFilters", Value: st.arrayFilters})
	}
	if st.hint.Type != 0 {
		d = append(d, bson.E{Key: "hint", Value: st.hint})
	}
	return append(d, bson.E{Key: "multi", Value: st.multi}, bson.E{Key: "upsert", Value: st.upsert})
}

// deleteStmtCommand is the command a delete statement's entry shows.
func deleteStmtCommand(st deleteStmt) bson.D {
	d := bson.D{{Key: "q", Value: st.filter}, {Key: "limit", Value: int32(st.limit)}}
	if st.hint.Type != 0 {
		d = append(d, bson.E{Key: "hint", Value: st.hint})
	}
	return d
}

// findAndModifyCounts returns the write counts of a findAndModify entry
// from its reply's lastErrorObject: ndeleted for a remove, nMatched and
// nModified (and nUpserted) for an update.
//
// Divergence: an update that matched a document counts it as modified
// even when the update left it unchanged; mongod reports nModified 0.
func findAndModifyCounts(r *Request, leo any) bson.D {
	d, _ := leo.(bson.D)
	var n int32
	existing, upserted := false, false
	for _, e := range d {
		switch e.Key {
		case "n":
			n, _ = e.Value.(int32)
		case "updatedExisting":
			existing, _ = e.Value.(bool)
		case "upserted":
			upserted = true
		}
	}
	if rm, err := r.Body.LookupErr("remove"); err == nil && rm.Type == bson.TypeBoolean && rm.Boolean() {
		return bson.D{{Key: "ndeleted", Value: n}}
	}
	out := bson.D{{Key: "nMatched", Value: int32(0)}, {Key: "nModified", Value: int32(0)}}
	if existing {
		out = bson.D{{Key: "nMatched", Value: n}, {Key: "nModified", Value: n}}
	}
	if upserted {
		out = append(out, bson.E{Key: "nUpserted", Value: int32(1)})
	}
	return out
}
