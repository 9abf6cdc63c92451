// Package builder turns a provider source tree into a release.Release: it
// renders each provider's kustomization in process with krusty, applies the
// documented release transforms (manager image and tag, or an image per
// Deployment; pull policy; provider label), checks the namespace layout
// clusterctl needs, lists the ${VAR} variables as clusterctl reads them, and
// adds metadata.yaml and the cluster templates. Every transform that changes
// what the tree renders is returned to be said (Result.Edits; the provider
// labels it adds or replaces as CAPI203 findings), and a release image that
// would reach more than one Deployment is refused until the config says
// which image each runs. Which containers an object has is release's
// answer (release.ContainerPaths), asked on kustomize's nodes.
//
// It reads the provider tree through a read-only, root-confined filesystem:
// nothing is ever written under the tree, symlinks may not leave it, files
// have a size limit and remote kustomize bases are refused unless allowed.
//
// A RenderCache (Options.Cache) lets the Builds of one process reuse the
// kustomize renders whose inputs did not change (capirepo dev --watch); it is
// kept in memory only and is not a build cache across runs (pipeline's dev
// cache decides, per provider, whether to build at all, by the hash of the
// tree's inputs, TreeHash; dev --watch polls them, TreeState: inputs.go).
// What a tree's git checkout says of it (the commit a build stamps, a tag's
// commit, the origin's https URL, SourceURL) is asked of git here too.
//
// It compiles the manager binaries when asked (BuildBinaries), but is not for
// building their image (image), checking the release against clusterctl's
// contract (contract), writing it to disk (release) or publishing it
// (publish).
package builder
