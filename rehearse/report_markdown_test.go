package rehearse

import (
	"bytes"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/internal/markdown"
)

// TestReport_WriteMarkdown: a rehearsal the server stopped says where it
// failed in the heading, every step with its time, the failure and the
// state it left, the objects refused, changed or not created unfolded, the
// files served without webhooks folded (an unchanged one not listed), what
// was left behind and what is not judged; it renders on GitHub as written.
func TestReport_WriteMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := failedReport().WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	if err := markdown.Check(got); err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	at := 0
	for _, want := range []string{
		"### Upgrade rehearsal v0.1.0 → v0.1.1: failed at check\n\n",
		"`infrastructure-example` on `https://127.0.0.1:6443`, through clusterctl's client in process. **2 objects created from v0.1.0's templates, 1 refused after the upgrade**; 12.3s in all.\n\n",
		"- core: `cluster-api@v1.14.2`\n- cert-manager: the cluster's CRDs\n- stand-ins (no real value given): `EXAMPLE_REGION=capirepo-example-region`\n\n",
		"| step | status | time | detail |\n|---|---|---|---|\n| init | ok | 3.2s | installed |\n| check | failed | 0.3s | 1 of 6 CRDs refused |\n",
		"**Failed at check:** refused\n\n**State:** nothing applied\n\n",
		"<details open>\n<summary>3 objects refused, changed or not created</summary>",
		"| `ExampleCluster/ns/c` | `f` | refused | read back: same uid; no-op apply: refused by a rule |",
		"| `Cluster/ns/c` | `f` | not created | no kind |",
		"| `ExampleMachine/ns/m` | `f` | changed | `{\"spec\":{\"a\":1}}` |",
		"<details>\n<summary>1 components file served without webhooks</summary>",
		"| `infrastructure-example/v0.1.0/infrastructure-components.yaml` | 1 | 1 | 1 |\n\n",
		"**Left behind:** Namespace/x (still deleting)\n\n",
		"Not judged: no controller ran",
	} {
		i := strings.Index(got[at:], want)
		if i < 0 {
			t.Fatalf("lacks %q after offset %d:\n%s", want, at, got)
		}
		at += i + len(want)
	}
	if strings.Contains(got, "core-components.yaml") {
		t.Errorf("a components file served as released is listed:\n%s", got)
	}
}
