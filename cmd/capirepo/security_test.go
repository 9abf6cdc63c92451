package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
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
