package provider

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/internal/testtree"
)

var updateSchema = flag.Bool("update", false, "rewrite docs/capirepo.schema.json from the Go types")

const schemaFile = "../docs/capirepo.schema.json"

// TestLoadConfig_ErrorsNameFileLineAndPath: a mistake in capirepo.yaml is
// named by file, line and path, with the nearest field or the form expected.
func TestLoadConfig_ErrorsNameFileLineAndPath(t *testing.T) {
	tests := []struct {
		name, config, want string
	}{
		{"misspelt field", "version: v1.0.0\nproviders:\n- name: infrastructure-x\n  componentFile: c.yaml\n",
			`capirepo.yaml:4: providers[0]: unknown field "componentFile" (did you mean "componentsFile"?)`},
		{"misspelt top-level field", "provider:\n- name: infrastructure-x\n",
			`capirepo.yaml:1: unknown field "provider" (did you mean "providers"?)`},
		{"field of another case", "providers:\n- name: infrastructure-x\n  componentsfile: c.yaml\n",
			`capirepo.yaml:3: providers[0]: unknown field "componentsfile" (did you mean "componentsFile"?)`},
		{"misspelt nested field", "providers:\n- name: infrastructure-x\n  build:\n    platform: [linux/amd64]\n",
			`capirepo.yaml:4: providers[0].build: unknown field "platform" (did you mean "platforms"?)`},
		{"unknown field far from any", "providers:\n- name: infrastructure-x\n  image:\n    repository: r\n",
			`capirepo.yaml:4: providers[0].image: unknown field "repository" (known: name, newName, newTag, digest, tag, pullPolicy)`},
		{"waiver as a string", "providers:\n- name: infrastructure-x\nlint:\n  disable:\n  - CAPI101\n",
			`capirepo.yaml:5: lint.disable[0]: expected a mapping like {rule: ..., reason: ...}, not the string "CAPI101"`},
		{"waiver without reason", "providers:\n- name: infrastructure-x\nlint:\n  disable:\n  - rule: CAPI101\n",
			`capirepo.yaml:5: lint.disable[0]: a waiver needs both rule and reason: {rule: RULE, reason: why it does not apply}`},
		{"providers as a mapping", "providers:\n  name: infrastructure-x\n",
			`capirepo.yaml:2: providers: expected a list, not a mapping`},
		{"image as a string", "providers:\n- name: infrastructure-x\n  image: ghcr.io/x/manager\n",
			`capirepo.yaml:3: providers[0].image: expected a mapping like {name: ..., newName: ..., newTag: ..., digest: ..., tag: ..., pullPolicy: ...}, not the string "ghcr.io/x/manager"`},
		{"platforms as a string", "providers:\n- name: infrastructure-x\n  build: {platforms: linux/amd64}\n",
			`capirepo.yaml:3: providers[0].build.platforms: expected a list, not the string "linux/amd64"`},
		{"version as a number", "version: 1.10\nproviders:\n- name: infrastructure-x\n",
			`capirepo.yaml:1: version: expected a string, not the number 1.10: quote it ("1.10")`},
		{"short version", "providers:\n- name: infrastructure-x\nversion: v1.2\n",
			`capirepo.yaml:3: version: version "v1.2" is not semantic (vMAJOR.MINOR.PATCH[-pre][+build]) (did you mean v1.2.0?)`},
		{"bad value with line", "providers:\n- name: infrastructure-x\n- name: infrastructure-y\n  templates: ../elsewhere\n",
			`capirepo.yaml:4: providers[1].templates.dir: path "../elsewhere" leaves the provider tree`},
		{"misspelt field under templates", "providers:\n- name: infrastructure-x\n  templates:\n    dir: templates\n    flavours: [templates/flavors]\n",
			`capirepo.yaml:5: providers[0].templates: unknown field "flavours" (did you mean "flavors"?)`},
		{"templates as a list", "providers:\n- name: infrastructure-x\n  templates: [templates]\n",
			`capirepo.yaml:3: providers[0].templates: expected a string (dir) or a mapping with dir, flavors, `},
		{"bad label with line", "providers:\n- name: infrastructure-x\n- name: infra-y\n",
			`capirepo.yaml:3: providers[1].name: `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := testtree.Write(t, map[string]string{"capirepo.yaml": tt.config})
			_, err := LoadConfig(dir, "")
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			got := strings.TrimPrefix(err.Error(), dir+string(filepath.Separator))
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("error\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestConfigSchema_MatchesGoTypes: docs/capirepo.schema.json is generated
// from the Go types (go test ./provider -run ConfigSchema -update).
func TestConfigSchema_MatchesGoTypes(t *testing.T) {
	got, err := ConfigSchema()
	if err != nil {
		t.Fatal(err)
	}
	if *updateSchema {
		if err := os.WriteFile(schemaFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatalf("%v (run go test ./provider -run ConfigSchema -update)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s is out of date with the Go types: run go test ./provider -run ConfigSchema -update (-file +types):\n%s", schemaFile, diff)
	}
	// The schema knows every key the types have, and says which are required.
	var s struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Items struct {
				Required   []string       `json:"required"`
				Properties map[string]any `json:"properties"`
			} `json:"items"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(got, &s); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"providers"}, s.Required); diff != "" {
		t.Errorf("required at the top (-want +got):\n%s", diff)
	}
	if p := s.Properties["providers"].Items; len(p.Required) != 1 || p.Required[0] != "name" || p.Properties["componentsFile"] == nil {
		t.Errorf("providers[] = %+v", p)
	}
}

// TestConfigKeys_AllDocumented: docs/configuration.md describes every key
// of capirepo.yaml the Go types have.
func TestConfigKeys_AllDocumented(t *testing.T) {
	data, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)`").FindAllStringSubmatch(string(data), -1) {
		documented[m[1]] = true
	}
	keys := ConfigKeys()
	for _, k := range keys {
		if !documented[k] {
			t.Errorf("docs/configuration.md has no row | `%s` |", k)
		}
	}
	for k := range documented {
		if !strings.Contains(strings.Join(keys, "\n")+"\n", k+"\n") {
			t.Errorf("docs/configuration.md documents %s, which the types do not have", k)
		}
	}
}

// TestConfigSchema_TemplatesStringOrObject: templates takes a folder name or
// an object (the schema says both, with the object's keys and the values
// loadRestrictor and committed take), and the shape check names a mistake in
// the object form by line and path, with the nearest key (issue 31).
func TestConfigSchema_TemplatesStringOrObject(t *testing.T) {
	data, err := ConfigSchema()
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties struct {
			Providers struct {
				Items struct {
					Properties struct {
						Templates struct {
							OneOf []struct {
								Type       string `json:"type"`
								Properties map[string]struct {
									Enum []string `json:"enum"`
								} `json:"properties"`
							} `json:"oneOf"`
						} `json:"templates"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"providers"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	forms := s.Properties.Providers.Items.Properties.Templates.OneOf
	if len(forms) != 2 || forms[0].Type != "string" || forms[1].Type != "object" {
		t.Fatalf("templates is not a string or an object: %+v", forms)
	}
	obj := forms[1].Properties
	for _, k := range []string{"dir", "flavors", "loadRestrictor", "committed", "regenerate", "exclude", "files", "none"} {
		if _, ok := obj[k]; !ok {
			t.Errorf("the templates object has no key %s", k)
		}
	}
	if diff := cmp.Diff([]string{CommittedCheck, CommittedSource, CommittedKeep}, obj["committed"].Enum); diff != "" {
		t.Errorf("committed values (-validation +schema):\n%s", diff)
	}
	if diff := cmp.Diff([]string{LoadRestrictorRootOnly, LoadRestrictorNone, "LoadRestrictionsRootOnly", "LoadRestrictionsNone"}, obj["loadRestrictor"].Enum); diff != "" {
		t.Errorf("loadRestrictor values (-validation +schema):\n%s", diff)
	}

	for _, tt := range []struct{ config, want string }{
		{"providers:\n- name: infrastructure-x\n  templates:\n    flavours: [templates/flavors]\n", `capirepo.yaml:4: providers[0].templates: unknown field "flavours" (did you mean "flavors"?)`},
		{"providers:\n- name: infrastructure-x\n  templates: [templates]\n", `capirepo.yaml:3: providers[0].templates: expected a string (dir) or a mapping with dir, flavors, loadRestrictor, committed, regenerate, exclude, files, set, none, not a list`},
		{"providers:\n- name: infrastructure-x\n  templates: {none: yes please}\n", `capirepo.yaml:3: providers[0].templates.none: expected true or false`},
	} {
		dir := testtree.Write(t, map[string]string{"capirepo.yaml": tt.config})
		_, err := LoadConfig(dir, "")
		if got := strings.TrimPrefix(fmt.Sprint(err), dir+string(filepath.Separator)); !strings.HasPrefix(got, tt.want) {
			t.Errorf("error\n got %s\nwant %s", got, tt.want)
		}
	}
}

// TestDocs_ConfigExamplesParse: every capirepo.yaml example in the docs
// parses as the config (a fragment of a provider's keys, indented, inside a
// provider) and names its providers, as LoadConfig requires.
func TestDocs_ConfigExamplesParse(t *testing.T) {
	block := regexp.MustCompile("(?s)```yaml\n(.*?)```")
	n := 0
	for _, doc := range []string{"../docs/providers.md", "../docs/configuration.md", "../README.md"} {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range block.FindAllStringSubmatch(string(data), -1) {
			y := m[1]
			first := ""
			for _, line := range strings.Split(y, "\n") {
				if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
					first = line
					break
				}
			}
			key, _, _ := strings.Cut(strings.TrimSpace(first), ":")
			switch {
			case strings.HasPrefix(first, "  ") && !strings.HasPrefix(first, "   ") && slices.Contains(ConfigKeys(), "providers[]."+key):
				y = "providers:\n- name: infrastructure-example\n" + y
			case !slices.Contains([]string{"providers", "before", "lint", "version"}, key) || strings.HasPrefix(first, " "):
				continue // a patch, a kustomization, another tool's file
			}
			n++
			cfg, err := ParseConfig("capirepo.yaml", []byte(y))
			if err != nil {
				t.Errorf("%s: example does not parse: %v\n%s", doc, err, y)
				continue
			}
			if len(cfg.Providers) == 0 {
				t.Errorf("%s: example names no provider (capirepo.yaml needs providers:):\n%s", doc, y)
			}
		}
	}
	if n < 10 {
		t.Errorf("checked %d examples; the docs have more", n)
	}
}
