package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/diff"
	"github.com/capirepo/capirepo/install"
	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/internal/text"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/rehearse"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/sign"
	"github.com/capirepo/capirepo/verify"
)

// ReleaseOptions say what one release run does.
type ReleaseOptions struct {
	Build BuildOptions
	// Targets are where the release is published, in this order.
	Targets []targets.Location
	// TargetOptions open the targets (credentials, clients, release notes),
	// to publish. An OCI artifact's created annotation and source, when
	// unset, are Build's SOURCE_DATE_EPOCH and the git origin of Build.Dir.
	TargetOptions targets.Options
	// NotesFile, when set, is the release notes (Markdown) of a target that
	// makes a release (GitHub, GitLab with a Release).
	NotesFile string
	// Open makes the target of a location; nil means the location's own
	// Open with TargetOptions. Release calls it for every target before
	// anything is built, so a missing token fails first; not at all in a
	// dry run.
	Open func(ctx context.Context, loc targets.Location) (publish.Target, error)
	// DryRun builds, lints, writes and verifies the dist folder, and
	// publishes nothing.
	DryRun bool
	// SkipImageCheck leaves out the images step, which asks the registry
	// for every image the components run, for every platform built.
	SkipImageCheck bool
	// ImageRemote holds options for the image check's registry calls (auth,
	// transport); nil means Build.Keychain's credentials.
	ImageRemote []remote.Option
	// SkipUpgradeCheck, when set, is why the upgrade step (the release
	// before this one at the first target that has one, against this one:
	// pipeline/upgrade.go) is skipped. In a dry run the step still reads the
	// targets, without requiring credentials.
	SkipUpgradeCheck string
	// Against, when set, are the older releases the upgrade step compares
	// with (release --against OLD: ParseSides), instead of the release
	// before this one at the targets.
	Against []Side
	// Sign, when set, signs the release after it is written (pipeline/sign.go).
	Sign *SignOptions
	// InstallCheck, when set, applies the release to a Kubernetes API
	// server (install.Check) after the dist folder is written and read
	// back, before anything is published.
	InstallCheck *InstallCheckOptions
	// Rehearse, when set, rehearses the upgrade from the release the
	// upgrade step compared with to this one on a scratch cluster
	// (rehearse.Rehearse), after the install check and before anything is
	// published.
	Rehearse *RehearseOptions

	// ConfigOut, when set, is the file the clusterctl config of the first
	// target clusterctl reads is written to (atomically) after publishing.
	ConfigOut string

	// NotesUpgrade appends to the release notes of every target that has
	// them (publish.Noted) an "Upgrading from ..." section made from the
	// upgrade step's comparison (notes.go).
	NotesUpgrade bool

	// Variables are clusterctl config values for reading targets back
	// (github-token, gitlab-access-token). They are never printed.
	Variables map[string]string

	// Log receives what each step did (files, findings, uploads, what
	// clusterctl read); nil discards it.
	Log io.Writer
	// Progress hears of each step; nil means Lines(Log, false).
	Progress Progress
}

// ParseTargets checks the target URLs a release publishes to, without a
// network call or credential, so a mistyped one is refused first; flag
// names them in the error (a publish.UsageError).
func ParseTargets(flag string, urls []string) ([]targets.Location, error) {
	var locs []targets.Location
	for _, raw := range urls {
		loc, err := targets.Parse(raw)
		if err != nil {
			return nil, publish.UsageError{Err: fmt.Errorf("%s %w", flag, err)}
		}
		locs = append(locs, loc)
	}
	return locs, nil
}

// Step statuses.
const (
	StatusOK      = "ok"
	StatusFailed  = "failed"
	StatusSkipped = "skipped" // by design, e.g. publishing in a dry run
	StatusNotRun  = "not run" // an earlier step failed
)

// StepResult is what one step did.
type StepResult struct {
	Step   string `json:"step"`
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// ReleaseSummary is what a release run did, step by step.
type ReleaseSummary struct {
	Version   string             `json:"version"`
	DryRun    bool               `json:"dryRun"`
	Steps     []StepResult       `json:"steps"`
	Artifacts Artifacts          `json:"artifacts"`
	Published []*publish.Summary `json:"published"`
	// Findings and Waived are the lint step's and the upgrade step's, once
	// they ran.
	Findings []contract.Finding       `json:"findings"`
	Waived   []contract.WaivedFinding `json:"waived"`
	// Signed is what the sign step signed, once it ran.
	Signed *SignSummary `json:"signed,omitempty"`
	// Targets are what was published to each target, in the order of
	// Published: who reads each and, for the operator's, its Provider
	// resources.
	Targets []*Published `json:"-"`
	// Upgrade is what the upgrade step found the upgrade from each release
	// it compared with changes for users, once it ran.
	Upgrade []diff.Changes `json:"upgrade,omitempty"`
	// UpgradeNotes is the section NotesUpgrade appends to the release notes
	// (in a dry run: would append).
	UpgradeNotes string `json:"upgradeNotes,omitempty"`
	// Install is what the install check sent and the API server answered,
	// once it ran (also when it refused the release).
	Install *install.Report `json:"install,omitempty"`
	// Rehearsal is what the upgrade rehearsal did and found, once it ran
	// (also when it failed).
	Rehearsal *rehearse.Report `json:"rehearsal,omitempty"`
	// Next says what a maintainer does next: what a dry run would have
	// published where, or the clusterctl init line that tries the release.
	Next []string `json:"next,omitempty"`
	// Error is why the run failed, for a summary printed as JSON.
	Error string `json:"error,omitempty"`
}

// Release is `capirepo release`. It opens the targets (not in a dry run), then
// runs the steps in this order and stops at the first failure: build (with
// the binaries and image the build options ask for), lint, upgrade (the
// release before this one at the first target that has one, against this
// one, unless SkipUpgradeCheck), images (unless SkipImageCheck), write the
// dist folder, verify dist (clusterctl's client reads the dist back, so a
// release it cannot read is never published), install check (with
// InstallCheck), upgrade rehearsal (with Rehearse: from the release the
// upgrade step compared with), sign (with Sign), check targets (with
// several, not in a dry run: none would refuse the release as signed, so
// none is written before another refuses), then for each target
// publish (signing what a target pushed: publishTo, as capirepo publish
// does) and verify it read back. A dry run runs every step but publishing;
// its publish steps ask each target whether it would take the release
// (wouldTake).
// The summary lists every step, those after a failure as not run; the
// error names the failed step. A nil summary means nothing ran: a target
// could not be opened.
func Release(ctx context.Context, o ReleaseOptions) (*ReleaseSummary, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Progress == nil {
		o.Progress = Lines(o.Log, false)
	}
	if err := readNotes(ctx, o.NotesFile, &o.TargetOptions); err != nil {
		return nil, err
	}
	if meta := &o.TargetOptions.OCI.Meta; meta.Created.IsZero() || meta.Source == "" {
		created, err := epochTime(o.Build.SourceDateEpoch)
		if err != nil {
			return nil, err
		}
		if meta.Created.IsZero() {
			meta.Created = created
		}
		if meta.Source == "" {
			meta.Source = builder.SourceURL(ctx, o.Build.Dir)
		}
	}
	if o.Open == nil {
		to := o.TargetOptions
		to.Publish = true // a missing credential fails here, before the build
		o.Open = func(ctx context.Context, loc targets.Location) (publish.Target, error) {
			return loc.Open(ctx, to)
		}
	}
	opened := make([]publish.Target, len(o.Targets))
	if !o.DryRun {
		for i, loc := range o.Targets {
			t, err := o.Open(ctx, loc)
			if err != nil {
				return nil, err
			}
			opened[i] = t
		}
	}
	r := &run{o: o, opened: opened, sum: &ReleaseSummary{DryRun: o.DryRun, Version: o.Build.Version, Findings: []contract.Finding{}, Waived: []contract.WaivedFinding{}}}
	steps := []step{{"build", r.build}, {"lint", r.lint},
		{"upgrade", func(ctx context.Context) (string, bool, error) { return r.upgrade(ctx, opened) }},
		{"images", r.images}, {"write", r.write}, {"verify dist", r.verifyDist}}
	if o.InstallCheck != nil {
		steps = append(steps, step{"install check", r.installCheck})
	}
	if o.Rehearse != nil {
		steps = append(steps, step{"upgrade rehearsal", r.rehearsal})
	}
	if o.Sign != nil {
		steps = append(steps, step{"sign", r.sign})
	}
	if len(o.Targets) > 1 && !o.DryRun {
		steps = append(steps, step{"check targets", func(ctx context.Context) (string, bool, error) { return r.checkTargets(ctx, opened) }})
	}
	for i, loc := range o.Targets {
		var ps *publish.Summary // what publish did, for verify to read back
		steps = append(steps,
			step{"publish " + loc.URL, func(ctx context.Context) (string, bool, error) {
				if o.DryRun {
					return r.wouldTake(ctx, loc)
				}
				r.upgradeNotes(ctx, opened[i])
				var d string
				var err error
				ps, d, err = r.publish(ctx, opened[i])
				return d, false, err
			}},
			step{"verify " + loc.URL, func(ctx context.Context) (string, bool, error) {
				if o.DryRun {
					return "dry run: the dist was read back before", true, nil
				}
				return r.verifyTarget(ctx, loc, opened[i], ps)
			}})
	}
	err := runSteps(ctx, o.Progress, steps, &r.sum.Steps)
	if err == nil && o.DryRun {
		r.upgradeNotes(ctx, nil) // what the notes would get, for the summary
	}
	if err == nil {
		err = r.finish(ctx)
	}
	if err != nil {
		r.sum.Error = err.Error()
	}
	return r.sum, err
}

// finish makes what a maintainer gets once every step passed: the
// operator's Provider resources of each target it installs from, and what
// to do next (next.go).
func (r *run) finish(ctx context.Context) error {
	for _, p := range r.sum.Targets {
		if err := p.resources(""); err != nil {
			return err
		}
	}
	return r.next(ctx)
}

// step is one named step: it returns a detail for the summary, whether it
// was skipped by design, and its error.
type step struct {
	name string
	run  func(context.Context) (detail string, skipped bool, err error)
}

// runSteps runs steps in order, stops at the first failure and records
// every step's status.
func runSteps(ctx context.Context, pr Progress, steps []step, results *[]StepResult) error {
	var failed error
	for i, st := range steps {
		if failed != nil {
			*results = append(*results, StepResult{Step: st.name, Status: StatusNotRun})
			continue
		}
		pr.Start(i+1, len(steps), st.name)
		detail, skipped, err := st.run(ctx)
		r := StepResult{Step: st.name, Status: StatusOK, Detail: detail}
		switch {
		case err != nil:
			r.Status, r.Detail = StatusFailed, firstLine(err.Error())
			failed = stepError(st.name, err)
		case skipped:
			r.Status = StatusSkipped
		}
		pr.Done(i+1, len(steps), r)
		*results = append(*results, r)
	}
	return failed
}

// stepError names the failed step, unless the error already begins with
// its name (the install check's errors say "install check: ..."), so it
// is not said twice.
func stepError(name string, err error) error {
	if strings.HasPrefix(err.Error(), name+": ") {
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// run holds what the steps of one Release hand on to each other.
type run struct {
	o      ReleaseOptions
	opened []publish.Target // nil in a dry run
	sum    *ReleaseSummary
	b      *Built
	// notesMade says the upgrade section of the notes is made (notes.go).
	notesMade bool
	// old is the release the upgrade step compared with (the first, with
	// Against), which the upgrade rehearsal upgrades from.
	old *release.Release
}

func (r *run) build(ctx context.Context) (string, bool, error) {
	bo := r.o.Build
	for _, loc := range r.o.Targets {
		if bo.Source == "" {
			bo.Source = loc.Source
		}
	}
	b, err := Build(ctx, bo, r.o.Log)
	if err != nil {
		return "", false, err
	}
	r.b = b
	rel := b.Result.Release
	r.sum.Version, r.sum.Artifacts = rel.Version, b.Artifacts
	files, size := 0, 0
	var rows [][2]string
	for _, p := range rel.Providers {
		for _, f := range p.Assets() {
			files++
			size += len(f.Data)
			rows = append(rows, [2]string{filepath.Join(p.Label(), p.Version, f.Name), text.Bytes(int64(len(f.Data)))})
		}
	}
	writeColumns(r.o.Log, "  ", rows)
	sayBuild(r.o.Log, "  ", b.Result)
	d := fmt.Sprintf("%s, %s (%s)", text.Plural(len(rel.Providers), "provider", "providers"), text.Plural(files, "file", "files"), text.Bytes(int64(size)))
	if n := len(b.Artifacts.Binaries); n > 0 {
		d += fmt.Sprintf("; %d binaries", n)
	}
	if img := b.Artifacts.Image; img != nil {
		d += "; image " + img.Components
	}
	return d, false, nil
}

func (r *run) lint(context.Context) (string, bool, error) {
	rep, err := Lint(r.b, r.o.Build.Disabled, r.o.Log)
	r.sum.Findings, r.sum.Waived = text.NonNil(rep.Findings), text.NonNil(rep.Waived)
	d := lintCounts(rep)
	if len(rep.Waived) > 0 {
		d += fmt.Sprintf(", %d waived", len(rep.Waived))
	}
	return d, false, err
}

// images asks the registry for every image the components run, so a
// release is never published before its images can be pulled.
func (r *run) images(ctx context.Context) (string, bool, error) {
	if r.o.SkipImageCheck {
		return option.Flag(ctx, option.SkipImageCheck) + ": not checked", true, nil
	}
	platforms := r.o.Build.Platforms
	if len(platforms) == 0 && r.b.Config != nil && len(r.b.Config.Providers) > 0 {
		platforms = r.b.Config.Providers[0].Build.Platforms
	}
	opts := r.o.ImageRemote
	if opts == nil {
		opts = publish.RegistryOptions(publish.Registry{Keychain: r.o.Build.Keychain})
	}
	rep, err := checkImages(ctx, r.b.Result.Release, verify.ImagesOptions{Platforms: platforms, Remote: opts, Report: r.imageStatusesReported()})
	if rep != nil {
		_ = rep.WriteText(r.o.Log)
	}
	if err != nil {
		return "", false, err
	}
	d := fmt.Sprintf("%d images in the registry for %s", rep.Count(verify.ImageOK), strings.Join(rep.Platforms, ", "))
	if n := rep.Count(verify.ImageUnreadable); n > 0 {
		d += fmt.Sprintf("; %d not readable without credentials", n)
	}
	if n := rep.Count(verify.ImageSkipped); n > 0 {
		d += fmt.Sprintf("; %d named by variables, not checked", n)
	}
	return d + r.imagesReportedDetail(rep), false, nil
}

func (r *run) write(ctx context.Context) (string, bool, error) {
	out := r.o.Build.Out
	if err := release.WriteContext(ctx, out, r.b.Result.Release, release.WriteOptions{LockTimeout: r.o.Build.LockTimeout, Progress: r.o.Log}); err != nil {
		return "", false, fmt.Errorf("write %s: %w", out, err)
	}
	return "dist in " + out, false, nil
}

// checkTargets asks every target that can say (publish.Checker) whether
// it would refuse the release, as signed, before any is written: with
// several targets, one that refuses (a version it holds with other files)
// would otherwise stop the run after the targets before it made the
// release public.
func (r *run) checkTargets(ctx context.Context, ts []publish.Target) (string, bool, error) {
	n := 0
	for i, t := range ts {
		c, ok := t.(publish.Checker)
		if !ok {
			continue
		}
		if err := c.Check(ctx, r.b.Result.Release); err != nil {
			return "", false, fmt.Errorf("%s: %w\nnothing was published to any target", r.o.Targets[i].URL, err)
		}
		n++
	}
	return fmt.Sprintf("%s would take the release", text.Plural(n, "target", "targets")), false, nil
}

// wouldTake is a dry run's publish step: nothing is published, and the
// target, opened to read (with the credentials that are set), says whether
// the real run's publish would refuse the release (publish.Checker: a
// version it holds with other files, without Replace), so a dry run fails
// where the real run would (a publish.Refusal). A target that cannot be
// opened or read is said, not failed; a signed run is not
// asked: what signing adds depends on what the target already holds.
func (r *run) wouldTake(ctx context.Context, loc targets.Location) (string, bool, error) {
	const d = "dry run: nothing published"
	if r.o.Sign != nil {
		return d, true, nil
	}
	to := r.o.TargetOptions
	to.Publish = false
	t, err := loc.Open(ctx, to)
	if err != nil {
		return d + "; not checked whether the target takes the release: " + firstLine(err.Error()), true, nil
	}
	c, ok := t.(publish.Checker)
	if !ok {
		return d, true, nil
	}
	var refused *publish.Refusal
	switch err := c.Check(ctx, r.b.Result.Release); {
	case err == nil:
		return d + "; the target takes the release", true, nil
	case errors.As(err, &refused):
		return "", false, fmt.Errorf("%w\na real run would stop here", err)
	default: // not read: no credential, not reached
		return d + "; not checked whether the target takes the release: " + firstLine(err.Error()), true, nil
	}
}

// publish publishes the release to t through publishTo, as capirepo
// publish does (what t pushed is signed once pushed), and says what it did.
func (r *run) publish(ctx context.Context, t publish.Target) (*publish.Summary, string, error) {
	var signer *sign.Signer
	if r.o.Sign != nil {
		signer = r.o.Sign.Signer
	}
	p, err := publishTo(ctx, t, r.b.Result.Release, signer, r.created(), r.o.Log)
	if p != nil {
		r.sum.Published = append(r.sum.Published, p.Summary)
		r.sum.Targets = append(r.sum.Targets, p)
		r.addSigned(p.Signed)
	}
	if err != nil {
		return nil, "", err
	}
	ps := p.Summary
	d := fmt.Sprintf("%s: %d %s (%s), %d unchanged, %d replaced", ps.URL, len(ps.Uploaded), ps.Verb(), text.Bytes(ps.BytesUploaded),
		len(ps.Skipped), len(ps.Replaced))
	if ps.Draft {
		d += "; left a draft"
	}
	if n := len(ps.Warnings); n > 0 {
		d += fmt.Sprintf("; %d warnings", n)
	}
	if n := len(p.Signed); n > 0 {
		d += fmt.Sprintf("; %s signed as %s", text.Plural(n, "artifact", "artifacts"), signer.Identity())
	}
	return ps, d, nil
}

// writeColumns writes name-size rows with the sizes right-aligned in one
// column after the longest name.
func writeColumns(w io.Writer, indent string, rows [][2]string) {
	width, sw := 0, 0
	for _, r := range rows {
		width, sw = max(width, len(r[0])), max(sw, len(r[1]))
	}
	for _, r := range rows {
		fmt.Fprintf(w, "%s%-*s  %*s\n", indent, width, r[0], sw, r[1])
	}
}

// verifyTarget reads a published target back the way its readers will
// (verify.ReadBack): through clusterctl by its provider URLs, or through the
// target's Source, checked against what was built, then through clusterctl
// from memory. A draft nobody can read yet is not read back: the dist was,
// before anything was published.
func (r *run) verifyTarget(ctx context.Context, loc targets.Location, t publish.Target, ps *publish.Summary) (string, bool, error) {
	if ps.Draft {
		return "the release is a draft, which clusterctl cannot read until a person publishes it: the dist was read back before publishing", true, nil
	}
	rel := r.b.Result.Release
	var vs []verify.Published
	for _, p := range rel.Providers {
		v := verify.Published{Ref: publish.Ref{ID: p.ID, Version: rel.Version, Components: p.ComponentsFile}, Built: p}
		for _, f := range p.Files {
			v.Files = append(v.Files, f.Name)
		}
		vs = append(vs, v)
	}
	rep, bySource, err := verify.ReadBack(ctx, t, loc.URL, vs, r.readBackOptions(verify.Options{HTTPClient: r.o.TargetOptions.HTTPClient}), r.o.Log)
	if err != nil {
		return "", false, err
	}
	provs := text.Plural(len(rep.Providers), "provider", "providers")
	if bySource {
		return fmt.Sprintf("%s read back from %s %s", provs, loc.URL, verify.ReadBackWay(t.Clusterctl())), false, nil
	}
	return fmt.Sprintf("%s read back from %s through clusterctl", provs, ps.URL), false, nil
}

// readBackOptions are o with what every read-back of the release takes: the
// real values, and the template files whose lint error the maintainer
// waived (a flavor clusterctl fails to read fails only that flavor: the
// waiver accepted it, so its read-back failure is said, not an error).
func (r *run) readBackOptions(o verify.Options) verify.Options {
	o.Variables = r.o.Variables
	for _, w := range r.sum.Waived {
		if w.Severity != contract.Error {
			continue
		}
		if o.Waived == nil {
			o.Waived = map[string]string{}
		}
		why := verify.Waiver(w.Rule, w.Reason)
		if prev, ok := o.Waived[w.File]; ok {
			why = prev + "; " + why
		}
		o.Waived[w.File] = why
	}
	return o
}

// verifyDist reads the dist folder back through clusterctl's client before
// anything is published: a release clusterctl cannot read stops here.
func (r *run) verifyDist(ctx context.Context) (string, bool, error) {
	out := r.o.Build.Out
	rep, err := verify.Dir(ctx, out, r.readBackOptions(verify.Options{Version: r.b.Result.Release.Version}))
	if rep != nil {
		_ = rep.WriteText(r.o.Log)
	}
	if err != nil {
		return "", false, err
	}
	return fmt.Sprintf("%s in %s read back through clusterctl", text.Plural(len(rep.Providers), "provider", "providers"), out), false, nil
}
