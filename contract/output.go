package contract

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/capirepo/capirepo/internal/text"
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
		if f.Source != "" {
			ew.printf("          from %s\n", sourceOf(f))
		}
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
	for _, w := range r.NotWaived {
		ew.printf("error: waiver %s cannot waive %s's errors: clusterctl refuses a release with them (docs/lint-rules.md#%s)\n", describeWaiver(w), w.Rule, strings.ToLower(w.Rule))
	}
	ew.printf("%s\n", r.Counts())
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

// sourceOf is the finding's source: path:line, or the kustomization.
func sourceOf(f Finding) string {
	if f.Line > 0 {
		return fmt.Sprintf("%s:%d", f.Source, f.Line)
	}
	return f.Source
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
		NotWaived []Waiver        `json:"notWaived,omitempty"`
		Summary   Summary         `json:"summary"`
	}{text.NonNil(r.Findings), text.NonNil(r.Waived), text.NonNil(r.Unmatched), r.NotWaived, r.Summary()})
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
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
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
		// Code scanning annotates the tree's file: the source when known.
		loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: f.File}}}
		if f.Source != "" {
			loc.PhysicalLocation.ArtifactLocation.URI = f.Source
			if f.Line > 0 {
				loc.PhysicalLocation.Region = &sarifRegion{StartLine: f.Line}
			}
		}
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
	AreaUpgrade: "Upgrade (capirepo diff, lint --against, release)",
}

// WriteRulesMarkdown prints the rule catalogue as docs/lint-rules.md holds it.
func WriteRulesMarkdown(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("# capirepo lint rules\n\n")
	ew.printf("`capirepo lint`, `capirepo build` and `capirepo release` check a release against the clusterctl\n")
	ew.printf("provider contract and the infrastructure provider contracts, through one gate: every check the build\n")
	ew.printf("makes (YAML that parses, metadata.yaml, namespaces, the provider label, template classes ...) is a rule\n")
	ew.printf("here, all findings of all providers and files are reported together, the same waivers apply in all\n")
	ew.printf("three commands, and nothing is written while an error stands.\n\n")
	ew.printf("## Severity policy\n\n")
	ew.printf("- **error** only where the finding makes clusterctl, the API server or a core Cluster API controller fail\n")
	ew.printf("  for users of this release. Each error rule's *Why* says which fails, and how.\n")
	ew.printf("- **warning** for what the contract says SHOULD, and for latent defects: nothing fails today, but a user,\n")
	ew.printf("  a kubectl apply or a later version may trip on it. A rule that is an error for contract kinds is a\n")
	ew.printf("  warning where it fires on other CRDs.\n")
	ew.printf("- **info** for what the contract says MAY.\n\n")
	ew.printf("A false refusal is as bad as a missed defect: a rule that cannot say which of the three fails is not an error.\n\n")
	ew.printf("**What clusterctl refuses** means what any clusterctl release a user of the release's contract may run\n")
	ew.printf("refuses: every patch release of every minor that supports the contract (`v1beta2`: clusterctl v1.11.0 and\n")
	ew.printf("later; `v1beta1`: v1.0.0 and later, v1.11 on through their compatibility with it), not only the newest.\n")
	ew.printf("A check one such release made and a later patch relaxed still fails users who run that release: it is\n")
	ew.printf("an error. The rules whose severity rests on clusterctl's behaviour were reviewed under this rule:\n")
	ew.printf("CAPI102 became an error for a metadata.yaml without `kind` (clusterctl v1.11.0 refuses it, v1.11.1\n")
	ew.printf("accepts it again); CAPI001, CAPI002, CAPI101, CAPI102's other fields, CAPI103, CAPI104, CAPI105, CAPI201,\n")
	ew.printf("CAPI207, CAPI209, CAPI305, CAPI504, CAPI506, CAPI701, CAPI703 and CAPI714 were errors already, because\n")
	ew.printf("the newer releases refuse what they find; CAPI003, CAPI702, CAPI711 and CAPI712 stay warnings (no\n")
	ew.printf("clusterctl release refuses the release for them). Each rule whose severity changed names, in its *Why*,\n")
	ew.printf("the real release that decided it.\n\n")
	ew.printf("## Contract kinds\n\n")
	ew.printf("The contract rules (CAPI301 ... CAPI314, CAPI401) apply to contract kinds only, classified from evidence:\n\n")
	ew.printf("1. **References** in the release's templates and ClusterClass files: a Cluster's `spec.infrastructureRef`\n")
	ew.printf("   (InfraCluster) and `spec.controlPlaneRef` (ControlPlane); the `infrastructureRef` of a Machine,\n")
	ew.printf("   MachineSet, MachineDeployment or control-plane machine template (InfraMachine) and of a MachinePool\n")
	ew.printf("   (InfraMachinePool); bootstrap `configRef`s (BootstrapConfig); a ClusterClass's `infrastructure`,\n")
	ew.printf("   `controlPlane`, `machineInfrastructure`, `machineDeployments` and `machinePools` references.\n")
	ew.printf("2. **`<Kind>` / `<Kind>Template` pairs** of CRDs in a group of a provider type: `bootstrap.*` groups\n")
	ew.printf("   hold bootstrap configs, `controlplane.*` groups control planes, `infrastructure.*` groups InfraClusters,\n")
	ew.printf("   InfraMachines and InfraMachinePools (told apart by the contract's names `...Cluster`, `...Machine`,\n")
	ew.printf("   `...MachinePool`). Other groups take the provider's type.\n\n")
	ew.printf("A CRD with neither is no contract kind, whatever its name or labels: an identity, a pool entry kind\n")
	ew.printf("(`...MachinePoolMachine` with no Template and no reference) or a control-plane group kind named `...Cluster`.\n\n")
	ew.printf("Contract labels are read as core Cluster API reads them (`GetLatestContractAndAPIVersionFromContract`):\n")
	ew.printf("the label of the newest contract core accepts (`cluster.x-k8s.io/v1beta2`, else `cluster.x-k8s.io/v1beta1`),\n")
	ew.printf("and the highest API version in its value. The schema rules (CAPI308 ... CAPI311) check that version against\n")
	ew.printf("that contract. Labels for older contracts, and the other versions of a value, are never read by a core\n")
	ew.printf("that can run the release, and are not checked.\n\n")
	ew.printf("## Findings and waivers\n\n")
	ew.printf("Every finding names the file, the object (`Kind/name` or `Kind/namespace/name`) and the field, once per\n")
	ew.printf("rule and object (several fields are listed together). From a build it also names where it comes from in\n")
	ew.printf("the tree: the file and line of a template copied as it is, the resource file and line an object of the\n")
	ew.printf("components was rendered from, or the flavor's kustomization; SARIF locations use them.\n")
	ew.printf("To waive a rule, give the reason; waived findings are still printed with it. A waiver may be narrowed\n")
	ew.printf("to objects (`Kind/name` or `Kind/namespace/name`) and/or files, with globs where `*` matches any text;\n")
	ew.printf("a waiver that matches no finding is reported, so stale ones do not pile up. The errors of a rule marked\n")
	ew.printf("*cannot be waived* stand whatever the waivers say: clusterctl refuses the release with them (no release\n")
	ew.printf("series for the version, a file that does not parse ...), so a waiver would only move the failure to every\n")
	ew.printf("user's `clusterctl init`; such a waiver is reported as an error. A template's refused error is waivable:\n")
	ew.printf("the release installs, and only that flavor's `clusterctl generate cluster` fails:\n\n")
	ew.printf("```yaml\n# capirepo.yaml\nlint:\n  disable:\n  - rule: CAPI312\n    reason: our machine pools are not offered through ClusterClass\n  - rule: CAPI504\n    file: cluster-template-multitenancy-clusterclass.yaml\n    reason: apply the class first; tracked in issue 123\n  - rule: CAPI303\n    object: CustomResourceDefinition/*identities.*\n    reason: identities are no contract kinds\n```\n\n")
	ew.printf("or `capirepo lint --disable CAPI312=reason` (`build` and `release` take `--disable` too).\n\n")
	ew.printf("## Upgrade rules\n\n")
	ew.printf("The upgrade rules (CAPI701 ... CAPI717) compare a release with an older one: what breaks when a management\n")
	ew.printf("cluster moves from the old release to the new one with `clusterctl upgrade`, and (CAPI715 ... CAPI717) for\n")
	ew.printf("users who generate workload clusters from its flavors with `clusterctl generate cluster`. `capirepo diff OLD NEW` runs\n")
	ew.printf("them alone, `capirepo lint --against OLD` with the lint, and `capirepo release` against the release published\n")
	ew.printf("before this one. Their findings name the new release's file, the CRD (`CustomResourceDefinition/<name>`) and\n")
	ew.printf("the API version and field (`v1beta2 spec.region`), or the flavor's template and the variable (`${AWS_REGION}`);\n")
	ew.printf("the same waivers apply. See docs/upgrade.md.\n\n")
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
		switch {
		case !r.Waivable() && r.Area == AreaFiles:
			ew.printf("- Cannot be waived: clusterctl refuses the release with this error; in a cluster template or ClusterClass file it is waivable with a reason, as clusterctl refuses only that flavor.\n")
		case !r.Waivable():
			ew.printf("- Cannot be waived: clusterctl refuses the release with this error.\n")
		case r.Refused:
			ew.printf("- Waivable with a reason: clusterctl refuses only this template's flavor; the release installs.\n")
		}
	}
	return ew.err
}
