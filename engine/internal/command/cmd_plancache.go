package command

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/order"
	"github.com/formworkdb/formwork/engine/internal/projection"
)

func init() {
	register("planCacheClear", &spec{run: runPlanCacheClear, help: "drop cached query plans of a collection"})
}

// runPlanCacheClear drops the cached plans of a collection: all of them,
// or those of one query shape when query (with optional sort and
// projection) is given. A collection that does not exist has nothing to
// clear. BadValue answers sort or projection without query, and a query,
// sort or projection that is not a document; an invalid one gets the error
// find would give. Index builds and drops need no planCacheClear: they
// publish a new catalog entry, which evicts the collection's plans.
// https://www.mongodb.com/docs/manual/reference/command/planCacheClear/
func runPlanCacheClear(_ context.Context, r *Request) (bson.D, error) {
	name, err := collectionName(r)
	if err != nil {
		return nil, err
	}
	var filter, sortSpec, projSpec bson.Raw
	hasQuery := false
	err = fields("planCacheClear", r.Body, func(k string, v bson.RawValue) error {
		switch k {
		case "query":
			hasQuery = true
			d, ok := v.DocumentOK()
			if !ok {
				return mongoerr.New(mongoerr.BadValue, "required field query must be an object")
			}
			filter = d
		case "sort":
			d, ok := v.DocumentOK()
			if !ok {
				return mongoerr.New(mongoerr.BadValue, "optional field sort must be an object")
			}
			sortSpec = d
		case "projection":
			d, ok := v.DocumentOK()
			if !ok {
				return mongoerr.New(mongoerr.BadValue, "optional field projection must be an object")
			}
			projSpec = d
		case "collation":
			return checkCollation(v)
		default:
			return errUnknown
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ns := r.DB + "." + name
	planner := r.Env.ext().planner
	if !hasQuery {
		if sortSpec != nil || projSpec != nil {
			return nil, mongoerr.New(mongoerr.BadValue, "sort or projection provided without query")
		}
		planner.ClearCache(ns)
		return bson.D{}, nil
	}
	f, err := match.Compile(filter)
	if err != nil {
		return nil, err
	}
	if len(sortSpec) <= 5 {
		sortSpec = nil
	} else if _, err := order.Compile(sortSpec); err != nil {
		return nil, err
	}
	if len(projSpec) <= 5 {
		projSpec = nil
	} else if _, err := projection.Compile(projSpec); err != nil {
		// planCacheClear takes no let (its fields are query, sort,
		// projection and collation; any other is unknown), so a computed
		// field sees only the system variables, as in mongod, which
		// canonicalizes the shape without command variables.
		return nil, err
	}
	planner.ClearShape(ns, f, sortSpec, projSpec)
	return bson.D{}, nil
}
