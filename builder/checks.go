package builder

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/contract/finding"
	"github.com/capirepo/capirepo/provider"
)

// Rules of package contract the build reports itself (a test checks that
// the catalogue has them).
const (
	ruleMetadataMissing = "CAPI101"
	ruleProviderLabel   = "CAPI203"
)

// labelFindings turns the provider labels setLabels rewrote into one CAPI203
// warning per value the tree set, naming the kustomizations that set it
// (relative to root) and the objects.
func labelFindings(fs filesys.FileSystem, kdir, root, label, file string, relabelled map[string][]string) []finding.Finding {
	var out []finding.Finding
	for _, old := range sortedKeys(relabelled) {
		objs := relabelled[old]
		where := "the kustomization " + rel(root, kdir)
		if srcs := labelSources(fs, kdir, old, map[string]bool{}); len(srcs) > 0 {
			for i, s := range srcs {
				srcs[i] = rel(root, s)
			}
			where = strings.Join(srcs, ", ")
		}
		shown := objs
		if len(shown) > 5 {
			shown = append(slices.Clip(shown[:5]), fmt.Sprintf("and %d more", len(objs)-5))
		}
		out = append(out, finding.Finding{
			Rule: ruleProviderLabel, Severity: finding.Warning, File: file,
			Field: "metadata.labels[" + provider.ProviderLabel + "]",
			Message: fmt.Sprintf("%s set %s: %s on %d objects (%s); the release sets %q, as clusterctl does on install: set it in the tree so kubectl-applied components match",
				where, provider.ProviderLabel, old, len(objs), strings.Join(shown, ", "), label),
		})
	}
	return out
}

// labelSources returns the kustomization files below dir (following local
// resources, components and bases) whose text sets the provider label to
// value. It reads only the tree; a file it cannot read is skipped.
func labelSources(fs filesys.FileSystem, dir, value string, seen map[string]bool) []string {
	if seen[dir] || len(seen) > 200 {
		return nil
	}
	seen[dir] = true
	var file string
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		if p := filepath.Join(dir, n); fs.Exists(p) {
			file = p
			break
		}
	}
	if file == "" {
		return nil
	}
	data, err := fs.ReadFile(file)
	if err != nil {
		return nil
	}
	var out []string
	if setsLabel(data, value) {
		out = append(out, file)
	}
	var k types.Kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		return out
	}
	for _, r := range slices.Concat(k.Resources, k.Components, k.Bases) { //nolint:staticcheck // older trees still list bases
		if strings.Contains(r, "://") || filepath.IsAbs(r) {
			continue
		}
		if p := filepath.Join(dir, r); fs.IsDir(p) {
			out = append(out, labelSources(fs, p, value, seen)...)
		}
	}
	return out
}

// setsLabel says whether a kustomization's text maps the provider label to
// value (labels:, commonLabels: or a label in a patch written inline).
func setsLabel(data []byte, value string) bool {
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && strings.Trim(k, `"'`) == provider.ProviderLabel && strings.Trim(strings.TrimSpace(v), `"'`) == value {
			return true
		}
	}
	return false
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return p
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// templateSource is where a release template comes from: the file of the
// same name in the templates folder (copied as it is), else its flavor's
// kustomization folder when there is one, else the templates folder.
func templateSource(fs filesys.FileSystem, rel, tdir, name string) finding.Source {
	if p := filepath.Join(tdir, name); fs.Exists(p) && !fs.IsDir(p) {
		return finding.Source{Path: path.Join(rel, name), Copied: true}
	}
	flavor := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(name, "cluster-template"), "-"), ".yaml")
	if flavor == "" {
		flavor = "default"
	}
	if fs.IsDir(filepath.Join(tdir, "flavors", flavor)) {
		return finding.Source{Path: path.Join(rel, "flavors", flavor, "kustomization.yaml")}
	}
	return finding.Source{Path: rel}
}
