// Package memconn is an in-memory, buffered, full-duplex net.Conn pair:
// the in-process transport between the driver and the engine.
//
// net.Pipe is synchronous: a Write returns only once the other side has
// read every byte, so each message costs the writer a trip through the
// scheduler's run queue while it waits for the reader to be scheduled.
// Under many clients on few cores those waits, several per request, made
// up most of a request's latency. Here a Write copies into the peer's
// buffer and returns at once (blocking only while a slow reader leaves
// more than Limit bytes unread), as a socket's send buffer does.
package memconn

import (
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// Limit is how many unread bytes a direction holds before Write waits for
// the reader. One write is always accepted whole into an emptier buffer,
// so a message larger than Limit still goes through.
const Limit = 4 << 20

// keepCap is the largest buffer kept for reuse once drained; a larger
// one (left by a big reply) is released.
const keepCap = 256 << 10

// Addr is both ends' address: network and string "pipe", as net.Pipe's.
type Addr struct{}

func (Addr) Network() string { return "pipe" }
func (Addr) String() string  { return "pipe" }

// Pipe returns two connected ends.
func Pipe() (net.Conn, net.Conn) {
	ab, ba := newHalf(), newHalf()
	a := &Conn{rx: ba, tx: ab, rd: newDeadline(), wd: newDeadline()}
	b := &Conn{rx: ab, tx: ba, rd: newDeadline(), wd: newDeadline()}
	return a, b
}

// half is one direction: bytes written by one end, read by the other.
type half struct {
	mu      sync.Mutex
	data    []byte
	off     int
	wclosed bool          // the writing end closed: the reader drains, then EOF
	rclosed bool          // the reading end closed: writes fail
	readers chan struct{} // closed (and replaced) when readers should look again
	writers chan struct{} // likewise for writers waiting for room
}

func newHalf() *half {
	return &half{readers: make(chan struct{}), writers: make(chan struct{})}
}

// wakeReaders and wakeWriters must be called with h.mu held.
func (h *half) wakeReaders() {
	close(h.readers)
	h.readers = make(chan struct{})
}

func (h *half) wakeWriters() {
	close(h.writers)
	h.writers = make(chan struct{})
}

// Conn is one end of a Pipe.
type Conn struct {
	rx, tx    *half
	rd, wd    *deadline
	closeOnce sync.Once
}

// Read reads what the other end wrote, waiting for at least one byte.
func (c *Conn) Read(p []byte) (int, error) {
	for {
		if c.rd.expired() {
			return 0, os.ErrDeadlineExceeded
		}
		h := c.rx
		h.mu.Lock()
		if h.rclosed {
			h.mu.Unlock()
			return 0, io.ErrClosedPipe
		}
		if n := len(h.data) - h.off; n > 0 || len(p) == 0 {
			before := n
			n = copy(p, h.data[h.off:])
			h.off += n
			if h.off == len(h.data) {
				if cap(h.data) > keepCap {
					h.data = nil
				} else {
					h.data = h.data[:0]
				}
				h.off = 0
			}
			if before >= Limit && before-n < Limit {
				h.wakeWriters()
			}
			h.mu.Unlock()
			return n, nil
		}
		if h.wclosed {
			h.mu.Unlock()
			return 0, io.EOF
		}
		wait := h.readers
		h.mu.Unlock()
		select {
		case <-wait:
		case <-c.rd.wait():
		}
	}
}

// Write copies p into the other end's buffer, waiting only while that
// buffer holds Limit unread bytes or more.
func (c *Conn) Write(p []byte) (int, error) {
	for {
		if c.wd.expired() {
			return 0, os.ErrDeadlineExceeded
		}
		h := c.tx
		h.mu.Lock()
		if h.wclosed || h.rclosed {
			h.mu.Unlock()
			return 0, io.ErrClosedPipe
		}
		if len(h.data)-h.off < Limit {
			if h.off > 0 && len(h.data)+len(p) > cap(h.data) {
				// Slide the unread bytes down before growing.
				h.data = h.data[:copy(h.data, h.data[h.off:])]
				h.off = 0
			}
			h.data = append(h.data, p...)
			h.wakeReaders()
			h.mu.Unlock()
			return len(p), nil
		}
		wait := h.writers
		h.mu.Unlock()
		select {
		case <-wait:
		case <-c.wd.wait():
		}
	}
}

// Close closes this end: its pending and later reads and writes fail
// with io.ErrClosedPipe, the other end reads what was written, then EOF,
// and its writes fail.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		for _, h := range []*half{c.rx, c.tx} {
			h.mu.Lock()
			if h == c.rx {
				h.rclosed = true
				h.data, h.off = nil, 0
			} else {
				h.wclosed = true
			}
			h.wakeReaders()
			h.wakeWriters()
			h.mu.Unlock()
		}
	})
	return nil
}

func (c *Conn) LocalAddr() net.Addr  { return Addr{} }
func (c *Conn) RemoteAddr() net.Addr { return Addr{} }

func (c *Conn) SetDeadline(t time.Time) error {
	c.rd.set(t)
	c.wd.set(t)
	return nil
}

func (c *Conn) SetReadDeadline(t time.Time) error  { c.rd.set(t); return nil }
func (c *Conn) SetWriteDeadline(t time.Time) error { c.wd.set(t); return nil }

// deadline is a settable point in time whose passing closes a channel.
type deadline struct {
	mu     sync.Mutex
	timer  *time.Timer
	passed chan struct{}
}

func newDeadline() *deadline { return &deadline{passed: make(chan struct{})} }

// set arms the deadline at t; the zero time disarms it.
func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil && !d.timer.Stop() {
		<-d.passed // the timer fired: wait for its close, then renew
	}
	d.timer = nil
	select {
	case <-d.passed:
		d.passed = make(chan struct{})
	default:
	}
	if t.IsZero() {
		return
	}
	if dur := time.Until(t); dur > 0 {
		passed := d.passed
		d.timer = time.AfterFunc(dur, func() { close(passed) })
		return
	}
	close(d.passed)
}

func (d *deadline) wait() chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.passed
}

func (d *deadline) expired() bool {
	select {
	case <-d.wait():
		return true
	default:
		return false
	}
}
