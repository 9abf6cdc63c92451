package contract

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/capirepo/capirepo/provider"
)

// CodeQualityIssue is one finding as GitLab's Code Quality report holds it
// (artifacts:reports:codequality, the subset of the Code Climate spec GitLab
// reads: docs.gitlab.com/ci/testing/code_quality, "Implement a custom
// tool"); GitLab ignores the spec's other fields.
type CodeQualityIssue struct {
	Description string `json:"description"`
	CheckName   string `json:"check_name"`
	// Fingerprint identifies the finding across runs: the merge-request
	// widget shows a fingerprint the target branch's report lacks as new,
	// one it had as fixed, and equal fingerprints as one entry.
	Fingerprint string              `json:"fingerprint"`
	Severity    string              `json:"severity"`
	Location    CodeQualityLocation `json:"location"`
}

// CodeQualityLocation is where a Code Quality issue is: a path relative to
// the repository root and a line (1 for a whole file).
type CodeQualityLocation struct {
	Path  string `json:"path"`
	Lines struct {
		Begin int `json:"begin"`
	} `json:"lines"`
}

// codeQualitySeverity maps a severity onto GitLab's (info, minor, major,
// critical, blocker): an error fails the release's users (critical), a
// warning is a latent defect or a SHOULD (major), info a MAY.
func codeQualitySeverity(s Severity) string {
	switch s {
	case Error:
		return "critical"
	case Warning:
		return "major"
	}
	return "info"
}

// CodeQuality returns the findings as Code Quality issues, in the report's
// order. Waived findings are left out: the widget then shows a finding
// waived in a merge request as fixed, which it is for the release.
//
// The path is the file of the provider tree the finding comes from when
// known (GitLab annotates the merge request's diff there), else the release
// file. The fingerprint hashes the rule, the release file without its
// version folder (a release's files move to a new folder with every version
// while the finding stays), the object and the field: not the message nor
// the line, which change with the version and with edits above the object.
// Findings that would share one are told apart by their order.
func (r Report) CodeQuality() []CodeQualityIssue {
	out := []CodeQualityIssue{}
	seen := map[string]int{}
	for _, f := range r.Findings {
		key := strings.Join([]string{f.Rule, unversioned(f.File), f.Object, f.Field}, "\x00")
		n := seen[key]
		seen[key]++
		if n > 0 {
			key += fmt.Sprintf("\x00%d", n)
		}
		sum := sha256.Sum256([]byte(key))
		issue := CodeQualityIssue{
			Description: f.Rule + " " + codeQualityMessage(f),
			CheckName:   f.Rule,
			Fingerprint: hex.EncodeToString(sum[:16]),
			Severity:    codeQualitySeverity(f.Severity),
		}
		issue.Location.Path, issue.Location.Lines.Begin = f.File, 1
		if f.Source != "" {
			issue.Location.Path = f.Source
			if f.Line > 0 {
				issue.Location.Lines.Begin = f.Line
			}
		}
		out = append(out, issue)
	}
	return out
}

// codeQualityMessage is the finding's message with its object and field
// before it, as SARIF's is.
func codeQualityMessage(f Finding) string {
	if l := location(f); l != "(file)" {
		return l + ": " + f.Message
	}
	return f.Message
}

// WriteCodeQuality prints the report as GitLab's Code Quality report: a
// JSON array of issues (CodeQuality), [] when there are none.
func (r Report) WriteCodeQuality(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r.CodeQuality())
}

// unversioned is a release file's path without its version folder:
// <label>/<version>/<name> becomes <label>/<name>; other paths stay.
func unversioned(file string) string {
	parts := strings.Split(file, "/")
	if len(parts) == 3 {
		if _, err := provider.ParseVersion(parts[1]); err == nil {
			return parts[0] + "/" + parts[2]
		}
	}
	return file
}

// codeQualitySeverities are the severities GitLab's Code Quality report
// takes.
var codeQualitySeverities = map[string]bool{"info": true, "minor": true, "major": true, "critical": true, "blocker": true}

// CheckCodeQuality says whether data is a Code Quality report GitLab reads,
// by the fields its documentation requires ("Implement a custom tool"): a
// JSON array (no byte order mark) of objects each with a description, a
// check_name, a fingerprint, a severity of info, minor, major, critical or
// blocker, location.path (relative) and location.lines.begin (a line, 1 or
// more); and, since GitLab shows equal fingerprints as one entry, no two
// alike. For tests of every command that writes one.
func CheckCodeQuality(data []byte) error {
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return errors.New("the report starts with a byte order mark, which GitLab's parser refuses")
	}
	var issues []map[string]json.RawMessage
	if err := json.Unmarshal(data, &issues); err != nil {
		return fmt.Errorf("not a JSON array of objects: %w", err)
	}
	if issues == nil {
		return errors.New("not a JSON array: null")
	}
	fingerprints := map[string]int{}
	for i, raw := range issues {
		var is struct {
			Description, CheckName, Fingerprint, Severity *string
			Location                                      *struct {
				Path  *string
				Lines *struct{ Begin *int }
			}
		}
		fields := map[string]any{"description": &is.Description, "check_name": &is.CheckName, "fingerprint": &is.Fingerprint, "severity": &is.Severity, "location": &is.Location}
		for name, p := range fields {
			v, ok := raw[name]
			if !ok {
				return fmt.Errorf("issue %d: no %s", i, name)
			}
			if err := json.Unmarshal(v, p); err != nil {
				return fmt.Errorf("issue %d: %s: %w", i, name, err)
			}
		}
		switch {
		case is.Description == nil || *is.Description == "", is.CheckName == nil || *is.CheckName == "", is.Fingerprint == nil || *is.Fingerprint == "":
			return fmt.Errorf("issue %d: an empty description, check_name or fingerprint", i)
		case is.Severity == nil || !codeQualitySeverities[*is.Severity]:
			return fmt.Errorf("issue %d: severity %v is not info, minor, major, critical or blocker", i, is.Severity)
		case is.Location == nil || is.Location.Path == nil || *is.Location.Path == "" || strings.HasPrefix(*is.Location.Path, "/"):
			return fmt.Errorf("issue %d: location.path is not a relative path", i)
		case is.Location.Lines == nil || is.Location.Lines.Begin == nil || *is.Location.Lines.Begin < 1:
			return fmt.Errorf("issue %d: no location.lines.begin of 1 or more", i)
		}
		if j, dup := fingerprints[*is.Fingerprint]; dup {
			return fmt.Errorf("issues %d and %d have the same fingerprint %s: GitLab shows them as one", j, i, *is.Fingerprint)
		}
		fingerprints[*is.Fingerprint] = i
	}
	return nil
}
