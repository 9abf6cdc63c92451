package epoch

import (
	"errors"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Time
		err  error
	}{
		{"", time.Time{}, nil},
		{"1700000000", time.Unix(1700000000, 0).UTC(), nil},
		{" 1700000000\n", time.Unix(1700000000, 0).UTC(), nil},
		{"0", time.Unix(0, 0).UTC(), nil},
		{"-1", time.Time{}, ErrInvalid},
		{"yesterday", time.Time{}, ErrInvalid},
		{"1.5", time.Time{}, ErrInvalid},
	} {
		got, err := Parse(c.in)
		if !errors.Is(err, c.err) || !got.Equal(c.want) || got.Location() != time.UTC {
			t.Errorf("Parse(%q) = %v, %v; want %v, %v", c.in, got, err, c.want, c.err)
		}
	}
}
