package agg

import (
	"bufio"
	"os"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// winSpill keeps the documents of a partition that outgrew the memory
// limit in a temporary file, as mongod's SpillableCache does when
// allowDiskUse is true. Only the offsets stay in memory. Documents are
// appended while the partition is read and read back by index after.
type winSpill struct {
	f    *os.File
	w    *bufio.Writer
	offs []int64
	end  int64
}

// newWinSpill creates the file in dir ("" for the system's temporary
// directory).
func newWinSpill(dir string) (*winSpill, error) {
	f, err := os.CreateTemp(dir, "formwork-setwindowfields-*")
	if err != nil {
		return nil, mongoerr.Newf(mongoerr.InternalError, "$setWindowFields: spill: %v", err)
	}
	return &winSpill{f: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

// add appends a document.
func (s *winSpill) add(d bson.Raw) error {
	if _, err := s.w.Write(d); err != nil {
		return mongoerr.Newf(mongoerr.InternalError, "$setWindowFields: spill: %v", err)
	}
	s.offs = append(s.offs, s.end)
	s.end += int64(len(d))
	return nil
}

// finish makes the appended documents readable.
func (s *winSpill) finish() error {
	if err := s.w.Flush(); err != nil {
		return mongoerr.Newf(mongoerr.InternalError, "$setWindowFields: spill: %v", err)
	}
	return nil
}

// doc reads document i back; the result is the caller's.
func (s *winSpill) doc(i int) (bson.Raw, error) {
	end := s.end
	if i+1 < len(s.offs) {
		end = s.offs[i+1]
	}
	buf := make([]byte, end-s.offs[i])
	if _, err := s.f.ReadAt(buf, s.offs[i]); err != nil {
		return nil, mongoerr.Newf(mongoerr.InternalError, "$setWindowFields: spill: %v", err)
	}
	return buf, nil
}

// close removes the file.
func (s *winSpill) close() {
	if s == nil || s.f == nil {
		return
	}
	name := s.f.Name()
	s.f.Close()
	os.Remove(name)
	s.f = nil
}

// cloneValue copies v's bytes, so that a value read from a spilled
// document does not keep the whole document alive.
func cloneValue(v bson.RawValue) bson.RawValue {
	v.Value = append([]byte(nil), v.Value...)
	return v
}
