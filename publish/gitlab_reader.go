package publish

import (
	"context"
	"fmt"
	"maps"
	"slices"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

// GitLabReader reads providers published as generic packages (name = the
// provider label, or Package): the package list for versions, the newest
// copy of each file for the bytes, as clusterctl downloads them. It shares
// the publisher's client, listing and download code.
type GitLabReader struct {
	*GitLab
	// Components names the components file per provider label; a label
	// not listed gets the conventional name.
	Components map[string]string
}

var _ Lister = (*GitLabReader)(nil)

// NewGitLabReader checks the options and returns a reader.
func NewGitLabReader(o GitLabOptions) (*GitLabReader, error) {
	g, err := NewGitLab(o)
	if err != nil {
		return nil, err
	}
	return &GitLabReader{GitLab: g}, nil
}

func (r *GitLabReader) packageName(label string) string {
	if r.o.Package != "" {
		return r.o.Package
	}
	return label
}

// Versions lists the versions of the label's generic package. clusterctl
// itself cannot list them (its GitLab repository has no version list);
// the packages API can.
func (r *GitLabReader) Versions(ctx context.Context, label string) ([]string, error) {
	name := r.packageName(label)
	what := fmt.Sprintf("gitlab: list versions of package %s of project %s", name, r.projectName())
	pkgs, err := listAll(ctx, r.GitLab, what, func(ctx context.Context, page gl.RequestOptionFunc) ([]*gl.Package, *gl.Response, error) {
		return r.c.Packages.ListProjectPackages(r.pid, &gl.ListProjectPackagesOptions{
			ListOptions: gl.ListOptions{PerPage: 100},
			PackageType: gl.Ptr("generic"),
			PackageName: gl.Ptr(name),
		}, gl.WithContext(ctx), page)
	})
	if err != nil {
		return nil, r.redact(err)
	}
	var out []string
	for _, p := range pkgs {
		// package_name is a fuzzy filter; hidden and processing packages are not served.
		if p.Name == name && p.PackageType == "generic" && (p.Status == "" || p.Status == string(gl.PackageDefault)) {
			out = append(out, p.Version)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// selected finds a package version and the provider files Read takes from
// it: the components file and the rest, by clusterctl's names.
func (r *GitLabReader) selected(ctx context.Context, label, version string) (id provider.ID, pk *glPackage, copies map[string][]*gl.PackageFile, components string, files []string, err error) {
	if id, err = provider.ParseLabel(label); err != nil {
		return id, nil, nil, "", nil, err
	}
	pk = &glPackage{name: r.packageName(label), version: version}
	if copies, err = r.remoteFiles(ctx, pk); err != nil {
		return id, nil, nil, "", nil, err
	}
	if len(copies) == 0 {
		return id, nil, nil, "", nil, fmt.Errorf("gitlab project %s has no package %s %s: %w", r.projectName(), pk.name, version, ErrNotFound)
	}
	if components, files, err = ReadFiles(id, slices.Sorted(maps.Keys(copies)), r.Components[label]); err != nil {
		err = fmt.Errorf("gitlab package %s %s of project %s: %w", pk.name, version, r.projectName(), err)
	}
	return id, pk, copies, components, files, err
}

// List returns the files Read would download, with the size and sha256
// GitLab lists for the newest copy of each.
func (r *GitLabReader) List(ctx context.Context, label, version string) (map[string]Remote, error) {
	_, _, copies, _, files, err := r.selected(ctx, label, version)
	if err != nil {
		return nil, r.redact(err)
	}
	out := map[string]Remote{}
	for _, n := range files {
		c := copies[n][len(copies[n])-1]
		out[n] = Remote{Name: n, Size: c.Size, SHA256: c.FileSHA256}
	}
	return out, nil
}

// Read downloads the newest copy of each provider file of one package version.
func (r *GitLabReader) Read(ctx context.Context, label, version string) (*release.Provider, error) {
	p, err := r.read(ctx, label, version)
	return p, r.redact(err)
}

func (r *GitLabReader) read(ctx context.Context, label, version string) (*release.Provider, error) {
	id, pk, copies, components, files, err := r.selected(ctx, label, version)
	if err != nil {
		return nil, err
	}
	out := &release.Provider{ID: id, Version: version, ComponentsFile: components}
	for _, n := range files {
		data, err := r.download(ctx, pk, n)
		if err != nil {
			return nil, err
		}
		f := release.File{Name: n, Data: data}
		cs := copies[n]
		if want := cs[len(cs)-1].FileSHA256; want != "" && want != f.SHA256() {
			return nil, fmt.Errorf("gitlab package %s %s of project %s: %s downloaded with sha256 %s, GitLab lists %s (another job writing?): re-run",
				pk.name, version, r.projectName(), n, short(f.SHA256()), short(want))
		}
		if err := out.Add(n, data); err != nil {
			return nil, err
		}
	}
	return out, nil
}
