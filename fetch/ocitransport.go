package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// maxRedirects bounds a registry request's redirects (Go's http.Client's bound).
const maxRedirects = 10

// ociTransport is the one registry transport of a run, made once and given
// to every remote call as a transport.Wrapper (so go-containerregistry pings
// and authenticates no more per call). Innermost first: the guard's counted
// transport; HTTPS only unless `insecure` (the registry's own http URLs,
// which go-containerregistry makes for loopback and private hosts, are
// rewritten to https); redirects followed here, each hop dialed through the
// guard, so a redirect to a denied address is refused by the dialer as any
// connection is (go-containerregistry's own redirect check never sees one);
// retries; the user agent; then authentication.
//
// Anonymous: no ping. Each request goes as it is; the first 401 with a
// Bearer challenge from the registry is answered by the token exchange it
// names (anonymous) and the request sent again with the token, as `oras`
// does. With credentials the registry is pinged once, for the challenge, and
// go-containerregistry's basic or bearer transport does the rest.
func ociTransport(ctx context.Context, g *guard, in *input, repo name.Repository, a authn.Authenticator) (http.RoundTripper, error) {
	rt, err := g.httpTransport(in.CAPEM)
	if err != nil {
		return nil, err
	}
	// go-containerregistry falls back to plain HTTP for private and
	// loopback registries by itself; only `insecure` allows that, and then
	// the registry is reached in plain HTTP only (its ping tries no HTTPS).
	rt = &registryScheme{next: rt, registry: repo.RegistryStr(), insecure: in.Insecure}
	rt = &followRedirects{next: rt}
	rt = transport.NewRetry(rt,
		transport.WithRetryBackoff(transport.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Steps: 2}),
		transport.WithRetryPredicate(retryable),
		transport.WithRetryStatusCodes(http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
			http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout))
	rt = transport.NewUserAgent(rt, "syncprims-fetch")
	scopes := []string{repo.Scope(transport.PullScope)}
	if a != authn.Anonymous {
		return transport.NewWithContext(ctx, repo.Registry, a, rt, scopes)
	}
	lazy := &challengeAuth{reg: repo.Registry, base: rt, scopes: scopes}
	// A Wrapper around lazy, without a ping: a "basic" challenge with
	// anonymous credentials adds nothing to a request.
	return transport.FromToken(repo.Registry, authn.Anonymous, lazy, &transport.Challenge{Scheme: "basic"}, nil)
}

// retryable: network blips, never a refusal (a denied address, a limit).
func retryable(err error) bool {
	var f *failure
	if errors.As(err, &f) {
		return false
	}
	var temp interface{ Temporary() bool }
	if errors.As(err, &temp) && temp.Temporary() {
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed)
}

// registryScheme sends the registry's requests in HTTPS, or with `insecure`
// in plain HTTP, whatever scheme go-containerregistry gave them; anything
// else (a redirect's target) goes in HTTPS only unless `insecure`.
type registryScheme struct {
	next     http.RoundTripper
	registry string
	insecure bool
}

func (t *registryScheme) RoundTrip(req *http.Request) (*http.Response, error) {
	want := "https"
	if t.insecure {
		want = "http"
	}
	if req.URL.Host == t.registry && req.URL.Scheme != want {
		req = req.Clone(req.Context())
		req.URL.Scheme = want
	}
	if req.URL.Scheme != "https" && !t.insecure {
		return nil, fmt.Errorf("%s would be reached over plain HTTP, which only `insecure` allows", req.URL.Host)
	}
	return t.next.RoundTrip(req)
}

// followRedirects follows a GET's or HEAD's redirects itself, dropping the
// credentials when the host changes.
type followRedirects struct{ next http.RoundTripper }

func (t *followRedirects) RoundTrip(req *http.Request) (*http.Response, error) {
	for hops := 0; ; hops++ {
		resp, err := t.next.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		switch resp.StatusCode {
		case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		default:
			return resp, nil
		}
		loc := resp.Header.Get("Location")
		if loc == "" || (req.Method != http.MethodGet && req.Method != http.MethodHead) {
			return resp, nil
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if hops >= maxRedirects {
			return nil, fmt.Errorf("%s %s: stopped after %d redirects", req.Method, req.URL.Redacted(), maxRedirects)
		}
		u, err := req.URL.Parse(loc)
		if err != nil {
			return nil, fmt.Errorf("%s %s: a redirect to %q: %v", req.Method, req.URL.Redacted(), loc, err)
		}
		next := req.Clone(req.Context())
		next.URL, next.Host = u, ""
		if u.Host != req.URL.Host {
			next.Header.Del("Authorization")
			next.Header.Del("Cookie")
		}
		req = next
	}
}

// challengeAuth sends requests anonymously until the registry answers one
// with a Bearer challenge; then it exchanges for the token the challenge
// names and sends that request, and every later one, with it.
type challengeAuth struct {
	reg    name.Registry
	base   http.RoundTripper
	scopes []string

	mu     sync.Mutex
	authed http.RoundTripper
}

func (c *challengeAuth) RoundTrip(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	authed := c.authed
	c.mu.Unlock()
	if authed != nil {
		return authed.RoundTrip(req)
	}
	resp, err := c.base.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || req.URL.Host != c.reg.RegistryStr() || (req.Body != nil && req.Body != http.NoBody) {
		return resp, err
	}
	ch := bearerChallenge(resp.Header.Values("WWW-Authenticate"))
	if ch == nil {
		return resp, nil // Basic, or no challenge: anonymous has no answer
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	ch.Insecure = req.URL.Scheme == "http"
	tok, err := transport.Exchange(req.Context(), c.reg, authn.Anonymous, c.base, c.scopes, ch)
	if err != nil {
		return nil, err
	}
	bt, err := transport.FromToken(c.reg, authn.Anonymous, c.base, ch, tok)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.authed = bt
	c.mu.Unlock()
	return bt.RoundTrip(req)
}

// bearerChallenge returns the Bearer challenge among WWW-Authenticate values, if one is.
func bearerChallenge(values []string) *transport.Challenge {
	for _, v := range values {
		scheme, params := parseChallenge(v)
		if scheme == "bearer" && params["realm"] != "" {
			return &transport.Challenge{Scheme: "bearer", Parameters: params}
		}
	}
	return nil
}

// parseChallenge reads `Scheme k=v, k="quoted \" value"` (RFC 7235, one challenge).
func parseChallenge(v string) (string, map[string]string) {
	scheme, rest, _ := strings.Cut(strings.TrimSpace(v), " ")
	params := map[string]string{}
	for {
		rest = strings.TrimLeft(rest, " \t,")
		k, after, ok := strings.Cut(rest, "=")
		if !ok || k == "" {
			break
		}
		k = strings.ToLower(strings.TrimSpace(k))
		var val string
		if strings.HasPrefix(after, `"`) {
			var b strings.Builder
			i := 1
			for ; i < len(after) && after[i] != '"'; i++ {
				if after[i] == '\\' && i+1 < len(after) {
					i++
				}
				b.WriteByte(after[i])
			}
			val, rest = b.String(), after[min(i+1, len(after)):]
		} else {
			val, rest, _ = strings.Cut(after, ",")
			val = strings.TrimSpace(val)
		}
		params[k] = val
	}
	return strings.ToLower(scheme), params
}
