package main

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
	"golang.org/x/net/proxy"
)

// guardProxyScheme is how go-git's SSH transport is made to dial through the
// guard: it dials through a golang.org/x/net/proxy dialer when the endpoint
// names a proxy, and this scheme's dialer is the guard's.
const guardProxyScheme = "syncprims-guard"

var (
	registerGuard sync.Once
	sshGuard      atomic.Pointer[guard] // this run's
)

func useGuardForSSH(g *guard) {
	sshGuard.Store(g)
	registerGuard.Do(func() {
		proxy.RegisterDialerType(guardProxyScheme, func(*url.URL, proxy.Dialer) (proxy.Dialer, error) {
			return sshGuard.Load(), nil
		})
	})
}

// sshAuth is go-git's SSH auth method for this run: the identity key (no
// agent), the host keys of knownHosts only, and the host key algorithms they
// hold (so the server offers a key we can check).
type sshAuth struct {
	user    string
	methods []ssh.AuthMethod
	hosts   *knownHostKeys
	g       *guard
	address string
}

func (a *sshAuth) Name() string   { return "ssh-identity" }
func (a *sshAuth) String() string { return "user: " + a.user + ", name: ssh-identity" }

func (a *sshAuth) ClientConfig() (*ssh.ClientConfig, error) {
	return &ssh.ClientConfig{
		User:              a.user,
		Auth:              a.methods,
		HostKeyCallback:   a.checkHostKey,
		HostKeyAlgorithms: a.hosts.algorithms(a.address),
		Timeout:           30 * time.Second,
	}, nil
}

func (a *sshAuth) checkHostKey(hostname string, remote net.Addr, key ssh.PublicKey) error {
	a.g.requests.Add(1) // one SSH connection
	if err := a.hosts.check(hostname, key); err != nil {
		return a.g.refuse(err)
	}
	return nil
}

func newSSHAuth(g *guard, ep *transport.Endpoint, in auth) (*sshAuth, error) {
	if strings.TrimSpace(in.KnownHosts) == "" {
		return nil, refused("ssh://%s: no knownHosts in the secretRef; every SSH connection is refused without it", ep.Host)
	}
	hosts, err := parseKnownHosts(in.KnownHosts)
	if err != nil {
		return nil, failed("knownHosts: %v", err)
	}
	user := ep.User
	if user == "" {
		user = in.Username
	}
	if user == "" {
		user = "git"
	}
	a := &sshAuth{user: user, hosts: hosts, g: g}
	port := ep.Port
	if port <= 0 {
		port = 22
	}
	a.address = net.JoinHostPort(ep.Host, strconv.Itoa(port))
	if in.Identity != "" {
		var signer ssh.Signer
		if in.IdentityPassphrase != "" {
			signer, err = ssh.ParsePrivateKeyWithPassphrase([]byte(in.Identity), []byte(in.IdentityPassphrase))
		} else {
			signer, err = ssh.ParsePrivateKey([]byte(in.Identity))
		}
		var missing *ssh.PassphraseMissingError
		switch {
		case errors.As(err, &missing):
			return nil, failed("identity: the key is encrypted and the secretRef has no identityPassphrase")
		case err != nil:
			return nil, failed("identity: not a private key this helper reads (%v)", err)
		}
		a.methods = append(a.methods, ssh.PublicKeys(signer))
	}
	if in.Password != "" {
		a.methods = append(a.methods, ssh.Password(in.Password))
	}
	return a, nil
}

// knownHostKeys is a known_hosts text, parsed in memory (knownhosts.New
// reads files only): each line's host patterns (plain, [host]:port,
// wildcards, negations, hashed), its key, and whether it is revoked.
// @cert-authority lines are not trusted (no CA-signed host keys).
type knownHostKeys struct {
	lines []knownHostLine
}

type knownHostLine struct {
	patterns []string
	key      ssh.PublicKey
	revoked  bool
}

func parseKnownHosts(text string) (*knownHostKeys, error) {
	k := &knownHostKeys{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		marker, hosts, key, _, _, err := ssh.ParseKnownHosts(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		if marker == "cert-authority" {
			continue
		}
		k.lines = append(k.lines, knownHostLine{patterns: hosts, key: key, revoked: marker == "revoked"})
	}
	if len(k.lines) == 0 {
		return nil, errors.New("no host key in it")
	}
	return k, nil
}

// keysFor returns the keys known for the address (host:port).
func (k *knownHostKeys) keysFor(address string) (keys []ssh.PublicKey, revoked []ssh.PublicKey) {
	normal := knownhosts.Normalize(address)
	for _, l := range k.lines {
		if matchHost(l.patterns, normal) {
			if l.revoked {
				revoked = append(revoked, l.key)
			} else {
				keys = append(keys, l.key)
			}
		}
	}
	return keys, revoked
}

func (k *knownHostKeys) check(address string, key ssh.PublicKey) error {
	keys, revoked := k.keysFor(address)
	for _, r := range revoked {
		if bytes.Equal(r.Marshal(), key.Marshal()) {
			return refused("the SSH host key of %s (%s) is revoked in knownHosts; refused", address, ssh.FingerprintSHA256(key))
		}
	}
	for _, want := range keys {
		if bytes.Equal(want.Marshal(), key.Marshal()) {
			return nil
		}
	}
	if len(keys) == 0 {
		return refused("knownHosts has no host key for %s (it offered %s %s); refused", address, key.Type(), ssh.FingerprintSHA256(key))
	}
	return refused("the SSH host key of %s (%s %s) is not the one knownHosts holds; refused", address, key.Type(), ssh.FingerprintSHA256(key))
}

// algorithms are the host key algorithms of the keys known for the address.
func (k *knownHostKeys) algorithms(address string) []string {
	keys, _ := k.keysFor(address)
	var out []string
	seen := map[string]bool{}
	add := func(a string) {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	for _, key := range keys {
		if key.Type() == ssh.KeyAlgoRSA {
			add(ssh.KeyAlgoRSASHA512)
			add(ssh.KeyAlgoRSASHA256)
		}
		add(key.Type())
	}
	return out
}

// matchHost matches a known_hosts line's patterns against a normalised
// address: some pattern matches and no negated one does.
func matchHost(patterns []string, normal string) bool {
	matched := false
	for _, p := range patterns {
		negated := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(p, "!")
		var ok bool
		if strings.HasPrefix(p, "|1|") {
			ok = matchHashed(p, normal)
		} else {
			ok = wildcard(p, normal)
		}
		if ok && negated {
			return false
		}
		matched = matched || ok
	}
	return matched
}

// matchHashed matches a hashed host (|1|salt|hash: HMAC-SHA1 of the host under the salt).
func matchHashed(p, normal string) bool {
	parts := strings.Split(p, "|")
	if len(parts) != 4 {
		return false
	}
	salt, err1 := base64.StdEncoding.DecodeString(parts[2])
	want, err2 := base64.StdEncoding.DecodeString(parts[3])
	if err1 != nil || err2 != nil {
		return false
	}
	mac := hmac.New(sha1.New, salt)
	mac.Write([]byte(normal))
	return hmac.Equal(mac.Sum(nil), want)
}

// redactURL is the URL without user info, for messages.
func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		if u.Scheme == "ssh" {
			u.User = url.User(u.User.Username())
		} else {
			u.User = nil
		}
		return u.String()
	}
	return raw
}

// wildcard matches known_hosts' patterns: * any run of characters, ? one.
func wildcard(p, s string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for i := len(s); i >= 0; i-- {
				if wildcard(p[1:], s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
		default:
			if s == "" || p[0] != s[0] {
				return false
			}
		}
		p, s = p[1:], s[1:]
	}
	return s == ""
}
