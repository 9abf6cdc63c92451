package redact

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const token = "ghp_s3cr3t/Token+with&chars"

func TestStringMasksEveryForm(t *testing.T) {
	var s Set
	s.Add(token, "", "ab") // too short ones are ignored
	j, _ := json.Marshal(map[string]string{"echo": "Bearer " + token})
	for _, in := range []string{
		"Authorization: Bearer " + token,
		"https://x/?t=" + strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(token, "/", "%2F"), "+", "%2B"), "&", "%26"),
		string(j),
	} {
		out := s.String(in)
		if strings.Contains(out, "s3cr3t") || !strings.Contains(out, Mask) {
			t.Errorf("String(%q) = %q", in, out)
		}
	}
	if got := s.String("ab cd"); got != "ab cd" {
		t.Errorf("a too short secret masked ordinary text: %q", got)
	}
}

func TestAddURL(t *testing.T) {
	var s Set
	if !s.AddURL("https://user:pa55word@gitlab.example.com/x") {
		t.Fatal("userinfo not found")
	}
	if s.AddURL("https://gitlab.example.com") {
		t.Error("a URL without userinfo reported some")
	}
	if got := s.String("failed: https://user:pa55word@gitlab.example.com"); strings.Contains(got, "pa55word") {
		t.Errorf("password printed: %q", got)
	}
}

// TestWriterMasksSecretSplitAcrossWrites writes the text one byte at a time.
func TestWriterMasksSecretSplitAcrossWrites(t *testing.T) {
	var s Set
	s.Add(token)
	var out bytes.Buffer
	w := NewWriter(&out, &s)
	text := "header Authorization: Bearer " + token + " echoed\n"
	for i := range len(text) {
		if _, err := w.Write([]byte{text[i]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if want := "header Authorization: Bearer " + Mask + " echoed\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

func TestWriterHoldsOnlyAPossibleStart(t *testing.T) {
	var s Set
	s.Add(token)
	var out bytes.Buffer
	w := NewWriter(&out, &s)
	fmt.Fprint(w, "progress 50% ghp_")
	if out.String() != "progress 50% " {
		t.Errorf("written before flush: %q (only the possible start of a secret may wait)", out.String())
	}
	_ = w.Flush()
	if out.String() != "progress 50% ghp_" {
		t.Errorf("after flush: %q", out.String())
	}
}

func TestErrorKeepsIdentity(t *testing.T) {
	var s Set
	s.Add(token)
	err := s.Error(fmt.Errorf("GET with %s: %w", token, fs.ErrNotExist))
	if strings.Contains(err.Error(), token) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Error() = %v", err)
	}
}

func TestContext(t *testing.T) {
	s := &Set{}
	ctx := NewContext(context.Background(), s)
	Add(ctx, "registry-password")
	Add(context.Background(), "ignored-without-a-set")
	if got := s.String("registry-password"); got != Mask {
		t.Errorf("got %q", got)
	}
}

// TestSigningSecrets: an OIDC token (a JWT, echoed in a Bearer header or a
// JSON error) and a key's password with spaces and signs (quoted in JSON,
// or in a URL) are masked in every form.
func TestSigningSecrets(t *testing.T) {
	const jwt = "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJodHRwczovL2dpdGxhYi5jb20iLCJzdWIiOiJwcm9qZWN0X3BhdGg6YS9iIn0.c2lnbmF0dXJlLW5vdC1jaGVja2Vk"
	const password = `pa55 "word"/with+signs&more`
	var s Set
	s.Add(jwt, password)
	jj, _ := json.Marshal(map[string]string{"error": "Fulcio returned 401: Authorization: Bearer " + jwt})
	pj, _ := json.Marshal(map[string]string{"path": "/keys/" + password})
	for _, in := range []string{
		"Authorization: Bearer " + jwt,
		string(jj),
		string(pj),
		"https://x/?p=" + url.QueryEscape(password),
		"open /" + url.PathEscape(password) + ": no such file",
	} {
		out := s.String(in)
		if strings.Contains(out, "c2lnbmF0dXJl") || strings.Contains(out, "pa55") || !strings.Contains(out, Mask) {
			t.Errorf("String(%q) = %q", in, out)
		}
	}
}

func TestAddArgs_MasksTheUserinfoOfURLArguments(t *testing.T) {
	s := &Set{}
	found := s.AddArgs([]string{"publish", "--to=https://user:pa55word@gitlab.example.com/g/p", "https://example.com/plain", "oci://robot:t0ken@registry.example.com/capi"})
	if len(found) != 2 || strings.Contains(strings.Join(found, " "), "pa55word") || strings.Contains(strings.Join(found, " "), "t0ken") {
		t.Errorf("found %q", found)
	}
	if got := s.String("pa55word t0ken"); strings.Contains(got, "pa55word") || strings.Contains(got, "t0ken") {
		t.Errorf("not masked: %s", got)
	}
}

func TestAddKey_MasksEachLineButTheMarkers(t *testing.T) {
	s := &Set{}
	s.AddKey("-----BEGIN KEY-----\nAAAA1111\nBBBB2222\n-----END KEY-----")
	if got := s.String("AAAA1111 -----BEGIN KEY-----"); strings.Contains(got, "AAAA1111") || !strings.Contains(got, "BEGIN KEY") {
		t.Errorf("masked: %s", got)
	}
}

func TestEnvironment_MasksSecretsAsTheyAreRead(t *testing.T) {
	env := map[string]string{
		"ALWAYS":       "al1ways",
		"MY_TOKEN":     "t0ken",
		"PLAIN":        "pl4in",
		"PROXY_URL":    "https://user:pa55word@proxy.example.com",
		"NEVER_READ":   "n3ver",
		"UNUSED_TOKEN": "unus3d",
	}
	s := &Set{}
	getenv := s.Environment(func(name string) string { return env[name] }, []string{"ALWAYS"},
		func(name string) bool { return strings.HasSuffix(name, "_TOKEN") })
	if got := s.String("al1ways t0ken"); strings.Contains(got, "al1ways") || !strings.Contains(got, "t0ken") {
		t.Errorf("before reading: %s", got)
	}
	for _, name := range []string{"MY_TOKEN", "PLAIN", "PROXY_URL"} {
		if got := getenv(name); got != env[name] {
			t.Errorf("getenv(%s) = %q, want %q", name, got, env[name])
		}
	}
	got := s.String("al1ways t0ken pa55word pl4in n3ver unus3d")
	if diff := cmp.Diff("[REDACTED] [REDACTED] [REDACTED] pl4in n3ver unus3d", got); diff != "" {
		t.Errorf("masked (-want +got):\n%s", diff)
	}
}
