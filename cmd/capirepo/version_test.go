package main

import (
	"strings"
	"testing"
)

// TestVersion_WithoutVersionSaysHowToGetOne: a build that recorded no
// version (the test binary is one) says so on stderr, with the install line
// that records it; stdout keeps the result.
func TestVersion_WithoutVersionSaysHowToGetOne(t *testing.T) {
	if readBuildInfo().Version != develVersion {
		t.Skip("this test binary recorded a version")
	}
	code, stdout, stderr := runCmd(t, nil, "version")
	if code != 0 || !strings.HasPrefix(stdout, "capirepo (devel)\n") || !strings.Contains(stderr, "go install github.com/capirepo/capirepo/cmd/capirepo@COMMIT") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}
