package builder

import (
	"bytes"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/provider"
)

// completeMetadata adds the apiVersion and kind a tree's metadata.yaml
// leaves out: clusterctl v1.11.0 refuses a metadata.yaml without kind (v1.11.1
// relaxed it again), every clusterctl refuses one without apiVersion, and
// many trees ship neither because clusterctl's own type once serialised
// without them. The comments keep their place, and the rest of the file is
// copied as it is. A value that is present, right or wrong, is left for the
// lint (CAPI102). added names the fields written, nil when none was.
func completeMetadata(data []byte) (out []byte, added []string) {
	var head struct {
		APIVersion *string `json:"apiVersion"`
		Kind       *string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return data, nil // not one YAML mapping: the lint says why
	}
	var lines []string
	if head.APIVersion == nil {
		lines = append(lines, "apiVersion: "+provider.MetadataAPIVersion)
		added = append(added, "apiVersion")
	}
	if head.Kind == nil {
		lines = append(lines, "kind: "+provider.MetadataKind)
		added = append(added, "kind")
	}
	if len(added) == 0 {
		return data, nil
	}
	// The fields go before the first line that starts a top-level key (not
	// a comment, a blank line, a document marker or an indented line), or
	// kind alone right after apiVersion, where clusterctl writes it.
	at := -1
	for off, line := 0, []byte(nil); off < len(data); off += len(line) {
		line = data[off:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i+1]
		}
		t := bytes.TrimRight(line, "\r\n")
		if len(t) == 0 || t[0] == '#' || t[0] == ' ' || t[0] == '\t' || bytes.HasPrefix(t, []byte("---")) || bytes.HasPrefix(t, []byte("%")) {
			continue
		}
		if t[0] == '{' {
			return data, nil // a flow mapping: the lint says what it lacks
		}
		if at < 0 {
			at = off
		}
		if head.APIVersion == nil || !bytes.HasPrefix(t, []byte("apiVersion:")) {
			continue
		}
		if !bytes.HasSuffix(line, []byte("\n")) {
			return data, nil // the last line, with no newline after it
		}
		at = off + len(line)
		break
	}
	if at < 0 {
		return data, nil // an empty document: nothing to complete
	}
	ins := strings.Join(lines, "\n") + "\n"
	out = make([]byte, 0, len(data)+len(ins))
	out = append(out, data[:at]...)
	out = append(out, ins...)
	out = append(out, data[at:]...)
	return out, added
}

// metadataWarning says what completeMetadata wrote, and that the tree should
// say it itself.
func metadataWarning(name, file string, added []string) string {
	return fmt.Sprintf("%s: %s has no %s; the release's metadata.yaml adds %s (clusterctl v1.11.0 refuses a metadata.yaml without kind, every clusterctl one without apiVersion): add them to %s",
		name, file, strings.Join(added, " or "), strings.Join(added, " and "), file)
}
