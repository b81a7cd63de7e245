package cli

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/formworkdb/formwork/engine"
)

// serveOptions are the flags of formwork serve.
type serveOptions struct {
	DBPath     string
	Listen     string
	Standalone bool
	Verbose    bool
	CacheSize  byteSize
	// EnableTestCommands turns on configureFailPoint.
	EnableTestCommands bool
	// TLSCertFile, TLSKeyFile and TLSCAFile turn on TLS: the server's
	// certificate chain and key, and the CA that signs the client
	// certificates accepted (optional; clients without one still connect).
	TLSCertFile, TLSKeyFile, TLSCAFile string
	// Auth turns on access control (mongod's --auth).
	Auth bool
	// ExecutionTickets is engine.Options.ExecutionTickets.
	ExecutionTickets int
}

func newServeCmd(env Env) *cobra.Command {
	o := &serveOptions{}
	c := &cobra.Command{
		Use:   "serve",
		Short: "Run the embedded MongoDB-compatible server",
		Long: `Run Formwork's embedded database and serve the MongoDB wire protocol, so
that mongosh, pymongo and the official drivers can use it.

Without --dbpath the database lives in memory and is lost on exit.

With --tls-cert-file and --tls-key-file (PEM) the server accepts only TLS
connections. With --tls-ca-file too, a client that presents a certificate
must present one signed by that CA; clients without a certificate are still
accepted, as mongod's --tlsAllowConnectionsWithoutCertificates.

With --auth clients must authenticate (SCRAM-SHA-256 or SCRAM-SHA-1) and
each command needs a privilege of the user's roles (read, readWrite,
dbAdmin, userAdmin, dbOwner, root, ...). Users are stored in
admin.system.users. While there is no user, a client on this host may
create the first one (the localhost exception). Without --auth, listening
on anything but a loopback address logs a warning.`,
		Example: `  formwork serve
  formwork serve --dbpath ./data --listen 127.0.0.1:27017
  formwork serve --dbpath ./data --cache-size 2GiB
  formwork serve --tls-cert-file server.crt --tls-key-file server.key --tls-ca-file ca.pem
  mongosh mongodb://127.0.0.1:27017/test
  mongosh "mongodb://localhost:27017/test?tls=true&tlsCAFile=ca.pem"
  formwork serve --dbpath ./data --auth
  mongosh admin --eval 'db.createUser({user: "admin", pwd: "secret", roles: ["root"]})'
  mongosh "mongodb://admin:secret@localhost:27017/test?authSource=admin"

Exit status: 0 after a clean shutdown (SIGINT/SIGTERM), 1 on error, 2 on usage error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validateTLS(); err != nil {
				return usageError{err}
			}
			return runServe(env, o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.DBPath, "dbpath", "", "directory of the database files (default: in memory)")
	f.StringVar(&o.Listen, "listen", "127.0.0.1:27017", "address to listen on")
	f.BoolVar(&o.Standalone, "standalone", false, "present a standalone server instead of a one-member replica set")
	f.BoolVarP(&o.Verbose, "verbose", "v", false, "log every connection")
	f.Var(&o.CacheSize, "cache-size", "storage block cache, e.g. 1GiB or 512MB (default 256MiB)")
	f.StringVar(&o.TLSCertFile, "tls-cert-file", "", "PEM certificate chain of the server; with --tls-key-file, serve only TLS")
	f.StringVar(&o.TLSKeyFile, "tls-key-file", "", "PEM private key of --tls-cert-file (may be the same file)")
	f.StringVar(&o.TLSCAFile, "tls-ca-file", "", "PEM CA certificates that verify client certificates when clients present one")
	f.BoolVar(&o.Auth, "auth", false, "require clients to authenticate (SCRAM-SHA-256/SCRAM-SHA-1) and enforce users' roles; create the first user from localhost")
	f.IntVar(&o.ExecutionTickets, "execution-tickets", 0, "reads and writes that execute at once; the rest queue, reads first (default twice the CPUs, -1 for no limit)")
	f.BoolVar(&o.EnableTestCommands, "enable-test-commands", false, "enable configureFailPoint (failCommand) for testing drivers' retries, as mongod's enableTestCommands")
	return c
}

// validateTLS checks that the TLS flags come together and name readable
// files, so that a typo is a usage error before anything is opened.
func (o *serveOptions) validateTLS() error {
	switch {
	case o.TLSCertFile == "" && o.TLSKeyFile == "" && o.TLSCAFile == "":
		return nil
	case o.TLSCertFile == "":
		return errors.New("--tls-key-file and --tls-ca-file need --tls-cert-file")
	case o.TLSKeyFile == "":
		return errors.New("--tls-cert-file needs --tls-key-file (the certificate's private key)")
	}
	for _, f := range []struct{ flag, path string }{
		{"--tls-cert-file", o.TLSCertFile}, {"--tls-key-file", o.TLSKeyFile}, {"--tls-ca-file", o.TLSCAFile},
	} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			return fmt.Errorf("%s: %w", f.flag, err)
		}
	}
	return nil
}

func runServe(env Env, o *serveOptions) error {
	level := slog.LevelInfo
	if o.Verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: level}))
	var tlsConfig *tls.Config
	if o.TLSCertFile != "" {
		cfg, err := engine.ServerTLSConfig(o.TLSCertFile, o.TLSKeyFile, o.TLSCAFile)
		if err != nil {
			return err
		}
		tlsConfig = cfg
	}
	l, err := net.Listen("tcp", o.Listen)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("cannot listen on %s: the address is already in use (is another mongod or formwork running? choose another with --listen)", o.Listen)
		}
		return fmt.Errorf("cannot listen on %s: %w", o.Listen, err)
	}
	ctx, stop := env.Signals()
	defer stop()
	if o.DBPath == "" {
		log.Warn("no --dbpath given: the database is in memory and is lost when the server stops")
	}
	db, err := engine.Open(ctx, engine.Options{
		Dir:        o.DBPath,
		Standalone: o.Standalone,
		Host:       l.Addr().String(),
		Logger:     log,
		CacheSize:  int64(o.CacheSize),

		ExecutionTickets:   o.ExecutionTickets,
		EnableTestCommands: o.EnableTestCommands,
		TLSConfig:          tlsConfig,
		Auth:               o.Auth,
	})
	if err != nil {
		l.Close()
		return err
	}
	mode := "replica set member (set formwork)"
	if o.Standalone {
		mode = "standalone"
	}
	log.Info("formwork serving", "addr", l.Addr().String(), "mode", mode, "dbpath", o.DBPath, "tls", tlsConfig != nil, "auth", o.Auth)
	errc := make(chan error, 1)
	go func() { errc <- db.Serve(l) }()
	select {
	case <-ctx.Done():
		log.Info("shutting down")
		if err := db.Close(); err != nil {
			return err
		}
		<-errc
		return nil
	case err := <-errc:
		db.Close()
		if errors.Is(err, engine.ErrClosed) {
			return nil
		}
		return err
	}
}
