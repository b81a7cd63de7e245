package scripttest

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// isWrite reports whether command name prints its reply as a write reply.
func isWrite(name string) bool {
	switch name {
	case "insert", "update", "delete", "findAndModify", "findandmodify":
		return true
	}
	return false
}

// writeFields are the reply fields of a write command that print on the
// first line, in this order. Everything else (ok, electionId, opTime,
// $clusterTime, operationTime) varies between deployments.
var writeFields = []string{"n", "nModified", "upserted", "lastErrorObject", "value"}

// plainKeys name the counts and flags that print as bare JSON when they
// are an int32 or a boolean, as mongod sends them; any other type prints
// in canonical Extended JSON so that a wrong type shows.
var plainKeys = map[string]bool{"n": true, "nModified": true, "index": true, "updatedExisting": true}

// formatWrite renders the reply of a write command: one line with the
// fields of writeFields that are present, then a line per writeErrors
// entry and one for a writeConcernError.
func (r *runner) formatWrite(reply bson.Raw) (string, error) {
	var sb strings.Builder
	sb.WriteByte('{')
	first := true
	for _, k := range writeFields {
		v, err := reply.LookupErr(k)
		if err != nil {
			continue
		}
		if !first {
			sb.WriteString(", ")
		}
		first = false
		if err := r.writeField(&sb, k, v); err != nil {
			return "", err
		}
	}
	sb.WriteString("}\n")
	if v, err := reply.LookupErr("writeErrors"); err == nil {
		arr, ok := v.ArrayOK()
		if !ok {
			return "", fmt.Errorf("writeErrors is a %s", v.Type)
		}
		vals, err := arr.Values()
		if err != nil {
			return "", err
		}
		for _, e := range vals {
			d, ok := e.DocumentOK()
			if !ok {
				return "", fmt.Errorf("writeErrors entry is a %s", e.Type)
			}
			idx, _ := d.Lookup("index").AsInt64OK()
			fmt.Fprintf(&sb, "writeError %d %s\n", idx, errorText(d))
			if info, err := d.LookupErr("errInfo"); err == nil && r.errInfo {
				s, err := r.canonicalValue(info)
				if err != nil {
					return "", err
				}
				sb.WriteString("errInfo " + s + "\n")
			}
		}
	}
	if v, err := reply.LookupErr("writeConcernError"); err == nil {
		d, ok := v.DocumentOK()
		if !ok {
			return "", fmt.Errorf("writeConcernError is a %s", v.Type)
		}
		fmt.Fprintf(&sb, "writeConcernError %s\n", errorText(d))
	}
	return sb.String(), nil
}

// writeField renders one field of a write reply: counts and flags bare,
// the upserted array and lastErrorObject field by field, the rest (ids,
// documents) canonical.
func (r *runner) writeField(sb *strings.Builder, k string, v bson.RawValue) error {
	key, _ := json.Marshal(k)
	sb.Write(key)
	sb.WriteString(": ")
	switch {
	case plainKeys[k] && v.Type == bson.TypeInt32:
		sb.WriteString(strconv.Itoa(int(v.Int32())))
	case plainKeys[k] && v.Type == bson.TypeBoolean:
		sb.WriteString(strconv.FormatBool(v.Boolean()))
	case k == "lastErrorObject" && v.Type == bson.TypeEmbeddedDocument:
		return r.writeObject(sb, v.Document())
	case k == "upserted" && v.Type == bson.TypeArray:
		vals, err := v.Array().Values()
		if err != nil {
			return err
		}
		sb.WriteByte('[')
		for i, e := range vals {
			if i > 0 {
				sb.WriteString(", ")
			}
			if d, ok := e.DocumentOK(); ok {
				if err := r.writeObject(sb, d); err != nil {
					return err
				}
				continue
			}
			s, err := r.canonicalValue(e)
			if err != nil {
				return err
			}
			sb.WriteString(s)
		}
		sb.WriteByte(']')
	default:
		s, err := r.canonicalValue(v)
		if err != nil {
			return err
		}
		sb.WriteString(s)
	}
	return nil
}

// writeObject renders a reply sub-document field by field.
func (r *runner) writeObject(sb *strings.Builder, d bson.Raw) error {
	elems, err := d.Elements()
	if err != nil {
		return err
	}
	sb.WriteByte('{')
	for i, e := range elems {
		if i > 0 {
			sb.WriteString(", ")
		}
		if err := r.writeField(sb, e.Key(), e.Value()); err != nil {
			return err
		}
	}
	sb.WriteByte('}')
	return nil
}

// canonicalValue renders one value, normalized, in canonical Extended
// JSON.
func (r *runner) canonicalValue(v bson.RawValue) (string, error) {
	b, err := bson.MarshalExtJSON(wrap(r.norm.value(v)), true, false)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(strings.TrimPrefix(string(b), `{"v":`), "}"), nil
}

// canonicalDoc renders a document, normalized, in canonical Extended JSON.
func (r *runner) canonicalDoc(doc bson.Raw) (string, error) {
	b, err := bson.MarshalExtJSON(r.norm.doc(doc), true, false)
	return string(b), err
}

// errorText renders an error document ({code, codeName?, errmsg}) as
// "<codeName>(<code>): <errmsg>", naming the code when the document does
// not.
func errorText(d bson.Raw) string {
	code, _ := d.Lookup("code").AsInt64OK()
	name, _ := d.Lookup("codeName").StringValueOK()
	msg, _ := d.Lookup("errmsg").StringValueOK()
	return errorString(int32(code), name, msg)
}

func errorString(code int32, name, msg string) string {
	if name == "" {
		name = CodeName(code)
	}
	s := fmt.Sprintf("%s(%d)", name, code)
	if msg != "" {
		s += ": " + msg
	}
	return s
}

// FormatError renders a failed command as scripts expect it:
//
//	error <codeName>(<code>): <errmsg>
//
// for a mongo.CommandError, a line "writeError <index> …" per write error
// of a mongo.WriteException, and "error <text>" for anything else.
func FormatError(err error) string {
	var ce mongo.CommandError
	if errors.As(err, &ce) {
		return "error " + errorString(ce.Code, ce.Name, ce.Message)
	}
	var we mongo.WriteException
	if errors.As(err, &we) && len(we.WriteErrors) > 0 {
		var ls []string
		for _, e := range we.WriteErrors {
			ls = append(ls, fmt.Sprintf("writeError %d %s", e.Index, errorString(int32(e.Code), "", e.Message)))
		}
		return strings.Join(ls, "\n")
	}
	return "error " + err.Error()
}

// errorLine matches an error line of the output up to its message.
var errorLine = regexp.MustCompile(`^((?:error|writeError \d+|writeConcernError) [A-Za-z0-9_]+\(-?\d+\)): `)

// elideMessages drops the message from each error line of actual whose
// expected counterpart (the same line up to the message) is written
// without one, so a script checks a message only where it states it:
// "error BadValue(2)" accepts any message, "error BadValue(2): x" only x.
func elideMessages(actual, expected string) string {
	if !strings.Contains(actual, ": ") {
		return actual
	}
	bare := map[string]bool{}
	for _, l := range strings.Split(expected, "\n") {
		if strings.HasSuffix(l, ")") {
			bare[l] = true
		}
	}
	if len(bare) == 0 {
		return actual
	}
	ls := strings.Split(actual, "\n")
	for i, l := range ls {
		m := errorLine.FindStringSubmatch(l)
		if m != nil && bare[m[1]] {
			ls[i] = m[1]
		}
	}
	return strings.Join(ls, "\n")
}

// commandErrInfo renders the errInfo of a failed command as a line
// "errInfo <canonical Extended JSON>" when the directive asked for it.
func (r *runner) commandErrInfo(err error) string {
	var ce mongo.CommandError
	if !r.errInfo || !errors.As(err, &ce) {
		return ""
	}
	info, e := ce.Raw.LookupErr("errInfo")
	if e != nil {
		return ""
	}
	s, e := r.canonicalValue(info)
	if e != nil {
		return ""
	}
	return "errInfo " + s + "\n"
}
