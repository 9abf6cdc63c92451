package pipeline

import (
	"fmt"
	"strings"
)

// Kinds of Target.
const (
	GitHub = "github" // a GitHub release: github://OWNER/NAME
	GitLab = "gitlab" // GitLab generic packages: gitlab://HOST/GROUP/[SUBGROUP/]PROJECT
	File   = "file"   // a local repository tree: file://DIR
	OCI    = "oci"    // an OCI registry, as cluster-api-operator reads it: oci://REGISTRY/PATH
)

// Target is one place a release is published to, parsed from its URL.
type Target struct {
	Raw           string // as given, e.g. github://acme/provider
	Kind          string // GitHub, GitLab or File
	Owner, Name   string // GitHub
	Host, Project string // GitLab
	Dir           string // File
	Repository    string // OCI: REGISTRY/PATH
}

func (t Target) String() string { return t.Raw }

// GitLabURL is the instance a gitlab:// target lives on: override when set,
// else https://HOST.
func (t Target) GitLabURL(override string) string {
	if override != "" {
		return override
	}
	return "https://" + t.Host
}

// ParseTarget reads a target URL. The error quotes s and says what form
// was wanted.
func ParseTarget(s string) (Target, error) {
	t := Target{Raw: s}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return t, fmt.Errorf("%q: want github://OWNER/NAME, gitlab://HOST/PROJECT, file://DIR or oci://REGISTRY/PATH", s)
	}
	t.Kind = scheme
	switch scheme {
	case GitHub:
		owner, name, ok := strings.Cut(strings.Trim(rest, "/"), "/")
		if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
			return t, fmt.Errorf("%q: want github://OWNER/NAME", s)
		}
		t.Owner, t.Name = owner, name
	case GitLab:
		host, project, ok := strings.Cut(strings.Trim(rest, "/"), "/")
		if !ok || host == "" || project == "" {
			return t, fmt.Errorf("%q: want gitlab://HOST/GROUP/[SUBGROUP/]PROJECT", s)
		}
		t.Host, t.Project = host, project
	case File:
		if rest == "" {
			return t, fmt.Errorf("%q: want file://DIR", s)
		}
		t.Dir = rest
	case OCI:
		repo := strings.Trim(rest, "/")
		if host, _, ok := strings.Cut(repo, "/"); !ok || host == "" {
			return t, fmt.Errorf("%q: want oci://REGISTRY/PATH", s)
		}
		t.Repository = repo
	default:
		return t, fmt.Errorf("%q: unknown scheme %q (github, gitlab, file or oci)", s, scheme)
	}
	return t, nil
}
