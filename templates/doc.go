// Package templates collects a provider's cluster templates and
// ClusterClasses: cluster-template[-flavor].yaml and clusterclass-<name>.yaml
// files from the templates folder, plus flavors rendered from
// templates/flavors/<name>/kustomization.yaml. It checks that each file
// parses, that names are safe file-name parts, and that every topology
// Cluster's class ships in the release.
//
// It does not render kustomizations itself (the caller injects a renderer)
// nor substitute variables (clusterctl does that at install time).
package templates
