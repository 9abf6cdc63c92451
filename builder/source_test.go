package builder

import "testing"

func TestSourceURL_DropsCredentials(t *testing.T) {
	for in, want := range map[string]string{
		"git@github.com:example/provider.git":             "https://github.com/example/provider",
		"https://user:secret@github.com/example/provider": "https://github.com/example/provider",
		"ssh://git@gitlab.example.com/group/provider.git": "https://gitlab.example.com/group/provider",
		"/srv/git/provider":                               "",
	} {
		if got := sourceURL(in); got != want {
			t.Errorf("sourceURL(%q) = %q, want %q", in, got, want)
		}
	}
}
