package command

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// Generic holds the arguments that every command accepts.
type Generic struct {
	DB               string
	LSID             bson.Raw
	TxnNumber        *int64
	MaxTimeMS        int64
	Comment          bson.RawValue
	WriteConcern     writeConcern
	ReadConcernLevel string
	APIStrict        bool
	// apiVersion, strictGiven and deprecGiven record which API
	// parameters came: apiStrict and apiDeprecationErrors need apiVersion.
	apiVersion, strictGiven, deprecGiven bool
	StartTransaction                     bool
	Autocommit                           *bool
	// startGiven and readConcernGiven record that the fields came.
	startGiven, readConcernGiven bool
	// AfterClusterTime and AtClusterTime are readConcern's, when given.
	AfterClusterTime, AtClusterTime *bson.Timestamp
}

type writeConcern struct {
	set   bool
	w     int64 // -1 for "majority"
	wTag  string
	unack bool
}

// genericFields are the generic command arguments, with a note on how each
// is handled. Fields not listed in parse are accepted and ignored because
// they only matter to sharded clusters or internal replication.
var genericFields = map[string]bool{
	"$db": true, "lsid": true, "txnNumber": true, "$clusterTime": true,
	"$readPreference": true, "readConcern": true, "writeConcern": true,
	"comment": true, "maxTimeMS": true, "apiVersion": true, "apiStrict": true,
	"apiDeprecationErrors": true, "autocommit": true, "startTransaction": true,
	"stmtId": true, "$audit": true, "$client": true, "$configServerState": true,
	"$oplogQueryData": true, "$queryOptions": true, "$replData": true,
	"mayBypassWriteBlocking": true, "clientOperationKey": true,
	"txnRetryCounter": true, "$configTime": true, "$topologyTime": true,
	"databaseVersion": true, "shardVersion": true, "maxTimeMSOpOnly": true,
	"usesDefaultMaxTimeMS": true,
}

func isGeneric(key string) bool { return genericFields[key] }

func (g *Generic) parse(body bson.Raw) error {
	elems, err := body.Elements()
	if err != nil {
		return mongoerr.Newf(mongoerr.InvalidBSON, "invalid command document: %v", err)
	}
	cmd := elems[0].Key()
	for _, e := range elems[1:] {
		v := e.Value()
		switch e.Key() {
		case "$db":
			s, ok := v.StringValueOK()
			if !ok {
				return mongoerr.FieldType(cmd, "$db", typeName(v.Type), "string")
			}
			g.DB = s
		case "lsid":
			d, ok := v.DocumentOK()
			if !ok {
				return mongoerr.FieldType(cmd, "lsid", typeName(v.Type), "object")
			}
			if _, err := d.LookupErr("id"); err != nil {
				return mongoerr.New(mongoerr.Code(40414), "BSON field 'OperationSessionInfo.lsid.id' is missing but a required field")
			}
			g.LSID = d
		case "txnNumber":
			n, ok := v.Int64OK()
			if !ok {
				return mongoerr.FieldType(cmd, "txnNumber", typeName(v.Type), "long")
			}
			if n < 0 {
				return mongoerr.Newf(mongoerr.BadValue, "TxnNumber cannot be negative")
			}
			g.TxnNumber = &n
		case "maxTimeMS":
			n, ok := asInt(v)
			if !ok {
				return mongoerr.New(mongoerr.BadValue, "maxTimeMS must be a number")
			}
			if n < 0 || n > math.MaxInt32 {
				return mongoerr.Newf(mongoerr.BadValue, "%d value for maxTimeMS is out of range [0, %d]", n, math.MaxInt32)
			}
			g.MaxTimeMS = n
		case "comment":
			g.Comment = v
		case "writeConcern":
			if err := g.WriteConcern.parse(cmd, v); err != nil {
				return err
			}
		case "readConcern":
			if err := g.parseReadConcern(cmd, v); err != nil {
				return err
			}
			g.readConcernGiven = true
		case "apiVersion":
			s, ok := v.StringValueOK()
			if !ok {
				return mongoerr.FieldType(cmd, "apiVersion", typeName(v.Type), "string")
			}
			if s != "1" {
				return mongoerr.Newf(mongoerr.APIVersionError, "API version must be \"1\"")
			}
			g.apiVersion = true
		case "apiStrict", "apiDeprecationErrors":
			b, ok := v.BooleanOK()
			if !ok {
				return mongoerr.FieldType(cmd, e.Key(), typeName(v.Type), "boolean")
			}
			if e.Key() == "apiStrict" {
				g.APIStrict, g.strictGiven = b, true
			} else {
				g.deprecGiven = true
			}
		case "startTransaction":
			g.StartTransaction, _ = v.BooleanOK()
			g.startGiven = true
		case "autocommit":
			b, _ := v.BooleanOK()
			g.Autocommit = &b
		}
	}
	if !g.apiVersion && (g.strictGiven || g.deprecGiven) {
		flag := "apiStrict"
		if !g.strictGiven {
			flag = "apiDeprecationErrors"
		}
		return mongoerr.Newf(mongoerr.Code(4886600), "Provided %s without passing apiVersion", flag)
	}
	return nil
}

func (w *writeConcern) parse(cmd string, v bson.RawValue) error {
	d, ok := v.DocumentOK()
	if !ok {
		return mongoerr.FieldType(cmd, "writeConcern", typeName(v.Type), "object")
	}
	w.set = true
	w.w = 1
	elems, _ := d.Elements()
	for _, e := range elems {
		ev := e.Value()
		switch e.Key() {
		case "w":
			if s, ok := ev.StringValueOK(); ok {
				if s == "majority" {
					w.w = -1
				} else {
					w.wTag = s
				}
				continue
			}
			n, ok := asInt(ev)
			if !ok {
				return mongoerr.New(mongoerr.FailedToParse, "w has to be a number or a string")
			}
			if n < 0 || n > 50 {
				return mongoerr.New(mongoerr.FailedToParse, "w has to be a non-negative number and not greater than 50")
			}
			w.w = n
			w.unack = n == 0
		case "j", "fsync":
			if _, ok := ev.BooleanOK(); !ok {
				if _, ok := asInt(ev); !ok {
					return mongoerr.Newf(mongoerr.FailedToParse, "%s must be a boolean or a number", e.Key())
				}
			}
		case "wtimeout", "wtimeoutMS":
			if _, ok := asInt(ev); !ok {
				return mongoerr.New(mongoerr.FailedToParse, "wtimeout must be a number")
			}
		case "provenance", "getLastError":
		default:
			return mongoerr.Newf(mongoerr.UnknownBSONField, "BSON field 'writeConcern.%s' is an unknown field.", e.Key())
		}
	}
	return nil
}

// concernError returns the writeConcernError a single node reports for w,
// or nil when w can be satisfied.
func (w writeConcern) concernError() bson.D {
	if w.wTag != "" {
		return bson.D{{Key: "code", Value: int32(mongoerr.UnknownReplWriteConcern)}, {Key: "codeName", Value: mongoerr.UnknownReplWriteConcern.Name()}, {Key: "errmsg", Value: "No write concern mode named '" + w.wTag + "' found in replica set configuration"}}
	}
	if w.w > 1 {
		return bson.D{{Key: "code", Value: int32(mongoerr.UnsatisfiableWriteConcern)}, {Key: "codeName", Value: mongoerr.UnsatisfiableWriteConcern.Name()}, {Key: "errmsg", Value: "Not enough data-bearing nodes"}}
	}
	return nil
}

func (g *Generic) parseReadConcern(cmd string, v bson.RawValue) error {
	d, ok := v.DocumentOK()
	if !ok {
		return mongoerr.FieldType(cmd, "readConcern", typeName(v.Type), "object")
	}
	elems, _ := d.Elements()
	afterOpTime := false
	for _, e := range elems {
		switch e.Key() {
		case "level":
			s, ok := e.Value().StringValueOK()
			if !ok {
				return mongoerr.FieldType("readConcern", "level", typeName(e.Value().Type), "string")
			}
			switch s {
			case "local", "majority", "linearizable", "available", "snapshot":
				// A single node reads its latest committed data, which
				// satisfies every level; cursors read a snapshot.
				g.ReadConcernLevel = s
			default:
				return mongoerr.Newf(mongoerr.FailedToParse, "Enumeration value '%s' for field 'readConcern.level' is not a valid value.", s)
			}
		case "afterClusterTime":
			t, i, ok := e.Value().TimestampOK()
			if !ok {
				return mongoerr.FieldType("readConcern", "afterClusterTime", typeName(e.Value().Type), "timestamp")
			}
			g.AfterClusterTime = &bson.Timestamp{T: t, I: i}
		case "atClusterTime":
			t, i, ok := e.Value().TimestampOK()
			if !ok {
				return mongoerr.FieldType("readConcern", "atClusterTime", typeName(e.Value().Type), "timestamp")
			}
			g.AtClusterTime = &bson.Timestamp{T: t, I: i}
		case "afterOpTime":
			// Every committed write is visible to the next read on one node.
			afterOpTime = true
		case "provenance":
		default:
			return mongoerr.Newf(mongoerr.UnknownBSONField, "BSON field 'readConcern.%s' is an unknown field.", e.Key())
		}
	}
	return g.checkAfterClusterTime(afterOpTime)
}

// checkAfterClusterTime applies mongod's ReadConcernArgs rules on
// afterClusterTime once readConcern is parsed.
func (g *Generic) checkAfterClusterTime(afterOpTime bool) error {
	if g.AfterClusterTime == nil {
		return nil
	}
	if afterOpTime {
		return mongoerr.New(mongoerr.InvalidOptions, "Can not specify both afterClusterTime and afterOpTime")
	}
	if g.AtClusterTime != nil {
		return mongoerr.New(mongoerr.InvalidOptions, "Specifying a timestamp for readConcern snapshot in a causally consistent session is not allowed. See https://docs.mongodb.com/manual/core/read-isolation-consistency-recency/#causal-consistency")
	}
	switch g.ReadConcernLevel {
	case "", "local", "majority", "snapshot":
	default:
		return mongoerr.New(mongoerr.InvalidOptions, "afterClusterTime field can be set only if level is equal to majority, local, or snapshot")
	}
	if g.AfterClusterTime.T == 0 && g.AfterClusterTime.I == 0 {
		return mongoerr.New(mongoerr.InvalidOptions, "afterClusterTime cannot be a null timestamp")
	}
	return nil
}

// asInt returns v as an integer when it is a number with an integral value.
func asInt(v bson.RawValue) (int64, bool) { return bsonkit.ExactInt64(v) }

// isNumber reports whether v is a BSON number.
func isNumber(v bson.RawValue) bool { return bsonkit.IsNumber(v.Type) }

// asBool interprets v the way mongod's IDL "safeBool" does: booleans and
// numbers (non-zero is true).
func asBool(v bson.RawValue) (bool, bool) {
	switch v.Type {
	case bson.TypeBoolean:
		return v.Boolean(), true
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
		n, ok := asFloat(v)
		return n != 0, ok
	}
	return false, false
}

func asFloat(v bson.RawValue) (float64, bool) { return bsonkit.Float64(v) }

// typeName returns mongod's name for t as used in error messages.
func typeName(t bson.Type) string { return bsonkit.TypeName(t) }
