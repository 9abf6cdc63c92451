package main

import (
	"encoding/base64"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"sigs.k8s.io/yaml"
)

// authRegistry is go-containerregistry's in-process registry behind basic auth.
func authRegistry(t *testing.T, user, pass string) string {
	t.Helper()
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
			return
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func TestPublishOCI_PushPrintVerifyRepush(t *testing.T) {
	dist := buildExampleDist(t)
	host := authRegistry(t, "robot", "pa55-w0rd-xyz")
	env := map[string]string{"OCI_USERNAME": "robot", "OCI_PASSWORD": "pa55-w0rd-xyz", "SOURCE_DATE_EPOCH": "1700000000",
		"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "example/cluster-api-provider-example"}

	code, stdout, stderr := runCmd(t, env, "publish", "oci", "--repo", host+"/capi", dist, "--plain-http")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	ref := "http://" + host + "/capi/infrastructure-example:v0.1.0"
	var res struct {
		Kind     string
		Metadata struct{ Name, Namespace string }
		Spec     struct {
			Version     string
			FetchConfig struct{ OCI string }
		}
	}
	if err := yaml.Unmarshal([]byte(strings.TrimPrefix(stdout, "---\n")), &res); err != nil {
		t.Fatalf("stdout is not a Provider resource: %v\n%s", err, stdout)
	}
	if res.Kind != "InfrastructureProvider" || res.Metadata.Name != "example" || res.Metadata.Namespace != "capi-example-system" ||
		res.Spec.Version != "v0.1.0" || res.Spec.FetchConfig.OCI != ref {
		t.Errorf("Provider resource %+v\n%s", res, stdout)
	}
	if !strings.Contains(stderr, ref+"  (digest sha256:") {
		t.Errorf("stderr lacks the reference with the digest beside it:\n%s", stderr)
	}
	if strings.Contains(stdout+stderr, "pa55-w0rd-xyz") {
		t.Error("the password was printed")
	}

	code, stdout, stderr = runCmd(t, env, "verify", "oci://"+host+"/capi/infrastructure-example:v0.1.0", "--plain-http")
	if code != 0 || !strings.Contains(stdout, "infrastructure-example") {
		t.Fatalf("verify: exit %d: %s%s", code, stdout, stderr)
	}
	// The operator's own plain-HTTP form is taken too.
	if code, _, stderr := runCmd(t, env, "verify", "oci://"+ref); code != 0 {
		t.Fatalf("verify %s: exit %d: %s", ref, code, stderr)
	}

	code, _, stderr = runCmd(t, env, "publish", "oci", "--repo", host+"/capi", dist, "--plain-http")
	if code != 0 || !strings.Contains(stderr, "unchanged") || !strings.Contains(stderr, "nothing to do: all 7 already there") {
		t.Errorf("re-push: exit %d: %s", code, stderr)
	}

	// Without credentials the registry refuses, and the command says so.
	delete(env, "OCI_PASSWORD")
	delete(env, "OCI_USERNAME")
	if code, _, stderr := runCmd(t, env, "publish", "oci", "--repo", host+"/capi", dist); code != 1 || !strings.Contains(stderr, "UNAUTHORIZED") {
		t.Errorf("anonymous: exit %d: %s", code, stderr)
	}
}

func TestPublishOCI_ProposalFormatSaysTheOperatorCannotReadIt(t *testing.T) {
	dist := buildExampleDist(t)
	host := authRegistry(t, "u", "p")
	env := map[string]string{"OCI_USERNAME": "u", "OCI_PASSWORD": "p"}
	code, stdout, stderr := runCmd(t, env, "publish", "oci", "--repo", host+"/capi", dist, "--format", "proposal")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout != "" || !strings.Contains(stderr, "cluster-api-operator cannot read") {
		t.Errorf("stdout %q, stderr:\n%s", stdout, stderr)
	}
	if code, _, stderr := runCmd(t, env, "verify", "oci://"+host+"/capi/infrastructure-example:v0.1.0"); code != 0 {
		t.Errorf("verify a proposal artifact: exit %d: %s", code, stderr)
	}
	code, _, stderr = runCmd(t, nil, "publish", "oci", "--repo", "oci://"+host+"/capi", dist)
	if code != 2 || !strings.Contains(stderr, "without oci://") {
		t.Errorf("oci:// in --repo: exit %d: %s", code, stderr)
	}
}

func TestPublishConfigMap_WriteThenVerify(t *testing.T) {
	dist := buildExampleDist(t)
	out := filepath.Join(t.TempDir(), "providers.yaml")
	code, _, stderr := runCmd(t, nil, "publish", "configmap", dist, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "kubectl apply --server-side -f "+out) {
		t.Errorf("no server-side apply hint:\n%s", stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: Namespace", "kind: ConfigMap", "kind: InfrastructureProvider", "provider.cluster.x-k8s.io/type: infrastructure"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if code, stdout, stderr := runCmd(t, nil, "verify", "--configmaps", out); code != 0 || !strings.Contains(stdout, "infrastructure-example") {
		t.Fatalf("verify --configmaps: exit %d: %s%s", code, stdout, stderr)
	}
	// A ConfigMap in another namespace than its Provider is not read.
	cmMeta := "  name: infrastructure-example-v0.1.0\n  namespace: capi-example-system\n"
	if !strings.Contains(string(data), cmMeta) {
		t.Fatalf("output lacks the ConfigMap's metadata %q", cmMeta)
	}
	moved := strings.Replace(string(data), cmMeta, "  name: infrastructure-example-v0.1.0\n  namespace: elsewhere\n", 1)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte(moved), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCmd(t, nil, "verify", "--configmaps", bad); code != 1 || !strings.Contains(stderr, "no ConfigMaps found") {
		t.Errorf("ConfigMap in another namespace: exit %d: %s", code, stderr)
	}
}

func TestPublishOCI_CredentialsFromTheDockerConfig(t *testing.T) {
	dist := buildExampleDist(t)
	host := authRegistry(t, "docker-user", "from-docker-config")
	cfg := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte("docker-user:from-docker-config"))
	if err := os.WriteFile(filepath.Join(cfg, "config.json"), []byte(`{"auths":{"`+host+`":{"auth":"`+auth+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", cfg) // read by go-containerregistry's default keychain
	code, _, stderr := runCmd(t, nil, "publish", "oci", "--repo", host+"/capi", dist)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, "from-docker-config") {
		t.Error("the password was printed")
	}
}

func TestRelease_PublishOCIPrintsTheProviderResources(t *testing.T) {
	host := authRegistry(t, "u", "secret-for-release")
	env := map[string]string{"OCI_USERNAME": "u", "OCI_PASSWORD": "secret-for-release"}
	out := filepath.Join(t.TempDir(), "dist")
	code, stdout, stderr := runCmd(t, env, "release", exampleDir(t), "--version", "v0.1.0", "--out", out,
		"--publish", "oci://"+host+"/capi", "--oci-plain-http", "--skip-image-check")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	ref := "http://" + host + "/capi/infrastructure-example:v0.1.0"
	// The summary (with the digest) is progress on stderr; the resources are the result, on stdout.
	if want := "operator fetchConfig.oci for example (InfrastructureProvider): " + ref + "  (digest sha256:"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	for _, want := range []string{"kind: InfrastructureProvider", "oci: " + ref} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "verify oci://"+host+"/capi") || strings.Contains(stdout+stderr, "secret-for-release") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

func TestPublishOCI_AccessTokenAsTheOperatorReadsIt(t *testing.T) {
	dist := buildExampleDist(t)
	const token = "registry-access-token-123"
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.Header().Set("WWW-Authenticate", `Bearer realm="`+srv.URL+`/token",service="test"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"token required"}]}`, http.StatusUnauthorized)
			return
		}
		reg.ServeHTTP(w, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	code, _, stderr := runCmd(t, map[string]string{"OCI_ACCESS_TOKEN": token}, "publish", "oci", "--repo", host+"/capi", dist)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, token) {
		t.Error("the token was printed")
	}
}

// TestPublishOCI_APlainHTTPRegistryWithoutTheFlagGetsHTTPReferences: a
// registry on a loopback address (localhost:5000 in a kind setup) answers
// plain HTTP, which the client falls back to unasked; the references printed
// for the operator then carry http:// (or it would fetch over HTTPS), and a
// warning says why.
func TestPublishOCI_APlainHTTPRegistryWithoutTheFlagGetsHTTPReferences(t *testing.T) {
	dist := buildExampleDist(t)
	host := authRegistry(t, "robot", "pa55-w0rd-xyz")
	env := map[string]string{"OCI_USERNAME": "robot", "OCI_PASSWORD": "pa55-w0rd-xyz"}
	code, stdout, stderr := runCmd(t, env, "publish", "oci", "--repo", host+"/capi", dist)
	ref := "http://" + host + "/capi/infrastructure-example:v0.1.0"
	if code != 0 || !strings.Contains(stdout, "oci: "+ref+"\n") || !strings.Contains(stderr, "warning: "+host+" answers plain HTTP") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if code, _, stderr := runCmd(t, env, "verify", "oci://"+ref); code != 0 {
		t.Errorf("verify %s: exit %d: %s", ref, code, stderr)
	}
}

// TestRelease_WhatTheStepsSayNamesReleasesOwnFlags: a warning of the OCI
// target names the flag release has (--oci-plain-http), not publish oci's.
func TestRelease_WhatTheStepsSayNamesReleasesOwnFlags(t *testing.T) {
	host := authRegistry(t, "u", "secret-for-release")
	env := map[string]string{"OCI_USERNAME": "u", "OCI_PASSWORD": "secret-for-release"}
	out := filepath.Join(t.TempDir(), "dist")
	code, _, stderr := runCmd(t, env, "release", exampleDir(t), "--version", "v0.1.0", "--out", out,
		"--publish", "oci://"+host+"/capi", "--skip-image-check")
	if code != 0 || !strings.Contains(stderr, "answers plain HTTP") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "pass --oci-plain-http to say so") || strings.Contains(stderr, "pass --plain-http") {
		t.Errorf("the warning names another command's flag:\n%s", stderr)
	}
}
