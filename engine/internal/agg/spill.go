package agg

import (
	"bufio"
	"container/heap"
	"context"
	"encoding/binary"
	"io"
	"os"
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// docSize is the bytes a buffered document is charged: its length plus a
// fixed overhead for the slice header and bookkeeping.
func docSize(d bson.Raw) int64 { return int64(len(d)) + 32 }

// errMemory is mongod's error for a blocking stage past its memory limit
// without allowDiskUse.
func errMemory(what string, limit int64) error {
	return mongoerr.Newf(mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed,
		"%s exceeded memory limit of %d bytes, but did not opt in to external sorting.", what, limit)
}

// sorter buffers documents and returns them in order: in memory while
// they fit the limit, else as sorted runs spilled to temporary files and
// merged (an external merge sort). Ties keep input order (stable).
type sorter struct {
	less    func(a, b bson.Raw) bool
	limit   int64
	disk    bool
	dir     string
	what    string // for the memory error ("Sort", "$bucketAuto")
	st      *stageStats
	buf     []bson.Raw
	bytes   int64
	runs    []*os.File
	topK    int64 // >0: keep only the first topK in order
	nextSeq int64
	top     *topHeap
	spilled bool     // a top-k that outgrew memory: now an external sort
	cutoff  bson.Raw // after a top-k spill, the worst document kept (nil: none)
	total   int64    // bytes of every document added, for explain
}

// add buffers one document.
func (s *sorter) add(d bson.Raw) error {
	s.total += int64(len(d))
	if s.topK > 0 && !s.spilled {
		return s.addTopK(d)
	}
	if s.cutoff != nil && !s.less(d, s.cutoff) {
		// Not better than the k documents already kept, which come
		// earlier: it cannot be among the first k.
		return nil
	}
	s.buf = append(s.buf, d)
	s.bytes += docSize(d)
	if s.bytes > s.limit {
		if !s.disk {
			return errMemory(s.what, s.limit)
		}
		return s.spill()
	}
	return nil
}

// topHeap is a max-heap on order (the worst kept document on top); ties
// keep the earlier document, so the later one is the worse.
type topHeap struct {
	s    *sorter
	docs []bson.Raw
	seqs []int64
}

func (h *topHeap) Len() int { return len(h.docs) }
func (h *topHeap) Less(i, j int) bool {
	a, b := h.docs[i], h.docs[j]
	if h.s.less(b, a) {
		return true
	}
	if h.s.less(a, b) {
		return false
	}
	return h.seqs[i] > h.seqs[j]
}
func (h *topHeap) Swap(i, j int) {
	h.docs[i], h.docs[j] = h.docs[j], h.docs[i]
	h.seqs[i], h.seqs[j] = h.seqs[j], h.seqs[i]
}
func (h *topHeap) Push(x any) {
	p := x.(seqDoc)
	h.docs = append(h.docs, p.d)
	h.seqs = append(h.seqs, p.seq)
}
func (h *topHeap) Pop() any {
	n := len(h.docs) - 1
	p := seqDoc{h.docs[n], h.seqs[n]}
	h.docs, h.seqs = h.docs[:n], h.seqs[:n]
	return p
}

type seqDoc struct {
	d   bson.Raw
	seq int64
}

var _ heap.Interface = (*topHeap)(nil)

func (s *sorter) addTopK(d bson.Raw) error {
	if s.top == nil {
		s.top = &topHeap{s: s}
	}
	seq := s.nextSeq
	s.nextSeq++
	if int64(s.top.Len()) < s.topK {
		heap.Push(s.top, seqDoc{d, seq})
		s.bytes += docSize(d)
	} else if s.less(d, s.top.docs[0]) {
		s.bytes += docSize(d) - docSize(s.top.docs[0])
		s.top.docs[0], s.top.seqs[0] = d, seq
		heap.Fix(s.top, 0)
	} else {
		return nil
	}
	if s.bytes > s.limit {
		if !s.disk {
			return errMemory(s.what, s.limit)
		}
		return s.spillTopK()
	}
	return nil
}

// spillTopK turns a top-k that outgrew memory into an external sort, as
// mongod's top-k sorter spills: the kept documents, in order, become the
// first run (so they win ties with later documents), and when k of them
// were kept the worst one becomes a cutoff below which later documents
// are dropped at once. finish returns only the first k.
func (s *sorter) spillTopK() error {
	docs := s.top.sorted()
	if int64(len(docs)) >= s.topK {
		s.cutoff = docs[len(docs)-1]
	}
	s.top, s.spilled = nil, true
	s.buf, s.bytes = docs, 0
	return s.spill()
}

// sorted returns the heap's documents in order, ties by arrival.
func (h *topHeap) sorted() []bson.Raw {
	docs := make([]seqDoc, len(h.docs))
	for i := range docs {
		docs[i] = seqDoc{h.docs[i], h.seqs[i]}
	}
	sort.Slice(docs, func(i, j int) bool {
		if h.s.less(docs[i].d, docs[j].d) {
			return true
		}
		if h.s.less(docs[j].d, docs[i].d) {
			return false
		}
		return docs[i].seq < docs[j].seq
	})
	out := make([]bson.Raw, len(docs))
	for i, p := range docs {
		out[i] = p.d
	}
	return out
}

// spill writes the buffer, sorted, to a new run file.
func (s *sorter) spill() error {
	sort.SliceStable(s.buf, func(i, j int) bool { return s.less(s.buf[i], s.buf[j]) })
	f, err := os.CreateTemp(s.dir, "formwork-agg-*.run")
	if err != nil {
		return mongoerr.Newf(mongoerr.InternalError, "spill: %v", err)
	}
	os.Remove(f.Name()) // the file lives until closed
	w := bufio.NewWriter(f)
	for _, d := range s.buf {
		if _, err := w.Write(d); err != nil {
			f.Close()
			return mongoerr.Newf(mongoerr.InternalError, "spill: %v", err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return mongoerr.Newf(mongoerr.InternalError, "spill: %v", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return mongoerr.Newf(mongoerr.InternalError, "spill: %v", err)
	}
	s.runs = append(s.runs, f)
	s.buf, s.bytes = nil, 0
	if s.st != nil {
		s.st.usedDisk = true
		s.st.spills++
	}
	return nil
}

// finish returns a Source over the documents in order.
func (s *sorter) finish() (Source, error) {
	if s.top != nil {
		return NewSliceSource(s.top.sorted()), nil
	}
	if len(s.runs) == 0 {
		sort.SliceStable(s.buf, func(i, j int) bool { return s.less(s.buf[i], s.buf[j]) })
		return NewSliceSource(s.buf), nil
	}
	if len(s.buf) > 0 {
		if err := s.spill(); err != nil {
			return nil, err
		}
	}
	m := &runMerge{s: s}
	for i, f := range s.runs {
		r := &runReader{r: bufio.NewReader(f), idx: i}
		if err := r.advance(); err != nil {
			m.close()
			return nil, err
		}
		if r.cur != nil {
			m.heap = append(m.heap, r)
		}
	}
	heap.Init(m)
	next := m.next
	if s.spilled {
		left := s.topK
		next = func(ctx context.Context) (bson.Raw, error) {
			if left <= 0 {
				return nil, nil
			}
			left--
			return m.next(ctx)
		}
	}
	return &funcSource{next: next, close: m.close}, nil
}

// close releases the run files.
func (s *sorter) close() {
	for _, f := range s.runs {
		f.Close()
	}
	s.runs = nil
	s.buf = nil
}

// runReader reads one spilled run.
type runReader struct {
	r   *bufio.Reader
	idx int
	cur bson.Raw
}

func (r *runReader) advance() error {
	var hdr [4]byte
	if _, err := io.ReadFull(r.r, hdr[:]); err != nil {
		if err == io.EOF {
			r.cur = nil
			return nil
		}
		return mongoerr.Newf(mongoerr.InternalError, "spill read: %v", err)
	}
	n := int(binary.LittleEndian.Uint32(hdr[:]))
	if n < 5 || n > 64<<20 {
		return mongoerr.New(mongoerr.InternalError, "spill read: corrupt run")
	}
	d := make([]byte, n)
	copy(d, hdr[:])
	if _, err := io.ReadFull(r.r, d[4:]); err != nil {
		return mongoerr.Newf(mongoerr.InternalError, "spill read: %v", err)
	}
	r.cur = d
	return nil
}

// runMerge merges the runs; ties go to the earlier run (stability).
type runMerge struct {
	s    *sorter
	heap []*runReader
}

func (m *runMerge) Len() int { return len(m.heap) }
func (m *runMerge) Less(i, j int) bool {
	a, b := m.heap[i], m.heap[j]
	if m.s.less(a.cur, b.cur) {
		return true
	}
	if m.s.less(b.cur, a.cur) {
		return false
	}
	return a.idx < b.idx
}
func (m *runMerge) Swap(i, j int) { m.heap[i], m.heap[j] = m.heap[j], m.heap[i] }
func (m *runMerge) Push(x any)    { m.heap = append(m.heap, x.(*runReader)) }
func (m *runMerge) Pop() any {
	n := len(m.heap) - 1
	r := m.heap[n]
	m.heap = m.heap[:n]
	return r
}

func (m *runMerge) next(ctx context.Context) (bson.Raw, error) {
	if len(m.heap) == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := m.heap[0]
	d := r.cur
	if err := r.advance(); err != nil {
		return nil, err
	}
	if r.cur == nil {
		heap.Pop(m)
	} else {
		heap.Fix(m, 0)
	}
	return d, nil
}

func (m *runMerge) close() { m.s.close() }
