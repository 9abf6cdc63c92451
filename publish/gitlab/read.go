package gitlab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
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

// Fetch downloads the newest copy of each named file of one package
// version, each at most the size GitLab lists for it (and none over
// publish.MaxReplySize): a reply that goes on is cut off by the HTTP
// client (publish.ReadLimit) and refused here.
func (r *Target) Fetch(ctx context.Context, ref publish.Ref, names ...string) ([]release.File, error) {
	pk := &glPackage{name: r.packageName(ref.ID), version: ref.Version}
	copies, err := r.remoteFiles(ctx, pk)
	if err != nil {
		return nil, r.redact(err)
	}
	out := make([]release.File, 0, len(names))
	for _, n := range names {
		size := int64(publish.MaxReplySize)
		if cs := copies[n]; len(cs) > 0 {
			size = cs[len(cs)-1].Size
		}
		if size > publish.MaxReplySize {
			return nil, fmt.Errorf("gitlab: %s of package %s %s is listed at %d bytes, more than capirepo reads of one file (%d)", n, pk.name, pk.version, size, publish.MaxReplySize)
		}
		data, err := r.downloadLimited(ctx, pk, n, size)
		if err != nil {
			return nil, r.redact(err)
		}
		out = append(out, release.File{Name: n, Data: data})
	}
	return out, nil
}

// downloadLimited is download, reading at most size bytes: client-go's own
// download reads a reply to its end, whatever its length.
func (r *Target) downloadLimited(ctx context.Context, pk *glPackage, name string, size int64) ([]byte, error) {
	ctx = publish.ReadLimit(ctx, name, size)
	data, err := publish.DoValue(ctx, r.retry, func(ctx context.Context) ([]byte, error) {
		ctx, cap := withCapture(ctx)
		// client-go drains a reply to its end before it returns: a reply
		// cut off has its request cancelled, which ends the drain.
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		req, err := r.c.NewRequest(http.MethodGet, fmt.Sprintf("projects/%s/packages/generic/%s/%s/%s",
			projectPath(r.pid), gl.PathEscape(pk.name), gl.PathEscape(pk.version), gl.PathEscape(name)), nil, []gl.RequestOptionFunc{gl.WithContext(ctx)})
		if err != nil {
			return nil, publish.Permanent(err)
		}
		w := &limitedBuffer{what: name, limit: size, cancel: cancel}
		resp, err := r.c.Do(req, w)
		var big *publish.TooLargeError
		var slow *publish.TransferTimeoutError
		switch {
		case errors.As(err, &big) || errors.As(err, &slow):
			return nil, publish.Permanent(err)
		case err != nil:
			return nil, r.convert(resp, cap, err)
		}
		return w.b.Bytes(), nil
	})
	if err != nil {
		return nil, r.hint(fmt.Errorf("gitlab: download %s of package %s %s of project %s: %w", name, pk.name, pk.version, r.projectName(), err))
	}
	return data, nil
}

// projectPath is the project as a path element: its ID, or its escaped path.
func projectPath(pid any) string {
	if s, ok := pid.(string); ok {
		return gl.PathEscape(s)
	}
	return fmt.Sprint(pid)
}

// limitedBuffer takes at most limit bytes; a write past them fails with a
// TooLargeError, which stops the copy from the reply.
type limitedBuffer struct {
	b      bytes.Buffer
	what   string
	limit  int64
	cancel context.CancelFunc
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if int64(l.b.Len()+len(p)) > l.limit {
		l.cancel()
		return 0, &publish.TooLargeError{What: l.what, Limit: l.limit}
	}
	return l.b.Write(p)
}
