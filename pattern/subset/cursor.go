package subset

import (
	"encoding/base64"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// MarshalText encodes the cursor as URL-safe text, for a "next page"
// link: the base64 of the BSON document {t: Time, id: ID}. The zero
// Cursor encodes as the empty string.
func (c Cursor) MarshalText() ([]byte, error) {
	if c.ID.Type == 0 {
		return []byte{}, nil
	}
	doc, err := bson.Marshal(bson.D{{Key: "t", Value: c.Time}, {Key: "id", Value: c.ID}})
	if err != nil {
		return nil, fmt.Errorf("subset: cursor: %w", err)
	}
	out := make([]byte, base64.RawURLEncoding.EncodedLen(len(doc)))
	base64.RawURLEncoding.Encode(out, doc)
	return out, nil
}

// maxCursorText bounds the text UnmarshalText accepts.
const maxCursorText = 4096

// UnmarshalText decodes text made by MarshalText; the empty string is the
// zero Cursor. Text that is not such a cursor is an error.
func (c *Cursor) UnmarshalText(text []byte) error {
	if len(text) == 0 {
		*c = Cursor{}
		return nil
	}
	if len(text) > maxCursorText {
		return errors.New("subset: cursor: too long")
	}
	doc := make([]byte, base64.RawURLEncoding.DecodedLen(len(text)))
	n, err := base64.RawURLEncoding.Decode(doc, text)
	if err != nil {
		return fmt.Errorf("subset: cursor: %w", err)
	}
	raw := bson.Raw(doc[:n])
	if err := raw.Validate(); err != nil {
		return fmt.Errorf("subset: cursor: %w", err)
	}
	t, err1 := raw.LookupErr("t")
	id, err2 := raw.LookupErr("id")
	if err1 != nil || err2 != nil {
		return errors.New("subset: cursor: not a cursor")
	}
	*c = Cursor{Time: t, ID: id}
	return nil
}
