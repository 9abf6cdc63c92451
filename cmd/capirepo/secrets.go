package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/capirepo/capirepo/internal/redact"
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
	"COSIGN_PASSWORD", "COSIGN_PRIVATE_KEY", "SIGSTORE_ID_TOKEN",
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

// protect collects the secrets of a run (token variables, passwords in URL
// arguments) and wraps the output streams so that none of them is printed.
// A URL argument with userinfo gets a warning: the token belongs in the
// environment. Flush the writers when the run ends.
func protect(args []string, out, errOut io.Writer, getenv env) *protected {
	set := &redact.Set{}
	for _, name := range secretEnvVars {
		addKeySecret(set, getenv(name))
	}
	p := &protected{secrets: set, out: redact.NewWriter(out, set), errOut: redact.NewWriter(errOut, set)}
	p.getenv = func(name string) string {
		v := getenv(name)
		if isSecretName(name) {
			addKeySecret(set, v)
		}
		if strings.HasSuffix(name, "_URL") {
			set.AddURL(v)
		}
		return v
	}
	for _, a := range args {
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			a = v
		}
		if !strings.Contains(a, "://") || !strings.Contains(a, "@") {
			continue
		}
		if set.AddURL(a) {
			fmt.Fprintf(p.errOut, "warning: a URL on the command line carries a user name or password (%s): it is not used or printed; give the token through the environment (GITHUB_TOKEN, GITLAB_ACCESS_TOKEN)\n", set.String(a))
		}
	}
	return p
}

func (p *protected) flush() {
	_ = p.out.Flush()
	_ = p.errOut.Flush()
}
