package builder

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/internal/testtree"
)

// The builder's walks of a tree's kustomizations share one definition of
// remote, absolute and local entries (package internal/kustomization);
// these tests pin the edges where a walk followed a rule of its own before.

const imagesBase = "images:\n- name: from-base\n"

func TestImageEntries_FollowLocalEntriesAsTheSafetyCheckDoes(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{
			// Was skipped as remote: the expression matched without a look
			// at the tree. checkLocal reads it as local, and so do all walks.
			name: "a folder of the tree whose path looks like a host is followed",
			files: map[string]string{
				"config/default/kustomization.yaml":                  "resources: [example.com/base]\n",
				"config/default/example.com/base/kustomization.yaml": imagesBase,
			},
			want: []string{"from-base"},
		},
		{
			name: "a github.com/org/repo//path shorthand is remote",
			files: map[string]string{
				"config/default/kustomization.yaml":      "resources:\n- github.com/org/repo//base?ref=v1\n",
				"config/default/base/kustomization.yaml": imagesBase,
			},
		},
		{
			// Was read below the kustomization's folder (filepath.Join of
			// the two); kustomize reads it as it stands, outside the tree.
			name: "an absolute entry is not read below the kustomization",
			files: map[string]string{
				"config/default/kustomization.yaml":      "resources: [/base]\n",
				"config/default/base/kustomization.yaml": imagesBase,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries, _, err := imageEntries(testtree.InMemory(t, "/t", tt.files), "/t/config/default")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range entries {
				got = append(got, e.name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("images: entries (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBuild_SymlinkLoopInTheKustomizationsIsRefused: two folders that link
// back to their parent double the paths at every level, which the safety
// check walked without end; the walk's bound stops it with a message.
func TestBuild_SymlinkLoopInTheKustomizationsIsRefused(t *testing.T) {
	dir := testtree.Write(t, testtree.Minimal(map[string]string{
		"config/manager/kustomization.yaml": "resources:\n- manager.yaml\n- l1\n- l2\n",
	}))
	for _, l := range []string{"l1", "l2"} {
		if err := os.Symlink(".", filepath.Join(dir, "config/manager", l)); err != nil {
			t.Fatal(err)
		}
	}
	_, err := build(t, dir, Options{})
	wantErrParts(t, err, "config/default", "kustomization graph too large", "more than 1000 folders", "symlink loop")

	// With --allow-remote the safety check does not run; the images walk
	// (breadth first, unbounded before) ends the same way.
	_, err = build(t, dir, Options{AllowRemote: true})
	wantErrParts(t, err, "kustomization graph too large")

	// So does the walk that explains a failed render, which found nothing
	// to explain only after walking every path.
	fs, err := newTreeFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := findBroken(fs, filepath.Join(dir, "config/default")); err != nil {
		t.Errorf("findBroken = %v, want nothing broken", err)
	}
}

// TestBuild_PatchPathOutsideTheTreeIsRefusedBeforeTheRender: the safety
// check now looks at patch paths as it looks at resources, so a patch
// outside the tree is named with its field before kustomize runs.
func TestBuild_PatchPathOutsideTheTreeIsRefusedBeforeTheRender(t *testing.T) {
	err := buildErr(t, map[string]string{
		"config/manager/kustomization.yaml": "resources:\n- manager.yaml\npatches:\n- path: ../../../../../../../../../../etc/hostname\n",
	})
	wantErrParts(t, err, "config/manager/kustomization.yaml: field patches[0].path", "outside the provider tree")
}

func TestLabelSources_KustomizeOrderAndTheWalksBound(t *testing.T) {
	const sets = "labels:\n- pairs:\n    cluster.x-k8s.io/provider: infrastructure-old\n"
	tests := []struct {
		name  string
		files map[string]string
		start string
		want  []string
	}{
		{
			// Components came before bases.
			name: "bases before components, as kustomize reads them",
			files: map[string]string{
				"d/kustomization.yaml": "components: [../c]\nbases: [../b]\nresources: [../r]\n",
				"r/kustomization.yaml": sets, "b/kustomization.yaml": sets, "c/kustomization.yaml": sets,
			},
			start: "d",
			want:  []string{"/t/r/kustomization.yaml", "/t/b/kustomization.yaml", "/t/c/kustomization.yaml"},
		},
		{
			// The walk stopped after 200 folders.
			name:  "a graph of 300 folders is searched to its end",
			files: testtree.KustomizationChain(300, sets),
			start: "f0",
			want:  []string{"/t/f299/kustomization.yaml"},
		},
		{
			name:  "a github.com/org/repo//path shorthand is remote",
			files: map[string]string{"d/kustomization.yaml": "resources:\n- github.com/org/repo//b?ref=v1\n", "d/b/kustomization.yaml": sets},
			start: "d",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := labelSources(testtree.InMemory(t, "/t", tt.files), filepath.Join("/t", tt.start), "infrastructure-old")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("label sources (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResourceFiles_TheWalksBound(t *testing.T) {
	// The walk stopped after 200 folders.
	files := testtree.KustomizationChain(300, "resources: [cm.yaml]\ncrds: [crd.yaml]\n")
	files["f299/cm.yaml"], files["f299/crd.yaml"] = "", ""
	got := resourceFiles(testtree.InMemory(t, "/t", files), "/t/f0")
	if diff := cmp.Diff([]string{"/t/f299/cm.yaml", "/t/f299/crd.yaml"}, got); diff != "" {
		t.Errorf("resource files (-want +got):\n%s", diff)
	}
}
