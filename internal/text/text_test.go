package text

import (
	"encoding/json"
	"testing"
)

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 files"}, {1, "1 file"}, {2, "2 files"}} {
		if got := Plural(c.n, "file", "files"); got != c.want {
			t.Errorf("Plural(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestNonNilPrintsAnEmptyListAsBrackets(t *testing.T) {
	var none []string
	b, err := json.Marshal(NonNil(none))
	if err != nil || string(b) != "[]" {
		t.Fatalf("NonNil(nil) marshals to %s, %v; want []", b, err)
	}
	b, _ = json.Marshal(NonNil([]string{"a"}))
	if string(b) != `["a"]` {
		t.Fatalf("NonNil([a]) marshals to %s", b)
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 3 << 20: "3.0 MiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
