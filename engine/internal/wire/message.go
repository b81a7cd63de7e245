package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// OpCode identifies a wire protocol message type.
type OpCode int32

// Opcodes the engine knows.
const (
	OpReply      OpCode = 1
	OpQuery      OpCode = 2004
	OpCompressed OpCode = 2012
	OpMsg        OpCode = 2013
)

// Limits, as mongod advertises them in hello.
const (
	// MaxMessageSize is maxMessageSizeBytes: the largest message accepted.
	MaxMessageSize = 48_000_000
	// MaxDocumentSize is maxBsonObjectSize: the largest stored document.
	MaxDocumentSize = 16 * 1024 * 1024
	// MaxCommandSize is the largest command document accepted in one
	// section: a document plus room for the command's own fields, as mongod
	// allows (BSONObjMaxInternalSize).
	MaxCommandSize = MaxDocumentSize + 16*1024
	headerSize     = 16
)

// OP_MSG flag bits.
const (
	FlagChecksumPresent uint32 = 1 << 0
	FlagMoreToCome      uint32 = 1 << 1
	FlagExhaustAllowed  uint32 = 1 << 16
	// requiredMask holds the bits a receiver must understand (0-15).
	requiredMask uint32 = 0xffff
)

// Errors returned by ReadMessage. A connection that returns any of them
// cannot be resynchronised and should be closed.
var (
	ErrUnsupportedOpCode = errors.New("wire: unsupported opcode")
	ErrTooLarge          = errors.New("wire: message too large")
	ErrMalformed         = errors.New("wire: malformed message")
	ErrChecksum          = errors.New("wire: checksum mismatch")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ParseError is a message that was framed correctly but whose content
// mongod rejects (invalid BSON, a repeated or unknown section). The stream
// is still in step, so the server answers it with Code instead of closing
// the connection. It wraps ErrMalformed.
type ParseError struct {
	Code int32
	Msg  string
}

// Error returns the message.
func (e *ParseError) Error() string { return "wire: " + e.Msg }

// Unwrap returns ErrMalformed.
func (e *ParseError) Unwrap() error { return ErrMalformed }

// mongod's codes for OP_MSG content errors (op_msg.cpp).
const (
	codeOverflow              = 15
	codeInvalidBSON           = 22
	codeMultipleBodies        = 40430
	codeDuplicateSequence     = 40431
	codeUnknownSection        = 40432
	codeDuplicateBodySeqField = 40433
)

func parseErrorf(code int32, format string, args ...any) error {
	return &ParseError{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Header is the standard message header.
type Header struct {
	Length     int32
	RequestID  int32
	ResponseTo int32
	OpCode     OpCode
}

// Message is one decoded request. For OP_MSG, Body is the kind 0 section
// and Sequences holds the kind 1 sections by identifier, in order. For
// OP_QUERY, Body is the query document and FullCollectionName is set.
type Message struct {
	Header             Header
	Flags              uint32
	Body               bson.Raw
	Sequences          []Sequence
	FullCollectionName string
	// Invalid is the content error when ReadMessage or Parse returned a
	// *ParseError along with the message; the message is then to be
	// answered with that error, not run.
	Invalid *ParseError
}

// Sequence is one OP_MSG kind 1 section: a named run of documents.
type Sequence struct {
	Identifier string
	Documents  []bson.Raw
}

// ReadMessage reads one message from r. It returns io.EOF when r is closed
// between messages, and one of the package's errors for messages that
// cannot be accepted. With a *ParseError it also returns the message as far
// as it was decoded (header and flags), so that the caller can answer it.
func ReadMessage(r io.Reader) (*Message, error) {
	var hdr [headerSize]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, ErrMalformed
		}
		return nil, err
	}
	h := Header{
		Length:     int32(binary.LittleEndian.Uint32(hdr[0:])),
		RequestID:  int32(binary.LittleEndian.Uint32(hdr[4:])),
		ResponseTo: int32(binary.LittleEndian.Uint32(hdr[8:])),
		OpCode:     OpCode(binary.LittleEndian.Uint32(hdr[12:])),
	}
	if h.Length < headerSize {
		return nil, fmt.Errorf("%w: length %d", ErrMalformed, h.Length)
	}
	if h.Length > MaxMessageSize {
		return nil, fmt.Errorf("%w: %d bytes, max %d", ErrTooLarge, h.Length, MaxMessageSize)
	}
	if h.OpCode != OpMsg && h.OpCode != OpQuery {
		return nil, fmt.Errorf("%w: %d", ErrUnsupportedOpCode, h.OpCode)
	}
	buf := make([]byte, h.Length)
	copy(buf, hdr[:])
	if _, err := io.ReadFull(r, buf[headerSize:]); err != nil {
		return nil, ErrMalformed
	}
	return Parse(buf)
}

// Parse decodes a complete message, header included. The returned message
// references buf.
func Parse(buf []byte) (*Message, error) {
	if len(buf) < headerSize {
		return nil, ErrMalformed
	}
	m := &Message{Header: Header{
		Length:     int32(binary.LittleEndian.Uint32(buf[0:])),
		RequestID:  int32(binary.LittleEndian.Uint32(buf[4:])),
		ResponseTo: int32(binary.LittleEndian.Uint32(buf[8:])),
		OpCode:     OpCode(binary.LittleEndian.Uint32(buf[12:])),
	}}
	if int(m.Header.Length) != len(buf) {
		return nil, fmt.Errorf("%w: length %d does not match %d bytes", ErrMalformed, m.Header.Length, len(buf))
	}
	var err error
	switch m.Header.OpCode {
	case OpMsg:
		err = parseMsg(m, buf)
	case OpQuery:
		err = parseQuery(m, buf[headerSize:])
	default:
		return nil, fmt.Errorf("%w: %d", ErrUnsupportedOpCode, m.Header.OpCode)
	}
	if pe := (*ParseError)(nil); errors.As(err, &pe) {
		m.Invalid = pe
	}
	return m, err
}
func parseMsg(m *Message, buf []byte) error {
	if len(buf) < headerSize+4 {
		return fmt.Errorf("%w: OP_MSG without flags", ErrMalformed)
	}
	m.Flags = binary.LittleEndian.Uint32(buf[headerSize:])
	if unknown := m.Flags & requiredMask &^ (FlagChecksumPresent | FlagMoreToCome); unknown != 0 {
		return fmt.Errorf("%w: unknown required flag bits %#x", ErrMalformed, unknown)
	}
	body := buf[headerSize+4:]
	if m.Flags&FlagChecksumPresent != 0 {
		if len(body) < 4 {
			return fmt.Errorf("%w: missing checksum", ErrMalformed)
		}
		want := binary.LittleEndian.Uint32(body[len(body)-4:])
		if got := crc32.Checksum(buf[:len(buf)-4], castagnoli); got != want {
			return ErrChecksum
		}
		body = body[:len(body)-4]
	}
	for len(body) > 0 {
		kind := body[0]
		body = body[1:]
		switch kind {
		case 0:
			if m.Body != nil {
				return parseErrorf(codeMultipleBodies, "Multiple body sections in message")
			}
			doc, rest, err := readDocument(body)
			if err != nil {
				return err
			}
			m.Body, body = doc, rest
		case 1:
			if len(body) < 4 {
				return fmt.Errorf("%w: truncated document sequence", ErrMalformed)
			}
			size := int(int32(binary.LittleEndian.Uint32(body)))
			if size < 5 || size > len(body) {
				return fmt.Errorf("%w: document sequence size %d", ErrMalformed, size)
			}
			seq, err := parseSequence(body[4:size])
			if err != nil {
				return err
			}
			for _, prev := range m.Sequences {
				if prev.Identifier == seq.Identifier {
					return parseErrorf(codeDuplicateSequence, "Duplicate document sequence: %s", seq.Identifier)
				}
			}
			m.Sequences = append(m.Sequences, seq)
			body = body[size:]
		default:
			return parseErrorf(codeUnknownSection, "Unknown section kind %d", kind)
		}
	}
	if m.Body == nil {
		return fmt.Errorf("%w: OP_MSG without a kind 0 section", ErrMalformed)
	}
	return nil
}

func parseSequence(b []byte) (Sequence, error) {
	id, rest, ok := readCString(b)
	if !ok {
		return Sequence{}, fmt.Errorf("%w: unterminated sequence identifier", ErrMalformed)
	}
	s := Sequence{Identifier: id}
	for len(rest) > 0 {
		doc, r, err := readDocument(rest)
		if err != nil {
			return Sequence{}, err
		}
		s.Documents = append(s.Documents, doc)
		rest = r
	}
	return s, nil
}

func parseQuery(m *Message, b []byte) error {
	if len(b) < 4 {
		return fmt.Errorf("%w: truncated OP_QUERY", ErrMalformed)
	}
	m.Flags = binary.LittleEndian.Uint32(b)
	name, rest, ok := readCString(b[4:])
	if !ok || len(rest) < 8 {
		return fmt.Errorf("%w: truncated OP_QUERY", ErrMalformed)
	}
	m.FullCollectionName = name
	doc, rest, err := readDocument(rest[8:])
	if err != nil {
		return err
	}
	m.Body = doc
	if len(rest) > 0 { // optional returnFieldsSelector
		if _, rest, err = readDocument(rest); err != nil {
			return err
		}
		if len(rest) > 0 {
			return fmt.Errorf("%w: trailing bytes after OP_QUERY", ErrMalformed)
		}
	}
	return nil
}

func readCString(b []byte) (string, []byte, bool) {
	for i, c := range b {
		if c == 0 {
			return string(b[:i]), b[i+1:], true
		}
	}
	return "", nil, false
}

// readDocument splits one validated BSON document off the front of b.
func readDocument(b []byte) (bson.Raw, []byte, error) {
	if len(b) < 5 {
		return nil, nil, parseErrorf(codeInvalidBSON, "truncated BSON document of %d bytes", len(b))
	}
	size := int(int32(binary.LittleEndian.Uint32(b)))
	if size < 5 || size > len(b) {
		return nil, nil, parseErrorf(codeInvalidBSON, "BSON size %d is invalid: %d bytes remain in the section", size, len(b))
	}
	if size > MaxCommandSize {
		return nil, nil, fmt.Errorf("%w: document of %d bytes", ErrTooLarge, size)
	}
	doc := bson.Raw(b[:size])
	// validate checks every (sub)document's terminating NUL: a document
	// without it is refused, never re-encoded.
	if err := validate(doc); err != nil {
		if err == errTooDeep {
			return nil, nil, parseErrorf(codeOverflow, "%v", err)
		}
		return nil, nil, parseErrorf(codeInvalidBSON, "invalid BSON: %v", err)
	}
	return doc, b[size:], nil
}

// AppendMsg appends an OP_MSG reply holding one kind 0 section.
func AppendMsg(dst []byte, requestID, responseTo int32, flags uint32, body []byte) []byte {
	start := len(dst)
	dst = appendHeader(dst, requestID, responseTo, OpMsg)
	dst = binary.LittleEndian.AppendUint32(dst, flags&^FlagChecksumPresent)
	dst = append(dst, 0)
	dst = append(dst, body...)
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start))
	return dst
}

// AppendReply appends an OP_REPLY holding the given documents, the answer
// to an OP_QUERY.
func AppendReply(dst []byte, requestID, responseTo int32, docs ...[]byte) []byte {
	start := len(dst)
	dst = appendHeader(dst, requestID, responseTo, OpReply)
	dst = binary.LittleEndian.AppendUint32(dst, 0) // responseFlags
	dst = binary.LittleEndian.AppendUint64(dst, 0) // cursorID
	dst = binary.LittleEndian.AppendUint32(dst, 0) // startingFrom
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(docs)))
	for _, d := range docs {
		dst = append(dst, d...)
	}
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start))
	return dst
}

func appendHeader(dst []byte, requestID, responseTo int32, op OpCode) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, 0) // length, patched by caller
	dst = binary.LittleEndian.AppendUint32(dst, uint32(requestID))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(responseTo))
	return binary.LittleEndian.AppendUint32(dst, uint32(op))
}

// AppendRequest appends an OP_MSG request with a body and optional
// document sequences, and a checksum when checksum is true. Clients use
// it; the engine uses it in tests and fuzzing.
func AppendRequest(dst []byte, requestID int32, flags uint32, body []byte, seqs []Sequence, checksum bool) []byte {
	start := len(dst)
	if checksum {
		flags |= FlagChecksumPresent
	} else {
		flags &^= FlagChecksumPresent
	}
	dst = appendHeader(dst, requestID, 0, OpMsg)
	dst = binary.LittleEndian.AppendUint32(dst, flags)
	dst = append(dst, 0)
	dst = append(dst, body...)
	for _, s := range seqs {
		dst = append(dst, 1)
		sizeAt := len(dst)
		dst = binary.LittleEndian.AppendUint32(dst, 0)
		dst = append(dst, s.Identifier...)
		dst = append(dst, 0)
		for _, d := range s.Documents {
			dst = append(dst, d...)
		}
		binary.LittleEndian.PutUint32(dst[sizeAt:], uint32(len(dst)-sizeAt))
	}
	if checksum {
		binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start+4))
		dst = binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
		return dst
	}
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start))
	return dst
}

// Command returns the OP_MSG command with each document sequence merged
// into the body as an array field named by its identifier, as mongod
// treats them. It returns a *ParseError (40433) when a sequence repeats a
// body field.
func (m *Message) Command() (bson.Raw, error) {
	if len(m.Sequences) == 0 {
		return m.Body, nil
	}
	// Size the merged command up front: the sequence of an insertMany
	// holds every document, which growing by appends would copy again.
	size := len(m.Body)
	for _, s := range m.Sequences {
		size += len(s.Identifier) + 6
		for _, d := range s.Documents {
			size += len(d) + 8
		}
	}
	idx, doc := bsoncore.AppendDocumentStart(make([]byte, 0, size))
	elems, err := m.Body.Elements()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	for _, e := range elems {
		for _, s := range m.Sequences {
			if e.Key() == s.Identifier {
				return nil, parseErrorf(codeDuplicateBodySeqField, "Duplicate field between body and document sequence %s", s.Identifier)
			}
		}
		doc = append(doc, e...)
	}
	for _, s := range m.Sequences {
		aidx, arr := bsoncore.AppendArrayElementStart(doc, s.Identifier)
		for i, d := range s.Documents {
			// The element is written by hand: its key (the index) needs
			// no string of its own.
			arr = append(arr, byte(bson.TypeEmbeddedDocument))
			arr = strconv.AppendInt(arr, int64(i), 10)
			arr = append(arr, 0)
			arr = append(arr, d...)
		}
		doc, _ = bsoncore.AppendArrayEnd(arr, aidx)
	}
	doc, _ = bsoncore.AppendDocumentEnd(doc, idx)
	return bson.Raw(doc), nil
}
