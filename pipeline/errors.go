package pipeline

import (
	"errors"
	"io"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/internal/text"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
)

// The errors of a run as cmd tells them apart: usage errors, and the
// failure document of -o json.

// IsUsage says whether err is a mistake in what was asked for rather than
// a step that failed, by its type, never by its text: a publish.UsageError
// (a target named or given its credentials wrongly, an option's value that
// cannot be), one manager build for providers with different build
// sections, one image for providers whose kustomizations name different
// images, or no version to build.
func IsUsage(err error) bool {
	var mismatch *provider.ManagerMismatchError
	var oneImage *builder.ImageUsageError
	return publish.IsUsage(err) || errors.As(err, &mismatch) || errors.As(err, &oneImage) || errors.Is(err, builder.ErrNoVersion)
}

// Failure is what a command that failed before it printed its own report
// prints as JSON: the error, the exit code, and the findings of the lint or
// the upgrade check that stopped it.
type Failure struct {
	Error    string                   `json:"error"`
	ExitCode int                      `json:"exitCode"`
	Findings []contract.Finding       `json:"findings"`
	Waived   []contract.WaivedFinding `json:"waived"`
}

// NewFailure is the failure document of err, which exits with exitCode.
func NewFailure(err error, exitCode int) *Failure {
	f := &Failure{Error: err.Error(), ExitCode: exitCode, Findings: []contract.Finding{}, Waived: []contract.WaivedFinding{}}
	var lint *LintError
	var upgrade *UpgradeError
	switch {
	case errors.As(err, &lint):
		f.Findings, f.Waived = text.NonNil(lint.Report.Findings), text.NonNil(lint.Report.Waived)
	case errors.As(err, &upgrade):
		f.Findings, f.Waived = text.NonNil(upgrade.Report.Findings), text.NonNil(upgrade.Report.Waived)
	}
	return f
}

// WriteJSON prints the failure as one JSON document.
func (f *Failure) WriteJSON(w io.Writer) error { return writeJSON(w, f) }
