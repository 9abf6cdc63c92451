package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/internal/epoch"
	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/internal/text"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/local"
	"github.com/capirepo/capirepo/publish/operator"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/sign"
	"github.com/capirepo/capirepo/verify"
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
	// Overrides publishes into clusterctl's overrides folder instead of
	// Target, found as clusterctl finds it with Env (the caller's
	// environment) and ClusterctlConfig (the config naming it; "" is
	// clusterctl's default).
	Overrides        bool
	Env              local.Env
	ClusterctlConfig string
	// Dist is the built release folder, DistName how the user named it
	// ("" for DIST), and Version the version in it to publish ("" when it
	// holds one); the release is read once the target is open, so a
	// missing credential is said before anything else.
	Dist, DistName, Version string
	// NotesFile, when set, is the release notes (Markdown) of a target that
	// makes a release (GitHub, GitLab with a Release).
	NotesFile string
	// Images, when set, asks the registries for every image the components
	// run before anything is published; a missing one stops the run with
	// nothing uploaded (a draft made before its images were promoted).
	Images *ImageCheck
	// Signer, when set, signs what a target that pushes artifacts pushed
	// (publish.Signable: a signature referrer of each OCI artifact's
	// digest).
	Signer *sign.Signer
	// SourceDateEpoch ($SOURCE_DATE_EPOCH, "" for now) stamps the
	// signatures and an OCI artifact's created annotation.
	SourceDateEpoch string
	// SourceDir is the tree whose git origin an OCI artifact's source
	// annotation names when TargetOptions.OCI.Meta.Source is empty.
	SourceDir string
	// ConfigHeader heads the providers: entry printed for a target
	// clusterctl reads (Published.WriteText).
	ConfigHeader string
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
	// NotInstallable says why the operator cannot install from the
	// target (publish.NotInstallable), when it cannot.
	NotInstallable string `json:"-"`
	// Signed are the signatures of the artifacts the target pushed, by
	// reference.
	Signed map[string]*sign.Signature

	target publish.Target
	rel    *release.Release
	// header heads the providers: entry; clusterctlConfig is the config
	// the init line of an overrides folder names, folder that folder.
	header, clusterctlConfig, folder string
}

// Publish is `capirepo publish <target>`: it opens the target (a missing
// credential fails first), loads the release, reads it back through
// clusterctl's client (readBackDist), checks its images (with Images),
// publishes it, signs what the target pushed (with a Signer), and
// makes the result: the operator's Provider resources for a target the
// operator installs from, or, for one clusterctl reads, its clusterctl
// config (written to ConfigOut when set) and the next steps, in the
// summary's Next. The Published is nil when nothing was published.
func Publish(ctx context.Context, o PublishOptions) (*Published, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	created, err := epochTime(o.SourceDateEpoch)
	if err != nil {
		return nil, err
	}
	to := o.TargetOptions
	to.Publish, to.Overrides = true, o.Overrides
	if err := readNotes(ctx, o.NotesFile, &to); err != nil {
		return nil, err
	}
	if to.OCI.Meta.Created.IsZero() {
		to.OCI.Meta.Created = created
	}
	if to.OCI.Meta.Source == "" && o.SourceDir != "" {
		to.OCI.Meta.Source = builder.SourceURL(ctx, o.SourceDir)
	}
	target, folder := o.Target, ""
	if o.Overrides {
		var from string
		if folder, from, err = local.OverridesFolder(o.Env, o.ClusterctlConfig); err != nil {
			return nil, err
		}
		fmt.Fprintf(o.Log, "clusterctl overrides folder: %s (from %s)\n", folder, from)
		target = local.TargetURL(folder)
	}
	t, err := targets.Open(ctx, target, to)
	if err != nil {
		return nil, err
	}
	rel, err := loadDist(ctx, o.Dist, o.DistName, o.Version)
	if err != nil {
		return nil, err
	}
	if err := readBackDist(ctx, rel, cmp.Or(o.DistName, "DIST"), o.Log); err != nil {
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
	p, err := publishTo(ctx, t, rel, o.Signer, created, o.Log)
	if err != nil {
		return nil, err
	}
	p.header, p.clusterctlConfig, p.folder = o.ConfigHeader, o.ClusterctlConfig, folder
	if err := p.resources(o.Namespace); err != nil {
		return nil, err
	}
	p.Summary.Next, err = p.next(ctx, o.ConfigOut)
	return p, err
}

// readBackDist reads the built release back through clusterctl's client
// before anything is published, as release's verify dist step does: a
// dist changed since it was built, or built with a lint finding waived,
// that clusterctl cannot read is never published, not even as a draft.
//
// publish <target> has no lint report, so it cannot tell a flavor whose
// lint error the maintainer waived (clusterctl fails only that flavor's
// generate cluster; CAPA ships two) from one broken since: a template
// file's failure is said, as release says a waived one, and the
// components and metadata.yaml must read.
func readBackDist(ctx context.Context, rel *release.Release, what string, log io.Writer) error {
	known := map[string]string{}
	for _, p := range rel.Providers {
		for _, f := range p.Files {
			if release.IsTemplate(f.Name) {
				known[path.Join(p.Label(), rel.Version, f.Name)] = "the build's lint refuses such a file unless its finding is waived"
			}
		}
	}
	rep, err := verify.Providers(ctx, rel.Providers, "", verify.Options{Version: rel.Version, Waived: known})
	if err != nil {
		return fmt.Errorf("read %s back through clusterctl: %w\nnothing was uploaded or published", what, err)
	}
	for _, p := range rep.Providers {
		for _, w := range p.Waived {
			fmt.Fprintf(log, "warning: %s %s: clusterctl cannot read %s (%s): %s\n", p.Label, p.Version, w.File, w.Waiver, w.Error)
		}
	}
	fmt.Fprintf(log, "%s of %s read back through clusterctl\n", text.Plural(len(rep.Providers), "provider", "providers"), what)
	return nil
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
		rows = append(rows, [2]string{ps.Verb() + " " + n, text.Bytes(int64(size))})
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
	var ni *publish.NotInstallable
	if errors.As(err, &ni) {
		p.NotInstallable, err = ni.Why, nil
	}
	p.Resources = res
	return err
}

// next says what a maintainer does after publishing to a target clusterctl
// reads by a providers: entry: where its clusterctl config is (written to
// configOut when set) and the clusterctl init line that tries the version
// (publish.NextSteps); nothing for a target another reader reads or for
// clusterctl's overrides folder.
func (p *Published) next(ctx context.Context, configOut string) ([]string, error) {
	if p.Reader != "" || p.Overrides {
		return nil, nil
	}
	return publish.NextSteps(ctx, p.Summary, p.target.Clusterctl(), configOut)
}

// isDraft says whether t leaves what it publishes a draft.
func isDraft(t publish.Target) bool {
	d, ok := t.(publish.Drafting)
	return ok && d.Draft()
}

// readNotes reads the release notes file into the options of the targets
// that make a release with notes: GitHub's, and GitLab's when it makes a
// Release.
func readNotes(ctx context.Context, file string, to *targets.Options) error {
	if file == "" {
		return nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return publish.UsageError{Err: fmt.Errorf("%s: %w", option.Flag(ctx, option.NotesFile), err)}
	}
	to.GitHub.Notes = string(b)
	if to.GitLab.Release {
		to.GitLab.Notes = string(b)
	}
	return nil
}

// epochTime is $SOURCE_DATE_EPOCH as a time; the zero time ("now") when
// unset. A value that is no epoch is the caller's mistake.
func epochTime(raw string) (time.Time, error) {
	t, err := epoch.Parse(raw)
	if err != nil {
		return time.Time{}, publish.Usagef("%s=%q: %v", epoch.Var, strings.TrimSpace(raw), err)
	}
	return t, nil
}

// loadDist reads the release of version in a built release folder, named
// what in its errors ("" for DIST).
func loadDist(ctx context.Context, dir, what, version string) (*release.Release, error) {
	if err := CheckFolder(cmp.Or(what, "DIST"), dir); err != nil {
		return nil, err
	}
	if err := checkVersionOption(ctx, option.Version, version); err != nil {
		return nil, err
	}
	return release.Load(dir, version)
}
