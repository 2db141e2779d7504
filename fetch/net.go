package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// guard is the one way out of the helper: every connection (git over HTTP
// and its redirects, SSH, the OCI registry and its token service) is made by
// its dialer, which checks each address against the denied ranges before
// connecting, and counts every byte received against maxFetchedBytes. What
// it refused is kept: it is the reason a fetch failed, whatever the library
// in between made of the error.
type guard struct {
	deny       []netip.Prefix
	maxFetched int64
	received   atomic.Int64
	requests   atomic.Int64
	dialer     net.Dialer

	mu      sync.Mutex
	refused error
}

func newGuard(in *input) (*guard, error) {
	g := &guard{maxFetched: in.MaxFetchedBytes, dialer: net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}}
	for _, c := range in.DenyCIDRs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return nil, failed("denyCidrs: %q is not a CIDR: %v", c, err)
		}
		g.deny = append(g.deny, p.Masked())
	}
	return g, nil
}

// refuse keeps the first refusal and returns it.
func (g *guard) refuse(err error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.refused == nil {
		g.refused = err
	}
	return g.refused
}

func (g *guard) refusal() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refused
}

// denied returns the denied range holding addr, if one does.
func (g *guard) denied(addr netip.Addr) (netip.Prefix, bool) {
	addr = addr.Unmap()
	for _, p := range g.deny {
		if p.Contains(addr) {
			return p, true
		}
	}
	return netip.Prefix{}, false
}

// DialContext connects to address (host:port) through the checks. A host
// with several addresses is tried on the next when one is denied; the dial
// is refused when no allowed one connected and a denied one was skipped,
// with the message the TypeScript side gives (src/kube/address-policy.ts).
func (g *guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex // the dialer may try two addresses at once
	var denials []denial
	d := g.dialer
	d.Control = func(_, resolved string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(resolved)
		if err != nil {
			return fmt.Errorf("the address %q could not be checked: %v", resolved, err)
		}
		if p, ok := g.denied(ap.Addr()); ok {
			mu.Lock()
			denials = append(denials, denial{ap.Addr().Unmap(), p})
			mu.Unlock()
			return errDenied
		}
		return nil
	}
	conn, err := d.DialContext(ctx, network, address)
	if err != nil {
		mu.Lock()
		defer mu.Unlock()
		if len(denials) > 0 {
			return nil, g.refuse(denialRefusal(host, denials))
		}
		return nil, err
	}
	return &countedConn{Conn: conn, g: g}, nil
}

var errDenied = errors.New("the address is denied")

// denial is an address and the denied range holding it.
type denial struct {
	addr netip.Addr
	cidr netip.Prefix
}

// denialRefusal words a refused connection as src/kube/address-policy.ts's refusal() does.
func denialRefusal(host string, ds []denial) error {
	var where string
	if lit, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil && len(ds) == 1 && lit.WithZone("").Unmap() == ds[0].addr {
		where = fmt.Sprintf("the address %s is in %s", ds[0].addr, ds[0].cidr)
	} else {
		parts := make([]string, len(ds))
		for i, d := range ds {
			parts[i] = fmt.Sprintf("%s (in %s)", d.addr, d.cidr)
		}
		where = "it resolves to " + strings.Join(parts, " and ")
	}
	return refused("connection to %s refused: %s, which --source-deny-cidrs denies; nothing was sent", host, where)
}

// Dial is DialContext without a context (golang.org/x/net/proxy's Dialer).
func (g *guard) Dial(network, address string) (net.Conn, error) {
	return g.DialContext(context.Background(), network, address)
}

// countedConn counts the bytes it receives; past the limit its reads fail.
type countedConn struct {
	net.Conn
	g *guard
}

func (c *countedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if total := c.g.received.Add(int64(n)); total > c.g.maxFetched {
		c.Conn.Close()
		return n, c.g.refuse(refused("the fetch received more than %d bytes (maxFetchedBytes); refused", c.g.maxFetched))
	}
	return n, err
}

// httpTransport is the HTTP transport of git and OCI: the guard's dialer, no
// proxy, the system roots and caPEM, each request counted. The roots are read
// (some hundred files, parsed) only before the first https request: a plain
// http fetch pays nothing for them.
func (g *guard) httpTransport(caPEM string) (http.RoundTripper, error) {
	if caPEM != "" && !x509.NewCertPool().AppendCertsFromPEM([]byte(caPEM)) {
		return nil, failed("caPEM holds no PEM certificate")
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           g.DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		IdleConnTimeout:       30 * time.Second,
		MaxIdleConnsPerHost:   4,
	}
	return &countedTransport{next: tr, g: g, tls: func() {
		roots, err := x509.SystemCertPool()
		if err != nil || roots == nil {
			roots = x509.NewCertPool()
		}
		if caPEM != "" {
			roots.AppendCertsFromPEM([]byte(caPEM))
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}}, nil
}

type countedTransport struct {
	next http.RoundTripper
	g    *guard
	// tls sets the transport's TLS config, once, before its first https request.
	tls     func()
	tlsOnce sync.Once
}

func (t *countedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.g.requests.Add(1)
	if req.URL.Scheme == "https" && t.tls != nil {
		t.tlsOnce.Do(t.tls)
	}
	return t.next.RoundTrip(req)
}
