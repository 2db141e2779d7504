package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// cosign's simple signing, as `cosign sign --key` stores it: the manifest at
// the tag sha256-<hex>.sig of the artifact's repository, one layer per
// signature whose blob is the payload and whose annotation is the signature
// (base64) over the payload's bytes.
const (
	simpleSigningMediaType = "application/vnd.dev.cosign.simplesigning.v1+json"
	signatureAnnotation    = "dev.cosignproject.cosign/signature"
	simpleSigningType      = "cosign container image signature"
	maxPayloadBytes        = 1 << 20
	maxSignatures          = 32
)

type simpleSigning struct {
	Critical struct {
		Identity struct {
			DockerReference string `json:"docker-reference"`
		} `json:"identity"`
		Image struct {
			DockerManifestDigest string `json:"docker-manifest-digest"`
		} `json:"image"`
		Type string `json:"type"`
	} `json:"critical"`
}

// verifier is one public key of verify.publicKeys.
type verifier struct {
	key         crypto.PublicKey
	fingerprint string
}

func parseKeys(pems []string) ([]verifier, error) {
	if len(pems) == 0 {
		return nil, failed("verify: no publicKeys to verify the cosign signature with")
	}
	var out []verifier
	for i, p := range pems {
		block, _ := pem.Decode([]byte(p))
		if block == nil {
			return nil, failed("verify.publicKeys[%d] is not PEM", i)
		}
		key, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, failed("verify.publicKeys[%d] is not a PKIX public key: %v", i, err)
		}
		switch key.(type) {
		case *ecdsa.PublicKey, ed25519.PublicKey, *rsa.PublicKey:
		default:
			return nil, failed("verify.publicKeys[%d] is a %T: cosign keys are ECDSA, Ed25519 or RSA", i, key)
		}
		sum := sha256.Sum256(block.Bytes)
		out = append(out, verifier{key: key, fingerprint: "sha256:" + hex.EncodeToString(sum[:])})
	}
	return out, nil
}

// verifies reports whether sig is the key's signature over payload, as
// sigstore's verifiers check it (SHA-256; RSA PKCS #1 v1.5 or PSS).
func (v verifier) verifies(payload, sig []byte) bool {
	digest := sha256.Sum256(payload)
	switch k := v.key.(type) {
	case *ecdsa.PublicKey:
		return ecdsa.VerifyASN1(k, digest[:], sig)
	case ed25519.PublicKey:
		return ed25519.Verify(k, payload, sig)
	case *rsa.PublicKey:
		return rsa.VerifyPKCS1v15(k, crypto.SHA256, digest[:], sig) == nil ||
			rsa.VerifyPSS(k, crypto.SHA256, digest[:], sig, nil) == nil
	}
	return false
}

// cosignVerify finds a signature of the artifact's manifest digest that one
// of the keys made, and returns that key's fingerprint; anything else is a
// refusal. Only the signature's manifest and payloads are fetched.
func (r *ociRepo) cosignVerify(digest string, publicKeys []string) (string, error) {
	keys, err := parseKeys(publicKeys)
	if err != nil {
		return "", err
	}
	h, err := v1.NewHash(digest)
	if err != nil {
		return "", failed("%s: %v", digest, err)
	}
	tag := r.repo.Tag(h.Algorithm + "-" + h.Hex + ".sig")
	desc, err := remote.Get(tag, r.opts...)
	if err != nil {
		var te *transport.Error
		if errors.As(err, &te) && te.StatusCode == http.StatusNotFound {
			return "", refused("%s@%s has no cosign signature (no tag %s); refused", r.url, digest, tag.TagStr())
		}
		return "", r.explain(err, "fetching the cosign signature "+tag.TagStr()+" from")
	}
	m, err := v1.ParseManifest(strings.NewReader(string(desc.Manifest)))
	if err != nil {
		return "", refused("%s: the cosign signature manifest %s does not parse: %v; refused", r.url, tag.TagStr(), err)
	}
	tried := 0
	for _, l := range m.Layers {
		if l.MediaType != simpleSigningMediaType || tried >= maxSignatures {
			continue
		}
		sig, err := base64.StdEncoding.DecodeString(l.Annotations[signatureAnnotation])
		if err != nil || len(sig) == 0 {
			continue
		}
		tried++
		payload, err := r.blob(l, maxPayloadBytes, "the cosign payload")
		if err != nil {
			return "", err
		}
		for _, k := range keys {
			if !k.verifies(payload, sig) {
				continue
			}
			var p simpleSigning
			if err := json.Unmarshal(payload, &p); err != nil {
				return "", refused("%s: a cosign payload signed by %s does not parse: %v; refused", r.url, k.fingerprint, err)
			}
			if p.Critical.Type != simpleSigningType {
				return "", refused("%s: a cosign payload signed by %s has the type %q, not %q; refused", r.url, k.fingerprint, p.Critical.Type, simpleSigningType)
			}
			if p.Critical.Image.DockerManifestDigest != digest {
				return "", refused("%s: a cosign payload signed by %s names %s, not %s; refused", r.url, k.fingerprint, p.Critical.Image.DockerManifestDigest, digest)
			}
			return k.fingerprint, nil
		}
	}
	if tried == 0 {
		return "", refused("%s@%s: the cosign signature %s holds no simple-signing signature; refused", r.url, digest, tag.TagStr())
	}
	return "", refused("%s@%s: none of the %d cosign signatures was made by %s; refused", r.url, digest, tried, keyList(keys))
}

func keyList(keys []verifier) string {
	if len(keys) == 1 {
		return "the key " + keys[0].fingerprint
	}
	var fps []string
	for _, k := range keys {
		fps = append(fps, k.fingerprint)
	}
	return fmt.Sprintf("any of the %d keys (%s)", len(keys), strings.Join(fps, ", "))
}
