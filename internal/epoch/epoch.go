// Package epoch reads SOURCE_DATE_EPOCH (reproducible-builds.org), the time
// every stamped artefact (binaries' {{.Date}}, OCI annotations, signature
// referrers) takes so that two builds of one tree give the same bytes. It is
// the one parser of it; callers say in their error which variable is wrong.
package epoch

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Var is the variable's name.
const Var = "SOURCE_DATE_EPOCH"

// ErrInvalid is what Parse returns for a value that is not a count of
// seconds since 1970.
var ErrInvalid = errors.New("want seconds since 1970 (e.g. git log -1 --format=%ct)")

// Parse reads a SOURCE_DATE_EPOCH value: seconds since 1970, surrounding
// space ignored, as a UTC time; the zero time and no error for "".
func Parse(v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, ErrInvalid
	}
	return time.Unix(n, 0).UTC(), nil
}
