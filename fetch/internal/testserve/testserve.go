// Package testserve holds the servers the fetch helper's tests and
// cmd/testservers run on loopback: an in-memory OCI registry that counts its
// requests, and an SSH server that runs git-upload-pack for the repositories
// under a root folder. Test servers only: never part of the helper.
package testserve

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"golang.org/x/crypto/ssh"
)

// Counts counts requests by class ("GET manifests", "ssh sessions").
type Counts struct {
	mu sync.Mutex
	n  map[string]int
}

func NewCounts() *Counts { return &Counts{n: map[string]int{}} }

func (c *Counts) Add(class string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[class]++
}

func (c *Counts) Get(class string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[class]
}

func (c *Counts) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n = map[string]int{}
}

func (c *Counts) Snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.n))
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

// ServeCounts answers GET /_counts (the counts as JSON) and POST /_reset;
// anything else goes to next (nil: 404).
func ServeCounts(c *Counts, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/_counts" && r.Method == http.MethodGet:
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(c.Snapshot())
		case r.URL.Path == "/_reset" && r.Method == http.MethodPost:
			c.Reset()
			w.WriteHeader(http.StatusNoContent)
		case next != nil:
			next.ServeHTTP(w, r)
		default:
			http.NotFound(w, r)
		}
	})
}

// Registry is an in-memory OCI registry whose requests are counted by
// method and path class (ping, manifests, blobs, uploads, tags), with
// basic auth required when user is not empty.
func Registry(c *Counts, user, password string) http.Handler {
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	return ServeCounts(c, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.Add(r.Method + " " + PathClass(r.URL.Path))
		if user != "" {
			u, p, ok := r.BasicAuth()
			if !ok || u != user || p != password {
				w.Header().Set("WWW-Authenticate", `Basic realm="testservers"`)
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
				return
			}
		}
		reg.ServeHTTP(w, r)
	}))
}

// PathClass is a registry path's class: /v2/ ping, /v2/<repo>/manifests/<ref> manifests, …
func PathClass(p string) string {
	switch {
	case p == "/v2/" || p == "/v2":
		return "ping"
	case strings.Contains(p, "/manifests/"):
		return "manifests"
	case strings.Contains(p, "/blobs/uploads"):
		return "uploads"
	case strings.Contains(p, "/blobs/"):
		return "blobs"
	case strings.HasSuffix(p, "/tags/list"):
		return "tags"
	case strings.Contains(p, "/referrers/"):
		return "referrers"
	}
	return "other"
}

// SelfSigned returns a TLS certificate for 127.0.0.1, ::1 and localhost, and its PEM.
func SelfSigned() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "syncprims-testservers"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, certPEM, nil
}

// SSHServer serves git-upload-pack over SSH for the repositories under Root,
// to the one authorised key, with a host key made at start.
type SSHServer struct {
	Root       string
	Authorized ssh.PublicKey
	Counts     *Counts
	HostKey    ssh.Signer
}

// NewSSHServer makes the host key (ed25519).
func NewSSHServer(root string, authorized ssh.PublicKey, c *Counts) (*SSHServer, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, err
	}
	return &SSHServer{Root: root, Authorized: authorized, Counts: c, HostKey: signer}, nil
}

// KnownHostsLine is the known_hosts line of the server's host key at addr.
func (s *SSHServer) KnownHostsLine(addr string) string {
	return fmt.Sprintf("%s %s", knownHostsAddr(addr), strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.HostKey.PublicKey()))))
}

func knownHostsAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "22" {
		return host
	}
	return "[" + host + "]:" + port
}

// Serve accepts connections until the listener is closed.
func (s *SSHServer) Serve(ln net.Listener) error {
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if s.Authorized != nil && string(key.Marshal()) == string(s.Authorized.Marshal()) {
				return &ssh.Permissions{}, nil
			}
			return nil, fmt.Errorf("unknown public key")
		},
	}
	cfg.AddHostKey(s.HostKey)
	for {
		conn, err := ln.Accept()
		if err != nil {
			return err
		}
		go s.handle(conn, cfg)
	}
}

func (s *SSHServer) handle(conn net.Conn, cfg *ssh.ServerConfig) {
	defer conn.Close()
	s.Counts.Add("ssh connections")
	_, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			nc.Reject(ssh.UnknownChannelType, "sessions only")
			continue
		}
		ch, requests, err := nc.Accept()
		if err != nil {
			continue
		}
		s.Counts.Add("ssh sessions")
		go s.session(ch, requests)
	}
}

func (s *SSHServer) session(ch ssh.Channel, requests <-chan *ssh.Request) {
	defer ch.Close()
	for req := range requests {
		switch req.Type {
		case "env":
			req.Reply(true, nil)
		case "exec":
			var payload struct{ Command string }
			if err := ssh.Unmarshal(req.Payload, &payload); err != nil {
				req.Reply(false, nil)
				return
			}
			dir, ok := s.repoOf(payload.Command)
			if !ok {
				req.Reply(false, nil)
				fmt.Fprintf(ch.Stderr(), "only git-upload-pack of a repository under the root\n")
				exitStatus(ch, 1)
				return
			}
			req.Reply(true, nil)
			s.Counts.Add("ssh upload-pack")
			cmd := exec.Command("git-upload-pack", dir)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = ch, ch, ch.Stderr()
			code := 0
			if err := cmd.Run(); err != nil {
				code = 1
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				}
			}
			exitStatus(ch, code)
			return
		default:
			req.Reply(false, nil)
		}
	}
}

func exitStatus(ch ssh.Channel, code int) {
	ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{uint32(code)}))
}

// repoOf is the folder of `git-upload-pack '<path>'`, when it is under the root.
func (s *SSHServer) repoOf(command string) (string, bool) {
	arg, ok := strings.CutPrefix(command, "git-upload-pack ")
	if !ok {
		return "", false
	}
	arg = strings.Trim(strings.TrimSpace(arg), "'")
	if strings.Contains(arg, "'") {
		return "", false
	}
	dir := filepath.Join(s.Root, filepath.Clean("/"+arg))
	root := filepath.Clean(s.Root)
	if dir != root && !strings.HasPrefix(dir, root+string(filepath.Separator)) {
		return "", false
	}
	return dir, true
}
