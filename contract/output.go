package contract

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteText prints the findings grouped by file, then the waived ones with
// their reasons, then a summary line.
func (r Report) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	file := ""
	for _, f := range r.Findings {
		if f.File != file {
			file = f.File
			ew.printf("%s\n", file)
		}
		ew.printf("  %-7s %s %s\n", f.Severity, f.Rule, location(f))
		ew.printf("          %s\n", f.Message)
	}
	if len(r.Waived) > 0 {
		ew.printf("waived:\n")
		for _, f := range r.Waived {
			ew.printf("  %-7s %s %s: %s\n", f.Severity, f.Rule, f.File, location(f.Finding))
			ew.printf("          %s (waived: %s)\n", f.Message, f.Reason)
		}
	}
	for _, w := range r.Unmatched {
		ew.printf("warning: waiver %s matched no finding (stale, or misspelt?)\n", describeWaiver(w))
	}
	ew.printf("%s, %s, %s", plural(r.Count(Error), "error", "errors"), plural(r.Count(Warning), "warning", "warnings"), plural(r.Count(Info), "info", "info"))
	if len(r.Waived) > 0 {
		ew.printf(", %d waived", len(r.Waived))
	}
	ew.printf("\n")
	return ew.err
}

func describeWaiver(w Waiver) string {
	s := w.Rule
	if w.Object != "" {
		s += " object " + w.Object
	}
	if w.File != "" {
		s += " file " + w.File
	}
	return s + " (" + w.Reason + ")"
}

func location(f Finding) string {
	parts := []string{}
	if f.Object != "" {
		parts = append(parts, f.Object)
	}
	if f.Field != "" {
		parts = append(parts, f.Field)
	}
	if len(parts) == 0 {
		return "(file)"
	}
	return strings.Join(parts, " ")
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// Summary counts a report's findings.
type Summary struct {
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Info     int `json:"info"`
	Waived   int `json:"waived"`
}

// Summary returns the counts of findings by severity.
func (r Report) Summary() Summary {
	return Summary{r.Count(Error), r.Count(Warning), r.Count(Info), len(r.Waived)}
}

// WriteJSON prints {"findings": [...], "waived": [...], "summary": {...}}.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Findings  []Finding       `json:"findings"`
		Waived    []WaivedFinding `json:"waived"`
		Unmatched []Waiver        `json:"unmatchedWaivers"`
		Summary   Summary         `json:"summary"`
	}{nonNil(r.Findings), nonNil(r.Waived), nonNil(r.Unmatched), r.Summary()})
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// SARIF 2.1.0, the subset capirepo writes.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string        `json:"id"`
	Name                 string        `json:"name,omitempty"`
	ShortDescription     sarifMessage  `json:"shortDescription"`
	FullDescription      sarifMessage  `json:"fullDescription"`
	Help                 *sarifMessage `json:"help,omitempty"`
	DefaultConfiguration sarifConfig   `json:"defaultConfiguration"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID       string             `json:"ruleId"`
	RuleIndex    int                `json:"ruleIndex"`
	Level        string             `json:"level"`
	Message      sarifMessage       `json:"message"`
	Locations    []sarifLocation    `json:"locations"`
	Suppressions []sarifSuppression `json:"suppressions,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical  `json:"physicalLocation"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifLogical struct {
	Name               string `json:"name,omitempty"`
	FullyQualifiedName string `json:"fullyQualifiedName,omitempty"`
	Kind               string `json:"kind,omitempty"`
}

type sarifSuppression struct {
	Kind          string `json:"kind"`
	Justification string `json:"justification,omitempty"`
}

func sarifLevel(s Severity) string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return "note"
}

// WriteSARIF prints the report as a SARIF 2.1.0 log for code-scanning
// tools. Waived findings are results with an external suppression.
func (r Report) WriteSARIF(w io.Writer) error {
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: "capirepo"}}, Results: []sarifResult{}}
	index := map[string]int{}
	for i, rule := range catalogue {
		index[rule.ID] = i
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{
			ID:                   rule.ID,
			ShortDescription:     sarifMessage{rule.Title},
			FullDescription:      sarifMessage{rule.Why},
			Help:                 &sarifMessage{rule.Fix},
			DefaultConfiguration: sarifConfig{sarifLevel(rule.Severity)},
		})
	}
	result := func(f Finding) sarifResult {
		loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: f.File}}}
		if f.Object != "" {
			name := f.Object
			if f.Field != "" {
				name += " " + f.Field
			}
			loc.LogicalLocations = []sarifLogical{{FullyQualifiedName: name, Kind: "object"}}
		}
		msg := f.Message
		if l := location(f); l != "(file)" {
			msg = l + ": " + msg
		}
		return sarifResult{RuleID: f.Rule, RuleIndex: index[f.Rule], Level: sarifLevel(f.Severity), Message: sarifMessage{msg}, Locations: []sarifLocation{loc}}
	}
	for _, f := range r.Findings {
		run.Results = append(run.Results, result(f))
	}
	for _, f := range r.Waived {
		res := result(f.Finding)
		res.Suppressions = []sarifSuppression{{Kind: "external", Justification: f.Reason}}
		run.Results = append(run.Results, res)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs:    []sarifRun{run},
	})
}

var areaHeadings = map[string]string{
	AreaFiles: "Files", AreaRepository: "Repository (metadata.yaml, file names)", AreaComponents: "Components YAML",
	AreaCRDs: "CRDs", AreaRBAC: "RBAC", AreaTemplates: "Cluster templates", AreaClusterClass: "ClusterClass files",
}

// WriteRulesMarkdown prints the rule catalogue as docs/lint-rules.md holds it.
func WriteRulesMarkdown(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("# capirepo lint rules\n\n")
	ew.printf("`capirepo lint` and `capirepo build` check a release against the clusterctl provider contract\n")
	ew.printf("and the infrastructure provider contracts. Each rule has a stable ID and a severity:\n\n")
	ew.printf("- **error**: the contract says MUST, or clusterctl, the API server or a core controller fails. Errors fail the build.\n")
	ew.printf("- **warning**: the contract says SHOULD. A rule that matters only for the kinds core Cluster API reads\n")
	ew.printf("  (InfraCluster, InfraMachine, InfraMachinePool, bootstrap configs, control planes and their templates)\n")
	ew.printf("  is a warning when it fires on other CRDs.\n")
	ew.printf("- **info**: the contract says MAY.\n\n")
	ew.printf("Contract kinds are recognised by the provider type and the kind's suffix: `*Cluster`, `*Machine`,\n")
	ew.printf("`*MachinePool` for infrastructure providers, `*Config` for bootstrap and `*ControlPlane` for control-plane\n")
	ew.printf("providers, each optionally followed by `Template`.\n\n")
	ew.printf("Every finding names the file, the object (`Kind/name` or `Kind/namespace/name`) and the field.\n")
	ew.printf("To waive a rule, give the reason; waived findings are still printed with it:\n\n")
	ew.printf("```yaml\n# capirepo.yaml\nlint:\n  disable:\n  - rule: CAPI312\n    reason: our machine pools are not offered through ClusterClass\n```\n\n")
	ew.printf("or `capirepo lint --disable CAPI312`.\n\n")
	ew.printf("This file is generated from the catalogue in contract/rules.go: `go test ./contract -run TestRulesDoc -update`.\n\n")
	ew.printf("| ID | severity | area | rule |\n|---|---|---|---|\n")
	md := strings.NewReplacer("<", `\<`, ">", `\>`, "|", `\|`).Replace
	for _, r := range catalogue {
		ew.printf("| [%s](#%s) | %s | %s | %s |\n", r.ID, strings.ToLower(r.ID), r.Severity, r.Area, md(r.Title))
	}
	area := ""
	for _, r := range catalogue {
		if r.Area != area {
			area = r.Area
			ew.printf("\n## %s\n", areaHeadings[area])
		}
		ew.printf("\n### %s\n\n%s.\n\n- Severity: %s\n- Why: %s\n- Fix: %s\n", r.ID, md(r.Title), r.Severity, md(r.Why), md(r.Fix))
	}
	return ew.err
}
