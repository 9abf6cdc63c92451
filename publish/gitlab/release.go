package gitlab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
)

// glLink is one asset link a GitLab Release should have.
type glLink struct {
	name, url, path string
}

// releaseLinks lists a link per package file: named after the file (with
// the package in front when the release holds several providers), pointing
// at the package file's API URL, with a permanent direct asset path.
func (g *Target) releaseLinks(pkgs []*glPackage) []glLink {
	var out []glLink
	for _, pk := range pkgs {
		for _, f := range pk.files {
			name := f.Name
			if len(pkgs) > 1 {
				name = pk.name + "/" + f.Name
			}
			out = append(out, glLink{name: name, path: "/" + name,
				url: fmt.Sprintf("%s/api/v4/projects/%s/packages/generic/%s/%s/%s", g.web, g.slug,
					url.PathEscape(pk.name), url.PathEscape(pk.version), url.PathEscape(f.Name))})
		}
	}
	return out
}

// release makes or completes the GitLab Release of the version's tag once
// the packages are written and checked: missing links are added; the name
// and description are set on a new release, filled in when empty, and
// changed only with Replace (else kept with a warning).
func (g *Target) release(ctx context.Context, rel *release.Release, pkgs []*glPackage, sum *publish.Summary) error {
	tag := rel.Version
	if tag == "" {
		tag = pkgs[0].version
	}
	links := g.releaseLinks(pkgs)
	title := g.o.Title
	if title == "" {
		title = tag
	}
	existing, err := g.getRelease(ctx, tag)
	if err != nil {
		return err
	}
	if existing == nil {
		opts := &gl.CreateReleaseOptions{TagName: gl.Ptr(tag), Name: gl.Ptr(title), Assets: &gl.ReleaseAssetsOptions{}}
		if g.o.Notes != "" {
			opts.Description = gl.Ptr(g.o.Notes)
		}
		if g.o.Ref != "" {
			opts.Ref = gl.Ptr(g.o.Ref)
		}
		for _, l := range links {
			opts.Assets.Links = append(opts.Assets.Links, &gl.ReleaseAssetLinkOptions{Name: gl.Ptr(l.name), URL: gl.Ptr(l.url),
				DirectAssetPath: gl.Ptr(l.path), LinkType: gl.Ptr(gl.PackageLinkType)})
		}
		created, err := publish.DoValue(ctx, g.retry, func(ctx context.Context) (*gl.Release, error) {
			ctx, cap := withCapture(ctx)
			r, resp, err := g.c.Releases.CreateRelease(g.pid, opts, gl.WithContext(ctx))
			return r, g.convert(resp, cap, err)
		})
		var se *publish.StatusError
		switch {
		case err == nil:
			g.progress("created release %s with %d links to the package files: %s", tag, len(links), created.Links.Self)
			return nil
		case errors.As(err, &se) && se.Status == http.StatusConflict:
			// An earlier attempt made it before its reply was lost.
			if existing, err = g.getRelease(ctx, tag); err != nil {
				return err
			}
		case errors.As(err, &se) && se.Status == http.StatusUnprocessableEntity && g.o.Ref == "":
			return fmt.Errorf("gitlab: create release %s of project %s: %w: tag %s does not exist yet: push it, or pass the branch or commit to make it from (%s)",
				tag, g.projectName(), err, tag, option.Flag(ctx, option.Ref))
		default:
			return g.hint(fmt.Errorf("gitlab: create release %s of project %s: %w", tag, g.projectName(), err))
		}
	}
	if existing == nil {
		return fmt.Errorf("gitlab: release %s of project %s: created, then not found", tag, g.projectName())
	}
	return g.completeRelease(ctx, tag, title, existing, links, sum)
}

func (g *Target) completeRelease(ctx context.Context, tag, title string, existing *gl.Release, links []glLink, sum *publish.Summary) error {
	have, err := listAll(ctx, g, fmt.Sprintf("gitlab: list links of release %s of project %s", tag, g.projectName()),
		func(ctx context.Context, page gl.RequestOptionFunc) ([]*gl.ReleaseLink, *gl.Response, error) {
			return g.c.ReleaseLinks.ListReleaseLinks(g.pid, tag, &gl.ListReleaseLinksOptions{ListOptions: gl.ListOptions{PerPage: 100}},
				gl.WithContext(ctx), page)
		})
	if err != nil {
		return err
	}
	byName := map[string]*gl.ReleaseLink{}
	for _, l := range have {
		byName[l.Name] = l
	}
	added := 0
	for _, l := range links {
		if h := byName[l.name]; h != nil {
			if h.URL != l.url {
				g.relWarn(sum, "release %s: link %s points at %s, not the package file %s; left as it is", tag, l.name, h.URL, l.url)
			}
			continue
		}
		_, err := publish.DoValue(ctx, g.retry, func(ctx context.Context) (*gl.ReleaseLink, error) {
			ctx, cap := withCapture(ctx)
			r, resp, err := g.c.ReleaseLinks.CreateReleaseLink(g.pid, tag, &gl.CreateReleaseLinkOptions{Name: gl.Ptr(l.name), URL: gl.Ptr(l.url),
				DirectAssetPath: gl.Ptr(l.path), LinkType: gl.Ptr(gl.PackageLinkType)}, gl.WithContext(ctx))
			return r, g.convert(resp, cap, err)
		})
		if err != nil {
			return g.hint(fmt.Errorf("gitlab: add link %s to release %s of project %s: %w", l.name, tag, g.projectName(), err))
		}
		added++
	}
	upd := &gl.UpdateReleaseOptions{}
	changed := false
	var kept []string
	if g.o.Title != "" && existing.Name != title {
		if existing.Name == "" || existing.Name == tag || g.o.Replace {
			upd.Name, changed = gl.Ptr(title), true
		} else {
			kept = append(kept, "title")
		}
	}
	if g.o.Notes != "" && existing.Description != g.o.Notes {
		if existing.Description == "" || g.o.Replace {
			upd.Description, changed = gl.Ptr(g.o.Notes), true
		} else {
			kept = append(kept, "notes")
		}
	}
	if len(kept) > 0 {
		g.relWarn(sum, "release %s keeps its %s: re-run with %s to change them", tag, strings.Join(kept, ", "), option.Flag(ctx, option.Replace))
	}
	if changed {
		if upd.Name == nil {
			upd.Name = gl.Ptr(existing.Name)
		}
		if upd.Description == nil {
			upd.Description = gl.Ptr(existing.Description)
		}
		_, err := publish.DoValue(ctx, g.retry, func(ctx context.Context) (*gl.Release, error) {
			ctx, cap := withCapture(ctx)
			r, resp, err := g.c.Releases.UpdateRelease(g.pid, tag, upd, gl.WithContext(ctx))
			return r, g.convert(resp, cap, err)
		})
		if err != nil {
			return g.hint(fmt.Errorf("gitlab: update release %s of project %s: %w", tag, g.projectName(), err))
		}
	}
	g.progress("release %s: %d links added, %d already there", tag, added, len(links)-added)
	return nil
}

func (g *Target) relWarn(sum *publish.Summary, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	sum.Warnings = append(sum.Warnings, msg)
	g.progress("warning: %s", msg)
}

// getRelease returns the release of tag, or nil when there is none.
func (g *Target) getRelease(ctx context.Context, tag string) (*gl.Release, error) {
	r, err := publish.DoValue(ctx, g.retry, func(ctx context.Context) (*gl.Release, error) {
		ctx, cap := withCapture(ctx)
		r, resp, err := g.c.Releases.GetRelease(g.pid, tag, gl.WithContext(ctx))
		return r, g.convert(resp, cap, err)
	})
	var se *publish.StatusError
	switch {
	case err == nil:
		return r, nil
	case errors.As(err, &se) && se.Status == http.StatusNotFound:
		return nil, nil
	}
	return nil, g.hint(fmt.Errorf("gitlab: look up release %s of project %s: %w", tag, g.projectName(), err))
}
