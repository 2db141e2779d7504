package main

import (
	"bytes"
	"compress/gzip"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/syncprims/syncprims/fetch/internal/testserve"
)

// registryFixture is an in-memory registry on 127.0.0.1, wrapped by wrap.
type registryFixture struct {
	t      *testing.T
	host   string
	counts *testserve.Counts
}

func newRegistry(t *testing.T, wrap func(http.Handler) http.Handler) *registryFixture {
	t.Helper()
	counts := testserve.NewCounts()
	h := testserve.Registry(counts, "", "")
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &registryFixture{t: t, host: strings.TrimPrefix(srv.URL, "http://"), counts: counts}
}

// push writes an image of one layer (Flux's artifact format) at repo:tag and returns its digest.
func (f *registryFixture) push(repo, tag string, layers ...mutate.Addendum) string {
	f.t.Helper()
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, fluxConfigMediaType)
	img, err := mutate.Append(img, layers...)
	if err != nil {
		f.t.Fatal(err)
	}
	ref, err := name.ParseReference(f.host+"/"+repo+":"+tag, name.Insecure)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		f.t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		f.t.Fatal(err)
	}
	return d.String()
}

func (f *registryFixture) url(repo string) string { return "oci://" + f.host + "/" + repo }

func layer(data []byte, mediaType string, annotations map[string]string) mutate.Addendum {
	return mutate.Addendum{Layer: static.NewLayer(data, types.MediaType(mediaType)), Annotations: annotations}
}

func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	gz.Write(data)
	gz.Close()
	return buf.Bytes()
}

func TestOCIResolveAndFetch(t *testing.T) {
	f := newRegistry(t, nil)
	content := gzipped(t, []byte("a tarball, as far as the helper cares"))
	d1 := f.push("app", "v1.0.0", layer(content, fluxContentMediaType, nil))
	d2 := f.push("app", "v1.2.0", layer(gzipped(t, []byte("v1.2.0")), fluxContentMediaType, nil))
	f.push("app", "v2.0.0-rc.1", layer(gzipped(t, []byte("rc")), fluxContentMediaType, nil))
	latest := f.push("app", "latest", layer(gzipped(t, []byte("latest")), fluxContentMediaType, nil))
	url := f.url("app")
	cases := []struct {
		ref      sourceRef
		digest   string
		revision string
	}{
		{sourceRef{Tag: "v1.0.0"}, d1, "v1.0.0@" + d1},
		{sourceRef{Semver: ">=1.0.0"}, d2, "v1.2.0@" + d2},
		{sourceRef{Semver: "~1.0"}, d1, "v1.0.0@" + d1},
		{sourceRef{Digest: d1}, d1, d1},
		{sourceRef{}, latest, "latest@" + latest},
	}
	for _, c := range cases {
		out := mustRun(t, input{Op: "resolve", Kind: "oci", URL: url, Ref: c.ref, Insecure: true})
		if out.Resolved != c.digest || out.Revision != c.revision {
			t.Fatalf("%+v: got %s %s; want %s %s", c.ref, out.Resolved, out.Revision, c.digest, c.revision)
		}
	}
	out := mustRun(t, input{Op: "fetch", Kind: "oci", URL: url, Ref: sourceRef{Tag: "v1.0.0"}, Insecure: true})
	if !bytes.Equal(out.Data, content) || out.Name != "tree.tar.gz" || out.Bytes != int64(len(content)) || out.Verified != "absent" {
		t.Fatalf("got %+v", out)
	}
	// fetch with resolved: the manifest and the layer only, by digest.
	f.counts.Reset()
	out = mustRun(t, input{Op: "fetch", Kind: "oci", URL: url, Ref: sourceRef{Tag: "v1.0.0"}, Resolved: d1, Insecure: true})
	if !bytes.Equal(out.Data, content) || out.Revision != "v1.0.0@"+d1 {
		t.Fatalf("got %+v", out)
	}
	if f.counts.Get("HEAD manifests") != 0 || f.counts.Get("GET manifests") != 1 || f.counts.Get("GET blobs") != 1 {
		t.Fatalf("requests %v", f.counts.Snapshot())
	}
	// Plain HTTP only with insecure.
	_, err := runIn(t, input{Op: "resolve", Kind: "oci", URL: url})
	wantFailure(t, err, exitFailed, "plain HTTP")
	_, err = runIn(t, input{Op: "resolve", Kind: "oci", URL: url, Ref: sourceRef{Tag: "nope"}, Insecure: true})
	wantFailure(t, err, exitFailed, "not found")
	_, err = runIn(t, input{Op: "resolve", Kind: "oci", URL: url, Insecure: true, DenyCIDRs: []string{"127.0.0.1/32"}})
	wantFailure(t, err, exitRefused, "127.0.0.1", "denyCidrs")
}

func TestOCILayerSelection(t *testing.T) {
	f := newRegistry(t, nil)
	yaml := []byte("kind: ConfigMap\n")
	f.push("mixed", "v1",
		layer([]byte("{}"), "application/vnd.example.meta+json", nil),
		layer(yaml, "application/vnd.example.yaml", map[string]string{titleAnnotation: "app.yaml"}),
	)
	out := mustRun(t, input{Op: "fetch", Kind: "oci", URL: f.url("mixed"), Ref: sourceRef{Tag: "v1"}, Insecure: true,
		LayerSelector: layerSelector{MediaType: "application/vnd.example.yaml", Operation: "copy"}})
	if out.Name != "app.yaml" || !bytes.Equal(out.Data, yaml) || out.Files != 1 {
		t.Fatalf("got %+v", out)
	}
	_, err := runIn(t, input{Op: "fetch", Kind: "oci", URL: f.url("mixed"), Ref: sourceRef{Tag: "v1"}, Insecure: true})
	wantFailure(t, err, exitFailed, "no layer is a gzip'd tar")
}

// A tar bomb is passed through as it is: the caller's extractor refuses it.
func TestOCITarBombPassedThrough(t *testing.T) {
	f := newRegistry(t, nil)
	bomb := gzipped(t, make([]byte, 64<<20))
	f.push("bomb", "v1", layer(bomb, fluxContentMediaType, nil))
	out := mustRun(t, input{Op: "fetch", Kind: "oci", URL: f.url("bomb"), Ref: sourceRef{Tag: "v1"}, Insecure: true, MaxUnpackedBytes: 1 << 20})
	if !bytes.Equal(out.Data, bomb) {
		t.Fatalf("%d bytes, want the %d of the layer as it is", len(out.Data), len(bomb))
	}
	_, err := runIn(t, input{Op: "fetch", Kind: "oci", URL: f.url("bomb"), Ref: sourceRef{Tag: "v1"}, Insecure: true, MaxFetchedBytes: int64(len(bomb) / 2)})
	wantFailure(t, err, exitRefused, "maxFetchedBytes")
}

// A registry that serves other bytes for a layer than its digest's is refused.
func TestOCITamperedLayer(t *testing.T) {
	var tamper bool
	f := newRegistry(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !tamper || r.Method != http.MethodGet || !strings.Contains(r.URL.Path, "/blobs/") {
				next.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			body := rec.Body.Bytes()
			if len(body) > 0 {
				body[len(body)-1] ^= 0xff
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			w.Write(body)
		})
	})
	d := f.push("app", "v1", layer(gzipped(t, []byte("the real content")), fluxContentMediaType, nil))
	tamper = true
	_, err := runIn(t, input{Op: "fetch", Kind: "oci", URL: f.url("app"), Ref: sourceRef{Tag: "v1"}, Insecure: true})
	wantFailure(t, err, exitRefused, "does not match its digest")
	_ = d
}

// sign stores a cosign simple-signing signature of digest at the .sig tag, made with key.
func (f *registryFixture) sign(repo, digest string, key *ecdsa.PrivateKey, signedDigest string) {
	f.t.Helper()
	payload, _ := json.Marshal(map[string]any{
		"critical": map[string]any{
			"identity": map[string]string{"docker-reference": f.host + "/" + repo},
			"image":    map[string]string{"docker-manifest-digest": signedDigest},
			"type":     "cosign container image signature",
		},
		"optional": nil,
	})
	sum := sha256.Sum256(payload)
	sig, err := ecdsa.SignASN1(rand.Reader, key, sum[:])
	if err != nil {
		f.t.Fatal(err)
	}
	h, _ := v1.NewHash(digest)
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img, err = mutate.Append(img, layer(payload, simpleSigningMediaType, map[string]string{signatureAnnotation: base64.StdEncoding.EncodeToString(sig)}))
	if err != nil {
		f.t.Fatal(err)
	}
	ref, _ := name.ParseReference(f.host+"/"+repo+":sha256-"+h.Hex+".sig", name.Insecure)
	if err := remote.Write(ref, img); err != nil {
		f.t.Fatal(err)
	}
}

func publicPEM(t *testing.T, k *ecdsa.PrivateKey) string {
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

func TestOCICosign(t *testing.T) {
	f := newRegistry(t, nil)
	signer, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	stranger, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	content := gzipped(t, []byte("signed"))
	d := f.push("signed", "v1", layer(content, fluxContentMediaType, nil))
	f.sign("signed", d, signer, d)
	in := input{Op: "fetch", Kind: "oci", URL: f.url("signed"), Ref: sourceRef{Tag: "v1"}, Insecure: true,
		Verify: verify{Provider: "cosign", PublicKeys: []string{publicPEM(t, stranger), publicPEM(t, signer)}}}
	out := mustRun(t, in)
	der, _ := x509.MarshalPKIXPublicKey(&signer.PublicKey)
	sum := sha256.Sum256(der)
	if want := "cosign: sha256:" + hexOf(sum[:]); out.Verified != want || !bytes.Equal(out.Data, content) {
		t.Fatalf("verified %q, want %q", out.Verified, want)
	}
	// The wrong key: refused before the layer is fetched.
	f.counts.Reset()
	in.Verify.PublicKeys = []string{publicPEM(t, stranger)}
	_, err := runIn(t, in)
	wantFailure(t, err, exitRefused, "none of the 1 cosign signatures")
	if n := f.counts.Get("GET blobs"); n != 1 {
		t.Fatalf("%d blobs fetched; want 1 (the signature's payload, not the layer)", n)
	}
	// Unsigned: refused.
	d2 := f.push("signed", "v2", layer(gzipped(t, []byte("unsigned")), fluxContentMediaType, nil))
	in.Ref, in.Verify.PublicKeys = sourceRef{Tag: "v2"}, []string{publicPEM(t, signer)}
	_, err = runIn(t, in)
	wantFailure(t, err, exitRefused, "no cosign signature", d2)
	// A signature made by the key, but of another artifact, copied here: refused.
	f.sign("signed", d2, signer, d)
	_, err = runIn(t, in)
	wantFailure(t, err, exitRefused, "names "+d)
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

func TestOCIBasicAuthAndTLS(t *testing.T) {
	counts := testserve.NewCounts()
	srv := httptest.NewTLSServer(testserve.Registry(counts, "u", "p"))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "https://")
	ref, _ := name.ParseReference(host + "/private:v1")
	img, _ := mutate.Append(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), fluxConfigMediaType), layer(gzipped(t, []byte("x")), fluxContentMediaType, nil))
	if err := remote.Write(ref, img, remote.WithTransport(srv.Client().Transport), remote.WithAuth(&basicAuthn{"u", "p"})); err != nil {
		t.Fatal(err)
	}
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	url := "oci://" + host + "/private"
	_, err := runIn(t, input{Op: "resolve", Kind: "oci", URL: url, Ref: sourceRef{Tag: "v1"}, CAPEM: caPEM})
	wantFailure(t, err, exitFailed, "authentication")
	_, err = runIn(t, input{Op: "resolve", Kind: "oci", URL: url, Ref: sourceRef{Tag: "v1"}, Auth: auth{Username: "u", Password: "p"}})
	wantFailure(t, err, exitFailed, "certificate")
	mustRun(t, input{Op: "fetch", Kind: "oci", URL: url, Ref: sourceRef{Tag: "v1"}, CAPEM: caPEM, Auth: auth{Username: "u", Password: "p"}})
	dockerConfig := `{"auths":{"` + host + `":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("u:p")) + `"}}}`
	mustRun(t, input{Op: "resolve", Kind: "oci", URL: url, Ref: sourceRef{Tag: "v1"}, CAPEM: caPEM, Auth: auth{DockerConfigJSON: dockerConfig}})
}

type basicAuthn struct{ user, password string }

func (b *basicAuthn) Authorization() (*authn.AuthConfig, error) {
	return &authn.AuthConfig{Username: b.user, Password: b.password}, nil
}
