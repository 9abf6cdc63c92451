//go:build !unix

package stderrfilter

import "errors"

// session is never started where there are no Unix file descriptors: the
// messages print.
type session struct{}

func start([][]byte) (*session, error) {
	return nil, errors.New("stderrfilter: no file descriptors to intercept on this system")
}

func (*session) stop() {}
