package mongoerr

import (
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Error is a MongoDB error: a code, its codeName and a message, plus any
// extra fields the reply carries beside them (keyPattern and keyValue for
// DuplicateKey, errInfo for DocumentValidationFailure). Values are immutable
// once returned.
type Error struct {
	Code Code
	Msg  string
	// Extra holds additional reply fields in the order they are sent.
	Extra bson.D
}

// New returns an *Error with code c and message msg.
func New(c Code, msg string) *Error { return &Error{Code: c, Msg: msg} }

// Newf returns an *Error with code c and a formatted message.
func Newf(c Code, format string, args ...any) *Error {
	return &Error{Code: c, Msg: fmt.Sprintf(format, args...)}
}

// Error implements the error interface in mongod's log style.
func (e *Error) Error() string {
	return fmt.Sprintf("%s (%d): %s", e.Code.Name(), int32(e.Code), e.Msg)
}

// With returns a copy of e with the extra reply field k set to v.
func (e *Error) With(k string, v any) *Error {
	c := *e
	c.Extra = append(append(bson.D(nil), e.Extra...), bson.E{Key: k, Value: v})
	return &c
}

// As returns err as an *Error. Errors that are not MongoDB errors become
// InternalError with err's text, so nothing unknown reaches a client
// without a code.
func As(err error) *Error {
	if err == nil {
		return nil
	}
	var me *Error
	if errors.As(err, &me) {
		return me
	}
	return &Error{Code: InternalError, Msg: err.Error()}
}

// Is reports whether err is a MongoDB error with code c.
func Is(err error, c Code) bool {
	var me *Error
	return errors.As(err, &me) && me.Code == c
}

// Reply returns the command reply document for e:
// {ok: 0, errmsg, code, codeName, ...Extra}.
func (e *Error) Reply() bson.D {
	d := bson.D{
		{Key: "ok", Value: 0.0},
		{Key: "errmsg", Value: e.Msg},
		{Key: "code", Value: int32(e.Code)},
		{Key: "codeName", Value: e.Code.Name()},
	}
	return append(d, e.Extra...)
}

// WriteError is one failed item of a write batch, reported in writeErrors
// with the item's index in the batch.
type WriteError struct {
	Index int
	Err   *Error
}

// Doc returns the writeErrors entry: {index, code, codeName?, errmsg, ...}.
// mongod omits codeName in writeErrors; so does Doc.
func (w WriteError) Doc() bson.D {
	d := bson.D{
		{Key: "index", Value: int32(w.Index)},
		{Key: "code", Value: int32(w.Err.Code)},
	}
	d = append(d, w.Err.Extra...)
	return append(d, bson.E{Key: "errmsg", Value: w.Err.Msg})
}

// UnknownField returns the IDL error mongod sends for a field it does not
// know in command cmd: "BSON field 'cmd.field' is an unknown field."
func UnknownField(cmd, field string) *Error {
	return Newf(UnknownBSONField, "BSON field '%s.%s' is an unknown field.", cmd, field)
}

// FieldType returns the IDL TypeMismatch error for a command field of the
// wrong BSON type.
func FieldType(cmd, field, got, want string) *Error {
	return Newf(TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected type '%s'", cmd, field, got, want)
}
