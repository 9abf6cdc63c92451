package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/builder/buildtest"
	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/internal/cli"
	"github.com/capirepo/capirepo/internal/markdown"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/release"
)

// reportFixtures are the releases the report snapshots read, as folders in
// the working folder (so the reports name them by relative path): the
// example provider at v0.1.0 ("old"), the same at v0.1.1 with a flavor
// dropped, a variable newly required and a default changed ("new"), the
// example's tree with a lint error and an info ("broken"), and the real CAPA
// v2.11.0 and v2.12.1 (which drops the eks-nodeadm-clusterclass flavor) as
// their trees build.
func reportFixtures(t *testing.T, example string) {
	t.Helper()
	t.Chdir(t.TempDir())
	old := buildtest.Build(t, example, "v0.1.0").Release
	new := buildtest.Build(t, example, "v0.1.1").Release
	p, _ := new.Provider("infrastructure-example")
	p.Files = slices.DeleteFunc(p.Files, func(f release.File) bool { return f.Name == "cluster-template-machinepool.yaml" })
	topo, _ := p.File("cluster-template-topology.yaml")
	edited := strings.Replace(string(topo.Data), "${EXAMPLE_REGION:=us-east-1}", "${EXAMPLE_REGION:=eu-west-1}", 1)
	edited = strings.Replace(edited, "replicas: ${WORKER_MACHINE_COUNT}", "replicas: ${WORKER_MACHINE_COUNT}\n        failureDomain: ${EXAMPLE_ZONE}", 1)
	if err := p.Add(topo.Name, []byte(edited)); err != nil {
		t.Fatal(err)
	}
	capaOld := buildtest.Build(t, testtree.ModuleDir(t, "sigs.k8s.io/cluster-api-provider-aws/v2@v2.11.0"), "v2.11.0").Release
	capaNew := buildtest.Build(t, testtree.ModuleDir(t, "sigs.k8s.io/cluster-api-provider-aws/v2@v2.12.1"), "v2.12.1").Release
	// The example's tree with an error (the manager container renamed,
	// CAPI204) and an info (a CRD without the cluster-api category, CAPI313).
	broken := copyTree(t, example)
	for file, edit := range map[string][2]string{
		"config/manager/manager.yaml":                                           {"      - name: manager\n", "      - name: controller\n"},
		"config/crd/bases/infrastructure.cluster.x-k8s.io_exampleclusters.yaml": {"    categories:\n    - cluster-api\n", ""},
	} {
		data, err := os.ReadFile(filepath.Join(broken, file))
		if err != nil || !strings.Contains(string(data), edit[0]) {
			t.Fatalf("%s: %v, or no %q", file, err, edit[0])
		}
		if err := os.WriteFile(filepath.Join(broken, file), []byte(strings.Replace(string(data), edit[0], edit[1], 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(broken, "broken"); err != nil {
		t.Fatal(err)
	}
	for dir, rel := range map[string]*release.Release{"old": old, "new": new, "capa-old": capaOld, "capa-new": capaNew} {
		if err := release.Write(dir, rel); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReports_Golden: every format of each command's report, on the example
// provider and on real trees (CAPA v2.13.0's lint, CAPA v2.11.0 to v2.12.1's
// upgrade), is kept under testdata/reports (go test ./cmd/capirepo -run
// Reports_Golden -update), and checked for the shape its reader needs:
// Markdown that renders on GitHub as written (headings, tables, <details>
// balanced), a Code Quality report with GitLab's fields, JSON and SARIF that
// parse. Each is what the command prints on stdout with -o FORMAT; text is
// its stderr.
func TestReports_Golden(t *testing.T) {
	goldens, err := filepath.Abs(filepath.Join("testdata", "reports"))
	if err != nil {
		t.Fatal(err)
	}
	example := exampleDir(t)
	reportFixtures(t, example)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	capa := testtree.ModuleDir(t, testtree.CAPAModule)
	commands := []struct {
		name    string
		args    []string
		formats []cli.Format
	}{
		{"lint-example", []string{"lint", example, "--version", "v0.1.0"}, []cli.Format{cli.Text, cli.JSON, cli.SARIF, cli.Markdown, cli.CodeQuality}},
		{"lint-example-broken", []string{"lint", "broken", "--version", "v0.1.0"}, []cli.Format{cli.Text, cli.JSON, cli.SARIF, cli.Markdown, cli.CodeQuality}},
		{"lint-example-against", []string{"lint", "new", "--against", "old"}, []cli.Format{cli.Text, cli.JSON, cli.SARIF, cli.Markdown, cli.CodeQuality}},
		{"lint-capa", []string{"lint", capa, "--version", "v2.13.0"}, []cli.Format{cli.Text, cli.JSON, cli.SARIF, cli.Markdown, cli.CodeQuality}},
		{"diff-example", []string{"diff", "old", "new"}, []cli.Format{cli.Text, cli.JSON, cli.SARIF, cli.Markdown, cli.CodeQuality}},
		{"diff-capa", []string{"diff", "capa-old", "capa-new"}, []cli.Format{cli.Text, cli.JSON, cli.SARIF, cli.Markdown, cli.CodeQuality}},
		{"verify-example", []string{"verify", "old"}, []cli.Format{cli.Text, cli.JSON, cli.Markdown}},
		{"release-example", []string{"release", example, "--version", "v0.1.1", "--dry-run", "--skip-image-check", "--out", "dist", "--against", "old", "--notes-upgrade"},
			[]cli.Format{cli.Text, cli.JSON, cli.Markdown}},
	}
	for _, c := range commands {
		for _, f := range c.formats {
			name := c.name + "." + string(f)
			t.Run(name, func(t *testing.T) {
				_, stdout, stderr := runCmd(t, nil, append(slices.Clone(c.args), "-o", string(f))...)
				got := stdout
				if f == cli.Text {
					got = textReport(c.args[0], stdout, stderr)
				}
				checkFormat(t, f, got)
				got = strings.ReplaceAll(got, wd, "$WORKDIR") // verify names what it read by URL
				if f == cli.SARIF {
					got = sarifResults(t, got) // the rule catalogue is TestReport_WriteSARIF's
				}
				golden(t, filepath.Join(goldens, name), got)
			})
		}
	}
}

// textReport is the part of a command's text output that is its report:
// lint's and diff's findings (stderr, after the progress lines), verify's
// stdout, release's steps table on (stderr).
func textReport(command, stdout, stderr string) string {
	switch command {
	case "verify":
		return stdout
	case "release":
		_, after, _ := strings.Cut(stderr, "STEP ")
		return "STEP " + after
	}
	// The findings start at the first file's line, or at the counts.
	lines := strings.SplitAfter(stderr, "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return reportStart.MatchString(l) })
	return strings.Join(lines[max(i, 0):], "")
}

var reportStart = regexp.MustCompile(`^([^ :]+/[^ :]+\.yaml|\d+ errors?, .*)\n$`)

// checkFormat checks a report for what its reader needs.
func checkFormat(t *testing.T, f cli.Format, got string) {
	t.Helper()
	switch f {
	case cli.Markdown:
		if err := markdown.Check(got); err != nil {
			t.Errorf("the Markdown does not render as written: %v\n%s", err, got)
		}
	case cli.CodeQuality:
		if err := contract.CheckCodeQuality([]byte(got)); err != nil {
			t.Errorf("not a Code Quality report GitLab reads: %v\n%s", err, got)
		}
	case cli.JSON, cli.SARIF:
		if !json.Valid([]byte(got)) {
			t.Errorf("not JSON:\n%s", got)
		}
	}
}

// sarifResults is a SARIF log's results, indented.
func sarifResults(t *testing.T, log string) string {
	t.Helper()
	var doc struct {
		Runs []struct {
			Results json.RawMessage `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(log), &doc); err != nil || len(doc.Runs) != 1 {
		t.Fatalf("SARIF: %v", err)
	}
	var b bytes.Buffer
	if err := json.Indent(&b, doc.Runs[0].Results, "", "  "); err != nil {
		t.Fatal(err)
	}
	return b.String() + "\n"
}

// golden compares got with the file, or writes it with -update.
func golden(t *testing.T, file, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s differs (-want +got; -update rewrites it):\n%s", file, d)
	}
}
