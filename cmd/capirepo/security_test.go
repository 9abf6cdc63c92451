package main

import (
	"crypto/elliptic"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/capirepo/capirepo/sign/signtest"
)

// echoServer answers every request with a 4xx whose body repeats the
// request's headers, as a misconfigured proxy or API gateway does.
func echoServer(t *testing.T, status int) (url string, saw func() string) {
	var mu sync.Mutex
	var all strings.Builder
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var lines []string
		for k, vs := range r.Header {
			lines = append(lines, k+": "+strings.Join(vs, ","))
		}
		sort.Strings(lines)
		echo := strings.Join(lines, "; ")
		mu.Lock()
		all.WriteString(echo + "\n")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"message": "bad request: " + echo, "error": echo})
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() string { mu.Lock(); defer mu.Unlock(); return all.String() }
}

// secretEnv sets every token variable capirepo knows to a known value.
func secretEnv() map[string]string {
	env := map[string]string{}
	for _, name := range secretEnvVars {
		env[name] = "s3cret-" + strings.ToLower(name) + "-0123456789"
	}
	return env
}

// TestSecrets_EchoingServerNeverPrintsASecret publishes to servers that echo
// every request header (the token among them) in their error bodies, with a
// password in the URL too, in text and JSON: no secret reaches stdout or
// stderr, though the servers saw them.
func TestSecrets_EchoingServerNeverPrintsASecret(t *testing.T) {
	dist := buildExample(t)
	const urlPassword = "urlPa55word-0123"
	for _, tc := range []struct {
		name   string
		status int
		args   func(url string) []string
		env    map[string]string
	}{
		{"github", http.StatusUnprocessableEntity, func(u string) []string {
			return []string{"publish", "github", "--repo", "acme/example", "--api-url", u + "/api/v3/"}
		}, nil},
		{"github api url with userinfo", http.StatusForbidden, func(u string) []string {
			return []string{"publish", "github", "--repo", "acme/example", "--api-url", strings.Replace(u, "http://", "http://robot:"+urlPassword+"@", 1) + "/api/v3/"}
		}, nil},
		{"gitlab private", http.StatusBadRequest, func(u string) []string {
			return []string{"publish", "gitlab", "--url", strings.Replace(u, "http://", "http://robot:"+urlPassword+"@", 1), "--project", "g/p"}
		}, nil},
		{"gitlab bearer", http.StatusUnauthorized, func(u string) []string {
			return []string{"publish", "gitlab", "--url", u, "--project", "g/p", "--token-type", "bearer"}
		}, nil},
		{"gitlab job", http.StatusForbidden, func(u string) []string {
			return []string{"publish", "gitlab", "--url", u, "--project", "g/p", "--token-type", "job"}
		}, nil},
	} {
		for _, output := range []string{"text", "json"} {
			t.Run(fmt.Sprintf("%s -o %s", tc.name, output), func(t *testing.T) {
				url, saw := echoServer(t, tc.status)
				env := secretEnv()
				args := append(tc.args(url), "--from", dist, "-o", output)
				code, stdout, stderr := runCmd(t, env, args...)
				if code == 0 {
					t.Fatalf("publish to an erroring server succeeded:\n%s", stderr)
				}
				echoed := saw()
				if echoed == "" {
					t.Fatal("the server was never asked")
				}
				secrets := []string{urlPassword}
				for _, v := range env {
					secrets = append(secrets, v)
				}
				leakedToServer := false
				for _, s := range secrets {
					if strings.Contains(stdout+stderr, s) {
						t.Errorf("secret %q printed:\nstdout:\n%s\nstderr:\n%s", s, stdout, stderr)
					}
					if strings.Contains(echoed, s) {
						leakedToServer = true
					}
				}
				if !leakedToServer {
					t.Fatalf("the server saw no secret, so the test proves nothing: %s", echoed)
				}
				if !strings.Contains(stdout+stderr, "[REDACTED]") {
					t.Errorf("the echoed headers were not printed (masked), so the test proves nothing:\n%s", stderr)
				}
			})
		}
	}
}

func TestSecrets_URLUserinfoIsWarnedAbout(t *testing.T) {
	dist := buildExample(t)
	url, _ := echoServer(t, http.StatusBadRequest)
	_, stdout, stderr := runCmd(t, map[string]string{"GITLAB_ACCESS_TOKEN": "glpat-0123456789"},
		"publish", "gitlab", "--url", strings.Replace(url, "http://", "http://robot:pa55-w0rd@", 1), "--project", "g/p", "--from", dist)
	if strings.Contains(stdout+stderr, "pa55-w0rd") {
		t.Errorf("password printed:\n%s", stderr)
	}
	if !strings.Contains(stderr, "warning: a URL on the command line carries a user name or password") {
		t.Errorf("no warning about the password in --url:\n%s", stderr)
	}
}

// TestSecrets_SigningNeverPrintsTokensKeysOrPasswords: keyless signing
// against services that echo every request header (the OIDC token among
// them) in their error bodies, and a key's password quoted in an error,
// print none of them, in text and JSON.
func TestSecrets_SigningNeverPrintsTokensKeysOrPasswords(t *testing.T) {
	dist := buildExample(t)
	jwt := signtest.Token(signID, signIssuer)
	const requestToken = "gha-request-token-echoed-0123"
	const password = "pa55 word/with+signs&more"
	priv, _, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc([]byte(password)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		// setup returns the environment, the arguments after "sign DIST", and
		// what the servers saw (nil when no server is involved).
		setup   func(t *testing.T) (map[string]string, []string, func() string)
		secrets []string
		// quiet: the error holds nothing of the reply, so nothing is masked.
		quiet bool
	}{
		{"SIGSTORE_ID_TOKEN to an echoing Fulcio", func(t *testing.T) (map[string]string, []string, func() string) {
			ss := signtest.New(t)
			url, saw := echoServer(t, http.StatusBadRequest)
			ss.FulcioURL = url
			sc, tr := ss.WriteFiles(t, t.TempDir())
			return map[string]string{"SIGSTORE_ID_TOKEN": jwt}, []string{"--signing-config", sc, "--trusted-root", tr}, saw
		}, []string{jwt}, false},
		{"GitHub Actions' token to an echoing Fulcio", func(t *testing.T) (map[string]string, []string, func() string) {
			ss := signtest.New(t)
			url, saw := echoServer(t, http.StatusUnauthorized)
			ss.FulcioURL = url
			sc, tr := ss.WriteFiles(t, t.TempDir())
			tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_ = json.NewEncoder(w).Encode(map[string]string{"value": jwt})
			}))
			t.Cleanup(tokens.Close)
			return map[string]string{"ACTIONS_ID_TOKEN_REQUEST_URL": tokens.URL + "/?api-version=2.0", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": requestToken},
				[]string{"--signing-config", sc, "--trusted-root", tr}, saw
		}, []string{jwt, requestToken}, false},
		{"GitHub Actions' request token to an echoing token service", func(t *testing.T) (map[string]string, []string, func() string) {
			url, saw := echoServer(t, http.StatusForbidden)
			_, sc, tr := sigstoreFiles(t)
			return map[string]string{"ACTIONS_ID_TOKEN_REQUEST_URL": url + "/?api-version=2.0", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": requestToken},
				[]string{"--signing-config", sc, "--trusted-root", tr}, saw
		}, []string{requestToken}, true},
		{"a key's password quoted in an error", func(t *testing.T) (map[string]string, []string, func() string) {
			return map[string]string{"COSIGN_PRIVATE_KEY": string(priv), "COSIGN_PASSWORD": password},
				[]string{"--key", "env://COSIGN_PRIVATE_KEY", "--tlog-upload", "--signing-config", "/nonexistent/" + password}, nil
		}, append([]string{password}, strings.Split(strings.TrimSpace(string(priv)), "\n")[1:3]...), false},
	} {
		for _, output := range []string{"text", "json"} {
			t.Run(fmt.Sprintf("%s -o %s", tc.name, output), func(t *testing.T) {
				env, args, saw := tc.setup(t)
				code, stdout, stderr := runCmd(t, env, append([]string{"sign", dist, "-o", output}, args...)...)
				if code == 0 {
					t.Fatalf("signing against a failing service succeeded:\n%s", stderr)
				}
				for _, s := range tc.secrets {
					if strings.Contains(stdout+stderr, s) {
						t.Errorf("secret %q printed:\nstdout:\n%s\nstderr:\n%s", s, stdout, stderr)
					}
				}
				if saw != nil && !strings.Contains(saw(), tc.secrets[len(tc.secrets)-1]) && !strings.Contains(saw(), tc.secrets[0]) {
					t.Fatalf("the server saw no secret, so the test proves nothing: %s", saw())
				}
				if !tc.quiet && !strings.Contains(stdout+stderr, "[REDACTED]") {
					t.Errorf("nothing masked, so the test proves nothing:\n%s", stderr)
				}
			})
		}
	}
}

// TestSecrets_PrivateKeyMaskedLineByLine: a private key given in the
// environment is masked whole and line by line (one line may be printed
// alone), not its BEGIN/END lines, which hold nothing secret.
func TestSecrets_PrivateKeyMaskedLineByLine(t *testing.T) {
	priv, _, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc([]byte("x")))
	if err != nil {
		t.Fatal(err)
	}
	p := protect(nil, io.Discard, io.Discard, func(k string) string {
		if k == "COSIGN_PRIVATE_KEY" {
			return string(priv)
		}
		return ""
	})
	lines := strings.Split(strings.TrimSpace(string(priv)), "\n")
	for _, l := range lines[1 : len(lines)-1] {
		if got := p.secrets.String("echo " + l + " echo"); strings.Contains(got, l) {
			t.Errorf("line %q printed: %s", l, got)
		}
	}
	if got := p.secrets.String(lines[0]); got != lines[0] {
		t.Errorf("the BEGIN line was masked: %s", got)
	}
	if got := p.secrets.String(string(priv)); strings.Contains(got, lines[1]) {
		t.Errorf("the key printed: %s", got)
	}
}
