package targets_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/gitlab"
	"github.com/capirepo/capirepo/publish/targets"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    targets.Location // without URL and Opener
		wantErr string
	}{
		{in: "github://acme/provider", want: targets.Location{Scheme: "github", Key: "github://acme/provider", Source: "https://github.com/acme/provider"}},
		{in: "github://acme/provider/", want: targets.Location{Scheme: "github", Key: "github://acme/provider", Source: "https://github.com/acme/provider"}},
		{in: "gitlab://gitlab.example.com/group/sub/project", want: targets.Location{Scheme: "gitlab", Key: "gitlab://gitlab.example.com/group/sub/project#"}},
		{in: "file:///srv/repo", want: targets.Location{Scheme: "file", Key: "file:///srv/repo"}},
		{in: "file://relative/repo", want: targets.Location{Scheme: "file", Key: "file://relative/repo"}},
		{in: "oci://registry.example.com/capi/providers", want: targets.Location{Scheme: "oci", Key: "oci://registry.example.com/capi/providers"}},
		{in: "oci://registry.example.com", wantErr: `"oci://registry.example.com": want oci://REGISTRY/PATH`},
		{in: "acme/provider", wantErr: `"acme/provider": want github://OWNER/NAME, gitlab://HOST/PROJECT, file://DIR or oci://REGISTRY/PATH`},
		{in: "github://acme", wantErr: `"github://acme": want github://OWNER/NAME`},
		{in: "github://acme/provider/extra", wantErr: `"github://acme/provider/extra": want github://OWNER/NAME`},
		{in: "github:///provider", wantErr: `"github:///provider": want github://OWNER/NAME`},
		{in: "gitlab://gitlab.example.com", wantErr: `"gitlab://gitlab.example.com": want gitlab://HOST/GROUP/[SUBGROUP/]PROJECT`},
		{in: "file://", wantErr: `"file://": want file://DIR`},
		{in: "s3://bucket", wantErr: `"s3://bucket": unknown scheme "s3" (github, gitlab, file or oci)`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := targets.Parse(tc.in)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || !publish.IsUsage(err) {
					t.Fatalf("error %v, want the usage error %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Opener == nil || got.URL != tc.in {
				t.Errorf("location %+v cannot be opened or lost its URL", got)
			}
			got.URL, got.Opener = "", nil
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestOpen_GitLabInstance: a gitlab:// target lives on https://HOST unless
// the options name another instance, and says whether clusterctl reads it.
func TestOpen_GitLabInstance(t *testing.T) {
	ref := publish.Ref{ID: provider.ID{Name: "x", Type: "InfrastructureProvider"}, Version: "v1.0.0"}
	for _, tc := range []struct {
		instance, wantURL, wantWhy string
	}{
		{"", "https://gitlab.example.com/api/v4/projects/g%2Fp/packages/generic/infrastructure-x/v1.0.0/infrastructure-components.yaml", ""},
		{"http://127.0.0.1:8080", "", "only from hosts whose name starts with \"gitlab.\" (127.0.0.1 does not)"},
		{"http://gitlab.example.com:8080", "", "only from https:// URLs"},
	} {
		tg, err := targets.Open(context.Background(), "gitlab://gitlab.example.com/g/p", targets.Options{GitLab: gitlab.Options{URL: tc.instance, Token: "glpat-x"}})
		if err != nil {
			t.Fatal(err)
		}
		r := tg.Clusterctl()
		switch {
		case tc.wantURL != "" && (r.ProviderURL == nil || r.ProviderURL(ref) != tc.wantURL):
			t.Errorf("%q: clusterctl cannot read it (%s), want %s", tc.instance, r.Why, tc.wantURL)
		case tc.wantWhy != "" && (r.ProviderURL != nil || !strings.Contains(r.Why, tc.wantWhy)):
			t.Errorf("%q: reach %+v, want %q", tc.instance, r, tc.wantWhy)
		}
	}
}

func TestOpen_PublishingNeedsCredentials(t *testing.T) {
	for raw, want := range map[string]string{
		"github://o/r":                     "set GITHUB_TOKEN",
		"gitlab://gitlab.example.com/g/p":  "set GITLAB_ACCESS_TOKEN",
		"gitlab://gitlab.example.com/g/p2": "set CI_JOB_TOKEN",
	} {
		o := targets.Options{Publish: true}
		if strings.HasSuffix(raw, "p2") {
			o.GitLab.TokenType = gitlab.JobToken
		}
		_, err := targets.Open(context.Background(), raw, o)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), raw+": ") || !publish.IsUsage(err) {
			t.Errorf("%s: err = %v, want a usage error naming the URL and %q", raw, err, want)
		}
		// Reading needs none: public repositories are read without.
		o.Publish = false
		if _, err := targets.Open(context.Background(), raw, o); strings.HasPrefix(raw, "github") && err != nil {
			t.Errorf("%s: reading without a token: %v", raw, err)
		}
	}
}

func TestParseProviderURL(t *testing.T) {
	for _, tc := range []struct {
		url, scheme, key, version, components, err string
	}{
		{url: "https://github.com/kubernetes-sigs/cluster-api/releases/latest/core-components.yaml", scheme: "github",
			key: "github://kubernetes-sigs/cluster-api", version: "latest", components: "core-components.yaml"},
		{url: "https://github.com/acme/p/releases/v1.2.3/infrastructure-components.yaml", scheme: "github",
			key: "github://acme/p", version: "v1.2.3", components: "infrastructure-components.yaml"},
		{url: "https://gitlab.example.com/api/v4/projects/group%2Fproject/packages/generic/infrastructure-x/v1.0.0/infrastructure-components.yaml",
			scheme: "gitlab", key: "gitlab://gitlab.example.com/group/project#infrastructure-x", version: "v1.0.0", components: "infrastructure-components.yaml"},
		{url: "file:///srv/capi/infrastructure-x/v1.0.0/infrastructure-components.yaml", scheme: "file",
			key: "file:///srv/capi", version: "v1.0.0", components: "infrastructure-components.yaml"},
		{url: "https://example.com/components.yaml", err: "capirepo reads GitHub releases"},
		{url: "https://code.example.com/api/v4/projects/1/packages/generic/x/v1.0.0/c.yaml", err: "capirepo reads GitHub releases"},
	} {
		loc, version, components, err := targets.ParseProviderURL(tc.url)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want %q", tc.url, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.url, err)
			continue
		}
		got := []string{loc.Scheme, loc.Key, version, components}
		if diff := cmp.Diff([]string{tc.scheme, tc.key, tc.version, tc.components}, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.url, diff)
		}
	}
}
