package publish

import (
	"bytes"
	"crypto/x509"
	"encoding/asn1"
	"encoding/json"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/release"
)

// Fulcio's certificate extensions that name the OIDC issuer (the current
// one and the deprecated one), compared raw.
var issuerOIDs = []asn1.ObjectIdentifier{{1, 3, 6, 1, 4, 1, 57264, 1, 8}, {1, 3, 6, 1, 4, 1, 57264, 1, 1}}

// SameSignature says whether two Sigstore bundles sign the same content
// for the same signer: the same message digest (or DSSE payload), and the
// same key, or certificates for the same subject from the same issuer.
// Signing again makes a new bundle (a new signature, certificate and log
// entry) for unchanged files; a target keeps the one it holds instead, so
// publishing a release again writes nothing. Nothing is verified here:
// verify --signatures does that.
func SameSignature(a, b []byte) bool {
	x, okx := readBundle(a)
	y, oky := readBundle(b)
	return okx && oky && x.content == y.content && x.signer == y.signer
}

type bundleKey struct{ content, signer string }

func readBundle(raw []byte) (bundleKey, bool) {
	var b struct {
		MediaType            string `json:"mediaType"`
		VerificationMaterial struct {
			PublicKey *struct {
				Hint string `json:"hint"`
			} `json:"publicKey"`
			Certificate *struct {
				RawBytes []byte `json:"rawBytes"`
			} `json:"certificate"`
			Chain *struct {
				Certificates []struct {
					RawBytes []byte `json:"rawBytes"`
				} `json:"certificates"`
			} `json:"x509CertificateChain"`
		} `json:"verificationMaterial"`
		MessageSignature *struct {
			MessageDigest struct {
				Algorithm string `json:"algorithm"`
				Digest    string `json:"digest"`
			} `json:"messageDigest"`
		} `json:"messageSignature"`
		DSSE *struct {
			Payload     string `json:"payload"`
			PayloadType string `json:"payloadType"`
		} `json:"dsseEnvelope"`
	}
	if json.Unmarshal(raw, &b) != nil || !strings.HasPrefix(b.MediaType, "application/vnd.dev.sigstore.bundle") {
		return bundleKey{}, false
	}
	var k bundleKey
	switch {
	case b.MessageSignature != nil && b.MessageSignature.MessageDigest.Digest != "":
		k.content = b.MessageSignature.MessageDigest.Algorithm + ":" + b.MessageSignature.MessageDigest.Digest
	case b.DSSE != nil && b.DSSE.Payload != "":
		k.content = b.DSSE.PayloadType + ":" + b.DSSE.Payload
	default:
		return bundleKey{}, false
	}
	vm := b.VerificationMaterial
	var der []byte
	switch {
	case vm.PublicKey != nil:
		k.signer = "key " + vm.PublicKey.Hint
		return k, vm.PublicKey.Hint != ""
	case vm.Certificate != nil:
		der = vm.Certificate.RawBytes
	case vm.Chain != nil && len(vm.Chain.Certificates) > 0:
		der = vm.Chain.Certificates[0].RawBytes
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return bundleKey{}, false
	}
	var id bytes.Buffer
	for _, s := range slices.Concat(cert.EmailAddresses, cert.DNSNames) {
		id.WriteString(s + "\n")
	}
	for _, u := range cert.URIs {
		id.WriteString(u.String() + "\n")
	}
	for _, oid := range issuerOIDs {
		for _, e := range cert.Extensions {
			if e.Id.Equal(oid) {
				id.Write(e.Value)
				id.WriteByte('\n')
			}
		}
	}
	k.signer = "certificate " + id.String()
	return k, true
}

// isBundle says whether a file is a Sigstore bundle by its name.
func isBundle(name string) bool { return strings.HasSuffix(name, release.BundleSuffix) }
