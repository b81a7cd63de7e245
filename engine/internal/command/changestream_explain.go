package command

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/agg"
	"github.com/formworkdb/formwork/engine/internal/plan"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// classicOperationTypes are the event types a stream without
// showExpandedEvents returns (mongod filters the others out with a
// $match it adds to the pipeline).
var classicOperationTypes = bson.A{"insert", "update", "replace", "delete", "drop", "rename", "dropDatabase", "invalidate"}

// changeStreamSections explains an aggregate that opens a change stream,
// in mongod 7.0's shape: "stages" holding the oplog scan as $cursor
// (queryPlanner on local.oplog.rs, and executionStats from that
// verbosity on), then the stages $changeStream stands for, each as
// {$changeStream: {stage: "internal…", …}} (internalUnwindTransaction,
// internalTransform with the stream's options, internalCheckInvalidate
// for collection and database streams, internalCheckResumability with
// the token it starts from, internalAddPreImage and internalAddPostImage
// when images are asked for, internalEnsureResumeTokenPresent when it
// resumes from an event, and the $match on classic operation types
// without showExpandedEvents), then the user's stages. From
// executionStats on, the stream reads the oplog from its start point up
// to its current end (waiting for nothing) and each stage reports
// nReturned and executionTimeMillisEstimate.
//
// Divergence: the filters shown in $cursor and internalUnwindTransaction
// are the ones this engine applies (the start point, the namespace), not
// mongod's generated oplog filter, and a user stage's nReturned is the
// number of events out of the whole pipeline.
// https://www.mongodb.com/docs/v7.0/reference/explain-results/
func changeStreamSections(ctx context.Context, r *Request, p *aggregateParams, verb plan.Verbosity) (bson.D, error) {
	cs, err := openChangeStream(r, p)
	if err != nil {
		return nil, err
	}
	spec, pl, split := cs.spec, cs.pl, cs.split
	startTok := cs.pbrt
	run := verb >= plan.ExecutionStats
	start := time.Now()
	nOut := 0
	if run {
		if err := cs.checkHistory(); err != nil {
			return nil, changeStreamError(err)
		}
		if err := cs.poll(ctx, &aggHost{r: r}, 0); err != nil {
			return nil, changeStreamError(aggExecErr(err))
		}
		nOut = len(cs.queue)
	}
	took := time.Since(start).Milliseconds()

	// The oplog scan, explained as the query it is.
	filter := bson.D{{Key: "ts", Value: bson.D{{Key: "$gte", Value: cs.startTS()}}}}
	if ns := cs.nsFilter(); ns != nil {
		// Transactions are logged as applyOps on admin.$cmd.
		filter = append(filter, bson.E{Key: "$or", Value: bson.A{bson.D{{Key: "ns", Value: ns}}, bson.D{{Key: "ns", Value: "admin.$cmd"}}}})
	}
	fraw, err := bson.Marshal(filter)
	if err != nil {
		return nil, err
	}
	qq, err := hostQuery(r, storage.OplogNS, agg.Query{Filter: fraw})
	if err != nil {
		return nil, err
	}
	qp, es, err := explainQuery(ctx, r, qq, verb)
	if err != nil {
		return nil, err
	}
	cursor := bson.D{{Key: "queryPlanner", Value: qp}}
	if run {
		cursor = append(cursor, bson.E{Key: "executionStats", Value: es})
	}
	out := bson.A{}
	withStats := func(d bson.D, n int) bson.D {
		if run {
			d = append(d, bson.E{Key: "nReturned", Value: int64(n)}, bson.E{Key: "executionTimeMillisEstimate", Value: took})
		}
		return d
	}
	internal := func(name string, extra ...bson.E) {
		body := append(bson.D{{Key: "stage", Value: name}}, extra...)
		out = append(out, withStats(bson.D{{Key: "$changeStream", Value: body}}, cs.nEvents))
	}
	out = append(out, withStats(bson.D{{Key: "$cursor", Value: cursor}}, cs.nOps))
	unwind := bson.D{{Key: "ns", Value: cs.nsFilter()}}
	if cs.nsFilter() == nil {
		unwind = bson.D{}
	}
	internal("internalUnwindTransaction", bson.E{Key: "filter", Value: unwind})
	internal("internalTransform", bson.E{Key: "options", Value: cs.specDoc()})
	if cs.db != "" {
		internal("internalCheckInvalidate")
	}
	internal("internalCheckResumability", bson.E{Key: "resumeToken", Value: startTok.doc()})
	if spec.fullDocumentBeforeChange != "off" {
		internal("internalAddPreImage", bson.E{Key: "fullDocumentBeforeChange", Value: spec.fullDocumentBeforeChange})
	}
	if spec.fullDocument != "default" {
		internal("internalAddPostImage", bson.E{Key: "fullDocument", Value: spec.fullDocument})
	}
	userStages := pl.Explain()
	if split && len(userStages) == 0 {
		out = append(out, withStats(bson.D{{Key: "$changeStreamSplitLargeEvent", Value: bson.D{}}}, nOut))
	}
	if startTok.tokenType == tokenEvent {
		internal("internalEnsureResumeTokenPresent", bson.E{Key: "resumeToken", Value: startTok.doc()})
	}
	if !spec.showExpanded {
		m := bson.D{{Key: "$match", Value: bson.D{{Key: "operationType", Value: bson.D{{Key: "$in", Value: classicOperationTypes}}}}}}
		out = append(out, withStats(m, cs.nEvents))
	}
	for _, s := range userStages {
		var d bson.D
		if err := bson.Unmarshal(s, &d); err != nil {
			return nil, err
		}
		out = append(out, withStats(d, nOut))
	}
	if split && len(userStages) > 0 {
		out = append(out, withStats(bson.D{{Key: "$changeStreamSplitLargeEvent", Value: bson.D{}}}, nOut))
	}
	return bson.D{{Key: "explainVersion", Value: "1"}, {Key: "stages", Value: out}}, nil
}

// startTS is the oplog timestamp the stream reads from.
func (cs *changeStream) startTS() bson.Timestamp {
	return cs.pbrt.ts
}

// nsFilter is the namespace condition of the stream's oplog scan: the
// collection's namespace, a regular expression on the database's, or nil
// for the deployment.
func (cs *changeStream) nsFilter() any {
	switch {
	case cs.db == "":
		return nil
	case cs.coll != "":
		return bson.D{{Key: "$in", Value: bson.A{cs.db + "." + cs.coll, cs.db + ".$cmd"}}}
	}
	return bson.Regex{Pattern: "^" + regexpQuote(cs.db) + `\.`}
}

// regexpQuote escapes the regular expression metacharacters of s.
func regexpQuote(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '.', '+', '*', '?', '(', ')', '|', '[', ']', '{', '}', '^', '$':
			out = append(out, '\\', c)
		default:
			out = append(out, c)
		}
	}
	return string(out)
}

// specDoc is the stream's $changeStream options as internalTransform
// shows them: the resume point and the options with their defaults.
func (cs *changeStream) specDoc() bson.D {
	s := cs.spec
	var d bson.D
	switch {
	case s.resumeAfter != nil:
		d = append(d, bson.E{Key: "resumeAfter", Value: s.resumeAfter.doc()})
	case s.startAfter != nil:
		d = append(d, bson.E{Key: "startAfter", Value: s.startAfter.doc()})
	default:
		d = append(d, bson.E{Key: "startAtOperationTime", Value: cs.startTS()})
	}
	d = append(d,
		bson.E{Key: "fullDocument", Value: s.fullDocument},
		bson.E{Key: "fullDocumentBeforeChange", Value: s.fullDocumentBeforeChange},
	)
	if s.allChanges {
		d = append(d, bson.E{Key: "allChangesForCluster", Value: true})
	}
	if s.showExpanded {
		d = append(d, bson.E{Key: "showExpandedEvents", Value: true})
	}
	return d
}
