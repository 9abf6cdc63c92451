// Package sign makes and checks what lets a user trust a release without
// trusting where it was downloaded from: Sigstore bundles (v0.3) for a
// release's checksums.txt and provenance, signatures of the manager image
// and of OCI artifacts as OCI 1.1 referrers (the layout cosign v3 writes),
// and CycloneDX SBOMs of the manager binaries and image.
//
// Signing is keyless (an OIDC token from the CI, a certificate from Fulcio,
// an entry in Rekor, as cosign does by default) or key-based (a cosign-format
// private key, no transparency log unless asked). What a Sigstore instance
// offers and what it is trusted for come from a signing config and a
// trusted root (cosign v3's --signing-config and --trusted-root), or from
// the public instance's TUF repository.
//
// Verification checks the bundles against the files (checksums.txt, then
// every file's sha256 in it, then the provenance's subjects) and the
// referrers of an image against its digest, for a public key or a
// certificate identity and issuer.
//
// AddSBOMs makes the SBOMs of what a build made and adds them to its
// release; LoadVerifier makes a verifier with the trusted root a keyless
// check needs.
//
// The package takes values: cmd/capirepo reads the key, its password and
// the OIDC token from the environment. It does not decide when to sign (the
// release pipeline does) nor upload what it made (the publish targets do). It signs with
// github.com/sigstore/sigstore-go and reads keys with
// github.com/sigstore/sigstore's cryptoutils, not the cosign binary.
package sign
