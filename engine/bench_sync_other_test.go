//go:build !linux

package engine_test

import "os"

// fdatasync flushes f to the disk; without fdatasync, with fsync.
func fdatasync(f *os.File) error { return f.Sync() }
