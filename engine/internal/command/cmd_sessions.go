package command

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	register("endSessions", &spec{run: runEndSessions, apiV1: true, help: "end logical sessions"})
	register("killSessions", &spec{run: runKillSessions, help: "kill the operations and cursors of sessions"})
	register("killAllSessions", &spec{run: runKillAllSessions, help: "kill the operations and cursors of all sessions"})
	register("startSession", &spec{run: runStartSession, help: "start a logical session"})
	register("refreshSessions", &spec{run: runRefreshSessions, apiV1: true, help: "keep sessions alive"})
}

func sessionIDs(r *Request) ([]bson.Raw, error) {
	v := r.Body.Index(0).Value()
	arr, ok := v.ArrayOK()
	if !ok {
		return nil, mongoerr.FieldType(r.Name, r.Name, typeName(v.Type), "array")
	}
	vals, _ := arr.Values()
	out := make([]bson.Raw, 0, len(vals))
	for _, e := range vals {
		d, ok := e.DocumentOK()
		if !ok {
			return nil, mongoerr.FieldType(r.Name, r.Name, typeName(e.Type), "object")
		}
		out = append(out, d)
	}
	return out, nil
}

// runEndSessions forgets sessions: their retryable write history and
// cursors go.
func runEndSessions(ctx context.Context, r *Request) (bson.D, error) {
	ids, err := sessionIDs(r)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		r.Env.endSessionTxn(id)
		r.Env.sessions.end(id)
		r.Env.retry.end(id)
		r.Env.Cursors.killSession(lsidKey(id))
	}
	return bson.D{}, nil
}

func runKillSessions(ctx context.Context, r *Request) (bson.D, error) {
	ids, err := sessionIDs(r)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		r.Env.endSessionTxn(id)
		r.Env.Cursors.killSession(lsidKey(id))
	}
	return bson.D{}, nil
}

// runKillAllSessions kills every session's cursors; the user filter does
// not narrow anything because authentication is off.
func runKillAllSessions(ctx context.Context, r *Request) (bson.D, error) {
	if _, err := sessionIDs(r); err != nil {
		return nil, err
	}
	r.Env.abortAllTxns()
	r.Env.Cursors.killSession("")
	return bson.D{}, nil
}

func runStartSession(ctx context.Context, r *Request) (bson.D, error) {
	id := bson.Binary{Subtype: bson.TypeBinaryUUID, Data: newSessionUUID()}
	return bson.D{
		{Key: "id", Value: bson.D{{Key: "id", Value: id}}},
		{Key: "timeoutMinutes", Value: r.Env.sessionTimeoutMinutes()},
	}, nil
}

func runRefreshSessions(ctx context.Context, r *Request) (bson.D, error) {
	_, err := sessionIDs(r)
	return bson.D{}, err
}
