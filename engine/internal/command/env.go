package command

import (
	"crypto/rand"
	"github.com/formworkdb/formwork/engine/internal/admission"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/storage"
)

// Config describes how the server presents itself.
type Config struct {
	// Standalone turns off the single-node replica set presentation.
	Standalone bool
	// SetName is the replica set name; "formwork" when empty.
	SetName string
	// Host is the advertised "host:port" of this server.
	Host string
	// DBPath is reported by getCmdLineOpts; empty for in memory.
	DBPath string
	// CursorTimeout is how long an idle cursor lives; 10 minutes when 0.
	CursorTimeout time.Duration
	// SessionTimeout is localLogicalSessionTimeoutMinutes: a session
	// unused this long is reaped (ReapSessions); 30 minutes when 0.
	SessionTimeout time.Duration
	// Logger receives log records; nil discards them.
	Logger *slog.Logger
	// EnableTestCommands turns on configureFailPoint (mongod's
	// enableTestCommands); without it the command is CommandNotFound.
	EnableTestCommands bool
	// RAMLog keeps the recent log lines getLog answers; see WithRAMLog.
	RAMLog *RAMLog
	// Auth turns on access control (mongod's --auth): every command but
	// the handshake and authentication needs an authenticated user whose
	// roles grant it (authz.go).
	Auth bool
	// OnShutdown closes the engine; the shutdown command calls it on its
	// own goroutine. Nil makes shutdown unavailable.
	OnShutdown func()
	// Tickets is how many reads and writes execute at once (admission.go);
	// 0 means twice GOMAXPROCS, negative means no limit.
	Tickets int
}

// Env is the state shared by every connection of one engine. It is safe
// for concurrent use.
type Env struct {
	Store   *storage.Store
	Config  Config
	Cursors *Cursors
	retry   *retryCache
	log     *slog.Logger
	started time.Time
	nextCID atomic.Int64 // connection ids
	// connCurrent counts open connections; the server maintains it.
	connCurrent atomic.Int64
	clock       logicalClock
	params      *parameters
	ttl         ttlStats
	// tsBuckets holds the open buckets and counters of every time series.
	tsBuckets *bucketCatalog
	x         *envExt // planner, profiler and index usage state
	inprog    *inProgress
	builds    buildsByRequest // index builds in progress, for currentOp (index_build.go)
	sessions  *sessionCache
	fail      *failPoints // configureFailPoint's failpoints
	gate      *admission.Gate
	fsync     fsyncLock // fsync lock: true
	top       topStats  // the top command's figures
	// shuttingDown is set by the shutdown command: new commands fail.
	shuttingDown atomic.Bool

	stats serverStats // serverStatus' counters (server_status.go)

	validators validators // compiled collection validators (validation.go)
	users      *userStore // admin.system.users and admin.system.roles (auth_store.go)

	snapHist snapshotHistory // views of snapshot reads (snapshot_read.go)
}

// NewEnv returns the command environment over st.
func NewEnv(st *storage.Store, cfg Config) *Env {
	if cfg.SetName == "" {
		cfg.SetName = "formwork"
	}
	if cfg.Host == "" {
		cfg.Host = "localhost:27017"
	}
	if cfg.CursorTimeout == 0 {
		cfg.CursorTimeout = 10 * time.Minute
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Env{
		Store:     st,
		Config:    cfg,
		Cursors:   newCursors(cfg.CursorTimeout),
		retry:     newRetryCache(st),
		tsBuckets: &bucketCatalog{open: map[uint64]map[string]*openBucket{}, stats: map[uint64]*tsStats{}},
		log:       log,
		started:   time.Now(),
		params:    newParameters(),
		x:         newEnvExt(),
		inprog:    newInProgress(),
		sessions:  newSessionCache(cfg.SessionTimeout),
		fail:      newFailPoints(),
		gate:      newGate(cfg.Tickets),
		users:     newUserStore(st),
		clock:     logicalClock{src: st.Clock()},
	}
}

// Close releases the cursors and aborts open transactions.
func (e *Env) Close() {
	e.Cursors.closeAll()
	e.abortAllTxns()
	e.closeSnapshotHistory()
}

// NewConn returns the state of a new client connection. The caller calls
// CloseConn when the connection ends.
func (e *Env) NewConn(remote, local string) *Conn {
	e.connCurrent.Add(1)
	c := &Conn{ID: e.nextCID.Add(1), Remote: remote, Local: local}
	e.inprog.addConn(c)
	return c
}

// CloseConn records the end of a connection.
func (e *Env) CloseConn(c *Conn) {
	e.connCurrent.Add(-1)
	e.inprog.removeConn(c)
}

func newSessionUUID() []byte {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return b
}

// Conn is the per-connection state.
type Conn struct {
	ID     int64
	Remote string
	Local  string
	// Client is the client metadata sent with the first hello.
	Client bson.Raw
	// handshakeDone is set after the first hello; later hellos may not
	// change client metadata.
	handshakeDone bool
	// closeRequested is set by a command that wants the connection
	// dropped without a reply (failCommand's closeConnection).
	closeRequested atomic.Bool
	// auth is the connection's authentication state (auth_session.go).
	auth connAuth
}

func (e *Env) countOp(kind string) { e.stats.countOp(kind) }

// logicalClock hands out increasing timestamps for operationTime and
// $clusterTime.
type logicalClock struct {
	mu   sync.Mutex
	last bson.Timestamp
	src  *storage.Clock // the store's clock, which times the oplog; nil: own
}

func (c *logicalClock) now() bson.Timestamp {
	if c.src != nil {
		return c.src.Tick()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t := uint32(time.Now().Unix())
	if t > c.last.T {
		c.last = bson.Timestamp{T: t, I: 1}
	} else {
		c.last.I++
	}
	return c.last
}

func (c *logicalClock) current() bson.Timestamp {
	if c.src != nil {
		return c.src.Current()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last.T == 0 {
		c.last = bson.Timestamp{T: uint32(time.Now().Unix()), I: 1}
	}
	return c.last
}
