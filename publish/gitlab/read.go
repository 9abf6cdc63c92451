package gitlab

import (
	"context"
	"fmt"
	"slices"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
)

func (r *Target) packageName(id provider.ID) string {
	if r.o.Package != "" {
		return r.o.Package
	}
	return id.Label()
}

// Versions lists the versions of the provider's generic package. clusterctl
// itself cannot list them (its GitLab repository has no version list);
// the packages API can.
func (r *Target) Versions(ctx context.Context, id provider.ID) ([]string, error) {
	name := r.packageName(id)
	what := fmt.Sprintf("gitlab: list versions of package %s of project %s", name, r.projectName())
	pkgs, err := listAll(ctx, r, what, func(ctx context.Context, page gl.RequestOptionFunc) ([]*gl.Package, *gl.Response, error) {
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

// List returns the files of one package version with the size and sha256
// GitLab lists for the newest copy of each, the one it serves.
func (r *Target) List(ctx context.Context, ref publish.Ref) (map[string]publish.Remote, error) {
	pk := &glPackage{name: r.packageName(ref.ID), version: ref.Version}
	copies, err := r.remoteFiles(ctx, pk)
	if err != nil {
		return nil, r.redact(err)
	}
	if len(copies) == 0 {
		return nil, fmt.Errorf("gitlab project %s has no package %s %s: %w", r.projectName(), pk.name, pk.version, publish.ErrNotFound)
	}
	out := map[string]publish.Remote{}
	for n, cs := range copies {
		c := cs[len(cs)-1]
		out[n] = publish.Remote{Name: n, Size: c.Size, SHA256: c.FileSHA256}
	}
	return out, nil
}

// Fetch downloads the newest copy of each named file of one package version.
func (r *Target) Fetch(ctx context.Context, ref publish.Ref, names ...string) ([]release.File, error) {
	pk := &glPackage{name: r.packageName(ref.ID), version: ref.Version}
	out := make([]release.File, 0, len(names))
	for _, n := range names {
		data, err := r.download(ctx, pk, n)
		if err != nil {
			return nil, r.redact(err)
		}
		out = append(out, release.File{Name: n, Data: data})
	}
	return out, nil
}
