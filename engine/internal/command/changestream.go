package command

import (
	"context"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/agg"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/plan"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// changeStreamSpec is the parsed argument of $changeStream.
type changeStreamSpec struct {
	fullDocument             string // default, updateLookup, whenAvailable, required
	fullDocumentBeforeChange string // off, whenAvailable, required
	showExpanded             bool
	allChanges               bool
	resumeAfter, startAfter  *resumeToken
	startAt                  *bson.Timestamp
}

// isChangeStream reports whether the pipeline starts with $changeStream.
func isChangeStream(stages []bson.Raw) bool {
	if len(stages) == 0 {
		return false
	}
	e, err := stages[0].IndexErr(0)
	return err == nil && e.Key() == "$changeStream"
}

// parseChangeStreamSpec parses {$changeStream: {...}}.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/changeStream/
func parseChangeStreamSpec(v bson.RawValue) (changeStreamSpec, error) {
	s := changeStreamSpec{fullDocument: "default", fullDocumentBeforeChange: "off"}
	d, ok := v.DocumentOK()
	if !ok {
		return s, mongoerr.New(mongoerr.Code(50808), "$changeStream stage expects a document as argument")
	}
	elems, err := d.Elements()
	if err != nil {
		return s, mongoerr.New(mongoerr.InvalidBSON, err.Error())
	}
	enum := func(k string, v bson.RawValue, allowed ...string) (string, error) {
		str, ok := v.StringValueOK()
		if !ok {
			return "", mongoerr.Newf(mongoerr.TypeMismatch, "BSON field '$changeStream.%s' is the wrong type '%s', expected type 'string'", k, typeName(v.Type))
		}
		for _, a := range allowed {
			if str == a {
				return str, nil
			}
		}
		return "", mongoerr.Newf(mongoerr.BadValue, "Enumeration value '%s' for field '$changeStream.%s' is not a valid value.", str, k)
	}
	boolean := func(k string, v bson.RawValue) (bool, error) {
		b, ok := v.BooleanOK()
		if !ok {
			return false, mongoerr.Newf(mongoerr.TypeMismatch, "BSON field '$changeStream.%s' is the wrong type '%s', expected type 'bool'", k, typeName(v.Type))
		}
		return b, nil
	}
	for _, e := range elems {
		k, v := e.Key(), e.Value()
		var err error
		switch k {
		case "fullDocument":
			s.fullDocument, err = enum(k, v, "default", "updateLookup", "whenAvailable", "required")
		case "fullDocumentBeforeChange":
			s.fullDocumentBeforeChange, err = enum(k, v, "off", "whenAvailable", "required")
		case "showExpandedEvents":
			s.showExpanded, err = boolean(k, v)
		case "allChangesForCluster":
			s.allChanges, err = boolean(k, v)
		case "showSystemEvents", "showMigrationEvents", "showRawUpdateDescription", "allowToRunOnConfigDB", "allowToRunOnSystemNS":
			_, err = boolean(k, v)
		case "resumeAfter", "startAfter":
			var t resumeToken
			if t, err = parseResumeToken(k, v); err == nil {
				if k == "resumeAfter" {
					s.resumeAfter = &t
				} else {
					s.startAfter = &t
				}
			}
		case "startAtOperationTime":
			t, i, ok := v.TimestampOK()
			if !ok {
				return s, mongoerr.Newf(mongoerr.TypeMismatch, "BSON field '$changeStream.startAtOperationTime' is the wrong type '%s', expected type 'timestamp'", typeName(v.Type))
			}
			s.startAt = &bson.Timestamp{T: t, I: i}
		default:
			return s, mongoerr.Newf(mongoerr.UnknownBSONField, "BSON field '$changeStream.%s' is an unknown field.", k)
		}
		if err != nil {
			return s, err
		}
	}
	if s.resumeAfter != nil && s.startAfter != nil {
		return s, mongoerr.New(mongoerr.Code(50865), "Do not specify both 'resumeAfter' and 'startAfter' in a $changeStream stage")
	}
	if s.startAt != nil && (s.resumeAfter != nil || s.startAfter != nil) {
		return s, mongoerr.New(mongoerr.Code(40674), "Only one type of resume option is allowed, but multiple were found")
	}
	if s.resumeAfter != nil && s.resumeAfter.fromInvalidate {
		return s, mongoerr.New(mongoerr.InvalidResumeToken, "Attempting to resume a change stream using 'resumeAfter' is not allowed from an invalidate notification")
	}
	return s, nil
}

// checkChangeStreamTarget applies mongod's rules on where a change stream
// may be opened.
func checkChangeStreamTarget(r *Request, p *aggregateParams, s changeStreamSpec) error {
	if r.Env.Config.Standalone {
		return mongoerr.New(mongoerr.Code(40573), "The $changeStream stage is only supported on replica sets")
	}
	if r.Generic.StartTransaction || r.Generic.Autocommit != nil {
		return mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Operation not permitted in transaction :: caused by :: $changeStream is not allowed in a transaction")
	}
	if s.allChanges && (p.db != "admin" || p.coll != "") {
		return mongoerr.Newf(mongoerr.InvalidOptions, "A $changeStream with 'allChangesForCluster:true' may only be opened on the 'admin' database, and with no collection name; found %s", p.ns())
	}
	switch p.db {
	case "admin":
		if !s.allChanges {
			return mongoerr.New(mongoerr.InvalidNamespace, "$changeStream may not be opened on the internal admin database")
		}
	case "local", "config":
		return mongoerr.Newf(mongoerr.InvalidNamespace, "$changeStream may not be opened on the internal %s database", p.db)
	}
	if strings.HasPrefix(p.coll, "system.") {
		return mongoerr.Newf(mongoerr.InvalidNamespace, "$changeStream may not be opened on the internal %s collection", p.ns())
	}
	if p.coll != "" && r.Env.view(p.ns()) != nil {
		return mongoerr.Newf(mongoerr.CommandNotSupportedOnView, "Namespace %s is a view, not a collection", p.ns())
	}
	if s.resumeAfter != nil && p.coll != "" && s.resumeAfter.tokenType == tokenEvent && s.resumeAfter.uuid == nil {
		return mongoerr.New(mongoerr.InvalidResumeToken, "Attempted to resume a single-collection stream, but the resume token does not include a UUID")
	}
	return nil
}

// runChangeStream opens a change stream: an aggregate whose pipeline
// starts with $changeStream. The cursor it returns is tailable: getMore
// waits for new events (changestream_getmore.go).
// https://www.mongodb.com/docs/v7.0/changeStreams/
// openChangeStream parses a $changeStream aggregate's spec and stages,
// checks its target, and returns the stream positioned at its start.
func openChangeStream(r *Request, p *aggregateParams) (*changeStream, error) {
	spec, err := parseChangeStreamSpec(p.stages[0].Index(0).Value())
	if err != nil {
		return nil, err
	}
	if err := checkChangeStreamTarget(r, p, spec); err != nil {
		return nil, err
	}
	stages, split, err := agg.StripSplitLargeEvent(p.stages[1:])
	if err != nil {
		return nil, err
	}
	pl, err := agg.ParseChangeStream(stages, agg.Options{
		DB: p.db, Coll: p.coll, Let: p.let, TempDir: r.Env.tempDir(), Limits: r.Env.aggLimits(),
		Now: r.start, ClusterTime: r.Env.clock.current(),
	})
	if err != nil {
		return nil, err
	}
	cs := &changeStream{store: r.Env.Store, db: p.db, coll: p.coll, spec: spec, pl: pl, split: split, killed: make(chan struct{})}
	if spec.allChanges {
		cs.db = ""
	}
	cs.start()
	return cs, nil
}

func runChangeStream(ctx context.Context, r *Request, p *aggregateParams) (bson.D, error) {
	if p.explain {
		sections, err := changeStreamSections(ctx, r, p, plan.QueryPlanner)
		if err != nil {
			return nil, err
		}
		return explainReply(r, sections, r.Body), nil
	}
	if !p.haveCur {
		return nil, mongoerr.New(mongoerr.FailedToParse, "The 'cursor' option is required, except for aggregate with the explain argument")
	}
	cs, err := openChangeStream(r, p)
	if err != nil {
		return nil, err
	}
	if err := cs.checkHistory(); err != nil {
		return nil, changeStreamError(err)
	}
	if err := cs.poll(ctx, &aggHost{r: r}, int(p.batchSize)); err != nil {
		return nil, changeStreamError(aggExecErr(err))
	}
	batch := cs.take(int(p.batchSize))
	id := int64(0)
	if !cs.finished() {
		c := r.Env.Cursors.add(p.ns(), r.Generic.LSID, cs, nil)
		c.origin = r.Body
		id = c.ID
	}
	return changeStreamReply(id, p.ns(), "firstBatch", batch, cs.pbrt), nil
}

// changeStreamReply is a cursor reply with the postBatchResumeToken.
func changeStreamReply(id int64, ns, field string, batch []bson.Raw, pbrt resumeToken) bson.D {
	arr := make(bson.A, len(batch))
	for i, d := range batch {
		arr[i] = d
	}
	return bson.D{{Key: "cursor", Value: bson.D{
		{Key: field, Value: arr},
		{Key: "postBatchResumeToken", Value: pbrt.doc()},
		{Key: "id", Value: id},
		{Key: "ns", Value: ns},
	}}}
}

// nsDoc returns {db, coll} (coll left out when empty).
func nsDoc(db, coll string) bson.Raw {
	d := bsoncore.AppendStringElement(nil, "db", db)
	if coll != "" {
		d = bsoncore.AppendStringElement(d, "coll", coll)
	}
	return bson.Raw(bsoncore.BuildDocument(nil, d))
}

// oplogOf returns the oplog collection of st.
func oplogOf(st *storage.Store) *storage.Collection { return st.Collection(storage.OplogNS) }
