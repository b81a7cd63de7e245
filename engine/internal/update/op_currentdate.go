package update

import (
	"encoding/binary"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// opCurrentDate is $currentDate: it sets the field to the update's time as
// a date (true, false or {$type: "date"}) or as a timestamp
// ({$type: "timestamp"}). It always counts as a change.
// Manual: https://www.mongodb.com/docs/manual/reference/operator/update/currentDate/
type opCurrentDate struct{ timestamp bool }

// newCurrentDate parses the operand of $currentDate; it answers BadValue
// for anything but a boolean or a {$type: "date"|"timestamp"} document.
func newCurrentDate(v bson.RawValue) (*opCurrentDate, error) {
	switch v.Type {
	case bson.TypeBoolean:
		return &opCurrentDate{}, nil
	case bson.TypeEmbeddedDocument:
		elems, err := bson.Raw(v.Value).Elements()
		if err != nil {
			return nil, mongoerr.New(mongoerr.InvalidBSON, "invalid $currentDate operand")
		}
		found, ts := false, false
		for _, el := range elems {
			if el.Key() != "$type" {
				return nil, mongoerr.Newf(mongoerr.BadValue, "Unrecognized $currentDate option: %s", el.Key())
			}
			if s, ok := el.Value().StringValueOK(); ok {
				switch s {
				case "date":
					found, ts = true, false
				case "timestamp":
					found, ts = true, true
				}
			}
		}
		if !found {
			return nil, mongoerr.New(mongoerr.BadValue,
				"The '$type' string field is required to be 'date' or 'timestamp': {$currentDate: {field : {$type: 'date'}}}")
		}
		return &opCurrentDate{timestamp: ts}, nil
	}
	return nil, mongoerr.Newf(mongoerr.BadValue,
		"%s is not valid type for $currentDate. Please use a boolean ('true') or a $type expression ({$type: 'timestamp/date'}).",
		typeName(v.Type))
}

func (o *opCurrentDate) value(c *applyCtx) bson.RawValue {
	if o.timestamp {
		c.tsInc++
		b := binary.LittleEndian.AppendUint32(nil, c.tsInc)
		b = binary.LittleEndian.AppendUint32(b, uint32(c.now.Unix()))
		return bson.RawValue{Type: bson.TypeTimestamp, Value: b}
	}
	ms := c.now.UnixMilli()
	return bson.RawValue{Type: bson.TypeDateTime, Value: binary.LittleEndian.AppendUint64(nil, uint64(ms))}
}

func (o *opCurrentDate) updateExisting(c *applyCtx, e *elem, _ string) (bool, error) {
	e.set(o.value(c))
	return true, nil
}

func (o *opCurrentDate) create(c *applyCtx, e *elem) (bool, error) {
	e.set(o.value(c))
	return true, nil
}
