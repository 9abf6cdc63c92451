// Package image builds a provider's manager container image from binaries
// that were already compiled, without a Docker daemon, the way ko does: a
// base image (by default the empty image, for static binaries), one
// reproducible layer holding the binary at /manager, an entrypoint, a
// non-root user and the OCI source/version/revision labels, one image per
// platform joined in a multi-platform index. The index is pushed to a
// registry or written as an OCI image layout (Manager does the whole step
// of a build). Copy copies an image or index by digest, with its referrers
// (signatures, SBOMs), from one registry to another: mirror's images;
// Resolve names an image by the digest its tag points at.
//
// It does not compile anything (builder does), does not render manifests,
// and reads no environment: registry credentials come in as a keychain.
package image
