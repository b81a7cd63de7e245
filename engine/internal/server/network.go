package server

import "github.com/formworkdb/formwork/engine/internal/wire"

// replyHeaderLen is how many bytes a reply's framing adds to its body:
// OP_REPLY's header and fields, or OP_MSG's header, flag bits and section
// kind; none when no reply is sent. It feeds serverStatus' bytesOut.
func replyHeaderLen(op wire.OpCode, sent bool) int {
	switch {
	case !sent:
		return 0
	case op == wire.OpQuery:
		return 16 + 20
	default:
		return 16 + 4 + 1
	}
}

// sentLen is the body length of a reply, 0 when none is sent.
func sentLen(reply []byte, sent bool) int {
	if !sent {
		return 0
	}
	return len(reply)
}
