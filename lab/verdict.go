package lab

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Wins reports whether the pattern does better than the naive form on m.
func (m Metric) Wins() bool {
	if m.Better == Higher {
		return m.Pattern > m.Naive
	}
	return m.Pattern < m.Naive
}

// Pays reports whether the pattern does worse than the naive form on m.
func (m Metric) Pays() bool {
	if m.Better == Higher {
		return m.Pattern < m.Naive
	}
	return m.Pattern > m.Naive
}

// Ratio returns how many times better (for a win) or worse (for a
// charge) the pattern does: the larger figure over the smaller, +Inf
// when the smaller is 0, and 1 when they are equal.
func (m Metric) Ratio() float64 {
	hi, lo := math.Max(m.Naive, m.Pattern), math.Min(m.Naive, m.Pattern)
	switch {
	case hi == lo:
		return 1
	case lo <= 0:
		return math.Inf(1)
	}
	return hi / lo
}

// errNoWin and errNoCharge are Check's findings.
var (
	errNoWin    = errors.New("no metric where the pattern wins")
	errNoCharge = errors.New("no metric where the pattern pays")
)

// Check reports a result that does not show both a win and a charge of
// its pattern: a pattern with no charge was not measured honestly.
func Check(r PatternResult) error {
	var win, pay bool
	for _, m := range r.Metrics {
		win = win || m.Wins()
		pay = pay || m.Pays()
	}
	switch {
	case !win:
		return fmt.Errorf("%s: %w", r.Pattern, errNoWin)
	case !pay:
		return fmt.Errorf("%s: %w", r.Pattern, errNoCharge)
	}
	return nil
}

// verdict names the biggest win and the biggest charge, preferring the
// metrics that do not vary from run to run (counts and sizes) over
// latencies, and those over the minor ones (bytes on the wire); among
// equal ratios the first metric wins.
func verdict(ms []Metric) Verdict {
	return Verdict{
		Buy:    describe(pick(ms, Metric.Wins), "wins on nothing measured"),
		Charge: describe(pick(ms, Metric.Pays), "pays nothing measured"),
	}
}

// tier orders metrics for the verdict: counts and sizes, then bytes on
// the wire, then latencies.
func (m Metric) tier() int {
	switch {
	case m.Timing:
		return 2
	case m.Minor:
		return 1
	}
	return 0
}

// pick returns the metric with the largest ratio among those ok accepts,
// from the first tier that has one, or nil.
func pick(ms []Metric, ok func(Metric) bool) *Metric {
	for tier := range 3 {
		var best *Metric
		for i := range ms {
			m := &ms[i]
			if m.tier() != tier || !ok(*m) {
				continue
			}
			if best == nil || m.Ratio() > best.Ratio() {
				best = m
			}
		}
		if best != nil {
			return best
		}
	}
	return nil
}

// describe phrases one verdict line: "product page: documents examined
// 6 → 1 docs (6.0× fewer)".
func describe(m *Metric, none string) string {
	if m == nil {
		return none
	}
	more := m.Pattern > m.Naive
	r := m.Ratio()
	var how string
	switch {
	case math.IsInf(r, 1) && more:
		how = "none in the naive form"
	case math.IsInf(r, 1):
		how = "none left"
	default:
		word := "fewer"
		switch {
		case more:
			word = "more"
		case m.Unit == "bytes" || m.Unit == "µs" || m.Unit == "ms" || m.Unit == "%":
			word = "less"
		}
		how = ratioText(r) + "× " + word
	}
	unit := " " + m.Unit
	if strings.HasSuffix(m.Name, m.Unit) || m.Unit == "%" {
		unit = strings.TrimPrefix(unit, " ")
		if m.Unit != "%" {
			unit = ""
		}
	}
	return fmt.Sprintf("%s %s → %s%s (%s)", m.Name, Format(m.Naive, m.Unit), Format(m.Pattern, m.Unit), unit, how)
}

// ratioText prints a ratio with two significant digits.
func ratioText(r float64) string {
	if r >= 10 {
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.1f", r)
}

// Format prints a figure for humans: integers with thousands
// separators, fractions with up to three significant digits.
func Format(v float64, unit string) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Sprint(v)
	}
	a := math.Abs(v)
	switch {
	case a >= 100 || v == math.Trunc(v):
		return thousands(int64(math.Round(v)))
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// thousands prints n with comma separators.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var out []byte
	for i, c := range []byte(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, c)
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
