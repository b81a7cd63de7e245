package command

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	register("replSetGetConfig", &spec{run: runReplSetGetConfig, adminOnly: true, help: "the replica set configuration"})
}

// replicaSetID identifies the one-member set; fixed, as the set is never
// reconfigured.
var replicaSetID = bson.ObjectID{0x66, 0x6f, 0x72, 0x6d, 0x77, 0x6f, 0x72, 0x6b, 0, 0, 0, 1}

// runReplSetGetConfig describes the one-member replica set the engine
// presents, in mongod 7.0's shape, so that mongosh's rs.conf() works.
// https://www.mongodb.com/docs/manual/reference/command/replSetGetConfig/
func runReplSetGetConfig(ctx context.Context, r *Request) (bson.D, error) {
	e := r.Env
	commitment := false
	if err := fields(r.Name, r.Body, func(k string, v bson.RawValue) error {
		switch k {
		case "commitmentStatus", "includeNewlyAdded":
			b, ok := v.BooleanOK()
			if !ok {
				return mongoerr.Newf(mongoerr.TypeMismatch, "BSON field 'replSetGetConfig.%s' is the wrong type '%s', expected type 'bool'", k, typeName(v.Type))
			}
			if k == "commitmentStatus" {
				commitment = b
			}
			return nil
		}
		return errUnknown
	}); err != nil {
		return nil, err
	}
	if e.Config.Standalone {
		return nil, mongoerr.New(mongoerr.NoReplicationEnabled, "not running with --replSet")
	}
	cfg := bson.D{
		{Key: "_id", Value: e.Config.SetName},
		{Key: "version", Value: int32(1)},
		{Key: "term", Value: int32(1)},
		{Key: "members", Value: bson.A{bson.D{
			{Key: "_id", Value: int32(0)},
			{Key: "host", Value: e.Config.Host},
			{Key: "arbiterOnly", Value: false},
			{Key: "buildIndexes", Value: true},
			{Key: "hidden", Value: false},
			{Key: "priority", Value: 1.0},
			{Key: "tags", Value: bson.D{}},
			{Key: "secondaryDelaySecs", Value: int64(0)},
			{Key: "votes", Value: int32(1)},
		}}},
		{Key: "protocolVersion", Value: int64(1)},
		{Key: "writeConcernMajorityJournalDefault", Value: true},
		{Key: "settings", Value: bson.D{
			{Key: "chainingAllowed", Value: true},
			{Key: "heartbeatIntervalMillis", Value: int32(2000)},
			{Key: "heartbeatTimeoutSecs", Value: int32(10)},
			{Key: "electionTimeoutMillis", Value: int32(10000)},
			{Key: "catchUpTimeoutMillis", Value: int32(-1)},
			{Key: "catchUpTakeoverDelayMillis", Value: int32(30000)},
			{Key: "getLastErrorModes", Value: bson.D{}},
			{Key: "getLastErrorDefaults", Value: bson.D{{Key: "w", Value: int32(1)}, {Key: "wtimeout", Value: int32(0)}}},
			{Key: "replicaSetId", Value: replicaSetID},
		}},
	}
	d := bson.D{{Key: "config", Value: cfg}}
	if commitment {
		d = append(d, bson.E{Key: "commitmentStatus", Value: true})
	}
	return d, nil
}
