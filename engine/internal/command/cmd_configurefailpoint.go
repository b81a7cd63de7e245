package command

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	register("configureFailPoint", &spec{run: runConfigureFailPoint, adminOnly: true, testOnly: true,
		help: "set a failpoint's mode and data (test commands only)"})
	register("waitForFailPoint", &spec{run: runWaitForFailPoint, adminOnly: true, testOnly: true,
		help: "wait until a failpoint has fired a number of times (test commands only)"})
}

// runConfigureFailPoint sets a failpoint's mode and data and answers
// count, the times it fired before.
// https://github.com/mongodb/mongo/wiki/The-%22failCommand%22-fail-point
func runConfigureFailPoint(ctx context.Context, r *Request) (bson.D, error) {
	// mongod reads the name with BSONElement::str (empty unless a
	// string) and, like any BasicCommand, ignores fields it does not use.
	name, _ := r.Body.Index(0).Value().StringValueOK()
	fp := r.Env.fail.byName[name]
	if fp == nil {
		return nil, mongoerr.Newf(mongoerr.FailPointSetFailed, "%s not found", name)
	}
	cfg, err := parseFailPointConfig(r.Body)
	if err != nil {
		return nil, err
	}
	count := fp.set(cfg)
	r.Env.log.Warn("Set failpoint", "failPointName", name, "mode", r.Body.Lookup("mode").String(), "data", r.Body.Lookup("data").String())
	return bson.D{{Key: "count", Value: count}}, nil
}

// runWaitForFailPoint waits until a failpoint has fired timesEntered
// times in all (configureFailPoint's count counts the same), within the
// command's required maxTimeMS.
func runWaitForFailPoint(ctx context.Context, r *Request) (bson.D, error) {
	name, ok := r.Body.Index(0).Value().StringValueOK()
	if !ok {
		return nil, mongoerr.Newf(mongoerr.TypeMismatch, "BSON field 'waitForFailPoint.waitForFailPoint' is the wrong type '%s', expected type 'string'", typeName(r.Body.Index(0).Value().Type))
	}
	var target int64
	seen := false
	if err := fields(r.Name, r.Body, func(k string, v bson.RawValue) error {
		if k != "timesEntered" {
			return errUnknown
		}
		n, ok := asInt(v)
		if !ok || !isNumber(v) {
			return mongoerr.Newf(mongoerr.TypeMismatch, "BSON field 'waitForFailPoint.timesEntered' is the wrong type '%s', expected type 'long'", typeName(v.Type))
		}
		target, seen = n, true
		return nil
	}); err != nil {
		return nil, err
	}
	if !seen {
		return nil, mongoerr.New(mongoerr.Code(40414), "BSON field 'waitForFailPoint.timesEntered' is missing but a required field")
	}
	if r.Generic.MaxTimeMS <= 0 {
		return nil, mongoerr.New(mongoerr.FailedToParse, "Missing maxTimeMS")
	}
	fp := r.Env.fail.byName[name]
	if fp == nil {
		return nil, mongoerr.Newf(mongoerr.FailPointSetFailed, "%s not found", name)
	}
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		fp.mu.Lock()
		n := fp.timesEntered
		fp.mu.Unlock()
		if n >= target {
			return bson.D{}, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}
