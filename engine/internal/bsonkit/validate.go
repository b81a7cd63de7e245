package bsonkit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// maxDepth bounds document nesting in Validate; mongod allows 100 levels
// plus some slack for internal wrapping.
const maxDepth = 200

// Validate checks that doc is one well-formed BSON document, strictly
// enough that every accessor of the driver and of this package can read
// it without panicking: lengths agree, strings carry their terminator,
// nested documents, arrays and code-with-scope are valid, and nesting
// stays under 200 levels. It does not check UTF-8 or array key order.
func Validate(doc []byte) error {
	n, err := validateDoc(doc, 0)
	if err != nil {
		return err
	}
	if n != len(doc) {
		return errors.New("bson: trailing bytes after document")
	}
	return nil
}

func validateDoc(b []byte, depth int) (int, error) {
	if depth > maxDepth {
		return 0, errors.New("bson: nesting too deep")
	}
	if len(b) < 5 {
		return 0, errors.New("bson: document too short")
	}
	n := int(int32(binary.LittleEndian.Uint32(b)))
	if n < 5 || n > len(b) || b[n-1] != 0 {
		return 0, errors.New("bson: bad document length")
	}
	rest := b[4 : n-1]
	for len(rest) > 0 {
		t := rest[0]
		k := bytes.IndexByte(rest[1:], 0)
		if k < 0 {
			return 0, errors.New("bson: unterminated key")
		}
		rest = rest[k+2:]
		size, err := valueSize(t, rest, depth)
		if err != nil {
			return 0, err
		}
		rest = rest[size:]
	}
	return n, nil
}

func fixed(rest []byte, n int) (int, error) {
	if len(rest) < n {
		return 0, errors.New("bson: value too short")
	}
	return n, nil
}

func stringSize(rest []byte) (int, error) {
	if len(rest) < 4 {
		return 0, errors.New("bson: string too short")
	}
	l := int(int32(binary.LittleEndian.Uint32(rest)))
	if l < 1 || 4+l > len(rest) || rest[3+l] != 0 {
		return 0, errors.New("bson: bad string length")
	}
	return 4 + l, nil
}

func cstringSize(rest []byte) (int, error) {
	k := bytes.IndexByte(rest, 0)
	if k < 0 {
		return 0, errors.New("bson: unterminated cstring")
	}
	return k + 1, nil
}

func valueSize(t byte, rest []byte, depth int) (int, error) {
	switch t {
	case 0x01, 0x09, 0x11, 0x12:
		return fixed(rest, 8)
	case 0x10:
		return fixed(rest, 4)
	case 0x13:
		return fixed(rest, 16)
	case 0x07:
		return fixed(rest, 12)
	case 0x08:
		if len(rest) < 1 || rest[0] > 1 {
			return 0, errors.New("bson: bad boolean")
		}
		return 1, nil
	case 0x06, 0x0A, 0x7F, 0xFF:
		return 0, nil
	case 0x02, 0x0D, 0x0E:
		return stringSize(rest)
	case 0x03, 0x04:
		return validateDoc(rest, depth+1)
	case 0x05:
		if len(rest) < 5 {
			return 0, errors.New("bson: binary too short")
		}
		l := int(int32(binary.LittleEndian.Uint32(rest)))
		if l < 0 || 5+l > len(rest) {
			return 0, errors.New("bson: bad binary length")
		}
		if rest[4] == 0x02 {
			if l < 4 || int(int32(binary.LittleEndian.Uint32(rest[5:]))) != l-4 {
				return 0, errors.New("bson: bad old binary length")
			}
		}
		return 5 + l, nil
	case 0x0B:
		p, err := cstringSize(rest)
		if err != nil {
			return 0, err
		}
		o, err := cstringSize(rest[p:])
		if err != nil {
			return 0, err
		}
		return p + o, nil
	case 0x0C:
		s, err := stringSize(rest)
		if err != nil {
			return 0, err
		}
		if len(rest) < s+12 {
			return 0, errors.New("bson: dbpointer too short")
		}
		return s + 12, nil
	case 0x0F:
		if len(rest) < 4 {
			return 0, errors.New("bson: code with scope too short")
		}
		total := int(int32(binary.LittleEndian.Uint32(rest)))
		if total < 14 || total > len(rest) {
			return 0, errors.New("bson: bad code with scope length")
		}
		s, err := stringSize(rest[4:total])
		if err != nil {
			return 0, err
		}
		d, err := validateDoc(rest[4+s:total], depth+1)
		if err != nil {
			return 0, err
		}
		if 4+s+d != total {
			return 0, errors.New("bson: code with scope length mismatch")
		}
		return total, nil
	}
	return 0, fmt.Errorf("bson: unknown type 0x%02x", t)
}
