package advisor

import (
	"fmt"
	"io"
	"strings"
)

// WriteText writes the findings grouped by collection, highest severity
// first within each, with their evidence and fix. colour adds ANSI
// colours for a terminal.
func (r *Report) WriteText(w io.Writer, colour bool) error {
	b := &strings.Builder{}
	s := r.Snapshot
	if s != nil {
		fmt.Fprintf(b, "formwork advise — %s, MongoDB %s (%s)\n", orText(s.Server.Target, "server"), s.Server.Version, s.Server.Topology)
		colls, shapes := 0, len(s.Shapes)
		for _, d := range s.Databases {
			colls += len(d.Collections)
		}
		fmt.Fprintf(b, "read %d collections (sample %d), %d workload entries in %d shapes from %s\n",
			colls, s.Sample, s.Workload.Entries, shapes, orText(s.Workload.Source, "no workload"))
	}
	if len(r.Findings) == 0 {
		b.WriteString("\nno findings\n")
	}
	last := ""
	for _, f := range r.Findings {
		if f.Namespace != last {
			last = f.Namespace
			fmt.Fprintf(b, "\n%s\n", paint(colour, "1", f.Namespace))
		}
		fmt.Fprintf(b, "  %s %s: %s\n", paint(colour, sevColour(f.Severity), fmt.Sprintf("%-7s", f.Severity)), f.ID, f.Message)
		if f.Subject != "" {
			fmt.Fprintf(b, "          on %s\n", f.Subject)
		}
		figs := make([]string, len(f.Evidence.Figures))
		for i, g := range f.Evidence.Figures {
			figs[i] = g.String()
		}
		fmt.Fprintf(b, "          evidence: %s\n", strings.Join(figs, "; "))
		fmt.Fprintf(b, "          measured: %s\n", f.Evidence.Method)
		fmt.Fprintf(b, "          fix (%s): %s\n", f.Pattern, f.Fix.Summary)
		for _, c := range f.Fix.Commands {
			fmt.Fprintf(b, "            %s\n", c)
		}
		if f.Fix.Code != "" {
			for _, line := range strings.Split(f.Fix.Code, "\n") {
				fmt.Fprintf(b, "            %s\n", line)
			}
		}
		if f.Fix.Lab != "" {
			fmt.Fprintf(b, "          measure it: %s\n", f.Fix.Lab)
		}
	}
	if s != nil && len(s.Notes) > 0 {
		b.WriteString("\nnotes:\n")
		for _, n := range s.Notes {
			fmt.Fprintf(b, "  %s\n", n)
		}
	}
	counts := map[Severity]int{}
	for _, f := range r.Findings {
		counts[f.Severity]++
	}
	fmt.Fprintf(b, "\n%d findings: %d error, %d warning, %d info\n", len(r.Findings), counts[Error], counts[Warning], counts[Info])
	_, err := io.WriteString(w, b.String())
	return err
}

// orText returns s, or alt when s is empty.
func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// sevColour is the ANSI colour of a severity.
func sevColour(s Severity) string {
	switch s {
	case Error:
		return "31"
	case Warning:
		return "33"
	}
	return "36"
}

// paint wraps s in an ANSI colour when on.
func paint(on bool, code, s string) string {
	if !on {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}
