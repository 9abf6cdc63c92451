package publish

import (
	"context"
	"errors"
	"net"
	"net/url"
	"syscall"
)

// IsUnreachable reports whether err says a server could not be asked at
// all (no such host, connection refused, no answer in time), as opposed to
// a server that answered with a status. A dry run reports an unreachable
// target and goes on; it is not known to lack anything.
func IsUnreachable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var se *StatusError
	if errors.As(err, &se) {
		return false
	}
	var dns *net.DNSError
	var op *net.OpError
	var ue *url.Error
	var ne net.Error
	return errors.As(err, &dns) || errors.As(err, &op) || errors.As(err, &ue) ||
		errors.Is(err, syscall.ECONNREFUSED) ||
		(errors.As(err, &ne) && ne.Timeout())
}
