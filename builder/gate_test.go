package builder

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/internal/testtree"
)

// lintBuilt is the one gate build, release and lint share: the lint's
// rules and the build's own findings under the config's waivers.
func lintBuilt(res *Result, opts contract.Options) contract.Report {
	opts.Waivers = append(contract.Waivers(res.Config.Lint), opts.Waivers...)
	opts.Findings, opts.Sources = res.Findings, res.Sources
	return contract.Lint(res.Release, opts)
}

// TestBuild_ChecksAreLintFindings: what the build used to refuse on its own,
// one problem per run and whatever the waivers, is now a lint finding: the
// build renders, the report names the rule, file, object and field, and a
// waiver of the rule clears it, unless clusterctl refuses the release for
// it (Rule.Waivable): then the error stands and the waiver is reported.
func TestBuild_ChecksAreLintFindings(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		opts  Options
		rule  string
		want  []string // in the finding's text
	}{
		{"metadata wrong kind", map[string]string{"metadata.yaml": "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Meta\nreleaseSeries: [{major: 1, minor: 2, contract: v1beta2}]\n"},
			Options{}, "CAPI102", []string{"metadata.yaml", "kind", `"Meta"`}},
		{"metadata wrong apiVersion", map[string]string{"metadata.yaml": "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha2\nkind: Metadata\nreleaseSeries: [{major: 1, minor: 2, contract: v1beta2}]\n"},
			Options{}, "CAPI102", []string{"metadata.yaml", "apiVersion", "v1alpha2"}},
		{"version not covered by a release series", nil, Options{Version: "v1.3.0"}, "CAPI105", []string{"metadata.yaml", "v1.3.0", "major: 1, minor: 3"}},
		{"metadata file missing", map[string]string{"metadata.yaml": ""}, Options{}, "CAPI101", []string{"metadata.yaml", "does not exist"}},
		{"two Namespace objects", map[string]string{
			"config/default/kustomization.yaml": "resources:\n- namespace.yaml\n- ns2.yaml\n- ../manager\n",
			"config/default/ns2.yaml":           "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: other\n",
			"capirepo.yaml":                     "providers:\n- name: infrastructure-test\n",
		}, Options{}, "CAPI201", []string{"infrastructure-components.yaml", "Namespace/other", "no more than one Namespace"}},
		{"namespaced object in another namespace", map[string]string{
			"config/default/kustomization.yaml": "resources:\n- namespace.yaml\n- ../manager\n- cm.yaml\n",
			"config/default/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: elsewhere\n",
			"capirepo.yaml":                     "providers:\n- name: infrastructure-test\n",
		}, Options{}, "CAPI202", []string{"ConfigMap/elsewhere/c", "metadata.namespace", `"elsewhere"`}},
		{"template that does not parse", map[string]string{"templates/cluster-template.yaml": "kind: [\n"},
			Options{}, "CAPI001", []string{"cluster-template.yaml", "does not parse"}},
		{"template variable syntax", map[string]string{"templates/cluster-template.yaml": cluster + "spec:\n  x: ${BROKEN\n"},
			Options{}, "CAPI002", []string{"cluster-template.yaml", "variables do not parse"}},
		{"topology class without its clusterclass file", map[string]string{"templates/cluster-template.yaml": cluster + "spec:\n  topology:\n    classRef:\n      name: quick\n"},
			Options{}, "CAPI504", []string{"cluster-template.yaml", "Cluster/${CLUSTER_NAME}", "spec.topology.classRef.name", "clusterclass-quick.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := testtree.Write(t, testtree.Minimal(tt.files))
			res, err := build(t, dir, tt.opts)
			if err != nil {
				t.Fatalf("build stopped on its own: %v", err)
			}
			rep := lintBuilt(res, contract.Options{})
			i := slices.IndexFunc(rep.Findings, func(f contract.Finding) bool { return f.Rule == tt.rule && f.Severity == contract.Error })
			if i < 0 {
				t.Fatalf("no %s error; report:\n%v", tt.rule, rep.Findings)
			}
			for _, w := range tt.want {
				if s := rep.Findings[i].String(); !strings.Contains(s, w) {
					t.Errorf("%s does not mention %q", s, w)
				}
			}
			waived := lintBuilt(res, contract.Options{Waivers: []contract.Waiver{{Rule: tt.rule, Reason: "test"}}})
			stands := slices.ContainsFunc(waived.Findings, func(f contract.Finding) bool { return f.Rule == tt.rule })
			switch waivable := !contract.Unwaivable(rep.Findings[i]); {
			case waivable && (stands || len(waived.Waived) == 0):
				t.Errorf("waiving %s did not waive it: %v", tt.rule, waived.Findings)
			case !waivable && (!stands || len(waived.NotWaived) != 1):
				t.Errorf("%s, which clusterctl refuses, was waived: %v, not waived %v", tt.rule, waived.Findings, waived.NotWaived)
			}
		})
	}
}

// TestBuild_AllFindingsAtOnce: a tree with several problems in several
// files is reported in one run, every one of them.
func TestBuild_AllFindingsAtOnce(t *testing.T) {
	dir := testtree.Write(t, testtree.Minimal(map[string]string{
		"metadata.yaml":                       "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Meta\nreleaseSeries: [{major: 1, minor: 2, contract: v1beta2}]\n",
		"templates/cluster-template.yaml":     cluster + "spec:\n  topology:\n    classRef:\n      name: quick\n",
		"templates/cluster-template-bad.yaml": "kind: [\n",
	}))
	res, err := build(t, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep := lintBuilt(res, contract.Options{})
	var got []string
	for _, f := range rep.Findings {
		if f.Severity == contract.Error {
			got = append(got, f.Rule)
		}
	}
	slices.Sort(got)
	if want := []string{"CAPI001", "CAPI102", "CAPI504"}; !slices.Equal(got, want) {
		t.Errorf("errors %v, want %v:\n%v", got, want, rep.Findings)
	}
}

// TestBuild_ProviderLabelOfTheTreeIsReplaced: a tree that labels its objects
// kubevirt for infrastructure-kubevirt (some only on CRDs) builds with the
// provider label, as clusterctl relabels on install, and a CAPI203 warning
// names the kustomization that set the old value; another names the objects
// that had none (issue 45: a label added is said as clearly).
func TestBuild_ProviderLabelOfTheTreeIsReplaced(t *testing.T) {
	dir := testtree.Write(t, testtree.Minimal(map[string]string{
		"capirepo.yaml": "providers:\n- name: infrastructure-kubevirt\n",
		"config/default/kustomization.yaml": `namespace: test-system
resources:
- namespace.yaml
- ../manager
- ../crd
`,
		"config/crd/kustomization.yaml": "labels:\n- pairs:\n    cluster.x-k8s.io/provider: kubevirt\nresources:\n- crd.yaml\n",
		"config/crd/crd.yaml":           "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: kvclusters.infrastructure.cluster.x-k8s.io\nspec:\n  group: infrastructure.cluster.x-k8s.io\n  names: {kind: KVCluster, plural: kvclusters}\n  scope: Namespaced\n  versions: [{name: v1, served: true, storage: true}]\n",
	}))
	res, err := build(t, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	comps := res.Release.Providers[0].Components().Data
	if strings.Contains(string(comps), "cluster.x-k8s.io/provider: kubevirt\n") {
		t.Errorf("the tree's label kubevirt is still in the components:\n%s", comps)
	}
	i := slices.IndexFunc(res.Findings, func(f contract.Finding) bool {
		return f.Rule == "CAPI203" && strings.Contains(f.Message, "kubevirt on")
	})
	if i < 0 {
		t.Fatalf("no CAPI203 finding of the label replaced: %v", res.Findings)
	}
	f := res.Findings[i]
	// The objects that had no label get it, and that is said as clearly,
	// with the count and the objects.
	j := slices.IndexFunc(res.Findings, func(f contract.Finding) bool { return f.Rule == "CAPI203" && strings.Contains(f.Message, "sets no") })
	if j < 0 {
		t.Fatalf("no CAPI203 finding of the labels added: %v", res.Findings)
	}
	if g := res.Findings[j]; g.Severity != contract.Warning || !strings.Contains(g.Message, "the kustomization config/default sets no cluster.x-k8s.io/provider on 2 objects (Namespace/test-system, Deployment/controller-manager); the release adds \"infrastructure-kubevirt\"") {
		t.Errorf("labels added said as %s", g)
	}
	for _, w := range []string{"config/crd/kustomization.yaml", "kubevirt", "CustomResourceDefinition/kvclusters.infrastructure.cluster.x-k8s.io", "infrastructure-kubevirt"} {
		if !strings.Contains(f.Message, w) {
			t.Errorf("%s does not mention %q", f, w)
		}
	}
	if f.Severity != contract.Warning {
		t.Errorf("severity %s, want warning", f.Severity)
	}
	if _, ok := contract.LookupRule(ruleProviderLabel); !ok {
		t.Errorf("rule %s is not in the catalogue", ruleProviderLabel)
	}
	if _, ok := contract.LookupRule(ruleMetadataMissing); !ok {
		t.Errorf("rule %s is not in the catalogue", ruleMetadataMissing)
	}
}

// TestBuild_FindingsLeadBackToTheTree: a finding in a template copied as it
// is names the file and the line of its object; one in the components names
// the resource file the object was rendered from.
func TestBuild_FindingsLeadBackToTheTree(t *testing.T) {
	dir := testtree.Write(t, testtree.Minimal(map[string]string{
		"templates/cluster-template.yaml":   "# a comment\n" + cluster + "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns\n",
		"config/default/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: elsewhere\n",
		"config/default/kustomization.yaml": "resources:\n- namespace.yaml\n- ../manager\n- cm.yaml\n",
		"capirepo.yaml":                     "providers:\n- name: infrastructure-test\n",
	}))
	res, err := build(t, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep := lintBuilt(res, contract.Options{})
	got := map[string]string{}
	for _, f := range rep.Findings {
		if f.Line > 0 {
			got[f.Rule] = fmt.Sprintf("%s:%d", f.Source, f.Line)
		} else {
			got[f.Rule] = f.Source
		}
	}
	if want := "templates/cluster-template.yaml:7"; got["CAPI501"] != want {
		t.Errorf("CAPI501 source %q, want %q (%v)", got["CAPI501"], want, rep.Findings)
	}
	if want := "config/default/cm.yaml:1"; got["CAPI202"] != want {
		t.Errorf("CAPI202 source %q, want %q", got["CAPI202"], want)
	}
}

// TestBuild_ComponentFindingsNameTheResourceFile: a finding on a rendered
// object names the resource file and line it came from, through the
// kustomization's resources and the namePrefix.
func TestBuild_ComponentFindingsNameTheResourceFile(t *testing.T) {
	dir := testtree.Write(t, testtree.Minimal(map[string]string{
		"config/default/kustomization.yaml": "namespace: test-system\nnamePrefix: test-\nresources:\n- namespace.yaml\n- ../manager\n- ../extra\n",
		"config/extra/kustomization.yaml":   "resources:\n- objects.yaml\n",
		"config/extra/objects.yaml":         "# objects\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: other\nspec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec:\n      containers:\n      - name: c\n        image: nginx\n",
		"capirepo.yaml":                     "providers:\n- name: infrastructure-test\n",
	}))
	res, err := build(t, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep := lintBuilt(res, contract.Options{})
	i := slices.IndexFunc(rep.Findings, func(f contract.Finding) bool { return f.Rule == "CAPI207" })
	if i < 0 {
		t.Fatalf("no CAPI207: %v", rep.Findings)
	}
	if got := fmt.Sprintf("%s:%d", rep.Findings[i].Source, rep.Findings[i].Line); got != "config/extra/objects.yaml:7" {
		t.Errorf("CAPI207 on %s comes from %s, want config/extra/objects.yaml:7", rep.Findings[i].Object, got)
	}
}

// TestBuild_ProviderNameASlipFromTheTreesLabelIsAnError: a provider name a
// typo away from the label the tree sets stops the build with the label to
// use; a name that differs by design keeps the CAPI203 warning.
func TestBuild_ProviderNameASlipFromTheTreesLabelIsAnError(t *testing.T) {
	for _, c := range []struct{ name, wantErr string }{
		{"infrastructure-tset", `provider name "infrastructure-tset" (capirepo.yaml) is a slip away from the label the tree sets on`},
		{"infrastructure-tests", `did you mean "infrastructure-test"?`},
		{"infrastructure-other", ""},
		{"infrastructure-toast", ""}, // two edits in a short name: another name
		{"bootstrap-test", ""},       // another type: another provider, not a slip
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := testtree.Write(t, testtree.Minimal(map[string]string{"capirepo.yaml": "providers:\n- name: " + c.name + "\n  templates: {none: true}\n"}))
			res, err := build(t, dir, Options{})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "config/default/kustomization.yaml") {
					t.Fatalf("err = %v, want %q naming the kustomization", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(res.Findings, func(f contract.Finding) bool { return f.Rule == "CAPI203" }) {
				t.Errorf("no CAPI203 warning: %v", res.Findings)
			}
		})
	}
}

// TestBuild_ImageFindingNamesTheFileThatSetTheImage: CAPI207 (an image
// clusterctl cannot parse) points at what set the value, not at the
// Deployment's base file (issue 45): an image patch of config/default, an
// images: entry of a kustomization, the capirepo.yaml key of the release
// image, a release patch.
func TestBuild_ImageFindingNamesTheFileThatSetTheImage(t *testing.T) {
	const bad = "Registry.Example.com/Test/Manager"
	patch := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: controller-manager\n  namespace: system\nspec:\n  template:\n    spec:\n      containers:\n      - name: manager\n        image: " + bad + ":v1.2.3\n"
	for _, c := range []struct {
		name  string
		files map[string]string
		opts  Options
		want  string
	}{
		{"image patch of config/default", map[string]string{
			"config/default/kustomization.yaml":       testtree.Minimal(nil)["config/default/kustomization.yaml"] + "patches:\n- path: manager_image_patch.yaml\n",
			"config/default/manager_image_patch.yaml": "# the release image\n" + patch,
		}, Options{KeepImage: true}, "config/default/manager_image_patch.yaml:12"},
		{"images: entry", map[string]string{
			"config/manager/kustomization.yaml": "resources:\n- manager.yaml\nimages:\n- name: registry.example.com/test/manager\n  newName: " + bad + "\n",
		}, Options{}, "config/manager/kustomization.yaml:4"},
		{"capirepo.yaml key", map[string]string{
			"capirepo.yaml": "providers:\n- name: infrastructure-test\n  image:\n    newName: " + bad + "\n",
		}, Options{}, "capirepo.yaml:3"},
		{"release patch", map[string]string{
			"capirepo.yaml":   "providers:\n- name: infrastructure-test\n  patches:\n  - path: hack/image.yaml\n",
			"hack/image.yaml": strings.NewReplacer("name: controller-manager", "name: test-controller-manager", "namespace: system", "namespace: test-system").Replace(patch),
		}, Options{KeepImage: true}, "hack/image.yaml:11"},
		{"the base file when nothing else set it", map[string]string{
			"config/manager/manager.yaml": strings.Replace(testtree.Minimal(nil)["config/manager/manager.yaml"], "registry.example.com/test/manager:dev", bad+":dev", 1),
		}, Options{KeepImage: true}, "config/manager/manager.yaml:1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := build(t, testtree.Write(t, testtree.Minimal(c.files)), c.opts)
			if err != nil {
				t.Fatal(err)
			}
			rep := lintBuilt(res, contract.Options{})
			i := slices.IndexFunc(rep.Findings, func(f contract.Finding) bool { return f.Rule == "CAPI207" })
			if i < 0 {
				t.Fatalf("no CAPI207: %v", rep.Findings)
			}
			if got := fmt.Sprintf("%s:%d", rep.Findings[i].Source, rep.Findings[i].Line); got != c.want {
				t.Errorf("CAPI207 (%s) source %s, want %s", rep.Findings[i].Field, got, c.want)
			}
		})
	}
}
