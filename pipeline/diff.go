package pipeline

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/diff"
	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/versions"
)

// Side names one release of a comparison, as capirepo diff takes it: a
// folder (a <label>/<version> folder, a dist or repository tree, a flat
// folder of release assets) or a target URL (github://, gitlab://, oci://,
// file://), and the version to read ("" for a folder: its only or newest
// version; for a target: the newest published version below the other
// side's, as clusterctl orders them).
type Side struct {
	// Arg is the folder or URL as given, without the version.
	Arg     string
	Version string
	// Location is the parsed target URL; nil for a folder.
	Location *targets.Location
}

func (s Side) String() string {
	if s.Version == "" {
		return s.Arg
	}
	return s.Arg + "@" + s.Version
}

// ParseSide reads an argument of capirepo diff: PATH or URL, with an
// optional @vX.Y.Z. A URL that does not parse, or a folder that does not
// exist, is a publish.UsageError.
func ParseSide(arg, defaultVersion string) (Side, error) {
	s := Side{Arg: arg, Version: defaultVersion}
	if i := strings.LastIndex(arg, "@"); i > 0 {
		if _, err := provider.ParseVersion(arg[i+1:]); err == nil {
			s.Arg, s.Version = arg[:i], arg[i+1:]
		}
	}
	if s.Version != "" {
		if _, err := provider.ParseVersion(s.Version); err != nil {
			return Side{}, publish.UsageError{Err: fmt.Errorf("%s: %w", arg, err)}
		}
	}
	if strings.Contains(s.Arg, "://") {
		loc, err := targets.Parse(s.Arg)
		if err != nil {
			return Side{}, err
		}
		s.Location = &loc
		return s, nil
	}
	if _, err := os.Stat(s.Arg); err != nil {
		return Side{}, publish.Usagef("%s: no such folder, and not a target URL (github://OWNER/NAME, gitlab://HOST/PROJECT, oci://REGISTRY/PATH, file://DIR)", s.Arg)
	}
	return s, nil
}

// ParseSides reads the arguments of a flag (such as --against) that each
// name an older release, as ParseSide does; a bad one is a
// publish.UsageError that names the flag.
func ParseSides(flag string, args []string) ([]Side, error) {
	var sides []Side
	for _, a := range args {
		side, err := ParseSide(a, "")
		if err != nil {
			return nil, publish.UsageError{Err: fmt.Errorf("%s %w", flag, err)}
		}
		sides = append(sides, side)
	}
	return sides, nil
}

// DiffSides reads capirepo diff's arguments, OLD... NEW (ParseSide): NEW
// takes version and each OLD oldVersion unless it names its own.
func DiffSides(ctx context.Context, args []string, version, oldVersion string) (olds []Side, newSide Side, err error) {
	if err := checkVersionOption(ctx, option.Version, version); err != nil {
		return nil, Side{}, err
	}
	if err := checkVersionOption(ctx, option.OldVersion, oldVersion); err != nil {
		return nil, Side{}, err
	}
	for i, a := range args {
		def := oldVersion
		if i == len(args)-1 {
			def = version
		}
		side, err := ParseSide(a, def)
		if err != nil {
			return nil, Side{}, publish.UsageError{Err: err}
		}
		if i == len(args)-1 {
			return olds, side, nil
		}
		olds = append(olds, side)
	}
	return nil, Side{}, publish.Usagef("diff compares two releases at least: OLD... NEW")
}

// DiffOptions say what capirepo diff compares.
type DiffOptions struct {
	// Old are the older releases, New the newer one.
	Old []Side
	New Side
	// Providers are the provider labels to read when both sides are
	// targets; otherwise those of the folder side.
	Providers []string
	// Targets opens the targets to read (Publish is ignored: they are
	// read, never written).
	Targets targets.Options
	// Disabled waives rules, rule to reason; so do Waivers and the
	// lint.disable of Config, else of WorkDir's capirepo.yaml (the folder
	// the command runs in; "" for none), said on Log (configWaivers).
	Disabled        map[string]string
	Waivers         []contract.Waiver
	Config, WorkDir string
	// Log hears what was read and compared; nil discards it.
	Log io.Writer
}

// Compared names a release a comparison read.
type Compared struct {
	Version   string   `json:"version"`
	Providers []string `json:"providers"`
	From      string   `json:"from"`
}

// DiffSummary is what Diff compared and found: capirepo diff's report,
// which diff_report.go renders.
type DiffSummary struct {
	Old    []Compared      `json:"old"`
	New    Compared        `json:"new"`
	Report contract.Report `json:"report"`
	Notes  []string        `json:"notes,omitempty"`
	// Changes are what each upgrade compared changes for users (the facts
	// beside the findings), in the order of Old.
	Changes []diff.Changes `json:"changes,omitempty"`
}

// Diff reads the releases o names and says what breaks when a management
// cluster moves from each old one to the new one. The error is a
// publish.UsageError for sides that cannot be told apart, a read error, or
// nil: findings are in the report (HasErrors).
func Diff(ctx context.Context, o DiffOptions) (*DiffSummary, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	ws, err := configWaivers(o.Config, o.WorkDir, "diff", o.Log)
	if err != nil {
		return nil, err
	}
	o.Waivers = append(o.Waivers, ws...)
	rd := &reader{o: readOptions(o.Targets), log: o.Log}
	newRel, newFrom, err := rd.readFolderSide(o.New)
	if err != nil {
		return nil, err
	}
	ids, err := providerIDs(o.Providers)
	if err != nil {
		return nil, err
	}
	if newRel == nil {
		// The new release is published: its providers come from the old
		// folder, or --provider.
		for _, s := range o.Old {
			if len(ids) > 0 || s.Location != nil {
				continue
			}
			old, _, err := rd.readFolderSide(s)
			if err != nil {
				return nil, err
			}
			for _, p := range old.Providers {
				ids = append(ids, p.ID)
			}
		}
		if len(ids) == 0 {
			return nil, publish.Usagef("%s is a target URL and no old side is a folder: name the providers to compare with %s LABEL", o.New.Arg, option.Flag(ctx, option.Provider))
		}
		if o.New.Version == "" {
			return nil, publish.Usagef("%s: give the new release's version (%s@vX.Y.Z or %s)", o.New.Arg, o.New.Arg, option.Flag(ctx, option.Version))
		}
		src, err := rd.open(ctx, *o.New.Location)
		if err != nil {
			return nil, err
		}
		if newRel, err = rd.readTarget(ctx, src, o.New.Location.URL, ids, o.New.Version); err != nil {
			return nil, err
		}
		newFrom = o.New.Location.URL
	}
	sum := &DiffSummary{New: compared(newRel, newFrom)}
	var fs []contract.Finding
	type oldRel struct {
		rel     *release.Release
		blocked bool
	}
	var olds []oldRel
	for _, s := range o.Old {
		old, from, hist, err := rd.readOld(ctx, s, newRel)
		if err != nil {
			return nil, err
		}
		if old == nil {
			sum.Notes = append(sum.Notes, fmt.Sprintf("%s holds no release below %s: nothing to compare", s.Arg, newRel.Version))
			continue
		}
		sum.Old = append(sum.Old, compared(old, from))
		fmt.Fprintf(o.Log, "comparing %s (%s) with %s (%s)\n", old.Version, from, newRel.Version, newFrom)
		res := diff.Compare(old, newRel)
		sum.Changes = append(sum.Changes, res.Changes)
		fs = append(fs, res.Findings...)
		fs = append(fs, hist...)
		sum.Notes = append(sum.Notes, res.Notes...)
		olds = append(olds, oldRel{old, len(diff.StorageBlocks(old, newRel)) > 0})
	}
	// Several old releases: which of them can upgrade straight to new.
	slices.SortFunc(olds, func(a, b oldRel) int { return versions.Compare(a.rel.Version, b.rel.Version) })
	for i := len(olds) - 1; i > 0; i-- {
		if olds[i-1].blocked && !olds[i].blocked {
			fs = append(fs, diff.Straight(newRel, olds[i-1].rel.Version, diff.StorageBlocks(olds[i-1].rel, newRel), olds[i].rel.Version)...)
			break
		}
	}
	sum.Report = contract.Collect(contract.Options{Disabled: o.Disabled, Waivers: o.Waivers, Findings: fs, Checks: contract.CheckUpgrade})
	return sum, nil
}

func compared(rel *release.Release, from string) Compared {
	c := Compared{Version: rel.Version, From: from, Providers: []string{}}
	for _, p := range rel.Providers {
		c.Providers = append(c.Providers, p.Label())
	}
	return c
}

func providerIDs(labels []string) ([]provider.ID, error) {
	var out []provider.ID
	for _, l := range labels {
		id, err := provider.ParseLabel(l)
		if err != nil {
			return nil, publish.UsageError{Err: err}
		}
		out = append(out, id)
	}
	return out, nil
}
