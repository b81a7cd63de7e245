package memconn

import (
	"net"
	"testing"

	"golang.org/x/net/nettest"
)

// TestConn runs x/net's conformance suite for net.Conn implementations:
// basic I/O, ping-pong, racing reads and writes, deadlines (past, future,
// concurrent), and closing.
func TestConn(t *testing.T) {
	nettest.TestConn(t, func() (c1, c2 net.Conn, stop func(), err error) {
		c1, c2 = Pipe()
		return c1, c2, func() { c1.Close(); c2.Close() }, nil
	})
}
