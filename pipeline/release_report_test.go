package pipeline_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/internal/markdown"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish"
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
