package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
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
}

func newServeCmd(env Env) *cobra.Command {
	o := &serveOptions{}
	c := &cobra.Command{
		Use:   "serve",
		Short: "Run the embedded MongoDB-compatible server",
		Long: `Run Formwork's embedded database and serve the MongoDB wire protocol, so
that mongosh, pymongo and the official drivers can use it.

Without --dbpath the database lives in memory and is lost on exit.`,
		Example: `  formwork serve
  formwork serve --dbpath ./data --listen 127.0.0.1:27017
  formwork serve --dbpath ./data --cache-size 2GiB
  mongosh mongodb://127.0.0.1:27017/test

Exit status: 0 after a clean shutdown (SIGINT/SIGTERM), 1 on error, 2 on usage error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(env, o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.DBPath, "dbpath", "", "directory of the database files (default: in memory)")
	f.StringVar(&o.Listen, "listen", "127.0.0.1:27017", "address to listen on")
	f.BoolVar(&o.Standalone, "standalone", false, "present a standalone server instead of a one-member replica set")
	f.BoolVarP(&o.Verbose, "verbose", "v", false, "log every connection")
	f.Var(&o.CacheSize, "cache-size", "storage block cache, e.g. 1GiB or 512MB (default 256MiB)")
	f.BoolVar(&o.EnableTestCommands, "enable-test-commands", false, "enable configureFailPoint (failCommand) for testing drivers' retries, as mongod's enableTestCommands")
	return c
}

func runServe(env Env, o *serveOptions) error {
	level := slog.LevelInfo
	if o.Verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: level}))
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

		EnableTestCommands: o.EnableTestCommands,
	})
	if err != nil {
		l.Close()
		return err
	}
	mode := "replica set member (set formwork)"
	if o.Standalone {
		mode = "standalone"
	}
	log.Info("formwork serving", "addr", l.Addr().String(), "mode", mode, "dbpath", o.DBPath)
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
