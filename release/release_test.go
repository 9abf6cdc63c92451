package release

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/provider"
)

func testRelease(t *testing.T) *Release {
	t.Helper()
	mk := func(label, components string, files map[string]string) *Provider {
		id, err := provider.ParseLabel(label)
		if err != nil {
			t.Fatal(err)
		}
		p := &Provider{ID: id, Version: "v1.0.0", ComponentsFile: components}
		for n, d := range files {
			if err := p.Add(n, []byte(d)); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	return &Release{Version: "v1.0.0", Providers: []*Provider{
		mk("cluster-api", "core-components.yaml", map[string]string{"core-components.yaml": "core", "metadata.yaml": "md"}),
		mk("bootstrap-kubeadm", "bootstrap-components.yaml", map[string]string{"bootstrap-components.yaml": "bs", "metadata.yaml": "md"}),
	}}
}

func TestWriteLoad_RoundTrip(t *testing.T) {
	out := t.TempDir()
	rel := testRelease(t)
	if err := Write(out, rel); err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(out, "cluster-api", "v1.0.0", ChecksumsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sums), "  core-components.yaml\n") || !strings.Contains(string(sums), "  metadata.yaml\n") {
		t.Errorf("checksums.txt = %s", sums)
	}
	got, err := Load(out, "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rel, got, cmp.Comparer(func(a, b *Provider) bool {
		return a.Label() == b.Label() && a.ComponentsFile == b.ComponentsFile && cmp.Equal(a.Files, b.Files)
	})); diff != "" {
		t.Errorf("(-written +loaded):\n%s", diff)
	}
	// Loading one version folder works too.
	one, err := Load(filepath.Join(out, "bootstrap-kubeadm", "v1.0.0"), "")
	if err != nil || len(one.Providers) != 1 || one.Providers[0].ComponentsFile != "bootstrap-components.yaml" {
		t.Errorf("Load(one folder) = %+v, %v", one, err)
	}
	// Writing again replaces the folder and leaves no temporary folders.
	rel.Providers[0].Files[0].Data = []byte("core v2")
	if err := Write(out, rel); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(out, "cluster-api"))
	if len(entries) != 1 || entries[0].Name() != "v1.0.0" {
		t.Errorf("cluster-api/ holds %v", entries)
	}
}

func TestLoad_Errors(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(t *testing.T, out string)
		version string
		wantErr string
	}{
		{"tampered file", func(t *testing.T, out string) {
			writeFile(t, filepath.Join(out, "cluster-api", "v1.0.0", "metadata.yaml"), "changed")
		}, "", "metadata.yaml does not match its sha256"},
		{"extra file", func(t *testing.T, out string) {
			writeFile(t, filepath.Join(out, "cluster-api", "v1.0.0", "extra.yaml"), "x")
		}, "", "extra.yaml is not listed"},
		{"missing file", func(t *testing.T, out string) {
			_ = os.Remove(filepath.Join(out, "cluster-api", "v1.0.0", "metadata.yaml"))
		}, "", "lists metadata.yaml, which is missing"},
		{"no checksums", func(t *testing.T, out string) {
			_ = os.Remove(filepath.Join(out, "cluster-api", "v1.0.0", ChecksumsFile))
		}, "", "no checksums.txt"},
		{"two versions, none chosen", func(t *testing.T, out string) {
			_ = os.MkdirAll(filepath.Join(out, "cluster-api", "v1.1.0"), 0o755)
		}, "", "holds several versions (v1.0.0, v1.1.0)"},
		{"version absent", func(*testing.T, string) {}, "v9.0.0", "no provider folder for version v9.0.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			if err := Write(out, testRelease(t)); err != nil {
				t.Fatal(err)
			}
			tt.mutate(t, out)
			_, err := Load(out, tt.version)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
	if _, err := Load(t.TempDir(), ""); err == nil || !strings.Contains(err.Error(), "run capirepo build first") {
		t.Errorf("empty folder: %v", err)
	}
}

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFlat(t *testing.T) {
	rel := testRelease(t)
	files, err := rel.Flat()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
	}
	if diff := cmp.Diff([]string{"bootstrap-components.yaml", "core-components.yaml", "metadata.yaml", ChecksumsFile}, names); diff != "" {
		t.Errorf("flat names (-want +got):\n%s", diff)
	}
	rel.Providers[1].Files[1].Data = []byte("different metadata")
	if _, err := rel.Flat(); err == nil || !strings.Contains(err.Error(), "both have a different metadata.yaml") {
		t.Errorf("conflict: %v", err)
	}
}

func TestAdd_RefusesUnsafeNames(t *testing.T) {
	p := &Provider{}
	for _, n := range []string{"../x", "a/b", "..", "", ChecksumsFile} {
		if err := p.Add(n, nil); err == nil {
			t.Errorf("Add(%q) accepted", n)
		}
	}
}

// TestWrite_FailureLeavesPreviousVersion: a write that fails part-way leaves
// the previous folder whole and no half-written one under the version name.
func TestWrite_FailureLeavesPreviousVersion(t *testing.T) {
	out := t.TempDir()
	rel := testRelease(t)
	if err := Write(out, rel); err != nil {
		t.Fatal(err)
	}
	broken := testRelease(t)
	broken.Providers[1].Files = append(broken.Providers[1].Files, File{Name: "../escape.yaml", Data: []byte("x")})
	broken.Providers[0].Files[0].Data = []byte("new core")
	if err := Write(out, broken); err == nil {
		t.Fatal("Write accepted an unsafe name")
	}
	got, err := Load(out, "")
	if err != nil {
		t.Fatalf("previous release damaged: %v", err)
	}
	bs, _ := got.Provider("bootstrap-kubeadm")
	if c := bs.Components(); string(c.Data) != "bs" {
		t.Errorf("bootstrap components = %q", c.Data)
	}
	core, _ := got.Provider("cluster-api")
	if string(core.Components().Data) != "core" {
		t.Errorf("core replaced although the write failed: %q", core.Components().Data)
	}
	entries, _ := os.ReadDir(filepath.Join(out, "cluster-api"))
	if len(entries) != 1 {
		t.Errorf("leftover folders: %v", entries)
	}
}

// TestAttached_WrittenLoadedAndFlat: files attached after checksums.txt
// (provenance, bundles) are written beside the files, loaded back as
// attached (not listed in checksums.txt, so the folder still checks out),
// and published by Flat after its checksums.txt: the provider's own for
// one provider, the release's for several, written to flat/<version> and
// dropped when the providers were written again without them.
func TestAttached_WrittenLoadedAndFlat(t *testing.T) {
	out := t.TempDir()
	rel := testRelease(t)
	core := rel.Providers[0]
	if err := core.Attach("checksums.txt.sigstore.json", []byte(`{"core":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := core.Attach("metadata.yaml", []byte("x")); err == nil {
		t.Error("a release file was attached too")
	}
	if err := core.Add("provenance.intoto.json", []byte("x")); err == nil {
		t.Error("an attached file was added to the checksummed files")
	}
	rel.Attached = []File{{Name: "checksums.txt.sigstore.json", Data: []byte(`{"flat":1}`)}}
	if err := Write(out, rel); err != nil {
		t.Fatal(err)
	}
	sums, _ := os.ReadFile(filepath.Join(out, "cluster-api", "v1.0.0", ChecksumsFile))
	if strings.Contains(string(sums), "sigstore") {
		t.Errorf("checksums.txt lists the bundle:\n%s", sums)
	}
	got, err := Load(out, "")
	if err != nil {
		t.Fatal(err)
	}
	gotCore, _ := got.Provider("cluster-api")
	if diff := cmp.Diff(core.Attached, gotCore.Attached); diff != "" {
		t.Errorf("core attached (-written +loaded):\n%s", diff)
	}
	if diff := cmp.Diff(rel.Attached, got.Attached); diff != "" {
		t.Errorf("flat attached (-written +loaded):\n%s", diff)
	}
	flat, err := got.Flat()
	if err != nil {
		t.Fatal(err)
	}
	last := flat[len(flat)-1]
	if last.Name != "checksums.txt.sigstore.json" || string(last.Data) != `{"flat":1}` || flat[len(flat)-2].Name != ChecksumsFile {
		t.Errorf("flat ends with %s %s", flat[len(flat)-2].Name, last.Data)
	}

	// One provider: its own attached files are the flat set's.
	one := &Release{Version: "v1.0.0", Providers: []*Provider{core}}
	flat, _ = one.Flat()
	if last := flat[len(flat)-1]; string(last.Data) != `{"core":1}` {
		t.Errorf("one provider's flat set ends with %s", last.Data)
	}

	// Written again with other files: the flat folder no longer matches.
	rel.Providers[1].Files[0].Data = []byte("bootstrap v2")
	if err := Write(out, &Release{Version: rel.Version, Providers: rel.Providers}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, FlatDir, "v1.0.0")); !os.IsNotExist(err) {
		t.Errorf("the flat folder of an unsigned write is still there: %v", err)
	}
	rel.Attached = []File{{Name: "checksums.txt.sigstore.json", Data: []byte(`{"flat":1}`)}}
	if err := Write(out, rel); err != nil {
		t.Fatal(err)
	}
	rel.Providers[1].Files[0].Data = []byte("bootstrap v3")
	if err := Write(out, &Release{Version: rel.Version, Providers: rel.Providers, Attached: rel.Attached}); err != nil {
		t.Fatal(err)
	}
	// Stale on disk (made for other files): a hand-written flat folder.
	if err := os.WriteFile(filepath.Join(out, FlatDir, "v1.0.0", ChecksumsFile), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = Load(out, "")
	if err != nil {
		t.Fatal(err)
	}
	if got.Attached != nil {
		t.Errorf("a stale flat folder was loaded: %v", got.Attached)
	}
}
