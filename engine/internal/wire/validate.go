package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// maxNesting is mongod's maxBSONDepth (200): the top-level document is at
// depth 0 and a document or array nested deeper than maxNesting is
// refused on receipt with Overflow, as validateBSON does.
const maxNesting = 200

// errTooDeep is mongod's message for a document nested past maxNesting.
var errTooDeep = errors.New("BSONObj exceeds maximum nested object depth")

// frame is one open (sub)document of validate's explicit stack: what
// remains of its elements.
type frame struct {
	rest []byte // the unread elements, terminating NUL excluded
}

// validate checks doc completely: every nested document, array and
// code-with-scope carries a length that fits, its elements, and its
// terminating NUL; strings and keys are terminated; nesting stays within
// maxNesting. It walks with an explicit stack, so a deep document costs no
// goroutine stack. The driver's bsoncore.Document.Validate checks only the
// outer document's elements' lengths, so a nested document without its
// terminator would otherwise pass and later be re-encoded.
func validate(doc []byte) error {
	n, err := docHeader(doc)
	if err != nil {
		return err
	}
	if n != len(doc) {
		return errors.New("trailing bytes after document")
	}
	// The first levels live on the goroutine's stack: validating the
	// documents of an insertMany then allocates nothing.
	var buf [8]frame
	stack := append(buf[:0], frame{rest: doc[4 : n-1]})
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if len(top.rest) == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		t := top.rest[0]
		k := bytes.IndexByte(top.rest[1:], 0)
		if k < 0 {
			return errors.New("unterminated field name")
		}
		val := top.rest[k+2:]
		switch t {
		case 0x03, 0x04: // document, array
			if len(stack) > maxNesting {
				return errTooDeep
			}
			size, err := docHeader(val)
			if err != nil {
				return err
			}
			top.rest = val[size:]
			stack = append(stack, frame{rest: val[4 : size-1]})
		case 0x0F: // code with scope: int32 total, string, document
			if len(stack) > maxNesting {
				return errTooDeep
			}
			if len(val) < 4 {
				return errors.New("code with scope too short")
			}
			total := int(int32(binary.LittleEndian.Uint32(val)))
			if total < 14 || total > len(val) {
				return errors.New("code with scope length is invalid")
			}
			s, err := stringLength(val[4:total])
			if err != nil {
				return err
			}
			scope := val[4+s : total]
			size, err := docHeader(scope)
			if err != nil {
				return err
			}
			if size != len(scope) {
				return errors.New("code with scope length does not match its parts")
			}
			top.rest = val[total:]
			stack = append(stack, frame{rest: scope[4 : size-1]})
		default:
			size, err := valueLength(t, val)
			if err != nil {
				return err
			}
			top.rest = val[size:]
		}
	}
	return nil
}

// docHeader checks the length and terminating NUL of the document at the
// start of b and returns its length.
func docHeader(b []byte) (int, error) {
	if len(b) < 5 {
		return 0, errors.New("document too short")
	}
	n := int(int32(binary.LittleEndian.Uint32(b)))
	if n < 5 || n > len(b) {
		return 0, fmt.Errorf("document length %d is invalid", n)
	}
	if b[n-1] != 0 {
		return 0, errors.New("document is missing its terminating NUL byte")
	}
	return n, nil
}

// valueLength returns the length of the scalar value of type t at the
// start of b; validate handles the nested types itself.
func valueLength(t byte, b []byte) (int, error) {
	need := func(n int) (int, error) {
		if len(b) < n {
			return 0, errors.New("value runs past the end of its document")
		}
		return n, nil
	}
	switch t {
	case 0x06, 0x0A, 0x7F, 0xFF: // undefined, null, maxKey, minKey
		return 0, nil
	case 0x08: // bool
		if len(b) < 1 || b[0] > 1 {
			return 0, errors.New("invalid boolean value")
		}
		return 1, nil
	case 0x10: // int32
		return need(4)
	case 0x01, 0x09, 0x11, 0x12: // double, date, timestamp, int64
		return need(8)
	case 0x07: // ObjectId
		return need(12)
	case 0x13: // decimal128
		return need(16)
	case 0x02, 0x0D, 0x0E: // string, code, symbol
		return stringLength(b)
	case 0x05: // binary
		if len(b) < 5 {
			return 0, errors.New("binary value too short")
		}
		l := int(int32(binary.LittleEndian.Uint32(b)))
		if l < 0 || 5+l > len(b) {
			return 0, errors.New("binary length is invalid")
		}
		return 5 + l, nil
	case 0x0B: // regex: two cstrings
		p := bytes.IndexByte(b, 0)
		if p < 0 {
			return 0, errors.New("unterminated regex pattern")
		}
		o := bytes.IndexByte(b[p+1:], 0)
		if o < 0 {
			return 0, errors.New("unterminated regex options")
		}
		return p + o + 2, nil
	case 0x0C: // DBPointer
		n, err := stringLength(b)
		if err != nil || n+12 > len(b) {
			return 0, errors.New("DBPointer value is invalid")
		}
		return n + 12, nil
	}
	return 0, fmt.Errorf("invalid BSON type %d", t)
}

// stringLength returns the length of a BSON string (int32 length, bytes,
// NUL).
func stringLength(b []byte) (int, error) {
	if len(b) < 4 {
		return 0, errors.New("string too short")
	}
	l := int(int32(binary.LittleEndian.Uint32(b)))
	if l < 1 || 4+l > len(b) || b[3+l] != 0 {
		return 0, errors.New("string length is invalid or its NUL byte is missing")
	}
	return 4 + l, nil
}
