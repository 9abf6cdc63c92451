package provider

import (
	"os"
	"path/filepath"
	"testing"
)

func seed(f *testing.F, globs ...string) {
	f.Helper()
	for _, g := range globs {
		files, _ := filepath.Glob(g)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err == nil {
				f.Add(data)
			}
		}
	}
}

// FuzzParseConfig: no input makes the capirepo.yaml parser panic, and what it
// accepts passes validation or fails with an error.
func FuzzParseConfig(f *testing.F) {
	seed(f, "testdata/config/*.yaml")
	f.Add([]byte("version: v1.0.0\nproviders:\n- name: infrastructure-x\n  image: {name: a, newTag: b}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig("capirepo.yaml", data)
		if err != nil {
			return
		}
		_ = cfg.defaultAndValidate(t.TempDir())
	})
}

func FuzzParseSettings(f *testing.F) {
	seed(f, "testdata/settings/*.json")
	f.Add([]byte(`{"name": "infrastructure-x", "config": {"componentsFile": "infrastructure-components.yaml", "nextVersion": "v1.0.99"}}`))
	f.Add([]byte(`{"providers": ["cluster-api", "infrastructure-x"], "provider_repos": ["../x"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseSettings("clusterctl-settings.json", data)
		if err != nil {
			return
		}
		_ = cfg.defaultAndValidate(t.TempDir())
	})
}

func FuzzParseMetadata(f *testing.F) {
	seed(f, "testdata/metadata/*.yaml", "../examples/infrastructure-example/metadata.yaml")
	f.Add([]byte(goodMetadata))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMetadata("metadata.yaml", data)
		if err != nil {
			return
		}
		if len(m.ReleaseSeries) == 0 {
			t.Fatal("accepted metadata without release series")
		}
		v, _ := ParseVersion("v1.2.3")
		_ = CheckCovers("metadata.yaml", m, v)
	})
}
