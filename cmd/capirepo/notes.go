package main

import (
	"fmt"
	"os"

	"github.com/capirepo/capirepo/publish/github"
	"github.com/capirepo/capirepo/publish/gitlab"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/publish"
)

// releaseNotesOptions are the flags that shape a GitHub release besides its
// assets. prefix is "" in publish github and "github-" in release.
type releaseNotesOptions struct {
	prefix        string
	title         string
	notesFile     string
	generateNotes bool
	previousTag   string
	prerelease    bool
	draft         bool
	target        string
	provenance    bool
	cmd           *cobra.Command
}

func (o *releaseNotesOptions) bind(cmd *cobra.Command, prefix string, shared bool) {
	o.prefix, o.cmd = prefix, cmd
	f := cmd.Flags()
	if shared {
		f.StringVar(&o.title, "title", "", "release title (default: the tag)")
		f.StringVar(&o.notesFile, "notes-file", "", "release notes (Markdown) from FILE; an existing release's notes change only with --replace")
	}
	f.BoolVar(&o.generateNotes, prefix+"generate-notes", false, "append the notes GitHub generates for the changes since the previous release")
	f.StringVar(&o.previousTag, prefix+"previous-tag", "", "tag the generated notes start from (default: as GitHub finds it, the latest release)")
	f.BoolVar(&o.prerelease, prefix+"prerelease", false, "mark the release a prerelease (default: when the version is a semver prerelease, e.g. v1.2.0-rc.1)")
	f.BoolVar(&o.draft, prefix+"draft", false, "upload and check everything but leave the release a draft for a person to publish")
	f.BoolVar(&o.provenance, "provenance", true, "add "+publish.ProvenanceFile+", an in-toto statement (SLSA provenance v1) naming every asset with its sha256")
	f.StringVar(&o.target, prefix+"target", "", "COMMITISH the tag is created from when the release is published, if the tag does not exist yet (default: the default branch)")
	prefixed(cmd, prefix, "generate-notes", "previous-tag", "prerelease", "draft", "target")
}

// apply sets the GitHub options from the flags, reading the notes file.
func (o *releaseNotesOptions) apply(g *github.Options) error {
	g.Title, g.GenerateNotes, g.PreviousTag, g.Draft, g.Commitish = o.title, o.generateNotes, o.previousTag, o.draft, o.target
	g.Provenance = o.provenance
	if o.cmd.Flags().Changed(o.prefix + "prerelease") {
		g.Prerelease = &o.prerelease
	}
	if o.previousTag != "" && !o.generateNotes {
		return usagef("--%sprevious-tag needs --%sgenerate-notes", o.prefix, o.prefix)
	}
	notes, err := o.notes()
	if err != nil {
		return err
	}
	g.Notes = notes
	return nil
}

func (o *releaseNotesOptions) notes() (string, error) {
	if o.notesFile == "" {
		return "", nil
	}
	b, err := os.ReadFile(o.notesFile)
	if err != nil {
		return "", usageError{fmt.Errorf("--notes-file: %w", err)}
	}
	return string(b), nil
}

// gitlabReleaseOptions ask for a GitLab Release beside the packages. prefix
// is "" in publish gitlab and "gitlab-" in release; the title and notes
// flags are bound by whoever binds them first (shared with GitHub in release).
type gitlabReleaseOptions struct {
	prefix     string
	release    bool
	ref        string
	title      *string
	notesFile  *string
	provenance *bool
}

func (o *gitlabReleaseOptions) bind(cmd *cobra.Command, prefix string, withNotes bool) {
	o.prefix = prefix
	f := cmd.Flags()
	f.BoolVar(&o.release, prefix+"release", false, "also create a GitLab Release for the tag whose links point at the package files")
	f.StringVar(&o.ref, prefix+"ref", "", "branch or commit the tag is created from for the GitLab Release, if the tag does not exist yet")
	prefixed(cmd, prefix, "release", "ref")
	if withNotes {
		o.title, o.notesFile, o.provenance = new(string), new(string), new(bool)
		f.StringVar(o.title, "title", "", "release title (default: the tag)")
		f.StringVar(o.notesFile, "notes-file", "", "release notes (Markdown) from FILE; an existing release's notes change only with --replace")
		f.BoolVar(o.provenance, "provenance", true, "add "+publish.ProvenanceFile+" to each package, an in-toto statement (SLSA provenance v1) naming its files with their sha256")
	}
}

func (o *gitlabReleaseOptions) apply(g *gitlab.Options) error {
	g.Release, g.Ref = o.release, o.ref
	g.Provenance = o.provenance != nil && *o.provenance
	if !o.release {
		if o.ref != "" {
			return usagef("--%sref needs --%srelease", o.prefix, o.prefix)
		}
		return nil
	}
	if o.title != nil {
		g.Title = *o.title
	}
	if o.notesFile != nil && *o.notesFile != "" {
		b, err := os.ReadFile(*o.notesFile)
		if err != nil {
			return usageError{fmt.Errorf("--notes-file: %w", err)}
		}
		g.Notes = string(b)
	}
	return nil
}
