package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	gh "github.com/google/go-github/v82/github"

	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/publish"
)

func isPrerelease(tag string) bool {
	v, _, _ := strings.Cut(tag, "+")
	return strings.Contains(v, "-")
}

func (g *Target) prerelease(tag string) bool {
	if g.o.Prerelease != nil {
		return *g.o.Prerelease
	}
	return isPrerelease(tag)
}

func (g *Target) title(tag string) string {
	if g.o.Title != "" {
		return g.o.Title
	}
	return tag
}

// AddNotes appends a section to the notes (publish.Noted): after Notes and
// the generated notes.
func (g *Target) AddNotes(section string) bool {
	g.added = append(g.added, section)
	return true
}

// notes returns the release notes: Notes, then the generated notes, then
// the sections AddNotes appended, each after a blank line.
func (g *Target) notes(ctx context.Context, tag string) (string, error) {
	body := g.o.Notes
	if g.o.GenerateNotes {
		gen, err := g.generated(ctx, tag)
		if err != nil {
			return "", err
		}
		body = publish.AppendNotes(body, gen)
	}
	for _, s := range g.added {
		body = publish.AppendNotes(body, s)
	}
	return body, nil
}

// generated returns the notes GitHub generates for tag.
func (g *Target) generated(ctx context.Context, tag string) (string, error) {
	opts := &gh.GenerateNotesOptions{TagName: tag}
	if g.o.Commitish != "" {
		opts.TargetCommitish = gh.Ptr(g.o.Commitish)
	}
	if g.o.PreviousTag != "" {
		opts.PreviousTagName = gh.Ptr(g.o.PreviousTag)
	}
	n, err := publish.DoValue(ctx, g.retry, func(ctx context.Context) (*gh.RepositoryReleaseNotes, error) {
		n, _, err := g.c.Repositories.GenerateReleaseNotes(ctx, g.o.Owner, g.o.Repo, opts)
		return n, g.convert(err)
	})
	if err != nil {
		err = fmt.Errorf("generate release notes for %s in %s/%s: %w", tag, g.o.Owner, g.o.Repo, err)
		var se *publish.StatusError
		if errors.As(err, &se) && se.Status == http.StatusUnprocessableEntity {
			hint := "pass " + option.Flag(ctx, option.Target) + " COMMITISH when the tag does not exist yet"
			if g.o.PreviousTag != "" {
				hint += ", and check that " + option.Flag(ctx, option.PreviousTag) + " " + g.o.PreviousTag + " exists"
			}
			return "", fmt.Errorf("%w: %s", err, hint)
		}
		return "", g.hint(err)
	}
	g.progress("generated release notes for %s (%d bytes)", tag, len(n.Body))
	return n.Body, nil
}

// updateMeta brings the title, notes and prerelease flag of an existing
// release to what the options ask for. Empty notes and a title that is the
// tag are filled in; notes, a title or a published release's flag that
// differ are changed only with Replace (GitHub lets them change even on an
// immutable release), else kept with a warning.
func (g *Target) updateMeta(ctx context.Context, r *ghRelease, sum *publish.Summary) error {
	edit := &gh.RepositoryRelease{}
	changed := false
	var kept []string
	if g.o.Title != "" && r.name != g.o.Title {
		if r.name == "" || r.name == r.tag || g.o.Replace {
			edit.Name, changed = gh.Ptr(g.o.Title), true
		} else {
			kept = append(kept, "title")
		}
	}
	if g.o.Notes != "" || g.o.GenerateNotes || len(g.added) > 0 {
		// Generated again to compare: a resumed draft made by an earlier
		// run holds the same notes and needs nothing.
		body, err := g.notes(ctx, r.tag)
		if err != nil {
			return err
		}
		switch {
		case body == r.body:
		case r.body == "" || g.o.Replace:
			edit.Body, changed = gh.Ptr(body), true
		default:
			kept = append(kept, "notes")
		}
	}
	if g.o.Prerelease != nil && r.prerelease != *g.o.Prerelease {
		if r.draft || g.o.Replace {
			edit.Prerelease, changed = gh.Ptr(*g.o.Prerelease), true
		} else {
			kept = append(kept, "prerelease flag")
		}
	}
	if len(kept) > 0 {
		g.warn(sum, "release %s keeps its %s: re-run with %s to change them", r.tag, strings.Join(kept, ", "), option.Flag(ctx, option.Replace))
	}
	if !changed {
		return nil
	}
	rr, err := publish.DoValue(ctx, g.retry, func(ctx context.Context) (*gh.RepositoryRelease, error) {
		rr, _, err := g.c.Repositories.EditRelease(ctx, g.o.Owner, g.o.Repo, r.id, edit)
		return rr, g.convert(err)
	})
	if err != nil {
		return g.hint(fmt.Errorf("update the title and notes of release %s: %w", r.tag, err))
	}
	nr := toRelease(rr)
	r.name, r.body, r.prerelease = nr.name, nr.body, nr.prerelease
	g.progress("updated the title, notes and prerelease flag of release %s", r.tag)
	return nil
}
