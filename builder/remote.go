package builder

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/yaml"
)

// remoteRef matches what kustomize would fetch instead of reading from the
// tree: URLs (http, https, git, ssh, file), scp-like git addresses and
// host/org/repo shorthands such as github.com/org/repo//path?ref=v1.
var remoteRef = regexp.MustCompile(`^([a-z][a-z0-9+.-]*://|git@|[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}(:[0-9]+)?/)`)

// kustomization lists the fields that name other files or kustomizations.
type kustomization struct {
	Resources  []string `json:"resources"`
	Bases      []string `json:"bases"`
	Components []string `json:"components"`
	HelmCharts []struct {
		Name string `json:"name"`
	} `json:"helmCharts"`
	Patches []struct {
		Path string `json:"path"`
	} `json:"patches"`
	PatchesStrategicMerge []string `json:"patchesStrategicMerge"`
}

// checkLocal walks the kustomization graph from dir and refuses any entry
// that kustomize would fetch from the network, and any helm chart inflation,
// so a release builds from the checked-out tree alone.
func checkLocal(fs *treeFS, dir string, seen map[string]bool) error {
	if seen[dir] {
		return nil
	}
	seen[dir] = true
	kfile := findKustomizationFile(fs, dir)
	if kfile == "" {
		if err := fs.Violation(); err != nil {
			return err
		}
		return fmt.Errorf("%s: no kustomization file (%s)", dir, strings.Join(konfig.RecognizedKustomizationFileNames(), ", "))
	}
	data, err := fs.ReadFile(kfile)
	if err != nil {
		return err
	}
	var k kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		return fmt.Errorf("%s: %w", kfile, err)
	}
	if len(k.HelmCharts) > 0 {
		return fmt.Errorf("%s: field helmCharts: helm chart inflation is off in capirepo; render the chart into the tree", kfile)
	}
	// kustomize loads an absolute path as it stands, which with
	// loadRestrictor none nothing else stops: a release names files by
	// their place in the tree.
	for i, p := range k.Patches {
		if filepath.IsAbs(p.Path) {
			return fmt.Errorf("%s: field patches[%d].path: %q is absolute; name it relative to the kustomization", kfile, i, p.Path)
		}
	}
	for i, p := range k.PatchesStrategicMerge {
		if filepath.IsAbs(p) {
			return fmt.Errorf("%s: field patchesStrategicMerge[%d]: %q is absolute; name it relative to the kustomization", kfile, i, p)
		}
	}
	for field, entries := range map[string][]string{"resources": k.Resources, "bases": k.Bases, "components": k.Components} {
		for i, e := range entries {
			if filepath.IsAbs(e) {
				return fmt.Errorf("%s: field %s[%d]: %q is absolute; name it relative to the kustomization", kfile, field, i, e)
			}
			local := filepath.Join(dir, e)
			if remoteRef.MatchString(e) && !fs.Exists(local) {
				return fmt.Errorf("%s: field %s[%d]: %q is a remote base; a release must build from the checked-out tree (pass --allow-remote to allow it)", kfile, field, i, e)
			}
			if fs.IsDir(local) {
				if err := checkLocal(fs, local, seen); err != nil {
					return err
				}
			}
			if err := fs.Violation(); err != nil {
				return fmt.Errorf("%s: field %s[%d]: %w", kfile, field, i, err)
			}
		}
	}
	return nil
}
