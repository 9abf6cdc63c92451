package oci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/operator"
	"github.com/capirepo/capirepo/release"
)

// Options configure a Target.
type Options struct {
	// Repository is REGISTRY/PATH; each provider goes to REGISTRY/PATH/<label>.
	Repository string
	// Format is the layout; "" means FormatOperator.
	Format Format
	// SingleArtifact puts every provider of a release into one artifact at
	// REGISTRY/PATH:<version> under the operator's versioned file names
	// (operator layout only).
	SingleArtifact bool
	// PlainHTTP talks plain HTTP to the registry, and puts http:// in front
	// of the references printed for the operator (its only plain-HTTP switch).
	PlainHTTP bool
	// Replace lets a tag that holds other content be moved to the new
	// artifact. Without it a different artifact is refused.
	Replace bool
	// Meta goes into every manifest.
	Meta Meta
	// Keychain gives registry credentials; nil means anonymous.
	Keychain authn.Keychain
	// Secrets are the credential values the keychain holds; they are
	// redacted from every error and line printed.
	Secrets []string
	// Transport is the base HTTP transport; nil means a clone of
	// go-containerregistry's default with a response-header timeout.
	Transport http.RoundTripper
	// Retry is the retry policy; nil means publish.DefaultRetry.
	Retry *publish.Retry
	// Progress receives one line per artifact and each retry; nil discards.
	Progress io.Writer
}

// Target pushes releases to a registry and reads them back by the
// operator's rules (a publish.Source).
type Target struct {
	o Options
	c *client
}

var (
	_ publish.Target   = (*Target)(nil)
	_ publish.Signable = (*Target)(nil)
	_ publish.Operator = (*Target)(nil)
	_ publish.Planner  = (*Target)(nil)
	_ publish.Checker  = (*Target)(nil)
)

// Planned names the files of every artifact Publish pushes for rel, as its
// summary names them: REPOSITORY-NAME/LAYER-TITLE.
func (p *Target) Planned(rel *release.Release) ([]string, error) {
	arts, err := p.Artifacts(rel)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range arts {
		out = append(out, layerNames(a)...)
	}
	return out, nil
}

// layerNames names an artifact's layers in a summary.
func layerNames(a *Artifact) []string {
	out := make([]string, 0, len(a.Layers))
	for _, l := range a.Layers {
		t := l.Title
		if t == "" {
			t = "layer.tar.gz"
		}
		out = append(out, a.Repository[strings.LastIndex(a.Repository, "/")+1:]+"/"+t)
	}
	return out
}

// New checks the options.
func New(o Options) (*Target, error) {
	switch o.Format {
	case "":
		o.Format = FormatOperator
	case FormatOperator, FormatProposal:
	default:
		return nil, fmt.Errorf("format %q: want operator or proposal", o.Format)
	}
	if o.SingleArtifact && o.Format != FormatOperator {
		return nil, fmt.Errorf("a single artifact for several providers exists only in the operator layout, not with format %s", o.Format)
	}
	o.Repository = strings.TrimSuffix(strings.TrimSpace(o.Repository), "/")
	if scheme, _, ok := strings.Cut(o.Repository, "://"); ok {
		return nil, fmt.Errorf("repository %q: give REGISTRY/PATH without %s:// (use %s for a plain-HTTP registry)", o.Repository, scheme, option.PlainHTTP)
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	p := &Target{o: o}
	r := publish.DefaultRetry()
	if o.Retry != nil {
		r = *o.Retry
	}
	notify := r.Notify
	r.Notify = func(attempt int, err error, wait time.Duration) {
		p.progress("retrying in %s after attempt %d failed: %v", wait.Round(time.Millisecond), attempt, p.c.redact(err))
		if notify != nil {
			notify(attempt, err, wait)
		}
	}
	p.c = newClient(o.Keychain, o.Transport, &r, o.PlainHTTP, o.Secrets)
	// Without a repository the publisher can only ReadReference.
	if o.Repository != "" {
		if _, err := p.c.repository(o.Repository); err != nil {
			return nil, fmt.Errorf("repository %w", err)
		}
	}
	return p, nil
}

func (p *Target) progress(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	for _, s := range p.o.Secrets {
		if s != "" {
			line = strings.ReplaceAll(line, s, "[REDACTED]")
		}
	}
	_, _ = io.WriteString(p.o.Progress, line+"\n")
}

// Artifacts builds the artifacts a release becomes, without any network call.
func (p *Target) Artifacts(rel *release.Release) ([]*Artifact, error) {
	if p.o.SingleArtifact {
		a, err := ReleaseArtifact(p.o.Repository, rel, p.o.Meta)
		if err != nil {
			return nil, err
		}
		return []*Artifact{a}, nil
	}
	var out []*Artifact
	for _, pr := range rel.Providers {
		var a *Artifact
		var err error
		if p.o.Format == FormatProposal {
			a, err = ProposalArtifact(p.o.Repository, pr, p.o.Meta)
		} else {
			a, err = ProviderArtifact(p.o.Repository, pr, p.o.Meta)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// Reference is what the operator's fetchConfig.oci takes for an artifact:
// REGISTRY/PATH[/NAME]:TAG, with http:// in front for a plain-HTTP registry.
// Never a digest reference: the operator splits at the last ':' and fails
// on one.
func (p *Target) Reference(a *Artifact) string {
	ref := a.Repository + ":" + a.Tag
	if p.o.PlainHTTP || p.c.answeredPlain.Load() {
		return "http://" + ref
	}
	return ref
}

// Pushed is what became of one artifact.
type Pushed struct {
	Reference string // for the operator
	Digest    string
	// State is "pushed", "unchanged" or "replaced".
	State string
}

// plan is one artifact with what the registry holds at its tag.
type plan struct {
	a      *Artifact
	ref    name.Tag
	digest v1.Hash
	exists bool
	same   bool
	diff   string
}

// Publish pushes each artifact of the release. Every tag is looked up first;
// if any holds other content and Replace is off, nothing is written and the
// error lists what differs. A tag that already holds the same files is left
// alone without sending anything.
func (p *Target) Publish(ctx context.Context, rel *release.Release) (*publish.Summary, error) {
	if p.o.Repository == "" {
		return nil, errors.New("oci: no repository to publish to")
	}
	arts, err := p.Artifacts(rel)
	if err != nil {
		return nil, err
	}
	if p.o.Format == FormatProposal {
		p.progress("warning: format proposal: cluster-api-operator cannot read these artifacts (it never unpacks a layer); use the default operator layout for fetchConfig.oci")
	}
	plans, err := p.plans(ctx, arts)
	if err != nil {
		return nil, err
	}
	sum := &publish.Summary{Kind: "oci", Logged: true, URL: p.o.Repository, Version: rel.Version,
		Uploaded: []string{}, Skipped: []string{}, Replaced: []string{}, Digests: map[string]string{}}
	if !p.o.PlainHTTP && p.c.answeredPlain.Load() {
		w := fmt.Sprintf("%s answers plain HTTP (go-containerregistry falls back to it for localhost and private addresses): the references carry http://, so the operator fetches over plain HTTP too; pass %s to say so", registryOf(p.o.Repository), option.Flag(ctx, option.PlainHTTP))
		sum.Warnings = append(sum.Warnings, w)
		p.progress("warning: %s", w)
	}
	for _, pl := range plans {
		ps, err := p.act(ctx, pl, sum)
		if err != nil {
			return sum, err
		}
		sum.Digests[ps.Reference] = ps.Digest
		for _, id := range pl.a.Providers {
			sum.Providers = append(sum.Providers, publish.ProviderURL{Name: id.Name, Type: string(id.Type), URL: ps.Reference})
		}
	}
	return sum, nil
}

// plans looks up every artifact's tag and refuses, before anything is
// pushed, tags that hold other content without Replace.
func (p *Target) plans(ctx context.Context, arts []*Artifact) ([]*plan, error) {
	plans := make([]*plan, 0, len(arts))
	var refused []string
	for _, a := range arts {
		pl, err := p.plan(ctx, a)
		if err != nil {
			return nil, err
		}
		plans = append(plans, pl)
		if pl.exists && !pl.same && !p.o.Replace {
			refused = append(refused, fmt.Sprintf("%s:%s (%s)", a.Repository, a.Tag, pl.diff))
		}
	}
	if len(refused) > 0 {
		return nil, &publish.Refusal{Err: fmt.Errorf("the registry already holds other content under %s: a published version is never changed; publish a new version, or pass %s to move the tag", strings.Join(refused, "; "), option.Flag(ctx, option.Replace))}
	}
	return plans, nil
}

// Check says, pushing nothing, whether Publish would refuse rel: a tag
// that holds other content, without Replace.
func (p *Target) Check(ctx context.Context, rel *release.Release) error {
	if p.o.Repository == "" {
		return errors.New("oci: no repository to publish to")
	}
	arts, err := p.Artifacts(rel)
	if err != nil {
		return err
	}
	_, err = p.plans(ctx, arts)
	return err
}

func (p *Target) plan(ctx context.Context, a *Artifact) (*plan, error) {
	ref, err := name.NewTag(a.Repository+":"+a.Tag, p.c.nameOptions()...)
	if err != nil {
		return nil, fmt.Errorf("%s:%s: %w", a.Repository, a.Tag, err)
	}
	d, err := a.Digest()
	if err != nil {
		return nil, err
	}
	pl := &plan{a: a, ref: ref, digest: d}
	raw, _, have, ok, err := p.c.getManifest(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("look up %s: %w", ref, err)
	}
	if !ok {
		return pl, nil
	}
	pl.exists = true
	if have == d {
		pl.same = true
		return pl, nil
	}
	pl.same, pl.diff = sameFiles(raw, a)
	return pl, nil
}

// sameFiles compares the files of a manifest in the registry with the
// artifact's: the same titles with the same digests are the same content,
// whatever the annotations (a rebuild at another time, another source URL).
func sameFiles(raw []byte, a *Artifact) (bool, string) {
	var m v1.Manifest
	if err := json.Unmarshal(raw, &m); err != nil || m.MediaType != "" && !strings.Contains(string(m.MediaType), "manifest") {
		return false, "it is not an artifact manifest"
	}
	want := a.Titles()
	have := map[string]string{}
	for _, l := range m.Layers {
		have[l.Annotations[AnnotationTitle]] = l.Digest.Hex
	}
	var missing, changed, extra []string
	for t, d := range want {
		switch h, ok := have[t]; {
		case !ok:
			missing = append(missing, t)
		case h != d:
			changed = append(changed, t)
		}
	}
	for t := range have {
		if _, ok := want[t]; !ok {
			extra = append(extra, t)
		}
	}
	if len(missing)+len(changed)+len(extra) == 0 {
		return true, ""
	}
	var parts []string
	for _, s := range []struct {
		what  string
		names []string
	}{{"different", changed}, {"new", missing}, {"no longer in the release", extra}} {
		if len(s.names) > 0 {
			slices.Sort(s.names)
			for i, n := range s.names {
				if n == "" {
					s.names[i] = "(untitled layer)"
				}
			}
			parts = append(parts, s.what+" "+strings.Join(s.names, ", "))
		}
	}
	return false, strings.Join(parts, "; ")
}

func (p *Target) act(ctx context.Context, pl *plan, sum *publish.Summary) (Pushed, error) {
	a := pl.a
	ps := Pushed{Reference: p.Reference(a), Digest: pl.digest.String()}
	names := func() []string { return layerNames(a) }
	if pl.exists && pl.same {
		ps.State = "unchanged"
		sum.Skipped = append(sum.Skipped, names()...)
		p.progress("%s: unchanged (%s), nothing sent", ps.Reference, ps.Digest)
		return ps, nil
	}
	if err := p.c.write(ctx, pl.ref, a); err != nil {
		return ps, fmt.Errorf("push %s: %w", pl.ref, err)
	}
	for _, l := range a.Layers {
		sum.BytesUploaded += int64(len(l.Data))
	}
	if pl.exists {
		ps.State = "replaced"
		sum.Replaced = append(sum.Replaced, names()...)
	} else {
		ps.State = "pushed"
		sum.Uploaded = append(sum.Uploaded, names()...)
	}
	p.progress("%s: %s (%s)", ps.Reference, ps.State, ps.Digest)
	return ps, nil
}

// Resources are the operator's Provider resources that install the release
// from the artifacts, one per provider, in namespace (or each provider's own
// when ""). A proposal-layout artifact has none: the operator cannot read it.
func (p *Target) Resources(rel *release.Release, namespace string) ([]operator.Resource, error) {
	if p.o.Format == FormatProposal {
		return nil, &publish.NotInstallable{Why: "format proposal: cluster-api-operator cannot read these artifacts (it never unpacks a layer)"}
	}
	arts, err := p.Artifacts(rel)
	if err != nil {
		return nil, err
	}
	var out []operator.Resource
	for _, a := range arts {
		for _, id := range a.Providers {
			pr, _ := rel.Provider(id.Label())
			ns := namespace
			if ns == "" {
				ns = operator.DefaultNamespace(id, pr.Components().Data)
			}
			out = append(out, operator.Resource{ID: id, Namespace: ns, Version: pr.Version, OCI: p.Reference(a)})
		}
	}
	return out, nil
}

// Clusterctl says that clusterctl reads no registry: cluster-api-operator
// does, by the rules Read follows.
func (p *Target) Clusterctl() publish.Reach {
	return publish.Reach{Why: "clusterctl cannot read an OCI registry", Reader: "the operator"}
}

// ParseURL reads the REGISTRY/PATH of an oci://REGISTRY/PATH target URL
// (rest is what follows oci://).
func ParseURL(rest string) (repository string, err error) {
	repo := strings.Trim(rest, "/")
	if reg, path, ok := strings.Cut(repo, "/"); !ok || reg == "" || path == "" {
		return "", errors.New("want oci://REGISTRY/PATH")
	}
	return repo, nil
}

// ParseReference reads an oci://REGISTRY/PATH/NAME:VERSION argument, the
// reference cluster-api-operator takes: http:// after oci:// marks a
// plain-HTTP registry (the operator's form). ok is false for an argument
// that is no oci:// reference.
func ParseReference(arg string) (ref string, plainHTTP, ok bool) {
	ref, ok = strings.CutPrefix(arg, "oci://")
	if !ok {
		return "", false, false
	}
	ref, plainHTTP = strings.CutPrefix(ref, "http://")
	return ref, plainHTTP, true
}

// KeychainFromEnv gives the credentials the operator reads (OCI_USERNAME,
// OCI_PASSWORD, OCI_ACCESS_TOKEN, OCI_REFRESH_TOKEN) when any is set, else
// the docker config with its credential helpers. It returns the secret
// values too, for Options.Secrets.
func KeychainFromEnv(getenv func(string) string) (authn.Keychain, []string) {
	user, pass := getenv("OCI_USERNAME"), getenv("OCI_PASSWORD")
	access, refresh := getenv("OCI_ACCESS_TOKEN"), getenv("OCI_REFRESH_TOKEN")
	if user == "" && pass == "" && access == "" && refresh == "" {
		return authn.DefaultKeychain, nil
	}
	a := authn.FromConfig(authn.AuthConfig{Username: user, Password: pass, RegistryToken: access, IdentityToken: refresh})
	return staticKeychain{a}, []string{pass, access, refresh}
}

// staticKeychain gives the same credentials for the one registry a target talks to.
type staticKeychain struct{ a authn.Authenticator }

func (k staticKeychain) Resolve(authn.Resource) (authn.Authenticator, error) { return k.a, nil }

// registryOf is the registry host of REGISTRY/PATH.
func registryOf(repo string) string {
	host, _, _ := strings.Cut(repo, "/")
	return host
}
