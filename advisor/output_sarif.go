package advisor

import (
	"encoding/json"
	"io"
	"strings"
)

// SARIF 2.1.0 documents, reduced to what the report fills in.
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool    sarifTool     `json:"tool"`
		Results []sarifResult `json:"results"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		InformationURI string      `json:"informationUri"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID               string       `json:"id"`
		ShortDescription sarifMessage `json:"shortDescription"`
		Properties       sarifProps   `json:"properties"`
	}
	sarifProps struct {
		Pattern string `json:"pattern"`
	}
	sarifMessage struct {
		Text string `json:"text"`
	}
	sarifResult struct {
		RuleID     string          `json:"ruleId"`
		RuleIndex  int             `json:"ruleIndex"`
		Level      string          `json:"level"`
		Message    sarifMessage    `json:"message"`
		Locations  []sarifLocation `json:"locations"`
		Properties sarifResultProp `json:"properties"`
	}
	sarifLocation struct {
		LogicalLocations []sarifLogical `json:"logicalLocations"`
	}
	sarifLogical struct {
		Name               string `json:"name"`
		FullyQualifiedName string `json:"fullyQualifiedName"`
		Kind               string `json:"kind"`
	}
	sarifResultProp struct {
		Pattern  string   `json:"pattern"`
		Subject  string   `json:"subject,omitempty"`
		Evidence Evidence `json:"evidence"`
		Fix      Fix      `json:"fix"`
	}
)

// sarifLevel maps a severity to SARIF's result level.
func sarifLevel(s Severity) string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return "note"
}

// WriteSARIF writes the findings as a SARIF 2.1.0 log: one rule per
// check, one result per finding located at its namespace (a logical
// location: databases have no files).
func (r *Report) WriteSARIF(w io.Writer) error {
	checks := Checks()
	index := map[string]int{}
	rules := make([]sarifRule, len(checks))
	for i, c := range checks {
		index[c.ID] = i
		rules[i] = sarifRule{ID: c.ID, ShortDescription: sarifMessage{Text: c.Doc}, Properties: sarifProps{Pattern: c.Pattern}}
	}
	results := []sarifResult{}
	for _, f := range r.Findings {
		msg := f.Message
		if f.Fix.Summary != "" {
			msg += " Fix: " + f.Fix.Summary
		}
		if len(f.Fix.Commands) > 0 {
			msg += " " + strings.Join(f.Fix.Commands, " ")
		}
		results = append(results, sarifResult{
			RuleID: f.ID, RuleIndex: index[f.ID], Level: sarifLevel(f.Severity), Message: sarifMessage{Text: msg},
			Locations: []sarifLocation{{LogicalLocations: []sarifLogical{{
				Name: f.Namespace, FullyQualifiedName: f.Namespace + suffix(f.Subject), Kind: "namespace"}}}},
			Properties: sarifResultProp{Pattern: f.Pattern, Subject: f.Subject, Evidence: f.Evidence, Fix: f.Fix},
		})
	}
	log := sarifLog{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs: []sarifRun{{
			Tool: sarifTool{Driver: sarifDriver{Name: "formwork advise",
				InformationURI: "https://github.com/formworkdb/formwork", Rules: rules}},
			Results: results,
		}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(log)
}

// suffix returns "/" + s, or "" when s is empty.
func suffix(s string) string {
	if s == "" {
		return ""
	}
	return "/" + s
}
