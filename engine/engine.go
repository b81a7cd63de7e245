package engine

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/formworkdb/formwork/engine/internal/command"
	"github.com/formworkdb/formwork/engine/internal/memconn"
	"github.com/formworkdb/formwork/engine/internal/server"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// Options configure Open.
type Options struct {
	// Dir is the directory holding the database; empty means in memory.
	Dir string
	// Standalone makes the server describe itself as a standalone mongod
	// instead of a one-member replica set.
	Standalone bool
	// ReplicaSetName is the set name reported in hello; "formwork" if empty.
	ReplicaSetName string
	// Host is the "host:port" the server advertises in hello (hosts, me,
	// primary). Clients connecting as a replica set use it to reconnect,
	// so it must be reachable; "localhost:27017" if empty.
	Host string
	// CursorTimeout is how long an idle cursor lives; 10 minutes if zero.
	CursorTimeout time.Duration
	// SessionTimeout is mongod's localLogicalSessionTimeoutMinutes: a
	// logical session unused this long is ended, its open transaction
	// aborted and its cursors killed; 30 minutes if zero.
	SessionTimeout time.Duration
	// TTLInterval is how often the TTL monitor deletes expired documents;
	// 60 seconds (mongod's ttlMonitorSleepSecs) if zero.
	TTLInterval time.Duration
	// Logger receives the engine's log records; nil discards them.
	Logger *slog.Logger
	// CacheSize is the storage block cache in bytes: the documents and
	// index entries kept decompressed in memory. Reads of data outside it
	// cost a block read and decompression each. Zero means 256 MiB;
	// Pebble allocates it as it fills, so small databases use less.
	CacheSize int64
	// ExecutionTickets is how many reads and writes (find, getMore,
	// aggregate, count, distinct, explain; insert, update, delete,
	// findAndModify) execute at once, as mongod's execution tickets; the
	// others wait in a queue, a waiting read ahead of a waiting write, so
	// that reads keep their latency when more clients than CPUs write.
	// Writes hold at most half the tickets, and are not limited when no
	// read has run for 10 ms. An operation waiting for the write lock, a
	// WAL sync or a transaction gives its ticket back meanwhile. Zero
	// means twice GOMAXPROCS; negative means no limit. serverStatus
	// reports the queues under queues.execution.
	ExecutionTickets int
	// EnableTestCommands turns on configureFailPoint and its failpoints
	// (failCommand), as mongod's --setParameter enableTestCommands=1;
	// off, the command answers CommandNotFound.
	EnableTestCommands bool
	// TLSConfig, when not nil, makes Serve accept only TLS connections,
	// handshaking with this configuration (certificates, client
	// certificate policy). ServerTLSConfig builds one from PEM files as
	// formwork serve's --tls-* flags do. In-process connections from
	// Dialer never use TLS.
	TLSConfig *tls.Config
	// Auth turns on access control, as mongod's --auth: clients must
	// authenticate (SCRAM-SHA-256 or SCRAM-SHA-1) before any command but
	// the handshake, and each command needs a privilege its user's roles
	// grant. Users live in admin.system.users; with none yet, a client on
	// the same host (loopback or Dialer) may create the first one (the
	// localhost exception). Off, commands run unchecked, though clients
	// that send credentials are still authenticated.
	Auth bool

	// fs replaces the file system under Dir (fault injection in tests,
	// export_test.go).
	fs vfs.FS

	// OplogSize caps local.oplog.rs in bytes; the oldest entries are
	// truncated past it. Zero means 192 MiB in memory and 990 MB on disk.
	// A change stream that falls behind the truncation fails with
	// ChangeStreamHistoryLost.
	OplogSize int64

	// OplogMinRetentionHours keeps oplog entries at least this many hours,
	// even past OplogSize, as mongod's storage.oplogMinRetentionHours;
	// zero (the default) keeps none past the size. replSetResizeOplog
	// changes it until the database is closed.
	OplogMinRetentionHours float64
}

// DB is an open database. It is safe for concurrent use.
type DB struct {
	store  *storage.Store
	env    *command.Env
	srv    *server.Server
	stop   chan struct{}
	reaped sync.WaitGroup
	once   sync.Once
	tls    *tls.Config
}

// Open opens (creating if needed) the database described by opts.
func Open(ctx context.Context, opts Options) (*DB, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Every record also goes to a ring of recent lines for getLog.
	log, ram := command.WithRAMLog(opts.Logger)
	opts.Logger = log
	st, err := storage.Open(storage.Options{Dir: opts.Dir, Logger: opts.Logger, CacheSize: opts.CacheSize, FS: opts.fs, OplogSize: opts.OplogSize,
		OplogMinRetention: time.Duration(opts.OplogMinRetentionHours * float64(time.Hour))})
	if err != nil {
		return nil, err
	}
	env := command.NewEnv(st, command.Config{
		Standalone:     opts.Standalone,
		SetName:        opts.ReplicaSetName,
		Host:           opts.Host,
		DBPath:         opts.Dir,
		CursorTimeout:  opts.CursorTimeout,
		SessionTimeout: opts.SessionTimeout,
		Logger:         opts.Logger,

		EnableTestCommands: opts.EnableTestCommands,
		RAMLog:             ram,
		Auth:               opts.Auth,
		Tickets:            opts.ExecutionTickets,
	})
	db := &DB{store: st, env: env, srv: server.New(env, opts.Logger), stop: make(chan struct{}), tls: opts.TLSConfig}
	env.Config.OnShutdown = func() { db.Close() }
	db.reaped.Add(3)
	go db.reapCursors(opts.CursorTimeout)
	go db.reapSessions(opts.SessionTimeout)
	go db.expireTTL(opts.TTLInterval, opts.Logger)
	ram.EndStartup()
	return db, nil
}

// reapCursors closes idle cursors, checking every minute or every tenth of
// the timeout when that is shorter.
func (db *DB) reapCursors(timeout time.Duration) {
	db.reapEvery(time.Minute, timeout, db.env.Cursors.Expire)
}

// reapSessions ends expired logical sessions every five minutes (mongod's
// logicalSessionRefreshMillis), or every tenth of the timeout when that
// is shorter.
func (db *DB) reapSessions(timeout time.Duration) {
	db.reapEvery(5*time.Minute, timeout, db.env.ReapSessions)
}

// reapEvery calls reap every period, or every tenth of timeout when that
// is shorter, until the database closes.
func (db *DB) reapEvery(period, timeout time.Duration, reap func(now time.Time) int) {
	defer db.reaped.Done()
	if timeout > 0 && timeout/10 < period {
		period = max(timeout/10, time.Millisecond)
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-db.stop:
			return
		case now := <-t.C:
			reap(now)
		}
	}
}

// expireTTL runs the TTL monitor every interval until Close.
func (db *DB) expireTTL(every time.Duration, log *slog.Logger) {
	defer db.reaped.Done()
	if every <= 0 {
		every = 60 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-db.stop:
			return
		case now := <-t.C:
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				select {
				case <-db.stop:
					cancel()
				case <-ctx.Done():
				}
			}()
			if _, err := db.env.ExpireTTL(ctx, now); err != nil && log != nil && ctx.Err() == nil {
				log.Error("TTL monitor", "err", err)
			}
			cancel()
		}
	}
}

// Serve accepts MongoDB wire protocol connections on l until l fails or
// the database is closed. It returns ErrClosed after Close. With
// Options.TLSConfig set, every connection on l must speak TLS.
func (db *DB) Serve(l net.Listener) error {
	if db.tls != nil {
		l = tls.NewListener(l, db.tls)
	}
	err := db.srv.Serve(l)
	if errors.Is(err, server.ErrClosed) {
		return ErrClosed
	}
	return err
}

// ErrClosed is returned by Serve once the database is closed.
var ErrClosed = errors.New("engine: closed")

// Dialer returns a dialer for the driver's SetDialer that connects in
// process, without a network port.
func (db *DB) Dialer() *Dialer { return &Dialer{db: db} }

// Dialer connects the driver to a DB in process.
type Dialer struct{ db *DB }

// DialContext returns one end of an in-memory connection whose other end
// the database serves. Network and address are ignored.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	client, srv := memconn.Pipe()
	d.db.srv.ServeConn(srv)
	return client, nil
}

// Close closes every connection and cursor, then the storage. It is safe
// to call more than once.
func (db *DB) Close() error {
	var err error
	db.once.Do(func() {
		db.env.ReleaseFsyncLock() // writers blocked by fsyncLock must finish
		close(db.stop)
		db.reaped.Wait()
		db.srv.Close()
		db.env.Close()
		err = db.store.Close()
	})
	return err
}
