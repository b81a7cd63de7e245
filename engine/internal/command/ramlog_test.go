package command

import (
	"fmt"
	"strings"
	"testing"
)

func TestRAMLogKeepsNewestLines(t *testing.T) {
	log, ram := WithRAMLog(nil)
	log.Warn("during startup")
	ram.EndStartup()
	log.Debug("not kept")
	for i := 0; i < ramLogLines+100; i++ {
		log.Info(fmt.Sprintf("line %d", i), "conn", 7)
	}
	lines, total := ram.snapshot("global")
	if total != ramLogLines+101 || len(lines) != ramLogLines {
		t.Fatalf("total %d, %d lines", total, len(lines))
	}
	if !strings.Contains(lines[0], `"msg":"line 100"`) || !strings.Contains(lines[len(lines)-1], fmt.Sprintf(`"msg":"line %d"`, ramLogLines+99)) {
		t.Fatalf("order: %q ... %q", lines[0], lines[len(lines)-1])
	}
	if !strings.Contains(lines[0], `"ctx":"conn7"`) {
		t.Fatalf("ctx: %q", lines[0])
	}
	warn, n := ram.snapshot("startupWarnings")
	if n != 1 || !strings.Contains(warn[0], "during startup") || !strings.Contains(warn[0], `"s":"W"`) {
		t.Fatalf("startupWarnings %q", warn)
	}
}
