// Package provider knows what a Cluster API provider is before anything is
// built: its type and label, the file names clusterctl expects for it, the
// capirepo.yaml / clusterctl-settings.json that describe a provider tree
// (and whether a folder is one: IsSourceTree; the trees a settings file's
// provider_repos name: LoadTreeSpecs; the one manager build section and
// image tag of a tree's providers: Config.ManagerBuild, ImageTag), and the
// metadata.yaml model that maps release series to contracts.
//
// It does not render, publish or read anything over the network; every other
// package imports it, and it imports none of them.
package provider
