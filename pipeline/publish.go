package pipeline

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/operator"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/sign"
)

// Publishing a built release to a target is one flow, whoever asks: `capirepo
// publish <target>` (Publish) and each publish step of `capirepo release`
// (run.publish) publish through publishTo, then make the target's results
// with Published.resources and Published.next. What a target can do besides
// publishing (sign what it pushed, make the operator's Provider resources,
// leave a draft) is asked of it through publish's optional interfaces, never
// by its kind.

// PublishOptions say what Publish does around publishing one built release
// to one target.
type PublishOptions struct {
	// Target is the target URL (github://OWNER/NAME, file://DIR, ...);
	// TargetOptions open it, to publish.
	Target        string
	TargetOptions targets.Options
	// Load reads the release to publish, once the target is open, so a
	// missing credential is said before anything else.
	Load func() (*release.Release, error)
	// Images, when set, asks the registries for every image the components
	// run before anything is published; a missing one stops the run with
	// nothing uploaded (a draft made before its images were promoted).
	Images *ImageCheck
	// Signer, when set, signs what a target that pushes artifacts pushed
	// (publish.Signable: a signature referrer of each OCI artifact's
	// digest); Created stamps the signatures.
	Signer  *sign.Signer
	Created time.Time
	// ConfigOut, when set, is the file the clusterctl config of a target
	// clusterctl reads is written to (atomically) instead of being printed.
	ConfigOut string
	// Namespace is the namespace of the Provider resources of a target
	// cluster-api-operator installs from; "" means each provider's own.
	Namespace string
	// Log hears of each file published (unless the target said it), the
	// images checked and each signature; nil discards it.
	Log io.Writer
}

// ImageCheck says how the registries are asked for the images.
type ImageCheck struct {
	// Platforms every image must have.
	Platforms []string
	// Keychain gives the registries' credentials; nil means anonymous.
	Keychain authn.Keychain
}

// Published is what publishing one release to one target did, and what a
// caller prints of it besides the target's Summary.
type Published struct {
	Summary *publish.Summary
	// Reader names who reads the target instead of clusterctl (the
	// operator, for an OCI registry); "" when clusterctl reads it, and its
	// providers: entry is the result.
	Reader string
	// Overrides says the target is clusterctl's overrides folder: its
	// files stand in for each provider version's own, so no providers:
	// entry names it.
	Overrides bool
	// Operator is set for a target the operator installs from
	// (publish.Operator): its result is Resources, not a providers: entry.
	Operator bool
	// Resources are the operator's Provider resources that install the
	// release from the target (in the namespaces asked for), once every
	// step passed; none for a target the operator cannot read.
	Resources []operator.Resource
	// Signed are the signatures of the artifacts the target pushed, by
	// reference.
	Signed map[string]*sign.Signature

	target publish.Target
	rel    *release.Release
}

// Publish is `capirepo publish <target>`: it opens the target (a missing
// credential fails first), loads the release, checks its images (with
// Images), publishes it, signs what the target pushed (with a Signer), and
// makes the result: the operator's Provider resources for a target the
// operator installs from, or, for one clusterctl reads, its clusterctl
// config (written to ConfigOut when set) and the next steps, in the
// summary's Next. The Published is nil when nothing was published.
func Publish(ctx context.Context, o PublishOptions) (*Published, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	to := o.TargetOptions
	to.Publish = true
	t, err := targets.Open(ctx, o.Target, to)
	if err != nil {
		return nil, err
	}
	rel, err := o.Load()
	if err != nil {
		return nil, err
	}
	if o.Images != nil {
		rep, err := CheckImages(ctx, rel, o.Images.Platforms, o.Images.Keychain)
		if rep != nil {
			_ = rep.WriteText(o.Log)
		}
		if err != nil {
			unchanged := ""
			if _, ok := t.(publish.Drafting); ok { // one there stays unpublished
				unchanged = " (a draft stays a draft)"
			}
			return nil, fmt.Errorf("images: %w\nnothing was uploaded or published%s: publish again once the images are in their registry", err, unchanged)
		}
	}
	p, err := publishTo(ctx, t, rel, o.Signer, o.Created, o.Log)
	if err != nil {
		return nil, err
	}
	if err := p.resources(o.Namespace); err != nil {
		return nil, err
	}
	p.Summary.Next, err = p.next(o.ConfigOut)
	return p, err
}

// publishTo publishes rel to t, lists what was written (unless the target
// listed each upload as it made it, so it is listed once) and signs what t
// pushed, with a signer. A Published whose signing failed is returned with
// the error: the release is out.
func publishTo(ctx context.Context, t publish.Target, rel *release.Release, signer *sign.Signer, created time.Time, log io.Writer) (*Published, error) {
	ps, err := t.Publish(ctx, rel)
	if err != nil {
		return nil, err
	}
	reach := t.Clusterctl()
	p := &Published{Summary: ps, Reader: reach.Reader, Overrides: reach.Overrides, target: t, rel: rel}
	_, p.Operator = t.(publish.Operator)
	if !ps.Logged {
		writePublished(log, rel, ps)
	}
	if s, ok := t.(publish.Signable); ok && signer != nil {
		refs, opts, err := s.Published(ctx, ps)
		if err != nil {
			return p, err
		}
		if p.Signed, err = SignImages(ctx, signer, refs, created, log, opts...); err != nil {
			return p, err
		}
	}
	return p, nil
}

// writePublished lists the files a summary names, each with its size, by
// the name the target gives it (a folder tree's names its version folder:
// LABEL/VERSION/NAME).
func writePublished(log io.Writer, rel *release.Release, ps *publish.Summary) {
	sizes := assetSizes(rel)
	var rows [][2]string
	for _, n := range ps.Uploaded {
		size, ok := sizes[n]
		if !ok { // made by the publisher, e.g. provenance.intoto.json
			rows = append(rows, [2]string{ps.Verb() + " " + n, ""})
			continue
		}
		rows = append(rows, [2]string{ps.Verb() + " " + n, humanBytes(int64(size))})
	}
	writeColumns(log, "  ", rows)
}

// resources makes the operator's Provider resources of a target the
// operator installs from, in namespace ("" each provider's own).
func (p *Published) resources(namespace string) error {
	op, ok := p.target.(publish.Operator)
	if !ok {
		return nil
	}
	res, err := op.Resources(p.rel, namespace)
	p.Resources = res
	return err
}

// next says what a maintainer does after publishing to a target clusterctl
// reads by a providers: entry: where its clusterctl config is (written to
// configOut when set) and the clusterctl init line that tries the version
// (publish.NextSteps); nothing for a target another reader reads or for
// clusterctl's overrides folder.
func (p *Published) next(configOut string) ([]string, error) {
	if p.Reader != "" || p.Overrides {
		return nil, nil
	}
	return publish.NextSteps(p.Summary, configOut)
}

// isDraft says whether t leaves what it publishes a draft.
func isDraft(t publish.Target) bool {
	d, ok := t.(publish.Drafting)
	return ok && d.Draft()
}
