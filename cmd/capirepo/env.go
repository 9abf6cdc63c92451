package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"

	"github.com/capirepo/capirepo/internal/cli"
	"github.com/capirepo/capirepo/internal/redact"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish/local"
	"github.com/capirepo/capirepo/sign"
)

// Everything capirepo reads from the process's environment is read here,
// and handed on as values: nothing below cmd reads it.

// env reads the environment; tests inject it.
type env func(string) string

// The environment signing reads, as cosign reads it.
const (
	envPassword    = "COSIGN_PASSWORD"   // the private key's password
	envIDToken     = "SIGSTORE_ID_TOKEN" // an OIDC token (GitLab CI's id_tokens)
	envGitHubOIDC  = "ACTIONS_ID_TOKEN_REQUEST_URL"
	envGitHubToken = "ACTIONS_ID_TOKEN_REQUEST_TOKEN"
	keyEnvPrefix   = "env://"
)

// secretEnvVars are the variables whose values capirepo (or a library it
// uses) may send as a credential. Their values are masked in every output
// even when the command does not read them.
var secretEnvVars = []string{
	"GITHUB_TOKEN", "GH_TOKEN", "GITLAB_ACCESS_TOKEN", "GITLAB_TOKEN", "CI_JOB_TOKEN",
	"CI_REGISTRY_PASSWORD", "REGISTRY_PASSWORD", "DOCKER_PASSWORD", "DOCKER_AUTH_CONFIG",
	"ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
	"OCI_PASSWORD", "OCI_ACCESS_TOKEN", "OCI_REFRESH_TOKEN",
	// Signing: the private key's password, a private key given in the
	// environment (--key env://COSIGN_PRIVATE_KEY), an OIDC token.
	envPassword, "COSIGN_PRIVATE_KEY", envIDToken,
}

// isSecretName says whether a variable's name marks its value as a secret.
func isSecretName(name string) bool {
	for _, s := range []string{"TOKEN", "PASSWORD", "SECRET", "_AUTH", "CREDENTIAL", "PRIVATE_KEY"} {
		if strings.Contains(strings.ToUpper(name), s) {
			return true
		}
	}
	return false
}

// protected are a run's streams with every secret masked.
type protected struct {
	secrets     *redact.Set
	out, errOut *redact.Writer
	getenv      env
}

// protect collects the secrets of a run (the environment's, passwords in
// URL arguments) and wraps the output streams so that none of them is
// printed. A URL argument with userinfo gets a warning: the token belongs
// in the environment. Flush the writers when the run ends.
func protect(args []string, out, errOut io.Writer, getenv env) *protected {
	set := &redact.Set{}
	p := &protected{secrets: set, out: redact.NewWriter(out, set), errOut: redact.NewWriter(errOut, set),
		getenv: set.Environment(getenv, secretEnvVars, isSecretName)}
	for _, u := range set.AddArgs(args) {
		fmt.Fprintf(p.errOut, "warning: a URL on the command line carries a user name or password (%s): it is not used or printed; give the token through the environment (GITHUB_TOKEN, GITLAB_ACCESS_TOKEN)\n", u)
	}
	return p
}

func (p *protected) flush() {
	_ = p.out.Flush()
	_ = p.errOut.Flush()
}

// Options read what the signing flags name from files and the environment:
// the key (a file, or env://VAR) and its password, or the OIDC tokens. The
// key, its password and the tokens are masked in every output.
func (o *signOptions) Options(s streams, timeout time.Duration) (sign.SignerOptions, error) {
	so := sign.SignerOptions{InstanceOptions: o.instanceOptions.Options(s, timeout), TransparencyLog: o.tlogUpload, Timeout: timeout, KeyName: o.key,
		IDToken: s.getenv(envIDToken), GitHubTokenURL: s.getenv(envGitHubOIDC), GitHubToken: s.getenv(envGitHubToken), Secrets: s.secrets}
	if o.key == "" {
		return so, nil
	}
	if v, ok := strings.CutPrefix(o.key, keyEnvPrefix); ok {
		val := s.getenv(v)
		if val == "" {
			return so, cli.Usagef("--key %s: $%s is empty or not set", o.key, v)
		}
		s.secrets.AddKey(val)
		so.Key = []byte(val)
	} else {
		data, err := os.ReadFile(o.key)
		if err != nil {
			return so, cli.Usagef("--key: %v", err)
		}
		so.Key = data
	}
	pw := s.getenv(envPassword)
	s.secrets.Add(pw)
	so.Password = []byte(pw)
	return so, nil
}

// sigstoreCache is where the public instance's TUF metadata is kept:
// $XDG_CACHE_HOME/capirepo/sigstore, else ~/.cache/capirepo/sigstore; ""
// (nothing kept) without either.
func sigstoreCache(getenv env) string {
	if d := getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "capirepo", "sigstore")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache", "capirepo", "sigstore")
	}
	return ""
}

// tokenVariables pass the tokens clusterctl reads to its config, only when
// set.
func tokenVariables(getenv env) map[string]string {
	vars := map[string]string{}
	if t := getenv("GITHUB_TOKEN"); t != "" {
		vars["github-token"] = t
	}
	if t := getenv("GITLAB_ACCESS_TOKEN"); t != "" {
		vars["gitlab-access-token"] = t
	}
	return vars
}

// gitHubAPI is the GitHub API a command's flag names, else $GITHUB_API_URL
// (GitHub Actions sets it on GitHub Enterprise), else "": api.github.com.
func gitHubAPI(getenv env, flag string) string {
	if flag != "" {
		return flag
	}
	return getenv("GITHUB_API_URL")
}

// ciRepository is the repository CI builds (GitHub Actions, GitLab CI), for
// an artifact's source annotation and a provenance; "" outside CI, where the
// tree's git origin names it.
func ciRepository(getenv env) string {
	if server, repo := getenv("GITHUB_SERVER_URL"), getenv("GITHUB_REPOSITORY"); server != "" && repo != "" {
		return strings.TrimSuffix(server, "/") + "/" + repo
	}
	return getenv("CI_PROJECT_URL")
}

// clusterctlEnv is what clusterctl reads from the process to find its
// folders.
func (s streams) clusterctlEnv() local.Env {
	return local.Env{XDGConfigHome: s.getenv("XDG_CONFIG_HOME"), Home: s.getenv("HOME"), Getenv: s.getenv}
}

// clusterctlConfig opens the user's clusterctl config as clusterctl reads
// it: file, else its default ($XDG_CONFIG_HOME/cluster-api/clusterctl.yaml,
// ~/.cluster-api/clusterctl.yaml), with the environment's variables first.
func clusterctlConfig(ctx context.Context, file string) (pipeline.Clusterctl, error) {
	c, err := config.New(ctx, file)
	if err != nil {
		return pipeline.Clusterctl{}, fmt.Errorf("read clusterctl config %s: %w", file, err)
	}
	return pipeline.Clusterctl{File: file, Config: c}, nil
}

// keychain gives registries the docker config's credentials (and its
// credential helpers'), each masked in every output.
func (s streams) keychain() authn.Keychain { return redact.Keychain(authn.DefaultKeychain, s.secrets) }
