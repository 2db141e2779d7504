package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"

	"github.com/syncprims/syncprims/fetch/internal/testserve"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// sshFixture serves a repository over SSH on 127.0.0.1 to one client key.
type sshFixture struct {
	url        string
	addr       string
	identity   string
	knownHosts string
	counts     *testserve.Counts
	commit     string
}

func newSSHFixture(t *testing.T, passphrase string) *sshFixture {
	t.Helper()
	r := newRepo(t, "org")
	r.write("app.yaml", "kind: App\n")
	commit := r.commit("app")
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var block *pem.Block
	if passphrase != "" {
		block, err = ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte(passphrase))
	} else {
		block, err = ssh.MarshalPrivateKey(priv, "")
	}
	if err != nil {
		t.Fatal(err)
	}
	clientPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	counts := testserve.NewCounts()
	srv, err := testserve.NewSSHServer(r.root, clientPub, counts)
	if err != nil {
		t.Fatal(err)
	}
	ln := listenOn(t, "127.0.0.1:0")
	t.Cleanup(func() { ln.Close() })
	go srv.Serve(ln)
	addr := ln.Addr().String()
	return &sshFixture{
		url:        fmt.Sprintf("ssh://git@%s/org/.git", addr),
		addr:       addr,
		identity:   string(pem.EncodeToMemory(block)),
		knownHosts: srv.KnownHostsLine(addr) + "\n",
		counts:     counts,
		commit:     commit,
	}
}

func TestSSHFetch(t *testing.T) {
	f := newSSHFixture(t, "")
	out := mustRun(t, input{Op: "fetch", Kind: "git", URL: f.url, Auth: auth{Identity: f.identity, KnownHosts: f.knownHosts}})
	if out.Resolved != f.commit || out.Revision != "main@sha1:"+f.commit {
		t.Fatalf("got %s %s", out.Resolved, out.Revision)
	}
	if got := untar(t, out.Data)["app.yaml"].body; got != "kind: App\n" {
		t.Fatalf("app.yaml %q", got)
	}
	if n := f.counts.Get("ssh upload-pack"); n != 1 || out.Requests != 1 {
		t.Fatalf("%d upload-pack sessions, %d connections; want 1 (the listing and the fetch in one)", n, out.Requests)
	}
	again := mustRun(t, input{Op: "fetch", Kind: "git", URL: f.url, Ref: sourceRef{Branch: "main"}, Resolved: f.commit, Auth: auth{Identity: f.identity, KnownHosts: f.knownHosts}})
	if n := f.counts.Get("ssh upload-pack"); n != 2 || again.Requests != 1 || again.Revision != out.Revision {
		t.Fatalf("fetch of resolved: %d upload-pack sessions in all, %d connections, %s", n, again.Requests, again.Revision)
	}
	// A hashed known_hosts entry matches too.
	hashed := knownhostsHashed(t, f.knownHosts)
	mustRun(t, input{Op: "resolve", Kind: "git", URL: f.url, Auth: auth{Identity: f.identity, KnownHosts: hashed}})
}

func TestSSHPassphrase(t *testing.T) {
	f := newSSHFixture(t, "pass")
	_, err := runIn(t, input{Op: "resolve", Kind: "git", URL: f.url, Auth: auth{Identity: f.identity, KnownHosts: f.knownHosts}})
	wantFailure(t, err, exitFailed, "identityPassphrase")
	mustRun(t, input{Op: "resolve", Kind: "git", URL: f.url, Auth: auth{Identity: f.identity, IdentityPassphrase: "pass", KnownHosts: f.knownHosts}})
}

func TestSSHHostKeyRefused(t *testing.T) {
	f := newSSHFixture(t, "")
	other, err := testserve.NewSSHServer(t.TempDir(), nil, testserve.NewCounts())
	if err != nil {
		t.Fatal(err)
	}
	wrong := other.KnownHostsLine(f.addr)
	_, err = runIn(t, input{Op: "resolve", Kind: "git", URL: f.url, Auth: auth{Identity: f.identity, KnownHosts: wrong}})
	wantFailure(t, err, exitRefused, "is not the one knownHosts holds", f.addr)
	// A known_hosts of another host only: no key for this one.
	elsewhere := strings.Replace(f.knownHosts, "127.0.0.1", "192.0.2.1", 1)
	_, err = runIn(t, input{Op: "resolve", Kind: "git", URL: f.url, Auth: auth{Identity: f.identity, KnownHosts: elsewhere}})
	wantFailure(t, err, exitRefused, "knownHosts has no host key for")
	// No knownHosts: refused before any connection.
	before := f.counts.Get("ssh connections")
	_, err = runIn(t, input{Op: "resolve", Kind: "git", URL: f.url, Auth: auth{Identity: f.identity}})
	wantFailure(t, err, exitRefused, "no knownHosts")
	if f.counts.Get("ssh connections") != before {
		t.Fatal("connected without knownHosts")
	}
	// The dialer's deny check holds for SSH too.
	_, err = runIn(t, input{Op: "resolve", Kind: "git", URL: f.url, Auth: auth{Identity: f.identity, KnownHosts: f.knownHosts}, DenyCIDRs: []string{"127.0.0.0/8"}})
	wantFailure(t, err, exitRefused, "connection to 127.0.0.1 refused: the address 127.0.0.1 is in 127.0.0.0/8, which --source-deny-cidrs denies; nothing was sent")
}

func TestSSHWrongIdentity(t *testing.T) {
	f := newSSHFixture(t, "")
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, _ := ssh.MarshalPrivateKey(priv, "")
	_, err := runIn(t, input{Op: "resolve", Kind: "git", URL: f.url, Auth: auth{Identity: string(pem.EncodeToMemory(block)), KnownHosts: f.knownHosts}})
	wantFailure(t, err, exitFailed, "unable to authenticate")
}

// knownhostsHashed rewrites a known_hosts line with its host hashed (|1|salt|hash).
func knownhostsHashed(t *testing.T, line string) string {
	t.Helper()
	host, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	return knownhosts.HashHostname(host) + " " + rest + "\n"
}
