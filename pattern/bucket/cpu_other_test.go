//go:build !unix

package bucket

import "time"

// cpuTime is 0 where getrusage is not available; cpu-ns/element then
// reads 0.
func cpuTime() time.Duration { return 0 }
