package templates

import (
	"strings"
	"testing"

	"github.com/capirepo/capirepo/provider"
)

// TestGather_FilesPublishedAsTheyAre: templates.files takes any name; a
// file clusterctl does not read as a template is published byte for byte,
// checked for what its name promises (issue 31).
func TestGather_FilesPublishedAsTheyAre(t *testing.T) {
	base := map[string]string{
		"/t/cluster-template.yaml":       cluster,
		"/scripts/pre-kubeadminit.sh":    "#!/bin/bash\nset -e\necho ${1}\n",
		"/examples/example_variables.rc": "export CLUSTER_NAME=test\n",
		"/bin/tool":                      "\x7fELF\x00\x01",
		"/empty.txt":                     "",
		"/bad.sh":                        "\x00\x01\x02",
		"/bad.json":                      "{not json",
		"/flavor/kustomization.yaml":     "resources: [c.yaml]\n",
		"/flavor/c.yaml":                 cluster,
	}
	tests := []struct {
		name, file, src string
		wantErr, warn   string
	}{
		{name: "a script", file: "pre-kubeadminit.sh", src: "scripts/pre-kubeadminit.sh"},
		{name: "a variables file", file: "example_variables.rc", src: "examples/example_variables.rc"},
		{name: "a binary under a name that promises none", file: "tool", src: "bin/tool"},
		{name: "an empty file", file: "empty.txt", src: "empty.txt", warn: "the file is empty"},
		{name: "a script that is not text", file: "bad.sh", src: "bad.sh", wantErr: "a .sh file should be text, and this one is not (application/octet-stream)"},
		{name: "JSON that does not parse", file: "bad.json", src: "bad.json", wantErr: "a .json file that does not parse as JSON"},
		{name: "a kustomization under a name that is not YAML", file: "flavor.sh", src: "flavor", wantErr: "is a kustomization, which renders YAML: publish it under a .yaml name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := memFS(t, base)
			set, err := Collect(fs, "/", provider.Templates{Dir: "t", Files: map[string]string{tt.file: tt.src}}, fakeRender(fs))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "templates.files["+tt.file+"]") {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got string
			for _, f := range set.Files {
				if f.Name == tt.file {
					got = string(f.Data)
				}
			}
			if got != base["/"+tt.src] {
				t.Errorf("%s published as %q, want the file as it is", tt.file, got)
			}
			if (tt.warn == "") != (len(set.Warnings) == 0) || tt.warn != "" && !strings.Contains(strings.Join(set.Warnings, "\n"), tt.warn) {
				t.Errorf("warnings %v, want %q", set.Warnings, tt.warn)
			}
		})
	}
}
