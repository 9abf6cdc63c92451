// Package diff compares a release with an older one: what breaks when a
// management cluster moves from the old release to the new one with
// clusterctl upgrade. It reads two in-memory releases (release.Release) and
// returns findings of the lint's type under the upgrade rules of the lint's
// catalogue (contract, area upgrade: CAPI701 ... CAPI717), so they are
// waived, documented and printed as the lint's are: what breaks for the
// management cluster, and for users who generate clusters from the
// release's flavors (a flavor gone, a variable newly required, a default
// changed). Beside the findings it gathers the facts of the upgrade that
// release notes tell (Changes: contract, CRD versions, variables, flavors,
// ClusterClass variables, images), in the same walk.
//
// The rules follow what clusterctl upgrade does (upgrader.go,
// upgrader_info.go, crd_migration.go), what the API server accepts of a CRD
// update and of stored objects, and Cluster API's deprecation process. The
// CRD schemas are compared with sigs.k8s.io/crdify's schema walk and property
// checks, set to the severities of CAPI707 and CAPI708; the checks crdify has
// no severity split for (types, enums, required fields with defaults, removed
// fields and versions) are this package's own.
//
// It reads nothing but the releases it is given: no network, no cluster, no
// files. Reading the releases (folders, published targets, the previous
// release) is package pipeline's job.
package diff
