package advisor

import (
	"context"
	"errors"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// errBudget reports that the overall time budget is spent.
var errBudget = errors.New("advisor: time budget spent")

// conn sends the advisor's commands: each with maxTimeMS and Comment
// (I2), none past the deadline.
type conn struct {
	client   *mongo.Client
	deadline time.Time
	maxTime  time.Duration
}

// maxTimeMS returns the limit for the next command: MaxTime, or what is
// left of the budget if less.
func (c *conn) maxTimeMS() (int64, error) {
	left := time.Until(c.deadline)
	if left <= 0 {
		return 0, errBudget
	}
	return max(1, min(left, c.maxTime).Milliseconds()), nil
}

// withLimits appends maxTimeMS and comment to cmd.
func (c *conn) withLimits(cmd bson.D) (bson.D, error) {
	ms, err := c.maxTimeMS()
	if err != nil {
		return nil, err
	}
	out := append(bson.D{}, cmd...)
	return append(out, bson.E{Key: "maxTimeMS", Value: ms}, bson.E{Key: "comment", Value: Comment}), nil
}

// run sends cmd to database db and returns the reply.
func (c *conn) run(ctx context.Context, db string, cmd bson.D) (bson.Raw, error) {
	cmd, err := c.withLimits(cmd)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithDeadline(ctx, c.deadline)
	defer cancel()
	return c.client.Database(db).RunCommand(ctx, cmd).Raw()
}

// explainCmd sends an explain of cmd; maxTimeMS goes on the explain, as
// the server requires.
func (c *conn) explainCmd(ctx context.Context, db string, inner bson.D) (bson.Raw, error) {
	return c.run(ctx, db, bson.D{{Key: "explain", Value: inner}, {Key: "verbosity", Value: "queryPlanner"}})
}

// maxDocs bounds the documents read back from any one cursor.
const maxDocs = 20000

// aggregate runs pipeline on collection coll (or 1 for a database
// aggregation) and returns at most maxDocs results.
func (c *conn) aggregate(ctx context.Context, db string, coll any, pipeline bson.A) ([]bson.Raw, error) {
	return c.cursor(ctx, db, bson.D{
		{Key: "aggregate", Value: coll},
		{Key: "pipeline", Value: pipeline},
		{Key: "cursor", Value: bson.D{}},
	})
}

// cursor runs a cursor command and reads its documents, at most maxDocs.
func (c *conn) cursor(ctx context.Context, db string, cmd bson.D) ([]bson.Raw, error) {
	cmd, err := c.withLimits(cmd)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithDeadline(ctx, c.deadline)
	defer cancel()
	cur, err := c.client.Database(db).RunCommandCursor(ctx, cmd)
	if err != nil {
		return nil, err
	}
	defer cur.Close(context.WithoutCancel(ctx))
	var out []bson.Raw
	for len(out) < maxDocs && cur.Next(ctx) {
		out = append(out, append(bson.Raw{}, cur.Current...))
	}
	return out, cur.Err()
}
