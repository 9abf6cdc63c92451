package publish_test

import (
	"context"
	"testing"

	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
)

// TestCompare_SignedProvenanceSupersedesTheUnsignedOne: a provenance that
// differs from the target's is changed; it needs no --replace only when
// the target's is unsigned, the release brings its bundle, and both name
// the same files with the same sha256.
func TestCompare_SignedProvenanceSupersedesTheUnsignedOne(t *testing.T) {
	files := []release.File{{Name: "metadata.yaml", Data: []byte("a\n")}, {Name: "checksums.txt", Data: []byte("b\n")}}
	prov := func(src publish.ProvenanceSource, fs []release.File) release.File {
		p, err := publish.Provenance(fs, src)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	published := prov(publish.ProvenanceSource{Repository: "https://github.com/o/r", Version: "v1.0.0"}, files)
	signed := prov(publish.ProvenanceSource{Repository: "https://github.com/o/r", Version: "v1.0.0", Providers: []string{"infrastructure-x"}}, files)
	otherFiles := prov(publish.ProvenanceSource{Repository: "https://github.com/o/r", Version: "v1.0.0", Providers: []string{"infrastructure-x"}},
		[]release.File{files[0], {Name: "checksums.txt", Data: []byte("c\n")}})
	bundle := release.File{Name: publish.ProvenanceFile + release.BundleSuffix, Data: []byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`)}
	remote := func(f release.File) publish.Remote {
		return publish.Remote{Name: f.Name, Size: int64(len(f.Data)), SHA256: f.SHA256()}
	}
	fetch := func(_ context.Context, name string) ([]byte, error) {
		if name != publish.ProvenanceFile {
			t.Errorf("fetched %s", name)
		}
		return published.Data, nil
	}
	for _, tc := range []struct {
		name        string
		want        []release.File
		signedThere bool
		superseded  bool
	}{
		{"signed, same files", []release.File{signed, bundle}, false, true},
		{"signed, other files", []release.File{otherFiles, bundle}, false, false},
		{"no bundle with it", []release.File{signed}, false, false},
		{"the target's is signed already", []release.File{signed, bundle}, true, false},
	} {
		have := map[string]publish.Remote{publish.ProvenanceFile: remote(published)}
		if tc.signedThere {
			have[bundle.Name] = remote(bundle)
		}
		d, err := publish.Compare(context.Background(), tc.want, have, fetch)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(d.Changed) != 1 || d.Changed[0].Name != publish.ProvenanceFile {
			t.Errorf("%s: changed %v", tc.name, publish.FileNames(d.Changed))
		}
		if got := len(d.NeedReplace()) == 0; got != tc.superseded {
			t.Errorf("%s: superseded %v, want %v (%v)", tc.name, got, tc.superseded, d.Superseded)
		}
	}
}
