package engine

import "github.com/cockroachdb/pebble/v2/vfs"

// WithFS sets the file system the database's files live on, so tests can
// inject faults (a full disk).
func WithFS(o *Options, fs vfs.FS) { o.fs = fs }
