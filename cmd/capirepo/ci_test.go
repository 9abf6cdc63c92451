package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestCIWorkflow_RunsWhatCIRunRuns: .github/workflows/ci.yaml runs every
// make target .ci/run runs, so CI on GitHub checks what a fresh clone does.
func TestCIWorkflow_RunsWhatCIRunRuns(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	makeRE := regexp.MustCompile(`(?m)^\s*make\s+([A-Za-z0-9_.-]+)`)
	var want []string
	for _, m := range makeRE.FindAllStringSubmatch(string(data), -1) {
		want = append(want, m[1])
	}
	if len(want) < 2 {
		t.Fatalf(".ci/run runs %v: fewer make targets than test and lint", want)
	}
	const file = ".github/workflows/ci.yaml"
	var called []string
	for _, r := range stepRuns(t, file, loadYAML(t, file)) {
		for _, m := range regexp.MustCompile(`\bmake\s+([A-Za-z0-9_.-]+)`).FindAllStringSubmatch(r, -1) {
			called = append(called, m[1])
		}
	}
	for _, w := range want {
		if !slices.Contains(called, w) {
			t.Errorf("%s does not run make %s, which .ci/run runs (it runs %v)", file, w, called)
		}
	}
}
