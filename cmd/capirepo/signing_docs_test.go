package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// docCommands returns the command lines of a program in the sh blocks of a
// Markdown file, continuation lines joined and split as a shell would
// (quotes removed, nothing expanded).
func docCommands(t *testing.T, doc, prog string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, doc))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var out [][]string
	inSh := false
	var line string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		text := sc.Text()
		switch {
		case strings.HasPrefix(text, "```sh"):
			inSh = true
			continue
		case strings.HasPrefix(text, "```"):
			inSh = false
			continue
		case !inSh:
			continue
		}
		line += strings.TrimSpace(text)
		if strings.HasSuffix(line, `\`) {
			line = strings.TrimSuffix(line, `\`) + " "
			continue
		}
		if args := shellSplit(line); len(args) > 0 && args[0] == prog {
			out = append(out, args)
		}
		line = ""
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no %s command", doc, prog)
	}
	return out
}

// shellSplit splits a command line at blanks outside quotes and removes the quotes.
func shellSplit(s string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	in := false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// TestSigningDocs_CommandsParse: every capirepo command docs/signing.md
// shows takes its flags (each run with --help, which parses them first),
// and the CI examples it points at sign as it says.
func TestSigningDocs_CommandsParse(t *testing.T) {
	cmds := docCommands(t, "docs/signing.md", "capirepo")
	for _, args := range cmds {
		code, _, stderr := runCmd(t, nil, append(args[1:], "--help")...)
		if code != 0 {
			t.Errorf("docs/signing.md: %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
		}
	}
	if len(cmds) < 5 {
		t.Errorf("%d capirepo commands found in docs/signing.md: the parser misses some", len(cmds))
	}

	gh := loadYAML(t, "examples/adoption/github-actions-release.yaml")
	if perms := gh["permissions"].(map[string]any); perms["id-token"] != "write" {
		t.Errorf("github-actions-release.yaml: permissions %v lack id-token: write, which --sign needs", perms)
	}
	ghData, _ := os.ReadFile(filepath.Join(repoRoot, "examples/adoption/github-actions-release.yaml"))
	if !strings.Contains(string(ghData), `capirepo release --version "${GITHUB_REF_NAME}" --sign`) {
		t.Error("github-actions-release.yaml does not sign")
	}
	gl := loadYAML(t, "examples/adoption/gitlab-ci.yml")["release"].(map[string]any)
	tok, _ := gl["id_tokens"].(map[string]any)["SIGSTORE_ID_TOKEN"].(map[string]any)
	if tok["aud"] != "sigstore" {
		t.Errorf("gitlab-ci.yml: id_tokens %v: want SIGSTORE_ID_TOKEN with aud: sigstore", gl["id_tokens"])
	}
	if script, _ := yaml.Marshal(gl["script"]); !strings.Contains(string(script), "--sign") {
		t.Error("gitlab-ci.yml does not sign")
	}
}
