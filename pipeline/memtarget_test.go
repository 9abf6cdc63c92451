package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/release"
)

// This file is the recipe of publish/doc.go followed in a test: a new kind
// of target (here, one that keeps releases in memory) is this one type and
// one Register call, the factory's one case. Nothing in pipeline/ or cmd/
// knows of it, yet release publishes to it and reads it back, and mirror
// copies upstream providers into it and reads them back.

// memTarget keeps releases in memory: provider label -> version -> files.
type memTarget struct {
	name    string
	replace bool

	mu    sync.Mutex
	files map[string]map[string]map[string][]byte
}

var _ publish.Target = (*memTarget)(nil)

func (m *memTarget) Publish(ctx context.Context, rel *release.Release) (*publish.Summary, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sum := &publish.Summary{Kind: "memory", URL: "mem://" + m.name, Version: rel.Version, Uploaded: []string{}, Skipped: []string{}, Replaced: []string{}}
	for _, p := range rel.Providers {
		have := map[string]publish.Remote{}
		for n, data := range m.files[p.Label()][p.Version] {
			have[n] = publish.Remote{Name: n, Size: int64(len(data)), SHA256: release.File{Name: n, Data: data}.SHA256()}
		}
		d, err := publish.Compare(ctx, p.Assets(), have, nil)
		if err != nil {
			return nil, err
		}
		if len(d.Changed) > 0 && !m.replace {
			return nil, fmt.Errorf("mem://%s holds %s %s with other files (%s)", m.name, p.Label(), p.Version, d.Describe())
		}
		if m.files[p.Label()] == nil {
			m.files[p.Label()] = map[string]map[string][]byte{}
		}
		if m.files[p.Label()][p.Version] == nil {
			m.files[p.Label()][p.Version] = map[string][]byte{}
		}
		for _, f := range slices.Concat(d.Missing, d.Changed) {
			m.files[p.Label()][p.Version][f.Name] = bytes.Clone(f.Data)
			sum.BytesUploaded += int64(len(f.Data))
		}
		for _, f := range d.Missing {
			sum.Uploaded = append(sum.Uploaded, p.Label()+"/"+f.Name)
		}
		for _, f := range d.Changed {
			sum.Replaced = append(sum.Replaced, p.Label()+"/"+f.Name)
		}
		for _, f := range d.Same {
			sum.Skipped = append(sum.Skipped, p.Label()+"/"+f.Name)
		}
		sum.Providers = append(sum.Providers, publish.ProviderURL{Name: p.ID.Name, Type: string(p.ID.Type), URL: "mem://" + m.name + "/" + p.Label()})
	}
	return sum, nil
}

func (m *memTarget) Versions(_ context.Context, id provider.ID) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Collect(maps.Keys(m.files[id.Label()])), nil
}

func (m *memTarget) List(_ context.Context, ref publish.Ref) (map[string]publish.Remote, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	files, ok := m.files[ref.ID.Label()][ref.Version]
	if !ok {
		return nil, fmt.Errorf("mem://%s has no %s: %w", m.name, ref, publish.ErrNotFound)
	}
	out := map[string]publish.Remote{}
	for n, data := range files {
		out[n] = publish.Remote{Name: n, Size: int64(len(data)), SHA256: release.File{Name: n, Data: data}.SHA256()}
	}
	return out, nil
}

func (m *memTarget) Fetch(_ context.Context, ref publish.Ref, names ...string) ([]release.File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []release.File
	for _, n := range names {
		data, ok := m.files[ref.ID.Label()][ref.Version][n]
		if !ok {
			return nil, fmt.Errorf("mem://%s: %s has no %s: %w", m.name, ref, n, publish.ErrNotFound)
		}
		out = append(out, release.File{Name: n, Data: bytes.Clone(data)})
	}
	return out, nil
}

// Clusterctl: clusterctl cannot read memory; what Fetch returns is what
// the target's own reader would install.
func (m *memTarget) Clusterctl() publish.Reach {
	return publish.Reach{Why: "clusterctl cannot read memory", Reader: "the memory reader"}
}

// memTargets registers the mem://NAME scheme for the test: the factory's
// one case. The same name opens the same store, as the same URL reaches the
// same repository.
func memTargets(t *testing.T) map[string]*memTarget {
	t.Helper()
	var mu sync.Mutex
	stores := map[string]*memTarget{}
	t.Cleanup(targets.Register(targets.Backend{Scheme: "mem", Form: "mem://NAME",
		Parse: func(rest string) (targets.Location, error) {
			if rest == "" || strings.Contains(rest, "/") {
				return targets.Location{}, errors.New("want mem://NAME")
			}
			return targets.Location{Opener: func(_ context.Context, o targets.Options) (publish.Target, error) {
				mu.Lock()
				defer mu.Unlock()
				m, ok := stores[rest]
				if !ok {
					m = &memTarget{name: rest, files: map[string]map[string]map[string][]byte{}}
					stores[rest] = m
				}
				m.replace = o.Replace
				return m, nil
			}}, nil
		}}))
	return stores
}

func TestNewTarget_ReleasePublishesToItAndReadsItBack(t *testing.T) {
	stores := memTargets(t)
	var log bytes.Buffer
	o := exampleRun(t, &log)
	o.Targets = locations(t, "mem://releases")
	sum, err := pipeline.Release(context.Background(), o)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	if got := statuses(sum); !strings.Contains(got, "publish mem://releases=ok\nverify mem://releases=ok\n") {
		t.Errorf("steps:\n%s", got)
	}
	if d := sum.Steps[len(sum.Steps)-1].Detail; !strings.Contains(d, "read back from mem://releases by the memory reader's rules, then through clusterctl") {
		t.Errorf("verify detail %q", d)
	}
	files := stores["releases"].files["infrastructure-example"]["v0.1.0"]
	if _, ok := files["infrastructure-components.yaml"]; !ok || len(files) != 8 {
		t.Errorf("the store holds %v", slices.Sorted(maps.Keys(files)))
	}
	// Every upload is listed once, since the target lists none itself.
	if n := strings.Count(log.String(), "uploaded infrastructure-example/metadata.yaml"); n != 1 {
		t.Errorf("metadata.yaml listed %d times:\n%s", n, log.String())
	}
}

func TestNewTarget_MirrorCopiesIntoItAndReadsItBack(t *testing.T) {
	stores := memTargets(t)
	u := newUpstream(t, nil)
	var log bytes.Buffer
	o := u.options(t, "mem://mirror", &log, "infrastructure-example:latest-1")
	o.CertManager = false // clusterctl installs cert-manager by URL; memory has none
	sum, err := pipeline.Mirror(context.Background(), o)
	if err != nil {
		t.Fatalf("mirror: %v\n%s", err, log.String())
	}
	if got := slices.Sorted(maps.Keys(stores["mirror"].files["infrastructure-example"])); !slices.Equal(got, []string{"v0.2.0", "v0.2.1"}) {
		t.Errorf("mirrored versions %v", got)
	}
	if sum.Verified != 2 {
		t.Errorf("%d versions read back through clusterctl, want 2\n%s", sum.Verified, log.String())
	}
	// A re-run finds everything there.
	again, err := pipeline.Mirror(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range again.Providers[0].Versions {
		if len(v.Uploaded)+len(v.Replaced) != 0 || len(v.Skipped) == 0 {
			t.Errorf("re-run of %s: %d uploaded, %d replaced, %d skipped", v.Version, len(v.Uploaded), len(v.Replaced), len(v.Skipped))
		}
	}
}
