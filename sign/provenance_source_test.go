package sign_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/sign"
	"github.com/capirepo/capirepo/sign/signtest"
)

// TestSignRelease_SaysWhatTheProvenanceDoesNotName: a provenance made
// without a repository (outside CI, no git origin) says "repository": ""
// and the signing says so, with the caller's hint; a provenance found that
// names another repository than the one given is signed as it is, and the
// signing says the one given is not used. Where the two agree, or a
// repository is named, nothing is said.
func TestSignRelease_SaysWhatTheProvenanceDoesNotName(t *testing.T) {
	const repo = "https://github.com/acme/cluster-api-provider-acme"
	withProvenance := func(t *testing.T, named string) *release.Release {
		rel := oneProvider(t, "v0.1.0")
		pf, err := publish.Provenance(rel.Providers[0].Listed(), publish.ProvenanceSource{Repository: named, Version: "v0.1.0"})
		if err != nil {
			t.Fatal(err)
		}
		if err := rel.Providers[0].Attach(pf.Name, pf.Data); err != nil {
			t.Fatal(err)
		}
		return rel
	}
	ss := signtest.New(t)
	for _, tc := range []struct {
		name        string
		rel         func(t *testing.T) *release.Release
		source      string
		wantWarning string // "" for none
	}{
		{"made without a repository", func(t *testing.T) *release.Release { return oneProvider(t, "v0.1.0") }, "",
			`infrastructure-acme/v0.1.0/provenance.intoto.json names no repository ("repository": ""): none was given and none was found (no CI repository, no git origin remote); users cannot tell from it where the release comes from: pass --source URL`},
		{"made with the repository", func(t *testing.T) *release.Release { return oneProvider(t, "v0.1.0") }, repo, ""},
		{"found naming another repository", func(t *testing.T) *release.Release { return withProvenance(t, "https://gitlab.example.com/acme/old") }, repo,
			"infrastructure-acme/v0.1.0/provenance.intoto.json names repository https://gitlab.example.com/acme/old, not " + repo + ": a provenance found is signed as it is, never made again, so " + repo + " is not used; remove the provenance to have one made naming it"},
		{"found naming no repository", func(t *testing.T) *release.Release { return withProvenance(t, "") }, repo,
			"infrastructure-acme/v0.1.0/provenance.intoto.json names no repository, not " + repo + ": a provenance found is signed as it is, never made again, so " + repo + " is not used; remove the provenance to have one made naming it"},
		{"found naming the repository given", func(t *testing.T) *release.Release { return withProvenance(t, repo) }, repo, ""},
		{"found, none given", func(t *testing.T) *release.Release { return withProvenance(t, repo) }, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			signed, err := sign.SignRelease(context.Background(), keylessSigner(t, ss, identity), tc.rel(t),
				sign.ReleaseOptions{Provenance: true, Source: tc.source, SourceHint: "pass --source URL", Log: &log})
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(signed, func(s sign.Signed) bool { return s.File == "infrastructure-acme/v0.1.0/provenance.intoto.json" })
			if i < 0 {
				t.Fatalf("the provenance was not signed: %+v", signed)
			}
			if diff := cmp.Diff(tc.wantWarning, signed[i].Warning); diff != "" {
				t.Errorf("warning (-want +got):\n%s", diff)
			}
			if got := strings.Contains(log.String(), "  warning: "+tc.wantWarning+"\n"); tc.wantWarning != "" && !got {
				t.Errorf("the log does not say the warning:\n%s", log.String())
			}
			if tc.wantWarning == "" && strings.Contains(log.String(), "warning") {
				t.Errorf("a warning where there is nothing to say:\n%s", log.String())
			}
		})
	}
}

// TestPlan_AttachesWhatSigningWouldWithoutSigning: Plan's copy holds the
// files SignRelease attaches, by name, and the provenance with the bytes
// SignRelease writes; the release given is not changed, and nothing is
// signed (no transparency-log entry).
func TestPlan_AttachesWhatSigningWouldWithoutSigning(t *testing.T) {
	ss := signtest.New(t)
	for _, tc := range []struct {
		name string
		rel  func(t *testing.T) *release.Release
	}{{"one provider", func(t *testing.T) *release.Release { return oneProvider(t, "v0.1.0") }}, {"two providers", twoProviders}} {
		t.Run(tc.name, func(t *testing.T) {
			o := sign.ReleaseOptions{Provenance: true, Source: "https://github.com/acme/cluster-api"}
			rel := tc.rel(t)
			before := ss.Entries()
			planned, err := sign.Plan(rel, o)
			if err != nil {
				t.Fatal(err)
			}
			if ss.Entries() != before {
				t.Error("Plan signed something")
			}
			for _, p := range rel.Providers {
				if len(p.Attached) != 0 {
					t.Errorf("Plan changed the release given: %s holds %d attached files", p.Label(), len(p.Attached))
				}
			}
			signedRel := tc.rel(t)
			if _, err := sign.SignRelease(context.Background(), keylessSigner(t, ss, identity), signedRel, o); err != nil {
				t.Fatal(err)
			}
			names := func(r *release.Release) (out []string) {
				for _, p := range r.Providers {
					for _, f := range p.Assets() {
						out = append(out, p.Label()+"/"+f.Name)
					}
				}
				for _, f := range r.Attached {
					out = append(out, "flat/"+f.Name)
				}
				return out
			}
			if diff := cmp.Diff(names(signedRel), names(planned)); diff != "" {
				t.Errorf("planned files (-signed +planned):\n%s", diff)
			}
			got, _ := planned.Providers[0].AttachedFile(release.ProvenanceFile)
			want, _ := signedRel.Providers[0].AttachedFile(release.ProvenanceFile)
			if !bytes.Equal(got.Data, want.Data) {
				t.Error("the planned provenance is not the one signing writes")
			}
		})
	}
}
