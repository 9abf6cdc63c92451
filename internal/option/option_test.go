package option

import (
	"context"
	"testing"
)

func TestFlag_TheCommandsWordElseTheOptionsOwnFlag(t *testing.T) {
	ctx := WithWords(context.Background(), Words{Target: "--github-target"})
	for _, tc := range []struct {
		ctx  context.Context
		n    Name
		want string
	}{
		{ctx, Target, "--github-target"},
		{ctx, Version, "--version"},
		{context.Background(), Target, "--target"},
	} {
		if got := Flag(tc.ctx, tc.n); got != tc.want {
			t.Errorf("Flag(%s) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
