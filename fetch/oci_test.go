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
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
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
	wantFailure(t, err, exitRefused, "connection to 127.0.0.1 refused: the address 127.0.0.1 is in 127.0.0.1/32, which --source-deny-cidrs denies; nothing was sent")
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

// privateTLSRegistry is a registry over TLS that asks for basic auth (u/p),
// holding a Flux artifact at private:v1: its counts, host and CA.
func privateTLSRegistry(t *testing.T) (*testserve.Counts, string, string) {
	t.Helper()
	counts := testserve.NewCounts()
	srv := httptest.NewTLSServer(testserve.Registry(counts, "u", "p"))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "https://")
	ref, _ := name.ParseReference(host + "/private:v1")
	img, _ := mutate.Append(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), fluxConfigMediaType), layer(gzipped(t, []byte("x")), fluxContentMediaType, nil))
	if err := remote.Write(ref, img, remote.WithTransport(srv.Client().Transport), remote.WithAuth(&basicAuthn{"u", "p"})); err != nil {
		t.Fatal(err)
	}
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	return counts, host, caPEM
}

func TestOCIBasicAuthAndTLS(t *testing.T) {
	_, host, caPEM := privateTLSRegistry(t)
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

// What each operation costs against an anonymous registry (no ping), one
// whose token service hands anonymous tokens, and one with basic auth.
func TestOCIRequestCounts(t *testing.T) {
	f := newRegistry(t, nil)
	content := gzipped(t, []byte("counted"))
	d := f.push("app", "v1", layer(content, fluxContentMediaType, nil))
	url := f.url("app")
	check := func(what string, out *output, want map[string]int) {
		t.Helper()
		got := f.counts.Snapshot()
		total := 0
		for _, n := range want {
			total += n
		}
		for k, n := range want {
			if got[k] != n {
				t.Fatalf("%s: requests %v, want %v", what, got, want)
			}
		}
		if out.Requests != int64(total) || len(got) != len(want) {
			t.Fatalf("%s: requests %d %v, want %d %v", what, out.Requests, got, total, want)
		}
		f.counts.Reset()
	}
	f.counts.Reset()
	out := mustRun(t, input{Op: "fetch", Kind: "oci", URL: url, Ref: sourceRef{Tag: "v1"}, Insecure: true})
	if out.Resolved != d || out.Revision != "v1@"+d || !bytes.Equal(out.Data, content) {
		t.Fatalf("got %+v", out)
	}
	check("fetch by tag", out, map[string]int{"GET manifests": 1, "GET blobs": 1})
	out = mustRun(t, input{Op: "resolve", Kind: "oci", URL: url, Ref: sourceRef{Tag: "v1"}, Insecure: true})
	check("resolve by tag", out, map[string]int{"HEAD manifests": 1})
	out = mustRun(t, input{Op: "fetch", Kind: "oci", URL: url, Ref: sourceRef{Tag: "v1"}, Resolved: d, Insecure: true})
	check("fetch of resolved", out, map[string]int{"GET manifests": 1, "GET blobs": 1})
	out = mustRun(t, input{Op: "fetch", Kind: "oci", URL: url, Ref: sourceRef{Digest: d}, Insecure: true})
	check("fetch by digest", out, map[string]int{"GET manifests": 1, "GET blobs": 1})
	out = mustRun(t, input{Op: "fetch", Kind: "oci", URL: url, Ref: sourceRef{Semver: ">=1"}, Insecure: true})
	check("fetch by semver", out, map[string]int{"GET tags": 1, "GET manifests": 1, "GET blobs": 1})
	// Credentials: one ping for the challenge (in plain HTTP only, with insecure).
	out = mustRun(t, input{Op: "fetch", Kind: "oci", URL: url, Ref: sourceRef{Tag: "v1"}, Insecure: true, Auth: auth{Username: "u", Password: "p"}})
	check("fetch with credentials", out, map[string]int{"GET ping": 1, "GET manifests": 1, "GET blobs": 1})

	// Anonymous tokens: the first request's challenge, one exchange, then the token.
	tokens := testserve.NewCounts()
	var host string
	bearer := newRegistry(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/token" {
				tokens.Add("token " + r.URL.Query().Get("scope"))
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"token":"anon"}`))
				return
			}
			if r.Header.Get("Authorization") != "Bearer anon" && r.Method != http.MethodPut && r.Method != http.MethodPost && r.Method != http.MethodPatch {
				w.Header().Set("WWW-Authenticate", `Bearer realm="http://`+host+`/token",service="test"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	host = bearer.host
	bd := bearer.push("app", "v1", layer(content, fluxContentMediaType, nil))
	bearer.counts.Reset()
	out = mustRun(t, input{Op: "fetch", Kind: "oci", URL: bearer.url("app"), Ref: sourceRef{Tag: "v1"}, Insecure: true})
	if out.Resolved != bd || out.Requests != 4 || tokens.Get("token repository:app:pull") != 1 {
		t.Fatalf("bearer: %s, %d requests %v, tokens %v", out.Resolved, out.Requests, bearer.counts.Snapshot(), tokens.Snapshot())
	}
	// The registry behind the front sees the authorized ones only.
	if got := bearer.counts.Snapshot(); got["GET manifests"] != 1 || got["GET blobs"] != 1 || got["GET ping"] != 0 {
		t.Fatalf("bearer: requests %v", got)
	}
}

func TestOCIBasicAuthRequestCounts(t *testing.T) {
	counts, host, caPEM := privateTLSRegistry(t)
	counts.Reset()
	out := mustRun(t, input{Op: "fetch", Kind: "oci", URL: "oci://" + host + "/private", Ref: sourceRef{Tag: "v1"}, CAPEM: caPEM, Auth: auth{Username: "u", Password: "p"}})
	if got := counts.Snapshot(); out.Requests != 3 || got["GET ping"] != 1 || got["GET manifests"] != 1 || got["GET blobs"] != 1 {
		t.Fatalf("requests %d %v; want a ping, the manifest, the blob", out.Requests, got)
	}
}

// A blob redirected to a denied address is refused by the dialer, with the
// TypeScript side's wording; one redirected to an allowed address (another
// loopback one, which go-containerregistry's own check would refuse) is fetched.
func TestOCIBlobRedirect(t *testing.T) {
	var to atomic.Value // the redirect's target ("": none)
	to.Store("")
	f := newRegistry(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if target := to.Load().(string); target != "" && r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") {
				http.Redirect(w, r, target+r.URL.Path, http.StatusTemporaryRedirect)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	content := gzipped(t, []byte("redirected"))
	f.push("app", "v1", layer(content, fluxContentMediaType, nil))
	in := input{Op: "fetch", Kind: "oci", URL: f.url("app"), Ref: sourceRef{Tag: "v1"}, Insecure: true, DenyCIDRs: []string{"169.254.0.0/16"}}
	to.Store("http://169.254.169.254")
	_, err := runIn(t, in)
	wantFailure(t, err, exitRefused, "connection to 169.254.169.254 refused: the address 169.254.169.254 is in 169.254.0.0/16, which --source-deny-cidrs denies; nothing was sent")

	ln := listenOn(t, "127.0.0.2:0")
	blobs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		to.Store("") // the registry serves this one itself
		resp, err := http.Get("http://" + f.host + r.URL.Path)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	blobs.Listener.Close()
	blobs.Listener = ln
	blobs.Start()
	defer blobs.Close()
	to.Store(blobs.URL)
	out := mustRun(t, in)
	if !bytes.Equal(out.Data, content) {
		t.Fatalf("got %q", out.Data)
	}
}

// A token realm at a denied address is refused as a denied connection is.
func TestOCIRealmDenied(t *testing.T) {
	f := newRegistry(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="http://169.254.169.254/token",service="x"`)
			w.WriteHeader(http.StatusUnauthorized)
		})
	})
	_, err := runIn(t, input{Op: "resolve", Kind: "oci", URL: f.url("app"), Insecure: true, DenyCIDRs: []string{"169.254.0.0/16"}})
	wantFailure(t, err, exitRefused, "connection to 169.254.169.254 refused: the address 169.254.169.254 is in 169.254.0.0/16, which --source-deny-cidrs denies; nothing was sent")
}
