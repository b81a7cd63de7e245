package command

import (
	"context"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	register("currentOp", &spec{run: runCurrentOp, adminOnly: true, help: "list the operations in progress"})
	register("killOp", &spec{run: runKillOp, adminOnly: true, help: "interrupt an operation in progress"})
}

// runCurrentOp lists the operations in progress as $currentOp does. $all
// adds idle connections; the command's other fields are a query filter
// over the entries.
// https://www.mongodb.com/docs/v7.0/reference/command/currentOp/
func runCurrentOp(ctx context.Context, r *Request) (bson.D, error) {
	var opts currentOpOptions
	filter := bson.D{}
	elems, _ := r.Body.Elements()
	for _, e := range elems[1:] {
		k, v := e.Key(), e.Value()
		switch {
		case k == "$all" || k == "$ownOps":
			b, ok := v.BooleanOK()
			if !ok {
				return nil, mongoerr.FieldType("currentOp", k, typeName(v.Type), "bool")
			}
			if k == "$all" {
				opts.idleConnections = b
			}
		case isGeneric(k):
		case k == "$db":
		default:
			filter = append(filter, bson.E{Key: k, Value: v})
		}
	}
	raw, err := bson.Marshal(filter)
	if err != nil {
		return nil, err
	}
	f, err := match.Compile(raw)
	if err != nil {
		return nil, err
	}
	inprog := bson.A{}
	for _, d := range r.Env.currentOps(opts) {
		if f.Match(d) {
			inprog = append(inprog, d)
		}
	}
	return bson.D{{Key: "inprog", Value: inprog}}, nil
}

// runKillOp interrupts the operation {op: <opid>}: it stops at its next
// check and answers Interrupted (11601). An unknown opid is not an error.
// https://www.mongodb.com/docs/v7.0/reference/command/killOp/
func runKillOp(ctx context.Context, r *Request) (bson.D, error) {
	v, err := r.Body.LookupErr("op")
	if err != nil {
		return nil, mongoerr.New(mongoerr.Code(40414), "BSON field 'killOp.op' is missing but a required field")
	}
	if !bsonkit.IsNumber(v.Type) {
		if s, ok := v.StringValueOK(); ok && strings.Contains(s, ":") {
			return nil, mongoerr.Newf(mongoerr.BadValue, "Invalid opid: %s", s)
		}
		return nil, mongoerr.FieldType("killOp", "op", typeName(v.Type), "int")
	}
	id, ok := bsonkit.ExactInt64(v)
	if !ok || id < 0 || id > 1<<31-1 {
		return nil, mongoerr.Newf(mongoerr.BadValue, "invalid op : %s", v.String())
	}
	r.Env.inprog.kill(int32(id))
	return bson.D{{Key: "info", Value: "attempting to kill op"}}, nil
}
