package publish

import (
	"fmt"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

// ReadFiles picks, among the names a target lists for one provider version,
// the files a Reader returns: metadata.yaml, the components file, every
// cluster-template*.yaml and clusterclass-*.yaml. components names the
// components file (from the provider URL); "" picks it as release.Load does
// (the conventional name for the provider type, else the one
// *components*.yaml). Other assets (checksums.txt, other components
// variants, binaries) are left out: they are not part of what clusterctl reads.
func ReadFiles(id provider.ID, names []string, components string) (componentsFile string, files []string, err error) {
	if components == "" {
		if components, err = release.ComponentsFile(id, names); err != nil {
			return "", nil, err
		}
	}
	if !slices.Contains(names, components) {
		return "", nil, fmt.Errorf("no components file %s among %s", components, strings.Join(names, ", "))
	}
	if !slices.Contains(names, provider.MetadataFile) {
		return "", nil, fmt.Errorf("no %s: clusterctl cannot install a release without it: %w", provider.MetadataFile, ErrNotFound)
	}
	for _, n := range names {
		switch {
		case n == provider.MetadataFile, n == components,
			strings.HasPrefix(n, "cluster-template") && strings.HasSuffix(n, ".yaml"),
			strings.HasPrefix(n, "clusterclass-") && strings.HasSuffix(n, ".yaml"):
			files = append(files, n)
		}
	}
	slices.Sort(files)
	return components, slices.Compact(files), nil
}
