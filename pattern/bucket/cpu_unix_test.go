//go:build unix

package bucket

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time the process (client and in-process engine)
// has used, user and system: a per-element cost that other processes on a
// shared machine disturb less than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
