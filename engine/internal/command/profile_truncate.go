package command

import (
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// profileMaxElement is mongod's appendMaxElementSize: a command or
// originatingCommand larger than 50 KiB is logged abbreviated.
const profileMaxElement = 50 * 1024

// maxPrintDepth bounds the nesting truncateForProfile prints.
const maxPrintDepth = 200

// truncateForProfile returns cmd as an entry shows it: itself when its
// BSON is at most 50 KiB, else mongod's {$truncated: s, comment: c}
// where s is the command without its comment printed in the server's
// shell-like form, cut to 50 KiB with its last three bytes "...", so
// that a bulk insert does not flush the capped system.profile.
//
// Divergence: values of types other than strings, numbers, booleans,
// null, ObjectIds, dates, documents and arrays print as relaxed
// Extended JSON, not as mongod's BSONElement::toString does.
func truncateForProfile(cmd any) any {
	raw, ok := cmd.(bson.Raw)
	if !ok {
		b, err := bson.Marshal(cmd)
		if err != nil {
			return cmd
		}
		raw = b
	}
	if len(raw) <= profileMaxElement {
		return cmd
	}
	var sb strings.Builder
	printDoc(&sb, raw, false, 0, "comment")
	s := sb.String()
	if len(s) > profileMaxElement {
		s = s[:profileMaxElement-3] + "..."
	}
	out := bson.D{{Key: "$truncated", Value: s}}
	if c, err := raw.LookupErr("comment"); err == nil {
		out = append(out, bson.E{Key: "comment", Value: c})
	}
	return out
}

// printDoc writes d as mongod's BSONObj::toString does, stopping once
// the output passes the truncation size; skip names a top-level field
// left out.
func printDoc(sb *strings.Builder, d bson.Raw, isArray bool, depth int, skip string) {
	open, close := "{", "}"
	if isArray {
		open, close = "[", "]"
	}
	els, _ := d.Elements()
	if len(els) == 0 {
		sb.WriteString(open + close)
		return
	}
	sb.WriteString(open + " ")
	first := true
	for _, el := range els {
		if sb.Len() > profileMaxElement {
			return
		}
		if depth == 0 && skip != "" && el.Key() == skip {
			continue
		}
		if !first {
			sb.WriteString(", ")
		}
		first = false
		if !isArray {
			sb.WriteString(el.Key() + ": ")
		}
		printValue(sb, el.Value(), depth+1)
	}
	sb.WriteString(" " + close)
}

// printValue writes one value for printDoc.
func printValue(sb *strings.Builder, v bson.RawValue, depth int) {
	switch v.Type {
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		if depth > maxPrintDepth {
			sb.WriteString("...")
			return
		}
		printDoc(sb, v.Value, v.Type == bson.TypeArray, depth, "")
	case bson.TypeString:
		sb.WriteString(strconv.Quote(v.StringValue()))
	case bson.TypeInt32:
		sb.WriteString(strconv.Itoa(int(v.Int32())))
	case bson.TypeInt64:
		sb.WriteString(strconv.FormatInt(v.Int64(), 10))
	case bson.TypeDouble:
		sb.WriteString(strconv.FormatFloat(v.Double(), 'g', -1, 64))
	case bson.TypeBoolean:
		sb.WriteString(strconv.FormatBool(v.Boolean()))
	case bson.TypeNull:
		sb.WriteString("null")
	case bson.TypeObjectID:
		sb.WriteString("ObjectId('" + v.ObjectID().Hex() + "')")
	case bson.TypeDateTime:
		sb.WriteString("new Date(" + strconv.FormatInt(v.DateTime(), 10) + ")")
	default:
		sb.WriteString(v.String())
	}
}
