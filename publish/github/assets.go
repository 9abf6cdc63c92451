package github

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"

	gh "github.com/google/go-github/v82/github"

	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
)

// check refuses changes the options do not allow, before anything is written.
func (g *Target) check(r *ghRelease, d publish.Diff) error {
	if !d.Changes() {
		return nil
	}
	switch {
	case r.immutable:
		return &publish.Refusal{Err: fmt.Errorf("github release %s of %s/%s is immutable and its assets differ from the build (%s): nothing was changed; "+
			"GitHub never lets assets of an immutable release be added, replaced or deleted (not even with %s), "+
			"so a new version is the only fix", r.tag, g.o.Owner, g.o.Repo, d.Describe(), option.Replace)}
	case !r.draft && !g.o.Replace && len(d.NeedReplace()) > 0:
		// Files the release lacks (bundles, provenance, SBOMs) are added
		// without --replace: nothing anybody downloaded changes; so is a
		// signed provenance that supersedes the unsigned one (Diff.Superseded).
		return &publish.Refusal{Err: fmt.Errorf("github release %s of %s/%s is already published and differs (%s): nothing was changed; "+
			"publish a new version, or re-run with %s to change it under users who may have installed it",
			r.tag, g.o.Owner, g.o.Repo, d.Describe(), option.Replace)}
	case len(d.NeedReplace()) > 0 && !g.o.Replace:
		return &publish.Refusal{Err: fmt.Errorf("draft release %s of %s/%s already has different %s: nothing was changed; re-run with %s to overwrite",
			r.tag, g.o.Owner, g.o.Repo, publish.FileNames(d.NeedReplace()), option.Replace)}
	}
	return nil
}

// write uploads the missing assets and replaces the changed ones, in
// parallel, largest first, so the last round does not wait on a big file.
func (g *Target) write(ctx context.Context, r *ghRelease, d publish.Diff, temps map[string]*gh.ReleaseAsset, sum *publish.Summary) error {
	type job struct {
		f       release.File
		replace bool
	}
	var jobs []job
	for _, f := range d.Missing {
		jobs = append(jobs, job{f: f})
	}
	for _, f := range d.Changed {
		jobs = append(jobs, job{f: f, replace: true})
	}
	slices.SortStableFunc(jobs, func(a, b job) int { return cmp.Compare(len(b.f.Data), len(a.f.Data)) })
	queue := make(chan job, len(jobs))
	for _, j := range jobs {
		queue <- j
	}
	close(queue)
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for range min(g.o.Concurrency, len(jobs)) {
		wg.Go(func() {
			for j := range queue {
				if err := ctx.Err(); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("upload %s: %w", j.f.Name, err))
					mu.Unlock()
					continue
				}
				n, err := g.put(ctx, r, j.f, j.replace, temps[j.f.Name])
				mu.Lock()
				switch {
				case err != nil:
					errs = append(errs, err)
				case j.replace:
					sum.BytesUploaded += n
					sum.Replaced = append(sum.Replaced, j.f.Name)
				default:
					sum.BytesUploaded += n
					sum.Uploaded = append(sum.Uploaded, j.f.Name)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// Leftover temporary assets of an earlier run that nothing needed.
	for name, a := range temps {
		if slices.ContainsFunc(jobs, func(j job) bool { return j.f.Name == name }) {
			continue
		}
		if err := g.deleteAsset(ctx, a); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
		return fmt.Errorf("github release %s: %d of %d uploads failed; re-run to finish, assets already uploaded are kept and skipped: %w",
			r.tag, len(errs), len(jobs), errors.Join(errs...))
	}
	return nil
}

// put writes one file. A new file is uploaded under its name. A changed one
// is uploaded under a temporary name, the old asset deleted, and the new one
// renamed, so the release is never without the file for longer than the
// rename. temp is a temporary asset an earlier run left for this file.
func (g *Target) put(ctx context.Context, r *ghRelease, f release.File, replace bool, temp *gh.ReleaseAsset) (int64, error) {
	var uploaded int64
	if temp != nil {
		same, err := g.sameBytes(ctx, temp, f)
		if err != nil {
			return 0, err
		}
		if !same {
			if err := g.deleteAsset(ctx, temp); err != nil {
				return 0, err
			}
			temp = nil
		}
	}
	if !replace && temp == nil {
		_, err := g.upload(ctx, r, f.Name, f)
		if err != nil {
			return 0, err
		}
		g.progress("uploaded %s (%d bytes)", f.Name, len(f.Data))
		return int64(len(f.Data)), nil
	}
	if temp == nil {
		a, err := g.upload(ctx, r, tempPrefix+f.Name, f)
		if err != nil {
			return 0, err
		}
		temp, uploaded = a, int64(len(f.Data))
	}
	if old := r.assets[f.Name]; old != nil {
		if err := g.deleteAsset(ctx, old); err != nil {
			return uploaded, err
		}
	}
	err := g.retry.Do(ctx, func(ctx context.Context) error {
		_, _, err := g.c.Repositories.EditReleaseAsset(ctx, g.o.Owner, g.o.Repo, temp.GetID(), &gh.ReleaseAsset{Name: gh.Ptr(f.Name)})
		return g.convert(err)
	})
	if err != nil {
		return uploaded, fmt.Errorf("rename the new %s into place (the old one is deleted, the new one is %s%s; re-run to finish): %w",
			f.Name, tempPrefix, f.Name, err)
	}
	g.progress("replaced %s (%d bytes)", f.Name, len(f.Data))
	return uploaded, nil
}

// upload sends one asset. Every attempt reads the bytes from the start. If
// an earlier attempt reached GitHub but its reply was lost, the retry gets
// 422 already_exists: the asset there is then compared and accepted when
// its bytes are the same.
func (g *Target) upload(ctx context.Context, r *ghRelease, name string, f release.File) (*gh.ReleaseAsset, error) {
	mediaType := mime.TypeByExtension(path.Ext(name))
	if mediaType == "" {
		mediaType = "application/octet-stream"
	}
	u := fmt.Sprintf("repos/%s/%s/releases/%d/assets?name=%s", url.PathEscape(g.o.Owner), url.PathEscape(g.o.Repo), r.id, url.QueryEscape(name))
	a, err := publish.DoValue(ctx, g.retry, func(ctx context.Context) (*gh.ReleaseAsset, error) {
		req, err := g.c.NewUploadRequest(u, bytes.NewReader(f.Data), int64(len(f.Data)), mediaType)
		if err != nil {
			return nil, publish.Permanent(err)
		}
		publish.WatchUpload(req, g.o.UploadProgress, name, f.Data)
		a := new(gh.ReleaseAsset)
		_, err = g.c.Do(ctx, req, a)
		if isAlreadyExists(err) {
			existing, lerr := g.findAsset(ctx, r, name)
			if lerr != nil {
				return nil, lerr
			}
			if existing != nil {
				same, herr := g.sameBytes(ctx, existing, f)
				if herr != nil {
					return nil, herr
				}
				if same {
					return existing, nil
				}
			}
			return nil, publish.Permanent(fmt.Errorf("another %s with different bytes appeared on the release while uploading (is another publish running?): %w", name, err))
		}
		return a, g.convert(err)
	})
	if err != nil {
		return nil, fmt.Errorf("upload %s (%d bytes) to release %s: %w", name, len(f.Data), r.tag, err)
	}
	return a, nil
}

func (g *Target) deleteAsset(ctx context.Context, a *gh.ReleaseAsset) error {
	err := g.retry.Do(ctx, func(ctx context.Context) error {
		_, err := g.c.Repositories.DeleteReleaseAsset(ctx, g.o.Owner, g.o.Repo, a.GetID())
		err = g.convert(err)
		var se *publish.StatusError
		if errors.As(err, &se) && se.Status == http.StatusNotFound {
			return nil // an earlier attempt deleted it
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("delete asset %s: %w", a.GetName(), err)
	}
	return nil
}

// verify reads the assets back and checks every file's size and sha256.
func (g *Target) verify(ctx context.Context, r *ghRelease, files []release.File) error {
	if err := g.listAssets(ctx, r); err != nil {
		return err
	}
	d, err := publish.Compare(ctx, files, remotes(r), g.fetchFunc(r))
	if err != nil {
		return fmt.Errorf("check release %s after upload: %w", r.tag, err)
	}
	if d.Changes() {
		return fmt.Errorf("release %s read back after upload is not what was uploaded (%s): re-run to repair (with %s for the different ones)", r.tag, d.Describe(), option.Flag(ctx, option.Replace))
	}
	g.progress("checked %d assets read back: sizes and sha256 match", len(files))
	return nil
}

func (g *Target) listAssets(ctx context.Context, r *ghRelease) error {
	r.assets = map[string]*gh.ReleaseAsset{}
	opts := &gh.ListOptions{PerPage: 100}
	for {
		page, resp, err := doResp(ctx, g, func(ctx context.Context) ([]*gh.ReleaseAsset, *gh.Response, error) {
			return g.c.Repositories.ListReleaseAssets(ctx, g.o.Owner, g.o.Repo, r.id, opts)
		})
		if err != nil {
			return g.hint(fmt.Errorf("list assets of release %s: %w", r.tag, err))
		}
		for _, a := range page {
			r.assets[a.GetName()] = a
		}
		if resp.NextPage == 0 {
			return nil
		}
		opts.Page = resp.NextPage
	}
}

func (g *Target) findAsset(ctx context.Context, r *ghRelease, name string) (*gh.ReleaseAsset, error) {
	tmp := &ghRelease{id: r.id, tag: r.tag}
	if err := g.listAssets(ctx, tmp); err != nil {
		return nil, err
	}
	return tmp.assets[name], nil
}

// takeTemps removes the temporary assets of an earlier run from r.assets and
// returns them by the name they stand in for.
func takeTemps(r *ghRelease) map[string]*gh.ReleaseAsset {
	out := map[string]*gh.ReleaseAsset{}
	for name, a := range r.assets {
		if target, ok := strings.CutPrefix(name, tempPrefix); ok {
			out[target] = a
			delete(r.assets, name)
		}
	}
	return out
}

func remotes(r *ghRelease) map[string]publish.Remote {
	out := map[string]publish.Remote{}
	for name, a := range r.assets {
		sum, _ := strings.CutPrefix(a.GetDigest(), "sha256:")
		if !strings.HasPrefix(a.GetDigest(), "sha256:") {
			sum = ""
		}
		out[name] = publish.Remote{Name: name, Size: int64(a.GetSize()), SHA256: sum}
	}
	return out
}

func (g *Target) fetchFunc(r *ghRelease) func(ctx context.Context, name string) ([]byte, error) {
	return func(ctx context.Context, name string) ([]byte, error) {
		return g.downloadBytes(ctx, r.assets[name])
	}
}

func (g *Target) sameBytes(ctx context.Context, a *gh.ReleaseAsset, f release.File) (bool, error) {
	if int64(a.GetSize()) != int64(len(f.Data)) {
		return false, nil
	}
	if d, ok := strings.CutPrefix(a.GetDigest(), "sha256:"); ok {
		return d == f.SHA256(), nil
	}
	sum, err := g.download(ctx, a)
	if err != nil {
		return false, fmt.Errorf("download %s to compare it: %w", a.GetName(), err)
	}
	return sum == f.SHA256(), nil
}

// download returns the sha256 of an asset's bytes (read as the Reader reads them).
func (g *Target) download(ctx context.Context, a *gh.ReleaseAsset) (string, error) {
	data, err := g.downloadBytes(ctx, a)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}
