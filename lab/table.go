package lab

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// ANSI styles of the terminal table.
const (
	ansiBold  = "\x1b[1m"
	ansiGreen = "\x1b[32m"
	ansiRed   = "\x1b[31m"
	ansiDim   = "\x1b[2m"
	ansiReset = "\x1b[0m"
)

// WriteTable writes the report as one aligned table per pattern, led by
// its verdict. With color, wins are green and charges red; without it
// the output is plain text (for files and pipes).
func (r Report) WriteTable(w io.Writer, color bool) error {
	paint := func(style, s string) string {
		if !color || style == "" {
			return s
		}
		return style + s + ansiReset
	}
	var b strings.Builder
	fmt.Fprintf(&b, "formwork lab: %s, server %s (%s), scale %d, seed %d",
		r.Server.Target, r.Server.Version, r.Server.Topology, r.Scale, r.Seed)
	if r.Seconds > 0 {
		fmt.Fprintf(&b, ", %.1f s", r.Seconds)
	}
	b.WriteString("\n")
	for _, p := range r.Patterns {
		fmt.Fprintf(&b, "\n%s — %s\n", paint(ansiBold, p.Pattern), p.Scenario)
		fmt.Fprintf(&b, "  %s  %s\n", paint(ansiGreen, "buy   "), p.Verdict.Buy)
		fmt.Fprintf(&b, "  %s  %s\n\n", paint(ansiRed, "charge"), p.Verdict.Charge)
		rows := [][]string{{"metric", "kind", "naive", "pattern", "unit"}}
		styles := []string{ansiDim}
		for _, m := range p.Metrics {
			rows = append(rows, []string{m.Name, string(m.Kind), Format(m.Naive, m.Unit), Format(m.Pattern, m.Unit), m.Unit})
			switch {
			case m.Wins():
				styles = append(styles, ansiGreen)
			case m.Pays():
				styles = append(styles, ansiRed)
			default:
				styles = append(styles, "")
			}
		}
		writeRows(&b, rows, styles, paint)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeRows aligns rows: text columns left, the two figures right; the
// pattern column (or the whole header) takes the row's style. Widths
// count runes, so that colour codes and "µ" do not shift columns.
func writeRows(b *strings.Builder, rows [][]string, styles []string, paint func(string, string) string) {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for ri, r := range rows {
		b.WriteString("  ")
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			cell := c + pad
			switch {
			case i == 2 || i == 3:
				cell = pad + c
			case i == len(r)-1:
				cell = c // no trailing blanks
			}
			if ri == 0 || i == 3 {
				cell = paint(styles[ri], cell)
			}
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(cell)
		}
		b.WriteString("\n")
	}
}
