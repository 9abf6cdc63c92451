package pipeline_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	fakegl "github.com/capirepo/capirepo/internal/fake/gitlab"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/github"
	"github.com/capirepo/capirepo/publish/gitlab"
	"github.com/capirepo/capirepo/publish/oci"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/sign/signtest"
)

// unreadableFlavor is a document clusterctl reads only with a value of its
// variable that keeps it YAML: the lint, which reads with the stand-ins, finds
// nothing wrong; the read-back, given the value unreadableValue (as
// clusterctl config values reach both read-backs), fails on the flavor. It
// stands for any defect only clusterctl's own reading finds. (A flavor the
// lint finds unreadable is a CAPI001 error; waived, it is the maintainer's
// known defect, which the read-backs then say without failing:
// TestCAPI001_WaivedBrokenFlavorIsReleasedAndSaid.)
const unreadableFlavor = `---
apiVersion: v1
kind: ConfigMap
metadata:
  name: ${CLUSTER_NAME}-extra
data:
  note: ${EXAMPLE_NOTE}
`

// unreadableValue is the value of EXAMPLE_NOTE that breaks the flavor.
var unreadableValue = map[string]string{"EXAMPLE_NOTE": "[unclosed"}

// exampleWithUnreadableFlavor is the example with a flavor clusterctl
// cannot read with unreadableValue.
func exampleWithUnreadableFlavor(t *testing.T) string {
	t.Helper()
	dir := testtree.CopyTree(t, exampleDir(t))
	f := filepath.Join(dir, "templates", "cluster-template-machinepool.yaml")
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, append(data, unreadableFlavor...), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRelease_AReleaseWhoseReadBackFailsPublishesNothing: the dist is read
// back through clusterctl's client before the first publish step, so a
// flavor clusterctl cannot read stops the run with nothing published: no
// folder on file://, no release and no asset on GitHub (the fake's final
// state), not even a draft.
func TestRelease_AReleaseWhoseReadBackFailsPublishesNothing(t *testing.T) {
	srv := fakegh.New(t, fakegh.WithToken(ghToken))
	srv.AddRepo("example", "provider-unreadable", false)
	root := filepath.Join(t.TempDir(), "repo")
	dir := exampleWithUnreadableFlavor(t)
	for _, tc := range []struct {
		name      string
		target    string
		dryRun    bool
		published func(t *testing.T) bool
	}{{
		name: "file", target: "file://" + root,
		published: func(t *testing.T) bool {
			_, err := os.Stat(root)
			return !errors.Is(err, os.ErrNotExist)
		},
	}, {
		name: "github", target: "github://example/provider-unreadable",
		published: func(t *testing.T) bool {
			rels := srv.Releases("example", "provider-unreadable")
			for _, r := range rels {
				t.Logf("the fake holds release %s (draft %v) with %d assets", r.Tag, r.Draft, len(r.Assets))
			}
			return len(rels) > 0
		},
	}, {
		name: "dry run", target: "file://" + root, dryRun: true,
		published: func(t *testing.T) bool { return false },
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			o := exampleRun(t, &log)
			o.Build.Dir = dir
			o.Variables = unreadableValue
			o.Targets, o.DryRun = locations(t, tc.target), tc.dryRun
			o.TargetOptions = targets.Options{GitHub: github.Options{Token: ghToken, APIURL: srv.APIURL()}}
			sum, err := pipeline.Release(context.Background(), o)
			if err == nil || !strings.HasPrefix(err.Error(), "verify dist: ") || !strings.Contains(err.Error(), "cluster-template-machinepool.yaml") {
				t.Fatalf("error %v, want the dist's read-back to fail on the flavor\n%s", err, log.String())
			}
			// A dry run stops at the same step.
			want := "build=ok\nlint=ok\nupgrade=skipped\nimages=skipped\nwrite=ok\nverify dist=failed\npublish " + tc.target + "=not run\nverify " + tc.target + "=not run\n"
			if diff := cmp.Diff(want, statuses(sum)); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if tc.published(t) {
				t.Errorf("%s: something was published before the read-back failed", tc.target)
			}
			if len(sum.Published) != 0 || len(sum.Next) != 0 {
				t.Errorf("summary says it published %+v, next %q", sum.Published, sum.Next)
			}
		})
	}
}

// TestRelease_DryRunSaysTheCountARealRunPublishes: what a dry run says it
// would publish is what the real run then publishes, file for file: the
// Sigstore bundles and the provenance the sign step makes, and the
// provenance a GitHub release gets from its publisher, included. A folder
// tree's progress lines name each file's version folder.
func TestRelease_DryRunSaysTheCountARealRunPublishes(t *testing.T) {
	srv := fakegh.New(t, fakegh.WithToken(ghToken))
	gl := fakegl.New(t)
	gl.AddProject(31, "infra/count", false)
	gl.AddToken("glpat-count", fakegl.AccessToken)
	reg := newRegistryHost(t)
	ss := signtest.New(t)
	const source = "https://github.com/example/cluster-api-provider-example"
	for _, tc := range []struct {
		name   string
		target func(t *testing.T) string
		signed bool
		// published counts what the target holds after the real run.
		published func(t *testing.T, target string) int
		wantLine  string // in the real run's log
	}{{
		name: "file, signed", signed: true,
		target:    func(t *testing.T) string { return "file://" + filepath.Join(t.TempDir(), "repo") },
		published: func(t *testing.T, target string) int { return len(listTree(t, strings.TrimPrefix(target, "file://"))) },
		wantLine:  "  written infrastructure-example/v0.1.0/checksums.txt.sigstore.json",
	}, {
		name: "github, with the publisher's provenance",
		target: func(t *testing.T) string {
			srv.AddRepo("example", "count-unsigned", false)
			return "github://example/count-unsigned"
		},
		published: func(t *testing.T, _ string) int {
			return len(srv.Releases("example", "count-unsigned")[0].Assets)
		},
	}, {
		name: "github, signed", signed: true,
		target: func(t *testing.T) string {
			srv.AddRepo("example", "count-signed", false)
			return "github://example/count-signed"
		},
		published: func(t *testing.T, _ string) int {
			return len(srv.Releases("example", "count-signed")[0].Assets)
		},
	}, {
		name: "gitlab, signed, with the publisher's provenance", signed: true,
		target: func(t *testing.T) string { return "gitlab://gitlab.example.com/infra/count" },
		published: func(t *testing.T, _ string) int {
			return len(gl.Files("31", "infrastructure-example", "v0.1.0"))
		},
	}, {
		name:   "oci",
		target: func(t *testing.T) string { return "oci://" + reg + "/count" },
		published: func(t *testing.T, target string) int {
			tg, err := targets.Open(context.Background(), target, targets.Options{OCI: oci.Options{PlainHTTP: true}})
			if err != nil {
				t.Fatal(err)
			}
			id, err := provider.ParseLabel("infrastructure-example")
			if err != nil {
				t.Fatal(err)
			}
			files, err := tg.List(context.Background(), publish.Ref{ID: id, Version: "v0.1.0"})
			if err != nil {
				t.Fatal(err)
			}
			return len(files)
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			target := tc.target(t)
			run := func(dry bool) (*pipeline.ReleaseSummary, string) {
				var log bytes.Buffer
				o := exampleRun(t, &log)
				o.Targets, o.DryRun = locations(t, target), dry
				o.TargetOptions = targets.Options{GitHub: github.Options{Token: ghToken, APIURL: srv.APIURL(), Provenance: true},
					GitLab: gitlab.Options{URL: gl.URL, Token: "glpat-count", Provenance: true}, OCI: oci.Options{PlainHTTP: true}}
				if tc.signed {
					o.Sign = &pipeline.SignOptions{Provenance: true, Source: source}
					if !dry {
						o.Sign.Signer = keyless(t, ss)
					}
				}
				sum, err := pipeline.Release(context.Background(), o)
				if err != nil {
					t.Fatalf("dry run %v: %v\n%s", dry, err, log.String())
				}
				return sum, log.String()
			}
			dry, _ := run(true)
			sum, log := run(false)
			n := tc.published(t, target)
			if len(sum.Published) != 1 || len(sum.Published[0].Uploaded) != n {
				t.Fatalf("the real run says it published %+v; the target holds %d files", sum.Published, n)
			}
			if len(dry.Next) != 1 || !strings.HasPrefix(dry.Next[0], fmt.Sprintf("a real run would publish %d files (", n)) {
				t.Errorf("dry run says %q; the real run published %d files", dry.Next, n)
			}
			if tc.wantLine != "" && !strings.Contains(log, tc.wantLine) {
				t.Errorf("the log lacks %q:\n%s", tc.wantLine, log)
			}
		})
	}
}

// TestRelease_DryRunSaysAtLeastWhereTheTargetCannotSay: a target a dry run
// cannot open (a GitLab project without a token) cannot say what it adds
// of its own, so the count is what the release and signing make, "at
// least".
func TestRelease_DryRunSaysAtLeastWhereTheTargetCannotSay(t *testing.T) {
	o := exampleRun(t, &bytes.Buffer{})
	o.Targets, o.DryRun = locations(t, "gitlab://gitlab.example.com/infra/no-token"), true
	o.SkipUpgradeCheck = "no network in tests"
	o.Sign = &pipeline.SignOptions{Provenance: true}
	sum, err := pipeline.Release(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Next) != 1 || !strings.HasPrefix(sum.Next[0], "a real run would publish at least 11 files (") {
		t.Errorf("next %q", sum.Next)
	}
}

// TestPublish_ADistWhoseReadBackFailsPublishesNothing: capirepo publish
// <target> reads the built release back through clusterctl's client before
// anything is published, as release does: a dist changed since capirepo
// build wrote it (its metadata.yaml no longer covers the version, its
// checksums.txt made to match) is one clusterctl cannot install, and no
// target gets it (no folder, no GitHub release nor draft, no GitLab
// package, no OCI artifact).
func TestPublish_ADistWhoseReadBackFailsPublishesNothing(t *testing.T) {
	dist := filepath.Join(t.TempDir(), "dist")
	if _, err := pipeline.BuildRelease(context.Background(), pipeline.BuildOptions{Dir: exampleDir(t), Version: "v0.1.0", Out: dist}, nil); err != nil {
		t.Fatal(err)
	}
	editDist(t, filepath.Join(dist, "infrastructure-example", "v0.1.0"), "metadata.yaml", "minor: 1", "minor: 9")
	srv := fakegh.New(t, fakegh.WithToken(ghToken))
	srv.AddRepo("example", "publish-unreadable", false)
	gl := fakegl.New(t)
	gl.AddProject(41, "infra/unreadable", false)
	gl.AddToken("glpat-unreadable", fakegl.AccessToken)
	reg := newRegistryHost(t)
	root := filepath.Join(t.TempDir(), "repo")
	ociTarget := "oci://" + reg + "/unreadable"
	to := targets.Options{GitHub: github.Options{Token: ghToken, APIURL: srv.APIURL()},
		GitLab: gitlab.Options{URL: gl.URL, Token: "glpat-unreadable"}, OCI: oci.Options{PlainHTTP: true}}
	for _, tc := range []struct {
		target    string
		published func(t *testing.T) bool
	}{{
		target: "file://" + root,
		published: func(t *testing.T) bool {
			_, err := os.Stat(root)
			return !errors.Is(err, os.ErrNotExist)
		},
	}, {
		target:    "github://example/publish-unreadable",
		published: func(t *testing.T) bool { return len(srv.Releases("example", "publish-unreadable")) > 0 },
	}, {
		target:    "gitlab://gitlab.example.com/infra/unreadable",
		published: func(t *testing.T) bool { return len(gl.Files("41", "infrastructure-example", "v0.1.0")) > 0 },
	}, {
		target: ociTarget,
		published: func(t *testing.T) bool {
			tg, err := targets.Open(context.Background(), ociTarget, to)
			if err != nil {
				t.Fatal(err)
			}
			vs, err := tg.Versions(context.Background(), provider.ID{Name: "example", Type: "InfrastructureProvider"})
			return err == nil && len(vs) > 0
		},
	}} {
		t.Run(tc.target, func(t *testing.T) {
			var log bytes.Buffer
			p, err := pipeline.Publish(context.Background(), pipeline.PublishOptions{Target: tc.target, TargetOptions: to, Dist: dist, Log: &log})
			if err == nil || !strings.Contains(err.Error(), "metadata.yaml") || !strings.Contains(err.Error(), "does not match any release series") {
				t.Fatalf("error %v, want the dist's read-back to fail on metadata.yaml\n%s", err, log.String())
			}
			if p != nil || tc.published(t) {
				t.Errorf("%s: something was published before the read-back failed: %+v\n%s", tc.target, p, log.String())
			}
		})
	}
}

// editDist replaces old by new in a file of a version folder and writes
// checksums.txt to match, as a hand edit of a dist would.
func editDist(t *testing.T, dir, name, old, new string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil || !strings.Contains(string(data), old) {
		t.Fatalf("%s holds no %q (%v)", name, old, err)
	}
	edited := strings.Replace(string(data), old, new, 1)
	if err := os.WriteFile(filepath.Join(dir, name), []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(dir, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	was, now := sha256.Sum256(data), sha256.Sum256([]byte(edited))
	fixed := strings.Replace(string(sums), hex.EncodeToString(was[:]), hex.EncodeToString(now[:]), 1)
	if err := os.WriteFile(filepath.Join(dir, "checksums.txt"), []byte(fixed), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestPublish_AWaivedFlavorIsPublishedAndSaid: a dist whose flavor the
// build's lint found unreadable and the maintainer waived (CAPA's two
// inline-class flavors are such, with docs/configs/capa.capirepo.yaml) is
// published: publish <target> has no lint report, says the flavor
// clusterctl cannot read, and reads the components and metadata.yaml.
func TestPublish_AWaivedFlavorIsPublishedAndSaid(t *testing.T) {
	dist := filepath.Join(t.TempDir(), "dist")
	tree := exampleWithUnreadableFlavor(t)
	f := filepath.Join(tree, "templates", "cluster-template-machinepool.yaml")
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, append(data, "  bad: [unclosed\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.BuildRelease(context.Background(), pipeline.BuildOptions{Dir: tree, Version: "v0.1.0", Out: dist,
		Disabled: map[string]string{"CAPI001": "fixed in v0.1.1"}}, nil); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "repo")
	var log bytes.Buffer
	p, err := pipeline.Publish(context.Background(), pipeline.PublishOptions{Target: "file://" + root, Dist: dist, Log: &log})
	if err != nil || p == nil {
		t.Fatalf("publish: %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "warning: infrastructure-example v0.1.0: clusterctl cannot read cluster-template-machinepool.yaml (the build's lint refuses such a file unless its finding is waived): ") {
		t.Errorf("the flavor clusterctl cannot read is not said:\n%s", log.String())
	}
	if _, err := os.Stat(filepath.Join(root, "infrastructure-example", "v0.1.0", "cluster-template-machinepool.yaml")); err != nil {
		t.Errorf("not published: %v", err)
	}
}

// TestRelease_ATargetThatWouldRefuseStopsTheRunBeforeAnyIsWritten: with
// several targets, each is asked before the first is written whether it
// would refuse the release (a version it holds with other files, no
// --replace: a folder, a GitHub release, a GitLab package, an OCI tag): a
// refusal of the second stops the run with the first untouched (on GitHub
// it would have made the release public). A re-run where every target
// holds the same files passes the check.
func TestRelease_ATargetThatWouldRefuseStopsTheRunBeforeAnyIsWritten(t *testing.T) {
	ctx := context.Background()
	srv := fakegh.New(t, fakegh.WithToken(ghToken))
	gl := fakegl.New(t)
	gl.AddProject(51, "infra/stale", false)
	gl.AddToken("glpat-stale", fakegl.AccessToken)
	reg := newRegistryHost(t)
	to := targets.Options{GitHub: github.Options{Token: ghToken, APIURL: srv.APIURL()},
		GitLab: gitlab.Options{URL: gl.URL, Token: "glpat-stale"}, OCI: oci.Options{PlainHTTP: true}}
	for _, stale := range []string{
		"file://" + filepath.Join(t.TempDir(), "stale"),
		"github://example/stale",
		"gitlab://gitlab.example.com/infra/stale",
		"oci://" + reg + "/stale",
	} {
		t.Run(stale, func(t *testing.T) {
			srv.AddRepo("example", "stale", false)
			// The stale target holds v0.1.0 built with another image.
			o := exampleRun(t, &bytes.Buffer{})
			o.Build.Image = "registry.test/other"
			o.Targets, o.TargetOptions = locations(t, stale), to
			if _, err := pipeline.Release(ctx, o); err != nil {
				t.Fatal(err)
			}
			first := filepath.Join(t.TempDir(), "first")
			var log bytes.Buffer
			o = exampleRun(t, &log)
			o.Targets, o.TargetOptions = locations(t, "file://"+first, stale), to
			_, err := pipeline.Release(ctx, o)
			if err == nil || !strings.HasPrefix(err.Error(), "check targets: "+stale+": ") {
				t.Fatalf("error %v, want the stale target's refusal in check targets\n%s", err, log.String())
			}
			if _, err := os.Stat(first); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the first target was written before the stale one refused the release (%v)\n%s", err, log.String())
			}

			// The same build again to the same targets: nothing refuses.
			o = exampleRun(t, &log)
			o.Build.Image = "registry.test/other"
			o.Targets, o.TargetOptions = locations(t, "file://"+first, stale), to
			if _, err := pipeline.Release(ctx, o); err != nil {
				t.Fatalf("re-run: %v\n%s", err, log.String())
			}
		})
	}
}

// TestRelease_ADryRunFailsWhereThePublishWouldRefuse: a dry run asks each
// target (opened to read) whether the real run's publish would refuse the
// release, so it fails where the real run would (a version the target holds
// with other files, without --replace) and passes where it would not.
func TestRelease_ADryRunFailsWhereThePublishWouldRefuse(t *testing.T) {
	ctx := context.Background()
	stale := "file://" + filepath.Join(t.TempDir(), "stale")
	o := exampleRun(t, &bytes.Buffer{})
	o.Build.Image = "registry.test/other"
	o.Targets = locations(t, stale)
	if _, err := pipeline.Release(ctx, o); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		image   string
		replace bool
		refused bool
	}{
		{name: "other files", refused: true},
		{name: "other files, --replace", replace: true},
		{name: "the same files", image: "registry.test/other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			o := exampleRun(t, &log)
			if tc.image != "" {
				o.Build.Image = tc.image
			}
			o.Targets, o.DryRun, o.TargetOptions.Replace = locations(t, stale), true, tc.replace
			sum, err := pipeline.Release(ctx, o)
			if refused := err != nil && strings.HasPrefix(err.Error(), "publish "+stale+": ") && strings.Contains(err.Error(), "already holds this version with different content"); refused != tc.refused {
				t.Fatalf("dry run: error %v, want refused %v\n%s", err, tc.refused, log.String())
			}
			if !tc.refused && stepNamed(t, sum, "publish "+stale).Status != pipeline.StatusSkipped {
				t.Errorf("publish step %+v", stepNamed(t, sum, "publish "+stale))
			}
		})
	}

	// A target the dry run cannot read (no token for a server that wants
	// one) is said, not a failure.
	srv := fakegh.New(t, fakegh.WithToken(ghToken))
	srv.AddRepo("example", "private", false)
	var log bytes.Buffer
	o = exampleRun(t, &log)
	o.Targets, o.DryRun, o.SkipUpgradeCheck = locations(t, "github://example/private"), true, "not what this test checks"
	o.TargetOptions = targets.Options{GitHub: github.Options{APIURL: srv.APIURL()}}
	sum, err := pipeline.Release(ctx, o)
	if err != nil {
		t.Fatalf("dry run without the token: %v\n%s", err, log.String())
	}
	if d := stepNamed(t, sum, "publish github://example/private").Detail; !strings.HasPrefix(d, "dry run: nothing published; not checked whether the target takes the release: ") {
		t.Errorf("publish step detail %q", d)
	}
}
