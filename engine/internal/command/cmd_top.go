package command

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func init() {
	register("top", &spec{run: runTop, adminOnly: true, help: "time and count of operations per collection"})
}

// runTop reports, per collection, the time (microseconds) and count of
// the operations run on it since the engine started.
// https://www.mongodb.com/docs/manual/reference/command/top/
func runTop(ctx context.Context, r *Request) (bson.D, error) {
	if err := noFields(r); err != nil {
		return nil, err
	}
	return bson.D{{Key: "totals", Value: r.Env.topTotals()}}, nil
}
