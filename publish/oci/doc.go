// Package oci publishes a built release to an OCI registry as artifacts
// cluster-api-operator installs from (spec.fetchConfig.oci), and reads them
// back by the operator's rules (publish.Source), so mirror and verify treat a
// registry like any other target.
//
// Two layouts:
//   - operator (the default): one artifact per provider and version at
//     REGISTRY/PATH/<label>:<version>, one layer per file titled
//     (org.opencontainers.image.title) with the file names the operator looks
//     for; or, with SingleArtifact, one artifact per release holding every
//     provider under the operator's versioned names.
//   - proposal: the layout of Cluster API's provisional proposal for clusterctl
//     (one tar+gzip layer holding the release files). The operator cannot read
//     it: it never unpacks a layer.
//
// Every artifact is rebuilt byte for byte from the same release and the same
// Meta, so its digest is stable. A tag is never moved: the same content is a
// no-op that sends nothing, other content is refused unless Replace.
//
// ParseReference reads the oci://REGISTRY/PATH/NAME:VERSION reference the
// operator takes (verify's argument), its plain-HTTP form too.
//
// It uses go-containerregistry (as image/ does) and sends every registry call
// through publish.Retry. It never reads the environment: credentials come in
// as an authn.Keychain from cmd/.
package oci
