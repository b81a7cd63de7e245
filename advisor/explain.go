package advisor

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// explainShapes runs a queryPlanner explain of the example of each of the
// top find and aggregate shapes (at most MaxExplain, I3).
func explainShapes(ctx context.Context, c *conn, p *plan, snap *Snapshot) {
	n := 0
	for _, sh := range snap.Shapes {
		if n >= p.o.MaxExplain || ctx.Err() != nil {
			return
		}
		var inner bson.D
		switch sh.Op {
		case "find":
			inner = bson.D{{Key: "find", Value: sh.Collection}, {Key: "filter", Value: orEmpty(sh.Filter)}}
			if sh.Sort != nil {
				inner = append(inner, bson.E{Key: "sort", Value: sh.Sort})
			}
			if sh.Hint != nil {
				inner = append(inner, bson.E{Key: "hint", Value: sh.Hint})
			}
		case "aggregate":
			pipe := bson.A{}
			for _, st := range sh.Pipeline {
				if len(st) == 1 && (st[0].Key == "$out" || st[0].Key == "$merge") {
					continue // explain never writes, but keep the pipeline read-only in form too
				}
				pipe = append(pipe, st)
			}
			inner = bson.D{{Key: "aggregate", Value: sh.Collection}, {Key: "pipeline", Value: pipe}, {Key: "cursor", Value: bson.D{}}}
		default:
			continue
		}
		n++
		reply, err := c.explainCmd(ctx, sh.DB, inner)
		if err != nil {
			snap.note("%s: explain of %s: %v", sh.NS, sh.Text, err)
			continue
		}
		sh.Explain = parsePlan(reply)
	}
}

// orEmpty returns d, or an empty document for nil.
func orEmpty(d bson.D) bson.D {
	if d == nil {
		return bson.D{}
	}
	return d
}

// parsePlan walks an explain reply in every shape MongoDB 7.0 answers
// (classic winningPlan, SBE queryPlan, aggregation stages[] with
// $cursor, shards[]) and keeps the winning plan's stages.
func parsePlan(reply bson.Raw) *Plan {
	p := &Plan{}
	walkExplain(reply, p, 0, false)
	return p
}

// walkExplain visits doc; inWinning is true under a winningPlan.
func walkExplain(doc bson.Raw, p *Plan, depth int, inWinning bool) {
	if depth > 64 {
		return
	}
	elems, err := doc.Elements()
	if err != nil {
		return
	}
	if inWinning {
		if st, ok := doc.Lookup("stage").StringValueOK(); ok {
			p.Stages = append(p.Stages, st)
			switch st {
			case "SORT":
				p.Sort = true
			case "COLLSCAN":
				p.Collscan = true
			case "IXSCAN", "EXPRESS_IXSCAN":
				if name, ok := doc.Lookup("indexName").StringValueOK(); ok {
					p.Indexes = appendNew(p.Indexes, name)
				}
			}
		}
	}
	for _, e := range elems {
		k := e.Key()
		switch k {
		case "rejectedPlans", "slotBasedPlan", "command", "serverInfo", "serverParameters":
			continue
		}
		under := inWinning || k == "winningPlan"
		v := e.Value()
		switch v.Type {
		case bson.TypeEmbeddedDocument:
			walkExplain(v.Document(), p, depth+1, under)
		case bson.TypeArray:
			vals, _ := v.Array().Values()
			for _, x := range vals {
				if sub, ok := x.DocumentOK(); ok {
					walkExplain(sub, p, depth+1, under)
				}
			}
		}
	}
}
