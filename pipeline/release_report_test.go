package pipeline_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/install"
	"github.com/capirepo/capirepo/internal/markdown"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/rehearse"
	"github.com/capirepo/capirepo/verify"
)

// TestReleaseSummary_WriteMarkdown: a run that published to one target and
// failed reading another back says where it failed and why (the error as
// it is, in a code block), every step's status, the findings errors first,
// what was published where with the clusterctl config, and the clusterctl
// init line as code; it renders on GitHub as written.
func TestReleaseSummary_WriteMarkdown(t *testing.T) {
	sum := &pipeline.ReleaseSummary{
		Version: "v1.4.0",
		Steps: []pipeline.StepResult{
			{Step: "build", Status: pipeline.StatusOK, Detail: "1 provider, 8 files (60.2 KiB)"},
			{Step: "lint", Status: pipeline.StatusOK, Detail: "0 errors, 1 warning"},
			{Step: "images", Status: pipeline.StatusSkipped, Detail: "--skip-image-check: not checked"},
			{Step: "publish github://org/repo", Status: pipeline.StatusOK, Detail: "8 uploaded"},
			{Step: "verify github://org/repo", Status: pipeline.StatusFailed, Detail: "clusterctl: <nothing> | read"},
			{Step: "publish file:///srv", Status: pipeline.StatusNotRun},
		},
		Findings: []contract.Finding{{Rule: "CAPI202", Severity: contract.Warning, File: "infrastructure-example/v1.4.0/infrastructure-components.yaml", Object: "ServiceAccount/sa", Field: "metadata.namespace", Message: "no namespace"}},
		Published: []*publish.Summary{{Kind: "github", URL: "https://github.com/org/repo/releases/tag/v1.4.0", Version: "v1.4.0", Uploaded: []string{"a", "b"},
			Providers: []publish.ProviderURL{{Name: "example", Type: "InfrastructureProvider", URL: "https://github.com/org/repo/releases/v1.4.0/infrastructure-components.yaml"}}}},
		Next:  []string{"try it: clusterctl init --infrastructure example:v1.4.0 --config FILE"},
		Error: "verify github://org/repo: clusterctl: <nothing> | read\nsecond line",
	}
	var b bytes.Buffer
	if err := sum.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	if err := markdown.Check(got); err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	at := 0
	for _, want := range []string{
		"## capirepo release v1.4.0: failed at verify github://org/repo\n",
		"| images | ⏭️ skipped | --skip-image-check: not checked |",
		"| verify github://org/repo | ❌ failed | clusterctl: \\<nothing\\> \\| read |",
		"| publish file:///srv | ⬜ not run |  |",
		"```text\nverify github://org/repo: clusterctl: <nothing> | read\nsecond line\n```\n",
		"### Findings\n", "#### Warnings (1)\n", "[CAPI202](",
		"### Published\n", "| https://github.com/org/repo/releases/tag/v1.4.0 | v1.4.0 | 2 uploaded, 0 unchanged, 0 replaced | `https://github.com/org/repo/releases/v1.4.0/infrastructure-components.yaml` |",
		"<summary>clusterctl config</summary>", "```yaml\nproviders:\n",
		"### Next\n", "- try it: `clusterctl init --infrastructure example:v1.4.0 --config FILE`\n",
	} {
		i := strings.Index(got[at:], want)
		if i < 0 {
			t.Fatalf("lacks %q after offset %d:\n%s", want, at, got)
		}
		at += i + len(want)
	}
}

// rehearsalReport is the report of an upgrade rehearsal the API server
// stopped before clusterctl applied anything.
func rehearsalReport() *rehearse.Report {
	return &rehearse.Report{Server: "https://127.0.0.1:6443", Old: "v1.3.0", New: "v1.4.0", Providers: []string{"infrastructure-example"},
		Steps: []rehearse.Step{{Name: "init", Status: rehearse.StatusOK, Detail: "clusterctl init installed infrastructure-example", Seconds: 3.2},
			{Name: "check", Status: rehearse.StatusFailed, Detail: "1 of 3 CRDs of v1.4.0 refused before applying", Seconds: 0.3}},
		Failure: &rehearse.Failure{Step: "check", Message: "the API server refuses v1.4.0's CRDs", State: "clusterctl upgrade apply would leave the provider half-upgraded"},
		Seconds: 9.1}
}

// TestReleaseSummary_RendersTheRehearsal: a release stopped by the upgrade
// rehearsal says so in its steps (text and Markdown), and its Markdown and
// JSON carry the rehearsal's own report: what failed, the state it left.
func TestReleaseSummary_RendersTheRehearsal(t *testing.T) {
	sum := &pipeline.ReleaseSummary{Version: "v1.4.0",
		Steps: []pipeline.StepResult{{Step: "install check", Status: pipeline.StatusOK, Detail: "30 objects accepted"},
			{Step: "upgrade rehearsal", Status: pipeline.StatusFailed, Detail: "upgrade rehearsal: v1.3.0 -> v1.4.0: check: refused"},
			{Step: "sign", Status: pipeline.StatusNotRun}},
		Rehearsal: rehearsalReport(),
		Error:     "upgrade rehearsal: v1.3.0 -> v1.4.0: check: refused",
	}
	var text bytes.Buffer
	if err := sum.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "upgrade rehearsal  failed   the error below\nsign               not run") {
		t.Errorf("text:\n%s", text.String())
	}
	var md bytes.Buffer
	if err := sum.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := markdown.Check(md.String()); err != nil {
		t.Fatalf("%v\n%s", err, md.String())
	}
	at := 0
	for _, want := range []string{
		"## capirepo release v1.4.0: failed at upgrade rehearsal\n",
		"| upgrade rehearsal | ❌ failed |",
		"### Upgrade rehearsal v1.3.0 → v1.4.0: failed at check\n",
		"**Failed at check:** the API server refuses v1.4.0's CRDs\n\n**State:** clusterctl upgrade apply would leave the provider half-upgraded\n",
	} {
		i := strings.Index(md.String()[at:], want)
		if i < 0 {
			t.Fatalf("Markdown lacks %q after offset %d:\n%s", want, at, md.String())
		}
		at += i + len(want)
	}
	var js bytes.Buffer
	if err := sum.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rehearsal *rehearse.Report `json:"rehearsal"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Rehearsal == nil || doc.Rehearsal.Failure == nil || doc.Rehearsal.Failure.Step != "check" {
		t.Errorf("JSON carries no rehearsal failure:\n%s", js.String())
	}
}

// TestVerifyReport_RendersTheRehearsal: verify --upgrade-from's report
// renders the rehearsal in every format verify prints: text, JSON and
// Markdown (after the read-back).
func TestVerifyReport_RendersTheRehearsal(t *testing.T) {
	rep := &pipeline.VerifyReport{Read: &verify.Report{Providers: []*verify.ProviderReport{{Label: "infrastructure-example", Version: "v1.4.0"}}},
		Rehearsal: rehearsalReport()}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "upgrade rehearsal v1.3.0 -> v1.4.0 of infrastructure-example on https://127.0.0.1:6443") ||
		!strings.Contains(text.String(), "FAILED at check: the API server refuses v1.4.0's CRDs") {
		t.Errorf("text:\n%s", text.String())
	}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := markdown.Check(md.String()); err != nil {
		t.Fatalf("%v\n%s", err, md.String())
	}
	if i, j := strings.Index(md.String(), "| `infrastructure-example` | v1.4.0 |"), strings.Index(md.String(), "### Upgrade rehearsal v1.3.0 → v1.4.0: failed at check\n"); i < 0 || j < i {
		t.Errorf("Markdown lacks the read-back, then the rehearsal:\n%s", md.String())
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"rehearsal": {`) || !strings.Contains(js.String(), `"state": "clusterctl upgrade apply would leave the provider half-upgraded"`) {
		t.Errorf("JSON:\n%s", js.String())
	}
}

// TestReleaseSummary_RendersTheInstallCheck: a release whose install check
// refused it carries the check's report in its Markdown (the refusal, by
// file, object and field) and its JSON, as it carries the rehearsal's.
func TestReleaseSummary_RendersTheInstallCheck(t *testing.T) {
	sum := &pipeline.ReleaseSummary{Version: "v1.4.0",
		Steps: []pipeline.StepResult{{Step: "install check", Status: pipeline.StatusFailed, Detail: "refused"}},
		Install: &install.Report{Server: "https://127.0.0.1:6443", Files: []*install.File{{Provider: "infrastructure-example", Version: "v1.4.0", File: "cluster-template.yaml",
			Accepted: 6, Refused: []install.Refusal{{Object: "ExampleCluster/c", Field: "spec.region", Message: "Unsupported value", Reason: "422 Invalid"}}}}},
		Error: "install check: refused",
	}
	var md bytes.Buffer
	if err := sum.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := markdown.Check(md.String()); err != nil {
		t.Fatalf("%v\n%s", err, md.String())
	}
	for _, want := range []string{"### Install check against `https://127.0.0.1:6443`", "| `infrastructure-example/v1.4.0/cluster-template.yaml` | `ExampleCluster/c` | `spec.region` | Unsupported value | 422 Invalid |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md.String())
		}
	}
	js, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"install":{"server":"https://127.0.0.1:6443"`) {
		t.Errorf("JSON lacks the install check's report: %s", js)
	}
}

// TestVerifyReport_MarkdownWarnsOfAFlavorNeededFirst: a topology flavor
// whose class ships only inside another flavor is a warning naming both in
// the Markdown (a CI job's summary) as in the text.
func TestVerifyReport_MarkdownWarnsOfAFlavorNeededFirst(t *testing.T) {
	rep := &pipeline.VerifyReport{Read: &verify.Report{Providers: []*verify.ProviderReport{{Label: "infrastructure-gcp", Version: "v1.13.1", TemplatesListed: true,
		Flavors: []*verify.TemplateReport{{Name: "topology", File: "cluster-template-topology.yaml", After: []verify.ClassFlavor{{
			Class: "capirepo-verify/quick", As: "${CLUSTER_CLASS_NAME}", Flavors: []string{"clusterclass"}, Files: []string{"cluster-template-clusterclass.yaml"}}}}}}}}}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := markdown.Check(md.String()); err != nil {
		t.Fatalf("%v\n%s", err, md.String())
	}
	if !strings.Contains(md.String(), "warning: flavor topology (cluster-template-topology.yaml) needs flavor clusterclass (cluster-template-clusterclass.yaml) applied first") {
		t.Errorf("Markdown does not warn that topology needs clusterclass first:\n%s", md.String())
	}
}
