package command

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	register("configureFailPoint", &spec{run: runConfigureFailPoint, adminOnly: true, testOnly: true,
		help: "set a failpoint's mode and data (test commands only)"})
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
