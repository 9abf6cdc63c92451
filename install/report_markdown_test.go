package install_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/install"
	"github.com/capirepo/capirepo/internal/markdown"
)

// TestReport_WriteMarkdown: the counts of what the server accepted, refused
// and could not check, a row per file, and every refusal by file, object
// and field with the server's message, unfolded; what was not checked
// folded. It renders as written.
func TestReport_WriteMarkdown(t *testing.T) {
	rep := &install.Report{Server: "https://127.0.0.1:6443", Files: []*install.File{
		{Provider: "infrastructure-example", Version: "v0.1.0", File: "infrastructure-components.yaml", Accepted: 20},
		{Provider: "infrastructure-example", Version: "v0.1.0", File: "cluster-template.yaml", Accepted: 5,
			Refused:    []install.Refusal{{Object: "ExampleCluster/c", Field: "spec.region", Message: `Unsupported value: "x|y": supported values: <a>`, Reason: "422 Invalid"}},
			NotChecked: []install.NotChecked{{Object: "Cluster/c", Why: "no CRD serves cluster.x-k8s.io/v1beta2 Cluster"}}},
	}}
	var b bytes.Buffer
	if err := rep.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	if err := markdown.Check(got); err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	for _, want := range []string{
		"### Install check against `https://127.0.0.1:6443`\n\nCRDs and namespaces created, everything else dry-run. **25 accepted, 1 refused, 1 not checked**\n",
		"| `infrastructure-example/v0.1.0/cluster-template.yaml` | 5 | 1 | 1 |",
		"<details open>\n<summary>1 refusal</summary>",
		"| `infrastructure-example/v0.1.0/cluster-template.yaml` | `ExampleCluster/c` | `spec.region` | Unsupported value: \"x\\|y\": supported values: \\<a\\> | 422 Invalid |",
		"<details>\n<summary>1 object not checked</summary>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
}
