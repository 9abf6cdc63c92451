package diff_test

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/builder/buildtest"
	"github.com/capirepo/capirepo/diff"
	"github.com/capirepo/capirepo/release"
)

const (
	example     = "infrastructure-example"
	exampleOld  = example + "/v0.1.0/"
	exampleNew  = example + "/v0.1.1/"
	machinePool = "cluster-template-machinepool.yaml"
	topology    = "cluster-template-topology.yaml"
	quickStart  = "clusterclass-example-quick-start.yaml"
)

// templateUserRules are the rules TestCompare_TemplateUsers has a failing
// case of each of (cluster-api's core, which TestCompare_Rules breaks, ships
// no flavors).
var templateUserRules = []string{"CAPI715", "CAPI716", "CAPI717"}

var (
	examplesOnce sync.Once
	examples     [2]*release.Release
)

// examplePair is the example provider built at v0.1.0 and v0.1.1: the same
// tree, so the pair upgrades cleanly until a case changes it.
func examplePair(t *testing.T) (old, new *release.Release) {
	t.Helper()
	examplesOnce.Do(func() {
		examples[0] = buildtest.Build(t, "../examples/infrastructure-example", "v0.1.0").Release
		examples[1] = buildtest.Build(t, "../examples/infrastructure-example", "v0.1.1").Release
	})
	return buildtest.Clone(examples[0]), buildtest.Clone(examples[1])
}

// removeFile drops a file from a provider of a release.
func removeFile(t *testing.T, rel *release.Release, label, name string) {
	t.Helper()
	p, ok := rel.Provider(label)
	if !ok {
		t.Fatalf("no provider %s", label)
	}
	n := len(p.Files)
	p.Files = slices.DeleteFunc(p.Files, func(f release.File) bool { return f.Name == name })
	if len(p.Files) == n {
		t.Fatalf("%s has no %s", label, name)
	}
}

// TestCompare_TemplateUsers: what breaks for users of clusterctl generate
// cluster: a flavor removed or renamed (CAPI715, on the old file: the new
// release has none), a variable a flavor newly needs without a default,
// from its template or a clusterclass file it uses (CAPI716), a changed
// default (CAPI717); one warning per flavor and variable, naming both.
func TestCompare_TemplateUsers(t *testing.T) {
	cases := []struct {
		name    string
		new     func(t *testing.T, rel *release.Release)
		want    []key
		message []string // what the messages say, in order
	}{
		{name: "a flavor removed",
			new:     func(t *testing.T, rel *release.Release) { removeFile(t, rel, example, machinePool) },
			want:    []key{{exampleOld + machinePool, "CAPI715", W, "", ""}},
			message: []string{"v0.1.0 has flavor machinepool (cluster-template-machinepool.yaml), which v0.1.1 drops: `clusterctl generate cluster --flavor machinepool` fails"}},
		{name: "a flavor renamed",
			new: func(t *testing.T, rel *release.Release) {
				p, _ := rel.Provider(example)
				f, _ := p.File(machinePool)
				removeFile(t, rel, example, machinePool)
				addFile(t, rel, example, "cluster-template-machine-pool.yaml", string(f.Data))
			},
			want:    []key{{exampleOld + machinePool, "CAPI715", W, "", ""}},
			message: []string{"v0.1.1 adds flavor machine-pool: if it was renamed"}},
		{name: "the default flavor removed",
			new:     func(t *testing.T, rel *release.Release) { removeFile(t, rel, example, "cluster-template.yaml") },
			want:    []key{{exampleOld + "cluster-template.yaml", "CAPI715", W, "", ""}},
			message: []string{"v0.1.0 has the default flavor (cluster-template.yaml), which v0.1.1 drops: `clusterctl generate cluster` fails"}},
		{name: "a new variable without a default",
			new: func(t *testing.T, rel *release.Release) {
				editFile(t, rel, example, machinePool, func(s string) string {
					return replace(t, s, "region: ${EXAMPLE_REGION:=us-east-1}", "region: ${EXAMPLE_REGION:=us-east-1}\n  sshKeyName: ${EXAMPLE_SSH_KEY}")
				})
			},
			want:    []key{{exampleNew + machinePool, "CAPI716", W, "", "${EXAMPLE_SSH_KEY}"}},
			message: []string{"flavor machinepool needs ${EXAMPLE_SSH_KEY} without a default in v0.1.1, where v0.1.0 did not use it: `clusterctl generate cluster --flavor machinepool` fails ('value for variables [EXAMPLE_SSH_KEY] is not set')"}},
		{name: "a default removed",
			new: func(t *testing.T, rel *release.Release) {
				editFile(t, rel, example, topology, func(s string) string { return replace(t, s, "${EXAMPLE_REGION:=us-east-1}", "${EXAMPLE_REGION}") })
			},
			want:    []key{{exampleNew + topology, "CAPI716", W, "", "${EXAMPLE_REGION}"}},
			message: []string{`flavor topology needs ${EXAMPLE_REGION} without a default in v0.1.1, where v0.1.0 gave it the default "us-east-1"`}},
		{name: "a variable newly required by the ClusterClass a flavor uses",
			new: func(t *testing.T, rel *release.Release) {
				editFile(t, rel, example, quickStart, func(s string) string {
					return replace(t, s, "name: example-quick-start\n", "name: example-quick-start\n  annotations:\n    owner: ${EXAMPLE_OWNER}\n")
				})
			},
			want:    []key{{exampleNew + topology, "CAPI716", W, "", "${EXAMPLE_OWNER}"}},
			message: []string{"flavor topology needs ${EXAMPLE_OWNER} without a default in v0.1.1 (in clusterclass-example-quick-start.yaml, which it uses)"}},
		{name: "a default changed, in each flavor that gives it",
			new: func(t *testing.T, rel *release.Release) {
				for _, f := range []string{machinePool, topology} {
					editFile(t, rel, example, f, func(s string) string {
						return strings.ReplaceAll(s, "${EXAMPLE_REGION:=us-east-1}", "${EXAMPLE_REGION:=eu-west-1}")
					})
				}
			},
			want: []key{{exampleNew + machinePool, "CAPI717", W, "", "${EXAMPLE_REGION}"}, {exampleNew + topology, "CAPI717", W, "", "${EXAMPLE_REGION}"}},
			message: []string{`flavor machinepool gives ${EXAMPLE_REGION} the default "eu-west-1" in v0.1.1, and "us-east-1" in v0.1.0`,
				`flavor topology gives ${EXAMPLE_REGION} the default "eu-west-1"`}},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		for _, k := range c.want {
			covered[k.Rule] = true
		}
		t.Run(c.name, func(t *testing.T) {
			old, new := examplePair(t)
			c.new(t, new)
			res := diff.Compare(old, new)
			if d := cmp.Diff(c.want, keys(res.Findings)); d != "" {
				t.Fatalf("findings (-want +got):\n%s\n%s", d, messages(res))
			}
			for i, m := range c.message {
				if !strings.Contains(res.Findings[min(i, len(res.Findings)-1)].Message, m) {
					t.Errorf("message %d lacks %q:\n%s", i, m, messages(res))
				}
			}
		})
	}
	for _, r := range templateUserRules {
		if !covered[r] {
			t.Errorf("rule %s has no failing case", r)
		}
	}
}

// TestCompare_TemplateUsersNotFindings: a flavor added, a new variable with
// a default, a variable dropped, a default given to a required variable, a
// class variable without a default the flavor already needed, and variables
// clusterctl generate cluster sets itself (the namespace, the machine
// counts) change nothing users of the old flavors do.
func TestCompare_TemplateUsersNotFindings(t *testing.T) {
	old, new := examplePair(t)
	p, _ := new.Provider(example)
	f, _ := p.File(machinePool)
	addFile(t, new, example, "cluster-template-machinepool-ha.yaml", strings.ReplaceAll(string(f.Data), "${WORKER_MACHINE_COUNT}", "${HA_COUNT}"))
	editFile(t, new, example, machinePool, func(s string) string {
		s = replace(t, s, "region: ${EXAMPLE_REGION:=us-east-1}", "region: ${EXAMPLE_REGION:=us-east-1}\n  zone: ${EXAMPLE_ZONE:=a}")
		return strings.ReplaceAll(s, "${EXAMPLE_MACHINE_FLAVOR}", "${EXAMPLE_MACHINE_FLAVOR:=small}")
	})
	editFile(t, new, example, topology, func(s string) string {
		s = replace(t, s, "${EXAMPLE_REGION:=us-east-1}", "us-east-1")
		return replace(t, s, "  name: ${CLUSTER_NAME}\n", "  name: ${CLUSTER_NAME}\n  namespace: ${NAMESPACE}\n")
	})
	editFile(t, new, example, quickStart, func(s string) string {
		return replace(t, s, "name: example-quick-start\n", "name: example-quick-start\n  annotations:\n    name: ${CLUSTER_NAME}\n")
	})
	res := diff.Compare(old, new)
	if len(res.Findings) > 0 {
		t.Errorf("findings:\n%s", messages(res))
	}
	if got := res.Changes.Providers[0].FlavorsAdded; !slices.Equal(got, []string{"machinepool-ha"}) {
		t.Errorf("flavors added %v, want [machinepool-ha]", got)
	}
}
