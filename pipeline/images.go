package pipeline

import (
	"fmt"

	"github.com/capirepo/capirepo/verify"
)

// imageStatusesReported are the image check's results the run reports
// without failing: a dry run publishes nothing, so a registry it cannot
// reach is no reason to stop it (it is not known to be missing); a run
// whose every target is a GitHub draft makes nothing installable, so
// images still being promoted are reported, and `capirepo publish github`
// checks them again before it publishes the draft.
func (r *run) imageStatusesReported() []string {
	switch {
	case r.o.DryRun:
		return []string{verify.ImageUnreachable}
	case r.draftsOnly():
		return []string{verify.ImageMissing, verify.ImageUnreachable}
	}
	return nil
}

// draftsOnly says whether every target leaves the release a draft.
func (r *run) draftsOnly() bool {
	if len(r.opened) == 0 {
		return false
	}
	for _, t := range r.opened {
		if t == nil || !isDraft(t) {
			return false
		}
	}
	return true
}

// imagesReportedDetail says what the images step reported without failing.
func (r *run) imagesReportedDetail(rep *verify.ImagesReport) string {
	d := ""
	if n := rep.Count(verify.ImageMissing); n > 0 {
		d += fmt.Sprintf("; %d not in the registry yet: the release stays a draft, and capirepo publish github checks them again before it publishes it", n)
	}
	if n := rep.Count(verify.ImageUnreachable); n > 0 {
		d += fmt.Sprintf("; %d not checked: the registry did not answer, which is not missing", n)
		if r.o.DryRun {
			d += " (a dry run does not fail for it)"
		}
	}
	return d
}
