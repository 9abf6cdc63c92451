package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capirepo/capirepo/publish/publishtest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
)

// testRegistry is go-containerregistry's in-process registry behind a
// recorder, optional basic auth and optional injected failures.
type testRegistry struct {
	*httptest.Server
	host string

	mu       sync.Mutex
	requests []string
	user     string
	pass     string
	// fail, when set, answers a request instead of the registry.
	fail func(r *http.Request) (status int, header http.Header)
}

func newTestRegistry(t *testing.T) *testRegistry {
	t.Helper()
	tr := &testRegistry{}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	tr.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tr.mu.Lock()
		tr.requests = append(tr.requests, r.Method+" "+r.URL.Path)
		user, pass, fail := tr.user, tr.pass, tr.fail
		tr.mu.Unlock()
		if user != "" {
			if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
				return
			}
		}
		if fail != nil {
			if status, h := fail(r); status != 0 {
				for k, v := range h {
					w.Header()[k] = v
				}
				w.WriteHeader(status)
				return
			}
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(tr.Close)
	tr.host = strings.TrimPrefix(tr.URL, "http://")
	return tr
}

// take returns and forgets the requests seen so far.
func (tr *testRegistry) take() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	r := tr.requests
	tr.requests = nil
	return r
}

func writes(reqs []string) []string {
	var out []string
	for _, r := range reqs {
		if !strings.HasPrefix(r, "GET ") && !strings.HasPrefix(r, "HEAD ") {
			out = append(out, r)
		}
	}
	return out
}

// sleeps records the waits of a test retry policy instead of sleeping.
type sleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeps) retry() *publish.Retry {
	return &publish.Retry{Attempts: 4, Initial: time.Second, Max: 4 * time.Second,
		Sleep: func(_ context.Context, d time.Duration) error {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.waits = append(s.waits, d)
			return nil
		}}
}

func examplePath() string {
	return filepath.Join("..", "..", "builder", "testdata", "golden", "infrastructure-example")
}

// exampleRelease is the example provider's built release (v0.1.0).
func exampleRelease(t *testing.T) *release.Release {
	t.Helper()
	p, err := loadFlat(examplePath(), "infrastructure-example", "v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	return &release.Release{Version: "v0.1.0", Providers: []*release.Provider{p}}
}

// loadFlat reads a flat folder of release files as one provider version.
func loadFlat(dir, label, version string) (*release.Provider, error) {
	id, err := provider.ParseLabel(label)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	p := &release.Provider{ID: id, Version: version}
	var names []string
	for _, e := range entries {
		if e.Name() == release.ChecksumsFile {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		if err := p.Add(e.Name(), data); err != nil {
			return nil, err
		}
		names = append(names, e.Name())
	}
	p.ComponentsFile, err = release.ComponentsFile(id, names)
	return p, err
}

func newPublisher(t *testing.T, reg *testRegistry, mod func(*Options)) *Target {
	t.Helper()
	s := &sleeps{}
	o := Options{Repository: reg.host + "/capi", Retry: s.retry()}
	if mod != nil {
		mod(&o)
	}
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func manifestOf(t *testing.T, reg *testRegistry, repo, tag string) (v1.Manifest, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, reg.URL+"/v2/"+repo+"/manifests/"+tag, nil)
	req.Header.Set("Accept", string(types.OCIManifestSchema1))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET manifest %s:%s: %s %s", repo, tag, resp.Status, buf.String())
	}
	var m v1.Manifest
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	return m, buf.Bytes()
}

func TestPublishOCI_OperatorLayoutWithRealMediaTypesAndAnnotations(t *testing.T) {
	reg := newTestRegistry(t)
	rel := exampleRelease(t)
	created := time.Unix(1700000000, 0)
	p := newPublisher(t, reg, func(o *Options) {
		o.Meta = Meta{Source: "https://github.com/example/cluster-api-provider-example", Created: created}
	})
	sum, err := p.Publish(context.Background(), rel)
	if err != nil {
		t.Fatal(err)
	}
	m, raw := manifestOf(t, reg, "capi/infrastructure-example", "v0.1.0")
	if m.ArtifactType != ArtifactType || m.Config.MediaType != types.OCIEmptyJSON || m.Config.Size != 2 {
		t.Errorf("artifactType %q, config %s (%d bytes)", m.ArtifactType, m.Config.MediaType, m.Config.Size)
	}
	wantAnn := map[string]string{
		AnnotationVersion: "v0.1.0", AnnotationSource: "https://github.com/example/cluster-api-provider-example",
		AnnotationCreated: "2023-11-14T22:13:20Z", AnnotationProviderType: "infrastructure", AnnotationProviderName: "example",
	}
	if diff := cmp.Diff(wantAnn, m.Annotations); diff != "" {
		t.Errorf("manifest annotations (-want +got)\n%s", diff)
	}
	var titles []string
	for _, l := range m.Layers {
		if l.MediaType != YAMLMediaType {
			t.Errorf("layer %s: media type %s", l.Annotations[AnnotationTitle], l.MediaType)
		}
		titles = append(titles, l.Annotations[AnnotationTitle])
	}
	want := []string{"metadata.yaml", "infrastructure-components.yaml", "cluster-template-ha.yaml", "cluster-template-machinepool.yaml",
		"cluster-template-topology.yaml", "cluster-template.yaml", "clusterclass-example-quick-start.yaml"}
	if diff := cmp.Diff(want, titles); diff != "" {
		t.Errorf("layer titles (-want +got)\n%s", diff)
	}
	// Not told --plain-http, the client fell back to it (a loopback
	// address): the reference says http://, as the operator needs, and a
	// warning says why.
	if len(sum.Warnings) != 1 || !strings.Contains(sum.Warnings[0], reg.host+" answers plain HTTP") {
		t.Errorf("warnings %q", sum.Warnings)
	}
	if len(sum.Providers) != 1 || sum.Providers[0].URL != "http://"+reg.host+"/capi/infrastructure-example:v0.1.0" ||
		sum.Digests[sum.Providers[0].URL] != "sha256:"+digestOf(raw).Hex {
		t.Errorf("summary providers = %+v, manifest digest sha256:%s", sum.Providers, digestOf(raw).Hex)
	}
	if len(sum.Uploaded) != len(want) || len(sum.Skipped) != 0 {
		t.Errorf("uploaded %v, skipped %v", sum.Uploaded, sum.Skipped)
	}
}

func TestPublishOCI_ReadBackByTheOperatorsRules(t *testing.T) {
	reg := newTestRegistry(t)
	rel := exampleRelease(t)
	p := newPublisher(t, reg, nil)
	if _, err := p.Publish(context.Background(), rel); err != nil {
		t.Fatal(err)
	}
	got, err := publishtest.ReadBack(context.Background(), p, "infrastructure-example", "v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rel.Providers[0], got); diff != "" {
		t.Errorf("read back (-published +read)\n%s", diff)
	}
	vs, err := p.Versions(context.Background(), publishtest.ID(t, "infrastructure-example"))
	if err != nil || !cmp.Equal(vs, []string{"v0.1.0"}) {
		t.Errorf("Versions = %v, %v", vs, err)
	}
	if vs, err := p.Versions(context.Background(), publishtest.ID(t, "infrastructure-other")); err != nil || len(vs) != 0 {
		t.Errorf("Versions of a provider never published = %v, %v", vs, err)
	}
	if _, err := publishtest.ReadBack(context.Background(), p, "infrastructure-example", "v0.2.0"); !errors.Is(err, publish.ErrNotFound) {
		t.Errorf("Read of a version never published: %v, want ErrNotFound", err)
	}
	byRef, err := p.ReadReference(context.Background(), reg.host+"/capi/infrastructure-example:v0.1.0")
	if err != nil || len(byRef) != 1 || !cmp.Equal(byRef[0], got) {
		t.Errorf("ReadReference = %v, %v", byRef, err)
	}
}

func TestPublishOCI_RepushOfTheSameReleaseSendsNothing(t *testing.T) {
	reg := newTestRegistry(t)
	p := newPublisher(t, reg, nil)
	if _, err := p.Publish(context.Background(), exampleRelease(t)); err != nil {
		t.Fatal(err)
	}
	if w := writes(reg.take()); len(w) == 0 {
		t.Fatal("first publish wrote nothing")
	}
	// Rebuilt from disk, at another time, with another source: the same files.
	p2 := newPublisher(t, reg, func(o *Options) { o.Meta = Meta{Source: "https://example.com/other", Created: time.Now()} })
	sum, err := p2.Publish(context.Background(), exampleRelease(t))
	if err != nil {
		t.Fatal(err)
	}
	reqs := reg.take()
	if w := writes(reqs); len(w) != 0 {
		t.Errorf("re-push wrote %v", w)
	}
	for _, r := range reqs {
		if strings.Contains(r, "/blobs/") {
			t.Errorf("re-push touched a blob: %s", r)
		}
	}
	if len(sum.Uploaded)+len(sum.Replaced) != 0 || len(sum.Skipped) != 7 || sum.BytesUploaded != 0 {
		t.Errorf("summary: uploaded %v, replaced %v, skipped %v, %d bytes", sum.Uploaded, sum.Replaced, sum.Skipped, sum.BytesUploaded)
	}
}

func TestPublishOCI_ChangedFileIsRefusedWithoutReplace(t *testing.T) {
	reg := newTestRegistry(t)
	p := newPublisher(t, reg, nil)
	if _, err := p.Publish(context.Background(), exampleRelease(t)); err != nil {
		t.Fatal(err)
	}
	_, before := manifestOf(t, reg, "capi/infrastructure-example", "v0.1.0")
	reg.take()

	changed := exampleRelease(t)
	pr := changed.Providers[0]
	if err := pr.Add("infrastructure-components.yaml", append(pr.Components().Data, []byte("# changed\n")...)); err != nil {
		t.Fatal(err)
	}
	_, err := p.Publish(context.Background(), changed)
	if err == nil || !strings.Contains(err.Error(), "different infrastructure-components.yaml") || !strings.Contains(err.Error(), "--replace") {
		t.Fatalf("err = %v, want a refusal naming the file and --replace", err)
	}
	if w := writes(reg.take()); len(w) != 0 {
		t.Errorf("refused publish wrote %v", w)
	}
	if _, after := manifestOf(t, reg, "capi/infrastructure-example", "v0.1.0"); !bytes.Equal(before, after) {
		t.Error("the tag moved although the publish was refused")
	}

	pr2 := newPublisher(t, reg, func(o *Options) { o.Replace = true })
	sum, err := pr2.Publish(context.Background(), changed)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Replaced) != 7 {
		t.Errorf("replaced = %v", sum.Replaced)
	}
	got, err := publishtest.ReadBack(context.Background(), pr2, "infrastructure-example", "v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(got.Components().Data, []byte("# changed\n")) {
		t.Error("read back the old components after --replace")
	}
}

func TestPublishOCI_DigestIsStableAcrossBuilds(t *testing.T) {
	meta := Meta{Source: "https://github.com/example/x", Created: time.Unix(1700000000, 0)}
	var digests []string
	for range 2 {
		a, err := ProviderArtifact("registry.example.com/capi", exampleRelease(t).Providers[0], meta)
		if err != nil {
			t.Fatal(err)
		}
		d, err := a.Digest()
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, d.String())
	}
	if digests[0] != digests[1] {
		t.Errorf("two builds of the same release: %s and %s", digests[0], digests[1])
	}
	// The proposal layout's tar+gzip too.
	var pd []string
	for range 2 {
		a, err := ProposalArtifact("registry.example.com/capi", exampleRelease(t).Providers[0], meta)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := a.Digest()
		pd = append(pd, d.String())
	}
	if pd[0] != pd[1] {
		t.Errorf("two proposal builds: %s and %s", pd[0], pd[1])
	}
	// And a pushed artifact has the digest computed before the push.
	reg := newTestRegistry(t)
	p := newPublisher(t, reg, func(o *Options) { o.Meta = meta })
	sum, err := p.Publish(context.Background(), exampleRelease(t))
	if err != nil {
		t.Fatal(err)
	}
	_, raw := manifestOf(t, reg, "capi/infrastructure-example", "v0.1.0")
	if got := sum.Digests[sum.Providers[0].URL]; got != "sha256:"+digestOf(raw).Hex || got != digests[0] {
		t.Errorf("pushed digest %s, registry %s, computed %s", got, digestOf(raw), digests[0])
	}
}

func TestPublishOCI_BasicAuth(t *testing.T) {
	reg := newTestRegistry(t)
	reg.user, reg.pass = "robot", "s3cret-passw0rd"
	var progress bytes.Buffer

	anon := newPublisher(t, reg, func(o *Options) { o.Progress = &progress })
	_, err := anon.Publish(context.Background(), exampleRelease(t))
	if err == nil || !strings.Contains(err.Error(), "UNAUTHORIZED") {
		t.Fatalf("anonymous push: err = %v, want UNAUTHORIZED", err)
	}
	if strings.Contains(progress.String(), "retrying") {
		t.Errorf("an authentication failure was retried:\n%s", progress.String())
	}

	kc := staticKeychain{authn.FromConfig(authn.AuthConfig{Username: "robot", Password: "wrong"})}
	bad := newPublisher(t, reg, func(o *Options) { o.Keychain = kc; o.Secrets = []string{"wrong"}; o.Progress = &progress })
	if _, err := bad.Publish(context.Background(), exampleRelease(t)); err == nil {
		t.Fatal("wrong password accepted")
	}

	kc = staticKeychain{authn.FromConfig(authn.AuthConfig{Username: "robot", Password: reg.pass})}
	good := newPublisher(t, reg, func(o *Options) { o.Keychain = kc; o.Secrets = []string{reg.pass}; o.Progress = &progress })
	if _, err := good.Publish(context.Background(), exampleRelease(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := publishtest.ReadBack(context.Background(), good, "infrastructure-example", "v0.1.0"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(progress.String(), reg.pass) {
		t.Errorf("the password was printed:\n%s", progress.String())
	}
}

func TestPublishOCI_RetriesServerErrorsAndRateLimitsThroughThePolicy(t *testing.T) {
	reg := newTestRegistry(t)
	var mu sync.Mutex
	manifestPuts, blobHeads := 0, 0
	reg.fail = func(r *http.Request) (int, http.Header) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/"):
			manifestPuts++
			if manifestPuts <= 2 {
				return http.StatusServiceUnavailable, nil
			}
		case r.Method == http.MethodHead && strings.Contains(r.URL.Path, "/blobs/"):
			blobHeads++
			if blobHeads == 1 {
				return http.StatusTooManyRequests, http.Header{"Retry-After": {"7"}}
			}
		}
		return 0, nil
	}
	s := &sleeps{}
	var progress bytes.Buffer
	p := newPublisher(t, reg, func(o *Options) { o.Retry = s.retry(); o.Progress = &progress })
	if _, err := p.Publish(context.Background(), exampleRelease(t)); err != nil {
		t.Fatal(err)
	}
	// 429 with Retry-After: 7 waits 7s; the two 503s then back off 2s and
	// 4s (the policy's backoff counts the attempt the server timed too).
	if diff := cmp.Diff([]time.Duration{7 * time.Second, 2 * time.Second, 4 * time.Second}, s.waits); diff != "" {
		t.Errorf("waits (-want +got)\n%s\nprogress:\n%s", diff, progress.String())
	}
	if manifestPuts != 3 {
		t.Errorf("manifest PUTs = %d, want 3", manifestPuts)
	}
	got, err := publishtest.ReadBack(context.Background(), p, "infrastructure-example", "v0.1.0")
	if err != nil || !cmp.Equal(got, exampleRelease(t).Providers[0]) {
		t.Errorf("read back after retries: %v", err)
	}

	// A registry that keeps failing: the policy gives up after its attempts.
	reg.fail = func(r *http.Request) (int, http.Header) { return http.StatusBadGateway, nil }
	s.waits = nil
	_, err = publishtest.ReadBack(context.Background(), p, "infrastructure-example", "v0.1.0")
	if err == nil || !strings.Contains(err.Error(), "gave up after 4 attempts") {
		t.Errorf("err = %v", err)
	}
}

func TestPublishOCI_SingleArtifactForAMonorepoRelease(t *testing.T) {
	reg := newTestRegistry(t)
	ex := exampleRelease(t).Providers[0]
	md, _ := ex.File("metadata.yaml")
	rel := &release.Release{Version: "v0.1.0"}
	for _, id := range []provider.ID{
		{Name: "cluster-api", Type: clusterctlv1.CoreProviderType},
		{Name: "kubeadm", Type: clusterctlv1.BootstrapProviderType},
		{Name: "kubeadm", Type: clusterctlv1.ControlPlaneProviderType},
		{Name: "example", Type: clusterctlv1.InfrastructureProviderType},
	} {
		pr := &release.Provider{ID: id, Version: "v0.1.0", ComponentsFile: id.DefaultComponentsFile()}
		_ = pr.Add("metadata.yaml", md.Data)
		_ = pr.Add(pr.ComponentsFile, []byte("# components of "+id.Label()+"\n"))
		if id.Type == clusterctlv1.InfrastructureProviderType {
			_ = pr.Add("cluster-template.yaml", []byte("# template\n"))
		}
		rel.Providers = append(rel.Providers, pr)
	}
	p := newPublisher(t, reg, func(o *Options) { o.SingleArtifact = true })
	sum, err := p.Publish(context.Background(), rel)
	if err != nil {
		t.Fatal(err)
	}
	ref := "http://" + reg.host + "/capi:v0.1.0" // the test registry is plain HTTP
	for _, pu := range sum.Providers {
		if pu.URL != ref {
			t.Errorf("%s: reference %s, want %s", pu.Name, pu.URL, ref)
		}
	}
	m, _ := manifestOf(t, reg, "capi", "v0.1.0")
	if _, ok := m.Annotations[AnnotationProviderName]; ok {
		t.Error("a multi-provider artifact carries one provider's name")
	}
	got, err := p.ReadReference(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("read %d providers", len(got))
	}
	for _, g := range got {
		want, _ := rel.Provider(g.Label())
		if diff := cmp.Diff(want, g); diff != "" {
			t.Errorf("%s (-published +read)\n%s", g.Label(), diff)
		}
	}
	if _, err := publishtest.ReadBack(context.Background(), p, "control-plane-kubeadm", "v0.1.0"); err != nil {
		t.Error(err)
	}
}

func TestPublishOCI_TitlesAreTheOperatorsNames(t *testing.T) {
	for _, tc := range []struct {
		id         provider.ID
		file       string // as the release names it
		wantTitle  string // as the operator looks for it
		annotation bool
	}{
		{provider.ID{Name: "kubeadm", Type: clusterctlv1.ControlPlaneProviderType}, "control-plane-components.yaml", "controlplane-components.yaml", true},
		{provider.ID{Name: "x", Type: clusterctlv1.RuntimeExtensionProviderType}, "runtime-extension-components.yaml", "runtimeextension-components.yaml", true},
		{provider.ID{Name: "x", Type: clusterctlv1.InfrastructureProviderType}, "infrastructure-components-development.yaml", "infrastructure-components.yaml", true},
		{provider.ID{Name: "cluster-api", Type: clusterctlv1.CoreProviderType}, "core-components.yaml", "core-components.yaml", false},
	} {
		reg := newTestRegistry(t)
		pr := &release.Provider{ID: tc.id, Version: "v1.0.0", ComponentsFile: tc.file}
		_ = pr.Add("metadata.yaml", []byte("kind: Metadata\n"))
		_ = pr.Add(tc.file, []byte("kind: Namespace\n"))
		p := newPublisher(t, reg, nil)
		if _, err := p.Publish(context.Background(), &release.Release{Version: "v1.0.0", Providers: []*release.Provider{pr}}); err != nil {
			t.Fatal(err)
		}
		m, _ := manifestOf(t, reg, "capi/"+tc.id.Label(), "v1.0.0")
		comp := m.Layers[1]
		if comp.Annotations[AnnotationTitle] != tc.wantTitle || (comp.Annotations[AnnotationFile] == tc.file) != tc.annotation {
			t.Errorf("%s: components layer annotations %v", tc.id.Label(), comp.Annotations)
		}
		got, err := publishtest.ReadBack(context.Background(), p, tc.id.Label(), "v1.0.0")
		if err != nil {
			t.Fatal(err)
		}
		if got.ComponentsFile != tc.file {
			t.Errorf("%s: read back as %s, want %s", tc.id.Label(), got.ComponentsFile, tc.file)
		}
	}
}

func TestPublishOCI_ProposalFormat(t *testing.T) {
	reg := newTestRegistry(t)
	var progress bytes.Buffer
	p := newPublisher(t, reg, func(o *Options) { o.Format = FormatProposal; o.Progress = &progress })
	rel := exampleRelease(t)
	sum, err := p.Publish(context.Background(), rel)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(progress.String(), "cluster-api-operator cannot read") {
		t.Errorf("no warning that the operator cannot read it:\n%s", progress.String())
	}
	m, _ := manifestOf(t, reg, "capi/infrastructure-example", "v0.1.0")
	if m.ArtifactType != "" || m.Config.MediaType != types.OCIConfigJSON || len(m.Layers) != 1 || m.Layers[0].MediaType != types.OCILayer {
		t.Errorf("manifest: artifactType %q, config %s, layers %v", m.ArtifactType, m.Config.MediaType, m.Layers)
	}
	if m.Annotations[AnnotationTitle] != "infrastructure-example" || m.Annotations[AnnotationProviderType] != "infrastructure" {
		t.Errorf("annotations %v", m.Annotations)
	}
	got, err := publishtest.ReadBack(context.Background(), p, "infrastructure-example", "v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rel.Providers[0], got); diff != "" {
		t.Errorf("(-published +read)\n%s", diff)
	}
	if res, _ := p.Resources(rel, ""); len(res) != 0 || len(sum.Providers) != 1 {
		t.Errorf("resources %v for an artifact the operator cannot read", res)
	}
	if a, _ := ProposalArtifact("r.example.com/m", &release.Provider{ID: provider.ID{Name: "cluster-api", Type: clusterctlv1.CoreProviderType}}, Meta{}); a.Repository != "r.example.com/m/core-cluster-api" {
		t.Errorf("core proposal repository %s", a.Repository)
	}
}

func TestPublishOCI_PlainHTTPReferenceAndResources(t *testing.T) {
	reg := newTestRegistry(t)
	p := newPublisher(t, reg, func(o *Options) { o.PlainHTTP = true })
	rel := exampleRelease(t)
	sum, err := p.Publish(context.Background(), rel)
	if err != nil {
		t.Fatal(err)
	}
	want := "http://" + reg.host + "/capi/infrastructure-example:v0.1.0"
	if sum.Providers[0].URL != want {
		t.Errorf("reference %s, want %s", sum.Providers[0].URL, want)
	}
	res, err := p.Resources(rel, "")
	if err != nil || len(res) != 1 {
		t.Fatal(res, err)
	}
	if res[0].OCI != want || res[0].Namespace != "capi-example-system" || res[0].Version != "v0.1.0" || res[0].ID.Name != "example" {
		t.Errorf("resource %+v", res[0])
	}
}

func TestNew_RefusesAReferenceTheOperatorWouldMisread(t *testing.T) {
	for _, repo := range []string{"oci://registry.example.com/capi", "https://registry.example.com/capi", "capi/providers"} {
		if _, err := New(Options{Repository: repo}); err == nil {
			t.Errorf("%s accepted", repo)
		}
	}
	if _, err := New(Options{Repository: "registry.example.com/capi", Format: FormatProposal, SingleArtifact: true}); err == nil {
		t.Error("single artifact in the proposal layout accepted")
	}
}

func TestReadOCI_CredentialsNeverFollowARedirectToAnotherHost(t *testing.T) {
	reg := newTestRegistry(t)
	reg.user, reg.pass = "robot", "s3cret-passw0rd"
	kc := staticKeychain{authn.FromConfig(authn.AuthConfig{Username: "robot", Password: reg.pass})}
	p := newPublisher(t, reg, func(o *Options) { o.Keychain = kc })
	if _, err := p.Publish(context.Background(), exampleRelease(t)); err != nil {
		t.Fatal(err)
	}
	// Blob downloads are redirected to another host (as registries do to
	// object storage), which serves them without asking for credentials.
	var mu sync.Mutex
	var auth []string
	storage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		req, _ := http.NewRequest(http.MethodGet, reg.URL+r.URL.Path+"?direct=1", nil)
		req.SetBasicAuth(reg.user, reg.pass)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer func() { _ = resp.Body.Close() }()
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	defer storage.Close()
	reg.fail = func(r *http.Request) (int, http.Header) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") && r.URL.Query().Get("direct") == "" {
			return http.StatusTemporaryRedirect, http.Header{"Location": {storage.URL + r.URL.Path}}
		}
		return 0, nil
	}
	got, err := publishtest.ReadBack(context.Background(), p, "infrastructure-example", "v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Files) != 7 {
		t.Errorf("read %d files", len(got.Files))
	}
	if len(auth) == 0 {
		t.Fatal("no blob was fetched through the redirect")
	}
	for _, a := range auth {
		if a != "" {
			t.Errorf("the other host got Authorization %q", a)
		}
	}
}

// operatorParse splits a fetchConfig.oci value as cluster-api-operator's
// parseOCISource does: an http:// prefix switches to plain HTTP; the
// reference is split at ':' into at most three parts, and the last part is
// the tag when it holds no '/'.
func operatorParse(ref, version string) (repo, tag string, plain bool) {
	ref, plain = strings.CutPrefix(ref, "http://")
	parts := strings.SplitN(ref, ":", 3)
	switch {
	case len(parts) == 2 && !strings.Contains(parts[1], "/"):
		return parts[0], parts[1], plain
	case len(parts) == 3:
		return parts[0] + ":" + parts[1], parts[2], plain
	}
	return ref, version, plain
}

func TestReference_IsWhatTheOperatorParses(t *testing.T) {
	pr := &release.Provider{ID: provider.ID{Name: "x", Type: clusterctlv1.InfrastructureProviderType}, Version: "v1.2.3-rc.1"}
	_ = pr.Add("metadata.yaml", []byte("m"))
	_ = pr.Add("infrastructure-components.yaml", []byte("c"))
	pr.ComponentsFile = "infrastructure-components.yaml"
	for _, tc := range []struct {
		repo  string
		plain bool
	}{
		{"registry.example.com/capi", false},
		{"registry.example.com:5000/capi/providers", false},
		{"127.0.0.1:5000/capi", true},
		{"localhost/capi", true},
	} {
		p, err := New(Options{Repository: tc.repo, PlainHTTP: tc.plain})
		if err != nil {
			t.Fatal(err)
		}
		arts, err := p.Artifacts(&release.Release{Version: pr.Version, Providers: []*release.Provider{pr}})
		if err != nil {
			t.Fatal(err)
		}
		ref := p.Reference(arts[0])
		repo, tag, plain := operatorParse(ref, "spec-version")
		if repo != tc.repo+"/infrastructure-x" || tag != "v1.2.3-rc.1" || plain != tc.plain {
			t.Errorf("%s: the operator reads repository %q, tag %q, plain HTTP %v", ref, repo, tag, plain)
		}
		// A digest reference is what it cannot read: it must never be printed.
		d, _ := arts[0].Digest()
		if r, tg, _ := operatorParse(arts[0].Repository+"@"+d.String(), ""); r == arts[0].Repository {
			t.Errorf("the operator would read the digest reference as %s : %s", r, tg)
		}
	}
}

func TestParseReference_TheOperatorsForms(t *testing.T) {
	for _, tc := range []struct {
		arg, ref  string
		plain, ok bool
	}{
		{"oci://registry.example.com/capi/infrastructure-example:v1.4.0", "registry.example.com/capi/infrastructure-example:v1.4.0", false, true},
		{"oci://http://localhost:5000/capi/infrastructure-example:v1.4.0", "localhost:5000/capi/infrastructure-example:v1.4.0", true, true},
		{"dist", "", false, false},
	} {
		ref, plain, ok := ParseReference(tc.arg)
		if ref != tc.ref || plain != tc.plain || ok != tc.ok {
			t.Errorf("ParseReference(%q) = %q, %v, %v", tc.arg, ref, plain, ok)
		}
	}
}
