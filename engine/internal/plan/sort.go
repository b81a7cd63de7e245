package plan

import (
	"bufio"
	"container/heap"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/order"
)

// SortOptions bound a blocking sort.
type SortOptions struct {
	// MaxMemory is internalQueryMaxBlockingSortMemoryUsageBytes.
	MaxMemory int64
	// AllowDiskUse lets a sort over MaxMemory spill sorted runs to TempDir.
	AllowDiskUse bool
	// TempDir holds spill files; os.TempDir() when empty.
	TempDir string
}

// sortRow is one buffered row with its sort key and arrival order, which
// keeps the sort stable.
type sortRow struct {
	key order.Key
	seq int64
	m   *member
}

// sortStage is a blocking sort (SORT): it reads its whole input, then
// returns it ordered. With a limit it keeps only the best limit rows (a
// top-k heap). Over the memory limit it spills sorted runs to files and
// merges them, or fails with QueryExceededMemoryLimitNoDiskUseAllowed.
type sortStage struct {
	counters_ counters
	child     stage
	ord       *order.Order
	spec      bson.Raw
	limit     int64 // 0: none
	opts      SortOptions
	simple    bool

	rows     []sortRow
	mem      int64
	seq      int64
	loaded   bool
	out      []sortRow
	pos      int
	runs     []*os.File
	merge    *runMerger
	totalMem int64
	spills   int64
	usedDisk bool
}

func (s *sortStage) counters() *counters { return &s.counters_ }
func (s *sortStage) children() []stage   { return []stage{s.child} }
func (s *sortStage) name() string        { return "SORT" }

func (s *sortStage) less(a, b sortRow) bool {
	if c := s.ord.CompareKeys(a.key, b.key); c != 0 {
		return c < 0
	}
	return a.seq < b.seq
}

func rowSize(m *member, k order.Key) int64 {
	n := int64(len(m.doc)) + 16
	for _, v := range k {
		n += int64(len(v.Value)) + 1
	}
	return n
}

func (s *sortStage) doWork(ctx context.Context) (state, *member, error) {
	if !s.loaded {
		st, m, err := work(ctx, s.child)
		if err != nil {
			return 0, nil, err
		}
		switch st {
		case needTime:
			return needTime, nil, nil
		case advanced:
			return needTime, nil, s.add(m)
		}
		s.loaded = true
		return needTime, nil, s.finish()
	}
	if s.merge != nil {
		m, err := s.merge.next()
		if err != nil {
			return 0, nil, err
		}
		if m == nil || (s.limit > 0 && s.merge.n > s.limit) {
			return isEOF, nil, nil
		}
		return advanced, m, nil
	}
	if s.pos >= len(s.out) {
		return isEOF, nil, nil
	}
	s.pos++
	return advanced, s.out[s.pos-1].m, nil
}

func (s *sortStage) add(m *member) error {
	k, err := s.ord.Key(m.doc)
	if err != nil {
		return err
	}
	k = append(order.Key(nil), k...)
	r := sortRow{key: k, seq: s.seq, m: m}
	s.seq++
	sz := rowSize(m, k)
	s.totalMem += sz
	if s.limit > 0 {
		if int64(len(s.rows)) < s.limit {
			heap.Push((*topK)(s), r)
			s.mem += sz
		} else if s.less(r, s.rows[0]) {
			s.mem += sz - rowSize(s.rows[0].m, s.rows[0].key)
			s.rows[0] = r
			heap.Fix((*topK)(s), 0)
		}
		if s.mem > s.opts.MaxMemory && !s.opts.AllowDiskUse {
			return s.tooMuch()
		}
		return nil
	}
	s.rows = append(s.rows, r)
	s.mem += sz
	if s.mem > s.opts.MaxMemory {
		if !s.opts.AllowDiskUse {
			return s.tooMuch()
		}
		return s.spill()
	}
	return nil
}

func (s *sortStage) tooMuch() error {
	return mongoerr.Newf(mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed,
		"Sort exceeded memory limit of %d bytes, but did not opt in to external sorting.", s.opts.MaxMemory)
}

// topK is a max-heap on the sort order: the worst kept row on top.
type topK sortStage

func (h *topK) Len() int           { return len(h.rows) }
func (h *topK) Less(i, j int) bool { return (*sortStage)(h).less(h.rows[j], h.rows[i]) }
func (h *topK) Swap(i, j int)      { h.rows[i], h.rows[j] = h.rows[j], h.rows[i] }
func (h *topK) Push(x any)         { h.rows = append(h.rows, x.(sortRow)) }
func (h *topK) Pop() any {
	r := h.rows[len(h.rows)-1]
	h.rows = h.rows[:len(h.rows)-1]
	return r
}

func (s *sortStage) sortRows() {
	sort.Slice(s.rows, func(i, j int) bool { return s.less(s.rows[i], s.rows[j]) })
}

// spill writes the buffered rows as one sorted run.
func (s *sortStage) spill() error {
	s.sortRows()
	f, err := os.CreateTemp(s.opts.TempDir, "formwork-sort-*")
	if err != nil {
		return fmt.Errorf("plan: sort spill: %w", err)
	}
	// The file is unlinked at once where the OS allows it; it lives while
	// open.
	_ = os.Remove(f.Name())
	w := bufio.NewWriter(f)
	var hdr [16]byte
	for _, r := range s.rows {
		binary.LittleEndian.PutUint64(hdr[:8], uint64(r.m.rid))
		binary.LittleEndian.PutUint64(hdr[8:], uint64(r.seq))
		if _, err := w.Write(hdr[:]); err != nil {
			f.Close()
			return err
		}
		if _, err := w.Write(r.m.doc); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return err
	}
	s.runs = append(s.runs, f)
	s.rows, s.mem = nil, 0
	s.spills++
	s.usedDisk = true
	return nil
}

func (s *sortStage) finish() error {
	if len(s.runs) == 0 {
		s.sortRows()
		s.out, s.rows = s.rows, nil
		return nil
	}
	if len(s.rows) > 0 {
		if err := s.spill(); err != nil {
			return err
		}
	}
	mg := &runMerger{s: s}
	for _, f := range s.runs {
		rd := &runReader{r: bufio.NewReader(f)}
		if err := mg.push(rd); err != nil {
			return err
		}
	}
	s.merge = mg
	return nil
}

func (s *sortStage) close() {
	s.child.close()
	for _, f := range s.runs {
		f.Close()
	}
	s.runs = nil
}

func (s *sortStage) describe(d bson.D, stats bool) bson.D {
	d = append(d, bson.E{Key: "sortPattern", Value: s.spec}, bson.E{Key: "memLimit", Value: s.opts.MaxMemory})
	if s.limit > 0 {
		d = append(d, bson.E{Key: "limitAmount", Value: s.limit})
	}
	typ := "default"
	if s.simple {
		typ = "simple"
	}
	d = append(d, bson.E{Key: "type", Value: typ})
	if stats {
		d = append(d, bson.E{Key: "totalDataSizeSorted", Value: s.totalMem},
			bson.E{Key: "usedDisk", Value: s.usedDisk}, bson.E{Key: "spills", Value: s.spills},
			bson.E{Key: "spilledDataStorageSize", Value: int64(0)})
	}
	return d
}

// runReader reads one spilled run.
type runReader struct {
	r   *bufio.Reader
	cur sortRow
}

func (rr *runReader) read(s *sortStage) (bool, error) {
	var hdr [20]byte
	if _, err := io.ReadFull(rr.r, hdr[:]); err != nil {
		if err == io.EOF {
			return false, nil
		}
		return false, err
	}
	n := int(binary.LittleEndian.Uint32(hdr[16:]))
	if n < 5 {
		return false, fmt.Errorf("plan: sort spill: corrupt run")
	}
	doc := make([]byte, n)
	copy(doc, hdr[16:])
	if _, err := io.ReadFull(rr.r, doc[4:]); err != nil {
		return false, err
	}
	m := &member{rid: int64(binary.LittleEndian.Uint64(hdr[:8])), doc: doc}
	k, err := s.ord.Key(m.doc)
	if err != nil {
		return false, err
	}
	rr.cur = sortRow{key: k, seq: int64(binary.LittleEndian.Uint64(hdr[8:16])), m: m}
	return true, nil
}

// runMerger merges sorted runs with a min-heap.
type runMerger struct {
	s    *sortStage
	heap []*runReader
	n    int64
}

func (g *runMerger) Len() int           { return len(g.heap) }
func (g *runMerger) Less(i, j int) bool { return g.s.less(g.heap[i].cur, g.heap[j].cur) }
func (g *runMerger) Swap(i, j int)      { g.heap[i], g.heap[j] = g.heap[j], g.heap[i] }
func (g *runMerger) Push(x any)         { g.heap = append(g.heap, x.(*runReader)) }
func (g *runMerger) Pop() any {
	r := g.heap[len(g.heap)-1]
	g.heap = g.heap[:len(g.heap)-1]
	return r
}

func (g *runMerger) push(rr *runReader) error {
	ok, err := rr.read(g.s)
	if err != nil || !ok {
		return err
	}
	heap.Push(g, rr)
	return nil
}

func (g *runMerger) next() (*member, error) {
	if len(g.heap) == 0 {
		return nil, nil
	}
	top := g.heap[0]
	m := top.cur.m
	ok, err := top.read(g.s)
	if err != nil {
		return nil, err
	}
	if ok {
		heap.Fix(g, 0)
	} else {
		heap.Pop(g)
	}
	g.n++
	return m, nil
}
