package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/command"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/wire"
)

// Server serves the MongoDB wire protocol for one command environment.
// It is safe for concurrent use.
type Server struct {
	env *command.Env
	log *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[net.Conn]struct{}
	closed    bool
	wg        sync.WaitGroup
	requestID atomic.Int32
}

// New returns a server over env.
func New(env *command.Env, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{env: env, log: log, ctx: ctx, cancel: cancel,
		listeners: map[net.Listener]struct{}{}, conns: map[net.Conn]struct{}{}}
}

// ErrClosed is returned by Serve after Close.
var ErrClosed = errors.New("server: closed")

// Serve accepts connections on l until l fails or the server is closed.
// It returns ErrClosed after Close.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	warnIfExposed(l, s.log, s.env.Config.Auth)
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()
	for {
		c, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return ErrClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		s.ServeConn(c)
	}
}

// ServeConn serves one already established connection in a new goroutine.
func (s *Server) ServeConn(c net.Conn) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.Close()
		return
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		s.handle(c)
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
}

// Close stops every listener and connection and waits for them (I3).
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for l := range s.listeners {
		l.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	return nil
}

func addr(a net.Addr) string {
	if a == nil {
		return "pipe"
	}
	return a.String()
}

func (s *Server) handle(c net.Conn) {
	defer c.Close()
	conn := s.env.NewConn(addr(c.RemoteAddr()), addr(c.LocalAddr()))
	defer s.env.CloseConn(conn)
	log := s.log.With("conn", conn.ID, "remote", conn.Remote)
	log.Debug("connection accepted")
	// A reader goroutine reads ahead so that a request in progress (an
	// awaitable hello, a long scan) is cancelled when the client goes away,
	// as mongod does.
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	if !handshake(ctx, c, log) {
		return
	}
	msgs := make(chan *wire.Message)
	go func() {
		defer cancel()
		defer close(msgs)
		r := bufio.NewReaderSize(c, 64<<10)
		if _, isTLS := c.(*tls.Conn); !isTLS && looksLikeTLS(r) {
			log.Warn("TLS handshake received but this server does not use TLS: closing the connection " +
				"(connect without tls=true, or start the server with --tls-cert-file and --tls-key-file)")
			return
		}
		for {
			msg, err := wire.ReadMessage(r)
			if err != nil && msg != nil && msg.Invalid != nil {
				err = nil // framed correctly: answered with its error below
			}
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.ErrClosedPipe) {
					log.Info("closing connection", "err", err)
				} else {
					log.Debug("connection closed")
				}
				return
			}
			select {
			case msgs <- msg:
			case <-ctx.Done():
				return
			}
		}
	}()
	var out []byte
	for msg := range msgs {
		reply, ok := s.serve(ctx, conn, msg, log)
		s.env.NoteNetwork(int(msg.Header.Length), sentLen(reply, ok)+replyHeaderLen(msg.Header.OpCode, ok))
		if conn.CloseRequested() {
			log.Debug("closing connection at a command's request")
			return
		}
		if !ok {
			continue
		}
		out = out[:0]
		if msg.Header.OpCode == wire.OpQuery {
			out = wire.AppendReply(out, s.requestID.Add(1), msg.Header.RequestID, reply)
		} else {
			out = wire.AppendMsg(out, s.requestID.Add(1), msg.Header.RequestID, 0, reply)
		}
		if _, err := c.Write(out); err != nil {
			log.Debug("write failed", "err", err)
			return
		}
	}
}

// serve runs one request and returns its reply, or ok=false when the
// client asked for none (I2). A panic becomes an InternalError reply.
func (s *Server) serve(ctx context.Context, conn *command.Conn, msg *wire.Message, log *slog.Logger) (reply []byte, ok bool) {
	defer func() {
		if p := recover(); p != nil {
			log.Error("panic serving request", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			reply, _ = bson.Marshal(mongoerr.Newf(mongoerr.InternalError, "internal error: %v", p).Reply())
			ok = msg.Flags&wire.FlagMoreToCome == 0 || msg.Header.OpCode == wire.OpQuery
		}
	}()
	if msg.Invalid != nil {
		reply, _ = bson.Marshal(mongoerr.New(mongoerr.Code(msg.Invalid.Code), msg.Invalid.Msg).Reply())
		return reply, msg.Flags&wire.FlagMoreToCome == 0 || msg.Header.OpCode == wire.OpQuery
	}
	if msg.Header.OpCode == wire.OpQuery {
		return s.serveQuery(ctx, conn, msg), true
	}
	body, err := msg.Command()
	if err != nil {
		code := mongoerr.InvalidBSON
		if pe := (*wire.ParseError)(nil); errors.As(err, &pe) {
			code = mongoerr.Code(pe.Code)
		}
		reply, _ = bson.Marshal(mongoerr.New(code, strings.TrimPrefix(err.Error(), "wire: ")).Reply())
		return reply, msg.Flags&wire.FlagMoreToCome == 0
	}
	reply = s.env.Dispatch(ctx, conn, body)
	if msg.Flags&wire.FlagMoreToCome != 0 {
		return nil, false
	}
	return reply, true
}

// serveQuery answers an OP_QUERY, which clients send only for the first
// handshake: hello/isMaster against <db>.$cmd. Anything else gets mongod's
// UnsupportedOpQueryCommand error.
func (s *Server) serveQuery(ctx context.Context, conn *command.Conn, msg *wire.Message) []byte {
	db, coll, _ := strings.Cut(msg.FullCollectionName, ".")
	body := msg.Body
	if q, err := body.LookupErr("$query"); err == nil {
		if d, ok := q.DocumentOK(); ok {
			body = d
		}
	}
	first, err := body.IndexErr(0)
	name := ""
	if err == nil {
		name = first.Key()
	}
	if coll != "$cmd" || (name != "isMaster" && name != "ismaster" && name != "hello") {
		b, _ := bson.Marshal(mongoerr.Newf(mongoerr.UnsupportedOpQueryCommand, "Unsupported OP_QUERY command: %s. The client driver may require an upgrade. For more details see https://dochub.mongodb.org/core/legacy-opcode-removal", name).Reply())
		return b
	}
	// Re-encode with $db so the command layer sees an OP_MSG-shaped body.
	elems, _ := body.Elements()
	d := make(bson.D, 0, len(elems)+1)
	for _, e := range elems {
		if e.Key() == "$db" {
			continue
		}
		d = append(d, bson.E{Key: e.Key(), Value: e.Value()})
	}
	d = append(d, bson.E{Key: "$db", Value: db})
	cmd, err := bson.Marshal(d)
	if err != nil {
		b, _ := bson.Marshal(mongoerr.Newf(mongoerr.InvalidBSON, "%v", err).Reply())
		return b
	}
	return s.env.Dispatch(ctx, conn, cmd)
}
