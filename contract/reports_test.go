package contract_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/internal/markdown"
)

func markdownOf(t *testing.T, r contract.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	if err := markdown.Check(b.String()); err != nil {
		t.Fatalf("the Markdown does not render as written: %v\n%s", err, b.String())
	}
	return b.String()
}

// TestReport_WriteMarkdownErrorsFirstWithRulesLinked: the lint's Markdown
// says the verdict, lists errors before warnings before info, each finding
// with its rule linked to the catalogue, file, object and field, and folds
// the waived findings with their reason.
func TestReport_WriteMarkdownErrorsFirstWithRulesLinked(t *testing.T) {
	got := markdownOf(t, brokenReport(t))
	order := []string{
		"## capirepo lint: errors: the release fails for its users\n",
		"1 error, 1 warning, 1 info, 1 waived\n",
		"### Errors (1)\n",
		"| [CAPI204](https://github.com/capirepo/capirepo/blob/main/docs/lint-rules.md#capi204) | `" + prefix + comps + "` | `Deployment/foo-system/foo-controller-manager` | `spec.template.spec.containers` |",
		"### Warnings (1)\n",
		"| [CAPI202](",
		"### Info (1)\n",
		"| [CAPI313](",
		"<summary>1 waived finding</summary>",
		"(waived: refs are rewritten by our installer) |",
	}
	at := 0
	for _, s := range order {
		i := strings.Index(got[at:], s)
		if i < 0 {
			t.Fatalf("lacks %q after offset %d:\n%s", s, at, got)
		}
		at += i + len(s)
	}
}

// TestReport_WriteMarkdownFoldsLongLists: eleven warnings are folded under
// a summary that counts them; ten are not; errors fold open.
func TestReport_WriteMarkdownFoldsLongLists(t *testing.T) {
	many := func(n int, sev contract.Severity) contract.Report {
		r := contract.Report{}
		for i := range n {
			r.Findings = append(r.Findings, contract.Finding{Rule: "CAPI202", Severity: sev, File: prefix + comps, Object: fmt.Sprintf("ServiceAccount/sa-%02d", i), Message: "no namespace | pipe <x>"})
		}
		return r
	}
	if got := markdownOf(t, many(10, contract.Warning)); strings.Contains(got, "<details") {
		t.Errorf("ten warnings folded:\n%s", got)
	}
	if got := markdownOf(t, many(11, contract.Warning)); !strings.Contains(got, "<details>\n<summary>11 warnings</summary>") {
		t.Errorf("eleven warnings not folded:\n%s", got)
	}
	if got := markdownOf(t, many(11, contract.Error)); !strings.Contains(got, "<details open>\n<summary>11 errors</summary>") {
		t.Errorf("eleven errors not folded open:\n%s", got)
	}
}

// TestReport_CodeQualityHasGitLabsFields: the report validates against the
// fields GitLab documents, errors are critical, warnings major, info info,
// and the waived finding is left out.
func TestReport_CodeQualityHasGitLabsFields(t *testing.T) {
	var b bytes.Buffer
	if err := brokenReport(t).WriteCodeQuality(&b); err != nil {
		t.Fatal(err)
	}
	if err := contract.CheckCodeQuality(b.Bytes()); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	var issues []contract.CodeQualityIssue
	if err := json.Unmarshal(b.Bytes(), &issues); err != nil {
		t.Fatal(err)
	}
	type row struct{ Check, Severity, Path string }
	var got []row
	for _, is := range issues {
		got = append(got, row{is.CheckName, is.Severity, is.Location.Path})
	}
	want := []row{{"CAPI313", "info", prefix + comps}, {"CAPI204", "critical", prefix + comps}, {"CAPI202", "major", prefix + comps}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("issues (-want +got):\n%s", diff)
	}
	var empty bytes.Buffer
	if err := (contract.Report{}).WriteCodeQuality(&empty); err != nil || strings.TrimSpace(empty.String()) != "[]" {
		t.Errorf("a clean report writes %q, %v; want []", empty.String(), err)
	}
}

// TestReport_CodeQualityFingerprintsStableAcrossVersionsAndEdits: the same
// defects found in the next version's release, with lines above them added
// and the messages naming the new version, keep their fingerprints, so
// GitLab's widget shows them as neither new nor fixed; a defect fixed loses
// its fingerprint.
func TestReport_CodeQualityFingerprintsStableAcrossVersionsAndEdits(t *testing.T) {
	lint := func(version string, edit func(files)) map[string]string {
		fs := readDir(t, "testdata/release")
		fs.replace(t, comps, "- name: manager", "- name: controller")
		fs.replace(t, comps, "name: foo-manager\n  namespace: foo-system\n", "name: foo-manager\n")
		fs.replace(t, "metadata.yaml", "releaseSeries:\n", "releaseSeries:\n- major: 0\n  minor: 2\n  contract: v1beta2\n")
		edit(fs)
		r := contract.Lint(fs.release(t, label, version), contract.Options{})
		out := map[string]string{}
		for _, is := range r.CodeQuality() {
			out[is.Fingerprint] = is.CheckName
		}
		return out
	}
	before := lint("v0.1.0", func(files) {})
	after := lint("v0.2.0", func(fs files) { fs[comps] = "# a comment\n# another\n" + fs[comps] })
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("fingerprints changed (-v0.1.0 +v0.2.0):\n%s", diff)
	}
	fixed := lint("v0.2.0", func(fs files) { fs.replace(t, comps, "- name: controller", "- name: manager") })
	for fp, rule := range before {
		if _, ok := fixed[fp]; (rule == "CAPI204") == ok {
			t.Errorf("%s: fingerprint kept %v after CAPI204 was fixed", rule, ok)
		}
	}
}

// TestCheckCodeQuality_RefusesWhatGitLabDoesNotRead: each defect is named.
func TestCheckCodeQuality_RefusesWhatGitLabDoesNotRead(t *testing.T) {
	good := `{"description":"d","check_name":"c","fingerprint":"f","severity":"minor","location":{"path":"a.yaml","lines":{"begin":1}}}`
	if err := contract.CheckCodeQuality([]byte("[" + good + "]")); err != nil {
		t.Fatalf("good report: %v", err)
	}
	for name, doc := range map[string]string{
		"not an array":          good,
		"null":                  "null",
		"byte order mark":       "\xef\xbb\xbf[" + good + "]",
		"no check_name":         strings.Replace("["+good+"]", `"check_name":"c",`, "", 1),
		"unknown severity":      strings.Replace("["+good+"]", `"minor"`, `"warning"`, 1),
		"absolute path":         strings.Replace("["+good+"]", `"a.yaml"`, `"/a.yaml"`, 1),
		"line 0":                strings.Replace("["+good+"]", `"begin":1`, `"begin":0`, 1),
		"no lines":              strings.Replace("["+good+"]", `,"lines":{"begin":1}`, "", 1),
		"duplicate fingerprint": "[" + good + "," + good + "]",
	} {
		if err := contract.CheckCodeQuality([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
