package pipeline

import (
	"errors"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
)

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
