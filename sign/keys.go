package sign

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
)

// LoadPrivateKey reads a private key in PEM: cosign's ENCRYPTED SIGSTORE
// PRIVATE KEY (and the older ENCRYPTED COSIGN PRIVATE KEY), decrypted with
// password, or an unencrypted PKCS#8, EC or RSA key (password unused).
// Errors never hold the password or the key.
func LoadPrivateKey(pemBytes, password []byte) (crypto.Signer, error) {
	encrypted := strings.Contains(string(pemBytes), "ENCRYPTED")
	if encrypted && password == nil {
		return nil, errors.New("the key is encrypted and no password was given (COSIGN_PASSWORD)")
	}
	key, err := cryptoutils.UnmarshalPEMToPrivateKey(pemBytes, func(bool) ([]byte, error) {
		if !encrypted {
			return nil, nil // nil: parse the PEM as it is
		}
		return password, nil
	})
	switch {
	case err != nil && encrypted && strings.Contains(err.Error(), "decrypt"):
		return nil, errors.New("the key cannot be decrypted with the password given: wrong password (COSIGN_PASSWORD)?")
	case err != nil:
		return nil, fmt.Errorf("not a private key cosign or capirepo can read: %w", err)
	}
	s, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("a %T key cannot sign", key)
	}
	return s, nil
}

// Fingerprint names a public key: SHA256:<hex> of its PKIX (DER) form.
func Fingerprint(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(der)
	return "SHA256:" + hex.EncodeToString(sum[:]), nil
}

// keypair adapts a long-lived key to sigstore-go's sign.Keypair, which
// otherwise only comes as an ephemeral key it generates itself.
type keypair struct {
	priv crypto.Signer
	alg  signature.AlgorithmDetails
	hint []byte
}

func newKeypair(priv crypto.Signer) (*keypair, error) {
	alg, err := signature.GetDefaultAlgorithmDetails(priv.Public())
	if err != nil {
		return nil, fmt.Errorf("the key's algorithm cannot sign a Sigstore bundle: %w", err)
	}
	if t := alg.GetKeyType(); t != signature.ECDSA && t != signature.RSA {
		return nil, errors.New("only ECDSA keys (cosign's default) and RSA keys can sign here")
	}
	der, err := x509.MarshalPKIXPublicKey(priv.Public())
	if err != nil {
		return nil, err
	}
	// The hint cosign and sigstore-go write: base64 of the key's SHA-256.
	sum := sha256.Sum256(der)
	return &keypair{priv: priv, alg: alg, hint: []byte(base64.StdEncoding.EncodeToString(sum[:]))}, nil
}

func (k *keypair) GetHashAlgorithm() protocommon.HashAlgorithm { return k.alg.GetProtoHashType() }
func (k *keypair) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	return k.alg.GetSignatureAlgorithm()
}
func (k *keypair) GetHint() []byte { return k.hint }
func (k *keypair) GetKeyAlgorithm() string {
	if k.alg.GetKeyType() == signature.RSA {
		return "RSA"
	}
	return "ECDSA"
}
func (k *keypair) GetPublicKey() crypto.PublicKey { return k.priv.Public() }
func (k *keypair) GetPublicKeyPem() (string, error) {
	b, err := cryptoutils.MarshalPublicKeyToPEM(k.priv.Public())
	return string(b), err
}

// SignData signs data and returns the signature and the digest signed.
func (k *keypair) SignData(_ context.Context, data []byte) ([]byte, []byte, error) {
	h := k.alg.GetHashType().New()
	h.Write(data)
	digest := h.Sum(nil)
	sig, err := k.priv.Sign(rand.Reader, digest, k.alg.GetHashType())
	return sig, digest, err
}
