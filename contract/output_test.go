package contract_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/provider"
)

var update = flag.Bool("update", false, "rewrite docs/lint-rules.md from the catalogue")

// brokenReport has an error, a warning, an info and a waived warning.
func brokenReport(t *testing.T) contract.Report {
	t.Helper()
	fs := readDir(t, "testdata/release")
	fs.replace(t, comps, "- name: manager", "- name: controller")                                           // CAPI204 error
	fs.replace(t, comps, "name: foo-manager\n  namespace: foo-system\n", "name: foo-manager\n")             // CAPI202 warning
	fs.replace(t, comps, "    categories: [cluster-api]\n", "")                                             // CAPI313 info, on the first CRD
	fs.replace(t, ccFile, "      name: quick-cluster\n", "      name: quick-cluster\n      namespace: x\n") // CAPI603, waived
	return contract.Lint(fs.release(t, label, version), contract.Options{Disabled: map[string]string{"CAPI603": "refs are rewritten by our installer"}})
}

func TestReport_WaivedFindingsAreKeptWithTheirReason(t *testing.T) {
	r := brokenReport(t)
	want := []key{{"CAPI603", W, ccFile, "ClusterClass/quick", "spec.infrastructure.templateRef.namespace"}}
	var got []contract.Finding
	for _, w := range r.Waived {
		got = append(got, w.Finding)
		if w.Reason != "refs are rewritten by our installer" {
			t.Errorf("reason = %q", w.Reason)
		}
	}
	if diff := cmp.Diff(want, keys(got, prefix)); diff != "" {
		t.Errorf("waived (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[contract.Severity]int{E: 1, W: 1, I: 1}, map[contract.Severity]int{E: r.Count(E), W: r.Count(W), I: r.Count(I)}); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if !r.HasErrors() {
		t.Error("HasErrors = false with an error finding")
	}
	waivedAll := contract.Lint(readDir(t, "testdata/release").release(t, label, version), contract.Options{})
	if waivedAll.HasErrors() {
		t.Error("HasErrors = true for the good fixture")
	}
}

func TestReport_WaivingTheOnlyErrorClearsHasErrors(t *testing.T) {
	fs := readDir(t, "testdata/release")
	fs.replace(t, comps, "- name: manager", "- name: controller")
	r := contract.Lint(fs.release(t, label, version), contract.Options{Disabled: map[string]string{"CAPI204": "manager runs as a DaemonSet"}})
	if r.HasErrors() || len(r.Waived) != 1 {
		t.Errorf("HasErrors = %v, waived = %d; want false, 1", r.HasErrors(), len(r.Waived))
	}
}

func TestReport_WriteTextGroupsByFile(t *testing.T) {
	got := text(brokenReport(t))
	lines := strings.Split(got, "\n")
	var files []string
	for _, l := range lines {
		if l != "" && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "waived:") && !strings.Contains(l, "errors") && !strings.Contains(l, "error,") {
			files = append(files, l)
		}
	}
	if diff := cmp.Diff([]string{"infrastructure-foo/v0.1.0/infrastructure-components.yaml"}, files); diff != "" {
		t.Errorf("file headers (-want +got):\n%s\n%s", diff, got)
	}
	for _, s := range []string{
		"  error   CAPI204 Deployment/foo-system/foo-controller-manager spec.template.spec.containers\n",
		"  warning CAPI202 ServiceAccount/foo-manager metadata.namespace\n",
		"  info    CAPI313 CustomResourceDefinition/fooclusters.infrastructure.foo.example.com spec.names.categories\n",
		"waived:\n  warning CAPI603 infrastructure-foo/v0.1.0/clusterclass-quick.yaml: ClusterClass/quick spec.infrastructure.templateRef.namespace\n",
		"(waived: refs are rewritten by our installer)\n",
		"1 error, 1 warning, 1 info, 1 waived\n",
	} {
		if !strings.Contains(got, s) {
			t.Errorf("text output lacks %q:\n%s", s, got)
		}
	}
}

func TestReport_WriteJSONRoundTrips(t *testing.T) {
	r := brokenReport(t)
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var got struct {
		contract.Report
		Summary contract.Summary `json:"summary"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, got.Report); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(contract.Summary{Errors: 1, Warnings: 1, Info: 1, Waived: 1}, got.Summary); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}

// sarif holds the fields SARIF 2.1.0's schema requires (and those capirepo
// promises), so decoding checks the shape.
type sarif struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name  string `json:"name"`
				Rules []struct {
					ID                   string                  `json:"id"`
					ShortDescription     *sarifText              `json:"shortDescription"`
					FullDescription      *sarifText              `json:"fullDescription"`
					DefaultConfiguration *struct{ Level string } `json:"defaultConfiguration"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			RuleID    string     `json:"ruleId"`
			RuleIndex int        `json:"ruleIndex"`
			Level     string     `json:"level"`
			Message   *sarifText `json:"message"`
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct {
						URI string `json:"uri"`
					} `json:"artifactLocation"`
				} `json:"physicalLocation"`
			} `json:"locations"`
			Suppressions []struct {
				Kind          string `json:"kind"`
				Justification string `json:"justification"`
			} `json:"suppressions"`
		} `json:"results"`
	} `json:"runs"`
}

type sarifText struct {
	Text string `json:"text"`
}

func TestReport_WriteSARIFHasTheRequiredStructure(t *testing.T) {
	r := brokenReport(t)
	var b bytes.Buffer
	if err := r.WriteSARIF(&b); err != nil {
		t.Fatal(err)
	}
	var log sarif
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || log.Schema == "" || len(log.Runs) != 1 {
		t.Fatalf("version %q, $schema %q, %d runs; want 2.1.0, a schema, 1 run", log.Version, log.Schema, len(log.Runs))
	}
	run := log.Runs[0]
	if run.Tool.Driver.Name != "capirepo" {
		t.Errorf("driver name %q", run.Tool.Driver.Name)
	}
	if len(run.Tool.Driver.Rules) != len(contract.Rules()) {
		t.Errorf("%d rules, want %d", len(run.Tool.Driver.Rules), len(contract.Rules()))
	}
	levels := map[string]bool{"error": true, "warning": true, "note": true, "none": true}
	for i, rule := range run.Tool.Driver.Rules {
		if rule.ID == "" || rule.ShortDescription == nil || rule.ShortDescription.Text == "" ||
			rule.FullDescription == nil || rule.FullDescription.Text == "" ||
			rule.DefaultConfiguration == nil || !levels[rule.DefaultConfiguration.Level] {
			t.Errorf("rules[%d] lacks id, descriptions or a valid default level: %+v", i, rule)
		}
	}
	type res struct {
		Rule, Level, URI string
		Suppressed       bool
	}
	var got []res
	for i, x := range run.Results {
		if x.Message == nil || x.Message.Text == "" || len(x.Locations) != 1 || !levels[x.Level] {
			t.Errorf("results[%d] lacks a message, a location or a valid level", i)
			continue
		}
		if run.Tool.Driver.Rules[x.RuleIndex].ID != x.RuleID {
			t.Errorf("results[%d].ruleIndex %d names %s, not %s", i, x.RuleIndex, run.Tool.Driver.Rules[x.RuleIndex].ID, x.RuleID)
		}
		for _, s := range x.Suppressions {
			if s.Kind != "external" && s.Kind != "inSource" {
				t.Errorf("results[%d] suppression kind %q", i, s.Kind)
			}
		}
		got = append(got, res{x.RuleID, x.Level, x.Locations[0].PhysicalLocation.ArtifactLocation.URI, len(x.Suppressions) > 0})
	}
	want := []res{
		{"CAPI313", "note", prefix + comps, false},
		{"CAPI204", "error", prefix + comps, false},
		{"CAPI202", "warning", prefix + comps, false},
		{"CAPI603", "warning", prefix + ccFile, true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

func TestOptions_Validate(t *testing.T) {
	cases := []struct {
		name string
		opts contract.Options
		ok   bool
	}{
		{"known rule with reason", contract.Options{Disabled: map[string]string{"CAPI312": "no ClusterClass"}}, true},
		{"unknown rule", contract.Options{Disabled: map[string]string{"CAPI999": "x"}}, false},
		{"no reason", contract.Options{Disabled: map[string]string{"CAPI312": " "}}, false},
		{"bad provider label", contract.Options{Provider: "foo"}, false},
		{"bad version", contract.Options{Version: "1.0.0"}, false},
		{"provider and version", contract.Options{Provider: "infrastructure-foo", Version: "v1.0.0"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.opts.Validate(); (err == nil) != c.ok {
				t.Errorf("Validate() = %v, want ok=%v", err, c.ok)
			}
		})
	}
}

func TestDisabled_FromConfig(t *testing.T) {
	got := contract.Disabled(provider.Lint{Disable: []provider.Waiver{{Rule: "CAPI313", Reason: "not listed"}}})
	if diff := cmp.Diff(map[string]string{"CAPI313": "not listed"}, got); diff != "" {
		t.Error(diff)
	}
}

// TestRulesDoc keeps docs/lint-rules.md in step with the catalogue.
func TestRulesDoc(t *testing.T) {
	var b bytes.Buffer
	if err := contract.WriteRulesMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	const file = "../docs/lint-rules.md"
	if *update {
		if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./contract -run TestRulesDoc -update)", err)
	}
	if diff := cmp.Diff(b.String(), string(got)); diff != "" {
		t.Errorf("%s is stale; run go test ./contract -run TestRulesDoc -update:\n%s", file, diff)
	}
	for _, r := range contract.Rules() {
		if !strings.Contains(string(got), "### "+r.ID+"\n") {
			t.Errorf("%s does not explain %s", file, r.ID)
		}
		if r.Title == "" || r.Why == "" || r.Fix == "" || r.Severity == "" || r.Area == "" {
			t.Errorf("rule %s lacks a title, why, fix, severity or area", r.ID)
		}
	}
}

// TestReport_SARIFLocatesTheSource: with the build's sources, a finding in a
// template copied as it is points code scanning at the tree's file and line.
func TestReport_SARIFLocatesTheSource(t *testing.T) {
	fs := readDir(t, "testdata/release")
	fs[tmpl] += "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns\n"
	line := strings.Count(fs[tmpl], "\n") - 3
	r := contract.Lint(fs.release(t, label, version), contract.Options{Sources: map[string]contract.Source{
		prefix + tmpl: {Path: "templates/" + tmpl, Copied: true},
	}})
	var b bytes.Buffer
	if err := r.WriteSARIF(&b); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`"artifactLocation":{"uri":"templates/cluster-template.yaml"},"region":{"startLine":%d}`, line)
	if !strings.Contains(strings.Join(strings.Fields(b.String()), ""), want) {
		t.Errorf("SARIF lacks %s:\n%s", want, b.String())
	}
	var txt bytes.Buffer
	_ = r.WriteText(&txt)
	if !strings.Contains(txt.String(), fmt.Sprintf("from templates/cluster-template.yaml:%d\n", line)) {
		t.Errorf("text lacks the source:\n%s", txt.String())
	}
}

// TestReport_UnmatchedWaivers: a waiver, narrow or whole-rule, that matches
// no finding is reported; one that matches is not.
func TestReport_UnmatchedWaivers(t *testing.T) {
	fs := readDir(t, "testdata/release")
	fs.edit(t, comps, "CustomResourceDefinition", "foomachinepooltemplates."+group, func(map[string]any) bool { return false })
	r := contract.Lint(fs.release(t, label, version), contract.Options{
		Disabled: map[string]string{"CAPI313": "stale flag"},
		Waivers: []contract.Waiver{
			{Rule: "CAPI312", Object: "CustomResourceDefinition/foomachinepools.*", Reason: "pools are not offered through ClusterClass"},
			{Rule: "CAPI312", File: "cluster-template-*.yaml", Reason: "misspelt"},
		},
	})
	if len(r.Findings) != 0 || len(r.Waived) != 1 {
		t.Errorf("findings %v, waived %v", r.Findings, r.Waived)
	}
	want := []contract.Waiver{
		{Rule: "CAPI312", File: "cluster-template-*.yaml", Reason: "misspelt"},
		{Rule: "CAPI313", Reason: "stale flag"},
	}
	if diff := cmp.Diff(want, r.Unmatched); diff != "" {
		t.Errorf("unmatched (-want +got):\n%s", diff)
	}
}

// TestReport_RefusedErrorsCannotBeWaived: an error of a rule clusterctl
// refuses (CAPI102: a metadata.yaml clusterctl does not accept) stands
// whatever waives it, and each such waiver is reported; an error of another
// rule, and a warning of a refused rule, are waived as usual.
func TestReport_RefusedErrorsCannotBeWaived(t *testing.T) {
	fs := readDir(t, "testdata/release")
	fs.replace(t, meta, "kind: Metadata", "kind: Metdata")                                      // CAPI102 error, refused
	fs.replace(t, comps, "- name: manager", "- name: controller")                               // CAPI204 error
	fs.replace(t, comps, "name: foo-manager\n  namespace: foo-system\n", "name: foo-manager\n") // CAPI202 warning of a refused rule
	r := contract.Lint(fs.release(t, label, version), contract.Options{
		Disabled: map[string]string{"CAPI102": "kind fixed upstream", "CAPI204": "manager runs as a DaemonSet", "CAPI202": "moved on install"},
		Waivers:  []contract.Waiver{{Rule: "CAPI102", File: meta, Reason: "narrow"}},
	})
	if diff := cmp.Diff([]key{{"CAPI102", E, meta, "Metadata", "kind"}}, keys(r.Findings, prefix)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	var waived []string
	for _, w := range r.Waived {
		waived = append(waived, w.Rule)
	}
	slices.Sort(waived)
	if diff := cmp.Diff([]string{"CAPI202", "CAPI204"}, waived); diff != "" {
		t.Errorf("waived (-want +got):\n%s", diff)
	}
	want := []contract.Waiver{{Rule: "CAPI102", Reason: "kind fixed upstream"}, {Rule: "CAPI102", File: meta, Reason: "narrow"}}
	if diff := cmp.Diff(want, r.NotWaived); diff != "" || len(r.Unmatched) > 0 {
		t.Errorf("not waived (-want +got):\n%s\nunmatched: %v", diff, r.Unmatched)
	}
	if got := text(r); !strings.Contains(got, "error: waiver CAPI102 (kind fixed upstream) cannot waive CAPI102's errors: clusterctl refuses a release with them") {
		t.Errorf("text:\n%s", got)
	}
	var doc bytes.Buffer
	if err := contract.WriteRulesMarkdown(&doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range contract.Rules() {
		if got := strings.Contains(doc.String(), "### "+r.ID+"\n") && strings.Contains(strings.SplitN(strings.SplitN(doc.String(), "### "+r.ID+"\n", 2)[1], "### ", 2)[0], "Cannot be waived"); got == r.Waivable() {
			t.Errorf("%s: the catalogue says cannot be waived = %v, Waivable = %v", r.ID, got, r.Waivable())
		}
	}
}

// TestReport_YAMLErrorInATemplateIsWaivable: a template that does not parse
// fails only that flavor's clusterctl generate cluster, so its CAPI001 error
// is waived with a reason; the same error in the components stands.
func TestReport_YAMLErrorInATemplateIsWaivable(t *testing.T) {
	fs := readDir(t, "testdata/release")
	fs[tmpl] += "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  - name: controlPlaneType:\n"
	fs[comps] += "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  - name: controlPlaneType:\n"
	r := contract.Lint(fs.release(t, label, version), contract.Options{
		Waivers: []contract.Waiver{{Rule: "CAPI001", Reason: "flavor fixed in the next release"}},
	})
	if diff := cmp.Diff([]key{{"CAPI001", E, comps, "document 14", ""}}, keys(r.Findings, prefix)); diff != "" {
		t.Errorf("findings (-want +got):\n%s\n%s", diff, text(r))
	}
	if len(r.Waived) != 1 || r.Waived[0].File != prefix+tmpl || len(r.NotWaived) != 1 {
		t.Errorf("waived %v, not waived %v", r.Waived, r.NotWaived)
	}
}
