package gitlab

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
)

// Release is a GitLab Release (the Releases API), as the fake holds it.
type Release struct {
	TagName     string
	Name        string
	Description string
	Links       []ReleaseLink
}

// ReleaseLink is one asset link of a release.
type ReleaseLink struct {
	ID              int64
	Name            string
	URL             string
	DirectAssetPath string
	LinkType        string
}

// AddTag creates a tag in a project, as a git push does.
func (s *Server) AddTag(projectRef, tag, ref string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.findProject(projectRef)
	if p == nil {
		s.t.Fatalf("fake gitlab: AddTag: no project %q", projectRef)
	}
	p.tags[tag] = ref
}

// Tags returns a project's tags and the ref each was made from.
func (s *Server) Tags(projectRef string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	if p := s.findProject(projectRef); p != nil {
		for k, v := range p.tags {
			out[k] = v
		}
	}
	return out
}

// Releases returns a copy of a project's releases, oldest first.
func (s *Server) Releases(projectRef string) []Release {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Release
	if p := s.findProject(projectRef); p != nil {
		for _, r := range p.releases {
			c := *r
			c.Links = slices.Clone(r.Links)
			out = append(out, c)
		}
	}
	return out
}

type linkIn struct {
	Name            string `json:"name"`
	URL             string `json:"url"`
	DirectAssetPath string `json:"direct_asset_path"`
	FilePath        string `json:"filepath"`
	LinkType        string `json:"link_type"`
}

// releases serves the Releases API as GitLab documents it: a release needs
// a tag, made from ref when it does not exist yet ("Ref is not specified"
// otherwise); one release per tag (409); link names and URLs unique within
// a release; link_type other, runbook, image or package.
func (s *Server) releases(w http.ResponseWriter, r *http.Request, route Route, p *project, seg []string, body []byte) {
	find := func(tag string) *Release {
		for _, rel := range p.releases {
			if rel.TagName == tag {
				return rel
			}
		}
		return nil
	}
	switch route {
	case RouteCreateRelease:
		var in struct {
			TagName     string `json:"tag_name"`
			Name        string `json:"name"`
			Description string `json:"description"`
			Ref         string `json:"ref"`
			Assets      struct {
				Links []linkIn `json:"links"`
			} `json:"assets"`
		}
		if err := json.Unmarshal(body, &in); err != nil || in.TagName == "" {
			writeError(w, http.StatusBadRequest, "tag_name is missing")
			return
		}
		if find(in.TagName) != nil {
			writeMessage(w, http.StatusConflict, "Release already exists")
			return
		}
		if _, ok := p.tags[in.TagName]; !ok {
			if in.Ref == "" {
				writeMessage(w, http.StatusUnprocessableEntity, "Ref is not specified")
				return
			}
			p.tags[in.TagName] = in.Ref
		}
		rel := &Release{TagName: in.TagName, Name: in.Name, Description: in.Description}
		if rel.Name == "" {
			rel.Name = in.TagName
		}
		for _, l := range in.Assets.Links {
			if msg := s.addLink(rel, l); msg != nil {
				writeJSON(w, http.StatusBadRequest, map[string]any{"message": msg})
				return
			}
		}
		p.releases = append(p.releases, rel)
		writeJSON(w, http.StatusCreated, s.releaseJSON(r, p, rel))
	case RouteGetRelease, RouteUpdateRelease, RouteListReleaseLinks, RouteCreateReleaseLink:
		rel := find(seg[2])
		if rel == nil {
			writeMessage(w, http.StatusNotFound, "404 Not Found")
			return
		}
		switch route {
		case RouteGetRelease:
			writeJSON(w, http.StatusOK, s.releaseJSON(r, p, rel))
		case RouteUpdateRelease:
			var in struct {
				Name        *string `json:"name"`
				Description *string `json:"description"`
			}
			if err := json.Unmarshal(body, &in); err != nil {
				writeError(w, http.StatusBadRequest, "invalid JSON")
				return
			}
			if in.Name != nil {
				rel.Name = *in.Name
			}
			if in.Description != nil {
				rel.Description = *in.Description
			}
			writeJSON(w, http.StatusOK, s.releaseJSON(r, p, rel))
		case RouteListReleaseLinks:
			items := make([]any, len(rel.Links))
			for i := range rel.Links {
				items[i] = linkJSON(s.URL, p, rel, &rel.Links[i])
			}
			s.writePage(w, r, items)
		case RouteCreateReleaseLink:
			var in linkIn
			if err := json.Unmarshal(body, &in); err != nil {
				writeError(w, http.StatusBadRequest, "invalid JSON")
				return
			}
			if msg := s.addLink(rel, in); msg != nil {
				writeJSON(w, http.StatusBadRequest, map[string]any{"message": msg})
				return
			}
			writeJSON(w, http.StatusCreated, linkJSON(s.URL, p, rel, &rel.Links[len(rel.Links)-1]))
		}
	}
}

// addLink validates and adds a link; it returns GitLab's message on error,
// nil when the link was added.
func (s *Server) addLink(rel *Release, in linkIn) any {
	path := in.DirectAssetPath
	if path == "" {
		path = in.FilePath
	}
	switch {
	case in.Name == "":
		return map[string][]string{"name": {"can't be blank"}}
	case in.URL == "":
		return map[string][]string{"url": {"can't be blank"}}
	}
	if u, err := url.Parse(in.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return map[string][]string{"url": {"is blocked: Only allowed schemes are http, https"}}
	}
	lt := in.LinkType
	if lt == "" {
		lt = "other"
	}
	if !slices.Contains([]string{"other", "runbook", "image", "package"}, lt) {
		return "link_type does not have a valid value"
	}
	for _, l := range rel.Links {
		switch {
		case l.Name == in.Name:
			return map[string][]string{"name": {"has already been taken"}}
		case l.URL == in.URL:
			return map[string][]string{"url": {"has already been taken"}}
		case path != "" && l.DirectAssetPath == path:
			return map[string][]string{"direct_asset_path": {"has already been taken"}}
		}
	}
	rel.Links = append(rel.Links, ReleaseLink{ID: s.id(), Name: in.Name, URL: in.URL, DirectAssetPath: path, LinkType: lt})
	return nil
}

func (s *Server) releaseJSON(r *http.Request, p *project, rel *Release) map[string]any {
	links := make([]any, len(rel.Links))
	for i := range rel.Links {
		links[i] = linkJSON(scheme(r)+"://"+r.Host, p, rel, &rel.Links[i])
	}
	return map[string]any{
		"tag_name": rel.TagName, "name": rel.Name, "description": rel.Description,
		"created_at": s.clock.Format("2006-01-02T15:04:05.000Z"), "released_at": s.clock.Format("2006-01-02T15:04:05.000Z"),
		"assets": map[string]any{"count": len(rel.Links), "links": links, "sources": []any{}},
		"_links": map[string]any{"self": fmt.Sprintf("%s://%s/%s/-/releases/%s", scheme(r), r.Host, p.path, url.PathEscape(rel.TagName))},
	}
}

func linkJSON(base string, p *project, rel *Release, l *ReleaseLink) map[string]any {
	out := map[string]any{"id": l.ID, "name": l.Name, "url": l.URL, "link_type": l.LinkType, "external": true}
	if l.DirectAssetPath != "" {
		out["direct_asset_url"] = fmt.Sprintf("%s/%s/-/releases/%s/downloads%s", base, p.path, url.PathEscape(rel.TagName), l.DirectAssetPath)
	}
	return out
}
