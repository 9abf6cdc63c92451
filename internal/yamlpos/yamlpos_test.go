package yamlpos

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFind(t *testing.T) {
	tests := []struct {
		name string
		data string
		want *Error
	}{
		{name: "parses", data: "a: 1\n---\nb: 2\n"},
		{
			name: "first document",
			data: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: y: z\n",
			want: &Error{File: "f.yaml", Line: 6, Document: 1, Object: "ConfigMap a", Msg: "mapping values are not allowed in this context"},
		},
		{
			// The line of the file, not of the third document.
			name: "third document",
			data: "a: 1\n---\nb: 2\n--- # comment\napiVersion: v1\nkind: Secret\nmetadata:\n  labels: {x: y}\n  name: \"s\"\nstringData:\n  k: v: w\n",
			want: &Error{File: "f.yaml", Line: 11, Document: 3, Object: "Secret s", Msg: "mapping values are not allowed in this context"},
		},
		{
			name: "no object to name",
			data: "---\n---\n  - a\n b: c\n",
			want: &Error{File: "f.yaml", Line: 3, Document: 3, Msg: "did not find expected <document start>"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Find("f.yaml", []byte(tt.data))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got != nil && !strings.HasPrefix(got.Error(), "f.yaml:") {
				t.Errorf("message = %s", got)
			}
		})
	}
}
