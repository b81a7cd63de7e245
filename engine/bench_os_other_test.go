//go:build !linux

package engine_test

import (
	"os"
	"time"
)

// fdatasync flushes f to the disk; without fdatasync, with fsync.
func fdatasync(f *os.File) error { return f.Sync() }

// processCPU reports that CPU time is not measured on this system.
func processCPU() (time.Duration, bool) { return 0, false }
