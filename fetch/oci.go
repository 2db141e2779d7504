package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Flux's artifact media types (fluxcd/pkg/oci).
const (
	fluxConfigMediaType  = "application/vnd.cncf.flux.config.v1+json"
	fluxContentMediaType = "application/vnd.cncf.flux.content.v1.tar+gzip"
	titleAnnotation      = "org.opencontainers.image.title"
)

var digestPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

var realmRefused = regexp.MustCompile(`realm host "([^"]+)" is a private or link-local address`)

// ociRepo is one repository as this run reaches it.
type ociRepo struct {
	g    *guard
	repo name.Repository
	url  string
	opts []remote.Option
}

func runOCI(ctx context.Context, g *guard, in *input) (*output, error) {
	r, err := openOCIRepo(ctx, g, in)
	if err != nil {
		return nil, err
	}
	if in.Ref.Branch != "" || in.Ref.Commit != "" {
		return nil, failed("ref: an oci ref is a tag, semver or digest")
	}
	switch in.Op {
	case "resolve":
		res, err := r.resolve(in.Ref)
		if err != nil {
			return nil, err
		}
		return &output{Revision: res.revision, Resolved: res.commit, Ref: res.ref, Verified: "absent"}, nil
	case "fetch":
		return r.fetch(in)
	}
	return nil, failed("op %q: one of resolve, fetch", in.Op)
}

func openOCIRepo(ctx context.Context, g *guard, in *input) (*ociRepo, error) {
	rest, ok := strings.CutPrefix(in.URL, "oci://")
	if !ok {
		return nil, failed("url %q: an oci source's URL is oci://host[:port]/repository", redactURL(in.URL))
	}
	if strings.Contains(rest, "@") {
		return nil, refused("url %q has user info or a digest: put credentials in the secretRef and the digest in ref.digest", redactURL(in.URL))
	}
	var nameOpts []name.Option
	if in.Insecure {
		nameOpts = append(nameOpts, name.Insecure)
	}
	repo, err := name.NewRepository(rest, nameOpts...)
	if err != nil {
		return nil, failed("url %s: %v", in.URL, err)
	}
	a, err := ociAuth(in.Auth, repo.RegistryStr())
	if err != nil {
		return nil, err
	}
	rt, err := ociTransport(ctx, g, in, repo, a)
	if err != nil {
		return nil, (&ociRepo{g: g, url: in.URL}).explain(err, "reaching")
	}
	// rt is a transport.Wrapper: go-containerregistry neither pings nor
	// wraps it again, whatever the call.
	r := &ociRepo{g: g, repo: repo, url: in.URL, opts: []remote.Option{
		remote.WithTransport(rt),
		remote.WithContext(ctx),
		remote.WithJobs(1),
	}}
	return r, nil
}

// ociAuth: basic auth, a registry token, or the registry's entry in dockerConfigJson.
func ociAuth(a auth, registry string) (authn.Authenticator, error) {
	switch {
	case a.BearerToken != "":
		return authn.FromConfig(authn.AuthConfig{RegistryToken: a.BearerToken}), nil
	case a.Username != "" || a.Password != "":
		return &authn.Basic{Username: a.Username, Password: a.Password}, nil
	case a.DockerConfigJSON == "":
		return authn.Anonymous, nil
	}
	var cfg struct {
		Auths map[string]authn.AuthConfig `json:"auths"`
	}
	if err := json.Unmarshal([]byte(a.DockerConfigJSON), &cfg); err != nil {
		return nil, failed("dockerConfigJson is not a .dockerconfigjson: %v", err)
	}
	for host, entry := range cfg.Auths {
		if registryOf(host) == registry {
			return authn.FromConfig(entry), nil
		}
	}
	return authn.Anonymous, nil
}

// registryOf is a .dockerconfigjson key as a registry host ("https://host/v1/" too).
func registryOf(key string) string {
	key = strings.TrimPrefix(strings.TrimPrefix(key, "https://"), "http://")
	key, _, _ = strings.Cut(key, "/")
	if key == "docker.io" || key == "registry-1.docker.io" {
		return name.DefaultRegistry
	}
	return key
}

// resolve names the manifest the ref points to, by one HEAD (GET where
// HEAD is not served); a semver range lists the tags first.
func (r *ociRepo) resolve(want sourceRef) (*resolution, error) {
	if want.Digest != "" {
		if !digestPattern.MatchString(want.Digest) {
			return nil, failed("ref.digest %q is not sha256:<64 hex digits>", want.Digest)
		}
		if _, err := r.head(r.repo.Digest(want.Digest)); err != nil {
			return nil, err
		}
		return &resolution{commit: want.Digest, revision: want.Digest}, nil
	}
	tag, err := r.tagOf(want)
	if err != nil {
		return nil, err
	}
	d, err := r.head(r.repo.Tag(tag))
	if err != nil {
		return nil, err
	}
	return tagResolution(tag, d.Digest.String()), nil
}

func tagResolution(tag, digest string) *resolution {
	return &resolution{commit: digest, revision: tag + "@" + digest, ref: sourceRef{Tag: tag}}
}

// tagOf is the tag the ref names: its tag, the highest in its semver range, or latest.
func (r *ociRepo) tagOf(want sourceRef) (string, error) {
	tag := want.Tag
	if want.Semver != "" {
		if tag != "" {
			return "", failed("ref: one of tag, semver, digest")
		}
		tags, err := remote.List(r.repo, r.opts...)
		if err != nil {
			return "", r.explain(err, "listing the tags of")
		}
		if tag, err = pickSemver(tags, want.Semver); err != nil {
			return "", fmt.Errorf("%s: %w", r.url, err)
		}
	}
	if tag == "" {
		tag = "latest"
	}
	return tag, nil
}

// head gets the manifest's descriptor: HEAD, or GET where HEAD is not served.
func (r *ociRepo) head(ref name.Reference) (*v1.Descriptor, error) {
	d, err := remote.Head(ref, r.opts...)
	if err == nil {
		return d, nil
	}
	var te *transport.Error
	if errors.As(err, &te) && (te.StatusCode == http.StatusNotFound || te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden) {
		return nil, r.explain(err, "resolving "+ref.Identifier()+" in")
	}
	got, err := remote.Get(ref, r.opts...)
	if err != nil {
		return nil, r.explain(err, "resolving "+ref.Identifier()+" in")
	}
	return &got.Descriptor, nil
}

// fetch gets the manifest once (by the digest when it is known, which
// go-containerregistry checks the body against; else by the tag, the digest
// then being the body's SHA-256), then the layer.
func (r *ociRepo) fetch(in *input) (*output, error) {
	var res *resolution
	var ref name.Reference
	switch {
	case in.Resolved != "":
		if !digestPattern.MatchString(in.Resolved) {
			return nil, failed("resolved %q is not sha256:<64 hex digits>", in.Resolved)
		}
		res = &resolution{commit: in.Resolved, revision: in.Resolved}
		if in.Ref.Tag != "" {
			res = tagResolution(in.Ref.Tag, in.Resolved)
		}
		ref = r.repo.Digest(in.Resolved)
	case in.Ref.Digest != "":
		if !digestPattern.MatchString(in.Ref.Digest) {
			return nil, failed("ref.digest %q is not sha256:<64 hex digits>", in.Ref.Digest)
		}
		res = &resolution{commit: in.Ref.Digest, revision: in.Ref.Digest}
		ref = r.repo.Digest(in.Ref.Digest)
	default:
		tag, err := r.tagOf(in.Ref)
		if err != nil {
			return nil, err
		}
		ref = r.repo.Tag(tag)
	}
	desc, err := remote.Get(ref, r.opts...)
	if err != nil {
		return nil, r.explain(err, "fetching the manifest "+ref.Identifier()+" from")
	}
	if res == nil {
		if desc.Digest.Algorithm != "sha256" {
			return nil, failed("%s:%s: the manifest's digest %s is not sha256", r.url, ref.Identifier(), desc.Digest)
		}
		res = tagResolution(ref.Identifier(), desc.Digest.String())
	}
	switch desc.MediaType {
	case types.OCIManifestSchema1, types.DockerManifestSchema2:
	case types.OCIImageIndex, types.DockerManifestList:
		return nil, failed("%s@%s is an image index, not an artifact (one manifest)", r.url, res.commit)
	default:
		return nil, failed("%s@%s has the media type %q, not an OCI or Docker manifest", r.url, res.commit, desc.MediaType)
	}
	m, err := v1.ParseManifest(strings.NewReader(string(desc.Manifest)))
	if err != nil {
		return nil, failed("%s@%s: the manifest does not parse: %v", r.url, res.commit, err)
	}
	verified := "absent"
	if in.Verify.Provider != "" {
		if in.Verify.Provider != "cosign" {
			return nil, failed("verify.provider %q: only cosign", in.Verify.Provider)
		}
		fp, err := r.cosignVerify(res.commit, in.Verify.PublicKeys)
		if err != nil {
			return nil, err
		}
		verified = "cosign: " + fp
	}
	layer, err := selectLayer(m, in.LayerSelector.MediaType)
	if err != nil {
		return nil, fmt.Errorf("%s@%s: %w", r.url, res.commit, err)
	}
	data, err := r.blob(layer, in.MaxFetchedBytes, "the layer")
	if err != nil {
		return nil, err
	}
	out := &output{Revision: res.revision, Resolved: res.commit, Ref: res.ref, Data: data, Bytes: int64(len(data)), Verified: verified}
	switch in.LayerSelector.Operation {
	case "", "extract":
		out.Name = "tree.tar.gz"
	case "copy":
		out.Name, out.Files = "layer", 1
		if t := layer.Annotations[titleAnnotation]; t != "" {
			out.Name = t
		}
	default:
		return nil, failed("layerSelector.operation %q: one of extract, copy", in.LayerSelector.Operation)
	}
	return out, nil
}

// selectLayer picks the layer of the media type asked for; else Flux's
// content layer, else the first gzip'd tar layer.
func selectLayer(m *v1.Manifest, mediaType string) (v1.Descriptor, error) {
	for _, want := range []string{mediaType, fluxContentMediaType} {
		if want == "" {
			continue
		}
		for _, l := range m.Layers {
			if string(l.MediaType) == want {
				return l, nil
			}
		}
		if want == mediaType {
			return v1.Descriptor{}, failed("no layer has the media type %q", mediaType)
		}
	}
	for _, l := range m.Layers {
		mt := string(l.MediaType)
		if strings.HasSuffix(mt, "tar+gzip") || l.MediaType == types.OCILayer || l.MediaType == types.DockerLayer {
			return l, nil
		}
	}
	return v1.Descriptor{}, failed("no layer is a gzip'd tar (of %d layers); name one with layerSelector.mediaType", len(m.Layers))
}

// blob fetches one blob whole, refusing it before the fetch when its
// descriptor says it is larger than allowed, and after when its bytes are
// not its digest's (go-containerregistry checks the digest at the end).
func (r *ociRepo) blob(d v1.Descriptor, limit int64, what string) ([]byte, error) {
	if d.Size > limit {
		return nil, refused("%s %s is %d bytes, more than the %d bytes allowed (maxFetchedBytes); refused", what, d.Digest, d.Size, limit)
	}
	l, err := remote.Layer(r.repo.Digest(d.Digest.String()), r.opts...)
	if err != nil {
		return nil, r.explain(err, "fetching "+what+" "+d.Digest.String()+" from")
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, r.explain(err, "fetching "+what+" "+d.Digest.String()+" from")
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, d.Size+1))
	if err == nil && int64(len(data)) != d.Size {
		err = fmt.Errorf("%d bytes, where the manifest says %d", len(data), d.Size)
	}
	if err != nil {
		var f *failure
		if errors.As(err, &f) {
			return nil, err
		}
		return nil, refused("%s %s of %s does not match its digest (%v); refused", what, d.Digest, r.url, err)
	}
	return data, nil
}

func (r *ociRepo) explain(err error, doing string) error {
	var f *failure
	if errors.As(err, &f) {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &failure{exitTime, fmt.Sprintf("%s %s took longer than the fetch time limit", doing, r.url)}
	}
	// go-containerregistry refuses a token realm at a private or link-local
	// address literal before any connection: a denied one is our refusal.
	if m := realmRefused.FindStringSubmatch(err.Error()); m != nil && r.g != nil {
		if a, perr := netip.ParseAddr(m[1]); perr == nil {
			if p, ok := r.g.denied(a); ok {
				return r.g.refuse(denialRefusal(m[1], []denial{{a.Unmap(), p}}))
			}
		}
	}
	if strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") {
		return failed("%s %s: the registry answers in plain HTTP, which only `insecure` allows", doing, r.url)
	}
	var te *transport.Error
	if errors.As(err, &te) {
		switch te.StatusCode {
		case http.StatusUnauthorized:
			return failed("%s %s: authentication required or refused (the secretRef's credentials are missing or wrong)", doing, r.url)
		case http.StatusForbidden:
			return failed("%s %s: access denied", doing, r.url)
		case http.StatusNotFound:
			return failed("%s %s: not found", doing, r.url)
		}
	}
	return failed("%s %s: %v", doing, r.url, err)
}
