package suggest

import "testing"

func TestNearest(t *testing.T) {
	names := []string{"version", "out", "image", "platforms", "componentsFile"}
	for _, c := range []struct{ in, want string }{
		{"verison", "version"}, //nolint:misspell // two letters swapped: the slip under test
		{"VERSION", "version"}, // case
		{"componentFile", "componentsFile"},
		{"ot", "out"},
		{"platform", "platforms"},
		{"registry", ""}, // nothing near
		{"", ""},
	} {
		if got := Nearest(c.in, names); got != c.want {
			t.Errorf("Nearest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := Nearest("x", nil); got != "" {
		t.Errorf("no names: %q", got)
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3},
		{"infrastructure-opnstack", "infrastructure-openstack", 1},
		{"äb", "ab", 1},
		{"tset", "test", 1},       // a swap is one slip
		{"verison", "version", 1}, //nolint:misspell // a swap is one slip
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
