package lab

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckNeedsWinAndCharge(t *testing.T) {
	win := Metric{Name: "reads", Kind: KindRead, Unit: "docs", Better: Lower, Naive: 6, Pattern: 1}
	pay := Metric{Name: "writes", Kind: KindWrite, Unit: "round trips", Better: Lower, Naive: 1, Pattern: 3}
	even := Metric{Name: "same", Kind: KindRead, Unit: "docs", Better: Lower, Naive: 1, Pattern: 1}
	for _, c := range []struct {
		ms   []Metric
		want error
	}{
		{[]Metric{win, pay}, nil},
		{[]Metric{win, even}, errNoCharge},
		{[]Metric{pay, even}, errNoWin},
		{nil, errNoWin},
	} {
		if err := Check(PatternResult{Pattern: "p", Metrics: c.ms}); !errors.Is(err, c.want) && !(err == nil && c.want == nil) {
			t.Errorf("%v: err %v, want %v", c.ms, err, c.want)
		}
	}
}

func TestVerdictPicksBiggestStableFigures(t *testing.T) {
	ms := []Metric{
		{Name: "page: documents examined", Unit: "docs", Better: Lower, Naive: 6, Pattern: 1},
		{Name: "page: bytes returned", Unit: "bytes", Better: Lower, Naive: 9000, Pattern: 100, Minor: true},
		{Name: "page: p50 latency", Unit: "µs", Better: Lower, Naive: 900, Pattern: 1, Timing: true},
		{Name: "delete: round trips", Unit: "round trips", Better: Lower, Naive: 1, Pattern: 4},
		{Name: "delete: documents written", Unit: "docs", Better: Lower, Naive: 1, Pattern: 2},
		{Name: "hit rate", Unit: "%", Better: Higher, Naive: 90, Pattern: 45},
	}
	v := verdict(ms)
	if v.Buy != "page: documents examined 6 → 1 docs (6.0× fewer)" {
		t.Errorf("buy %q", v.Buy)
	}
	if v.Charge != "delete: round trips 1 → 4 (4.0× more)" {
		t.Errorf("charge %q", v.Charge)
	}
	// Only latencies differ: the verdict falls back to them.
	v = verdict([]Metric{
		{Name: "p50", Unit: "µs", Better: Lower, Naive: 50, Pattern: 10, Timing: true},
		{Name: "p99", Unit: "µs", Better: Lower, Naive: 50, Pattern: 100, Timing: true},
	})
	if !strings.Contains(v.Buy, "5.0× less") || !strings.Contains(v.Charge, "2.0× more") {
		t.Errorf("timing verdict %+v", v)
	}
	// A charge the naive form does not have at all.
	v = verdict([]Metric{
		{Name: "reads", Unit: "docs", Better: Lower, Naive: 2, Pattern: 1},
		{Name: "views lost on a crash", Unit: "views", Better: Lower, Naive: 0, Pattern: 2300},
	})
	if v.Charge != "views lost on a crash 0 → 2,300 views (none in the naive form)" {
		t.Errorf("charge %q", v.Charge)
	}
}

func TestFormat(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", 1: "1", 6: "6", 1234567: "1,234,567", 3.24: "3.24", 68.1: "68.1", 0.00885: "0.00885", 146.4: "146", -2500: "-2,500",
	} {
		if got := Format(v, "docs"); got != want {
			t.Errorf("Format(%v) = %q, want %q", v, got, want)
		}
	}
}
