package command

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	register("profile", &spec{run: runProfile, help: "set or read the database profiling level"})
}

// runProfile reads and sets the profiler of r.DB: {profile: -1|0|1|2,
// slowms, sampleRate, filter}. The level and filter belong to the
// database; slowms and sampleRate are server-wide, as in mongod. The reply
// holds the settings before the change: {was, slowms, sampleRate,
// filter?}. BadValue for a level outside -1..2, a sampleRate outside
// [0, 1] or a filter that does not compile.
// https://www.mongodb.com/docs/manual/reference/command/profile/
func runProfile(ctx context.Context, r *Request) (bson.D, error) {
	level, ok := asInt(r.Body.Index(0).Value())
	if !ok || level < -1 || level > 2 {
		return nil, mongoerr.New(mongoerr.BadValue, "Invalid profiling level")
	}
	var (
		slowms          *int64
		rate            *float64
		filter          bson.Raw
		haveFilter      bool
		filterUnsetting bool
	)
	err := fields("profile", r.Body, func(k string, v bson.RawValue) error {
		switch k {
		case "slowms":
			n, ok := asInt(v)
			if !ok {
				return mongoerr.FieldType("profile", k, typeName(v.Type), "int")
			}
			slowms = &n
		case "sampleRate":
			f, ok := numberOf(v)
			if !ok {
				return mongoerr.FieldType("profile", k, typeName(v.Type), "double")
			}
			if f < 0 || f > 1 {
				return mongoerr.New(mongoerr.BadValue, "'sampleRate' must be between 0.0 and 1.0 inclusive")
			}
			rate = &f
		case "filter":
			haveFilter = true
			if s, ok := v.StringValueOK(); ok && s == "unset" {
				filterUnsetting = true
				return nil
			}
			d, ok := v.DocumentOK()
			if !ok {
				return mongoerr.New(mongoerr.BadValue, "Expected an object, or the string 'unset'.")
			}
			filter = d
		default:
			return errUnknown
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var f *match.Filter
	if filter != nil {
		if f, err = match.Compile(filter); err != nil {
			return nil, err
		}
	}
	x := r.Env.ext()
	x.mu.Lock()
	defer x.mu.Unlock()
	cur := x.profile[r.DB]
	reply := bson.D{{Key: "was", Value: int32(cur.level)}, {Key: "slowms", Value: int32(x.slowMS)}, {Key: "sampleRate", Value: x.rate}}
	if cur.filter != nil {
		reply = append(reply, bson.E{Key: "filter", Value: cur.filter})
	}
	if level >= 0 {
		cur.level = int(level)
	}
	if haveFilter {
		cur.filter, cur.f = nil, nil
		if !filterUnsetting {
			cur.filter, cur.f = append(bson.Raw(nil), filter...), f
		}
	}
	x.profile[r.DB] = cur
	if slowms != nil {
		x.slowMS = *slowms
	}
	if rate != nil {
		x.rate = *rate
	}
	return reply, nil
}
