//go:build linux

package engine_test

import (
	"os"
	"syscall"
	"time"
)

// fdatasync flushes f's data (not its metadata) to the disk.
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }

// processCPU returns the CPU time (user and system) the process has used,
// and whether it could be measured. On a shared machine it tracks the
// work done better than wall time, which other processes inflate.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
