// Command syncprims-testservers runs, on loopback only, the servers the
// TypeScript integration tests of git and OCI sources reach: an in-memory
// OCI registry (optionally with basic auth and TLS) and an SSH git server
// (git-upload-pack for the repositories under a root folder). Its first
// stdout line is a JSON object of their addresses:
//
//	{"oci":"127.0.0.1:PORT","ssh":"127.0.0.1:PORT","control":"127.0.0.1:PORT"}
//
// GET /_counts on the registry or the control address gives the requests
// counted (by method and path class, and the SSH sessions) as JSON; POST
// /_reset zeroes them. It runs until stdin closes or it is signalled.
package main

import (
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/syncprims/syncprims/fetch/internal/testserve"
	"golang.org/x/crypto/ssh"
)

func main() {
	oci := flag.Bool("oci", false, "run the OCI registry")
	ociAddr := flag.String("oci-addr", "127.0.0.1:0", "the registry's address (loopback only)")
	ociBasic := flag.String("oci-basic-auth", "", "user:password the registry requires (empty: none)")
	ociTLSCert := flag.String("oci-tls-cert", "", "serve the registry over TLS with a self-signed certificate, written as PEM to this path")
	sshOn := flag.Bool("ssh", false, "run the SSH git server")
	sshAddr := flag.String("ssh-addr", "127.0.0.1:0", "the SSH server's address (loopback only)")
	sshRoot := flag.String("ssh-root", "", "the folder holding the repositories served over SSH")
	sshAuthorized := flag.String("ssh-authorized-key", "", "a file holding the one public key (authorized_keys format) allowed in")
	sshKnownHosts := flag.String("ssh-known-hosts", "", "write the host key's known_hosts line to this path")
	flag.Parse()

	counts := testserve.NewCounts()
	addrs := map[string]string{}
	if *oci {
		ln := listen(*ociAddr)
		var user, password string
		if *ociBasic != "" {
			var ok bool
			if user, password, ok = strings.Cut(*ociBasic, ":"); !ok {
				die("-oci-basic-auth: user:password")
			}
		}
		srv := &http.Server{Handler: testserve.Registry(counts, user, password)}
		if *ociTLSCert != "" {
			cert, certPEM, err := testserve.SelfSigned()
			if err != nil {
				die("the certificate: %v", err)
			}
			if err := os.WriteFile(*ociTLSCert, certPEM, 0o644); err != nil {
				die("%v", err)
			}
			ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}})
		}
		addrs["oci"] = ln.Addr().String()
		go srv.Serve(ln)
	}
	if *sshOn {
		if *sshRoot == "" || *sshAuthorized == "" {
			die("-ssh needs -ssh-root and -ssh-authorized-key")
		}
		data, err := os.ReadFile(*sshAuthorized)
		if err != nil {
			die("%v", err)
		}
		key, _, _, _, err := ssh.ParseAuthorizedKey(data)
		if err != nil {
			die("-ssh-authorized-key: %v", err)
		}
		s, err := testserve.NewSSHServer(*sshRoot, key, counts)
		if err != nil {
			die("%v", err)
		}
		ln := listen(*sshAddr)
		addrs["ssh"] = ln.Addr().String()
		if *sshKnownHosts != "" {
			if err := os.WriteFile(*sshKnownHosts, []byte(s.KnownHostsLine(ln.Addr().String())+"\n"), 0o644); err != nil {
				die("%v", err)
			}
		}
		go s.Serve(ln)
	}
	if len(addrs) == 0 {
		die("nothing to run: -oci and/or -ssh")
	}
	control := listen("127.0.0.1:0")
	addrs["control"] = control.Addr().String()
	go http.Serve(control, testserve.ServeCounts(counts, nil))

	line, _ := json.Marshal(addrs)
	fmt.Println(string(line))

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		io.Copy(io.Discard, os.Stdin)
		stop <- syscall.SIGTERM
	}()
	<-stop
}

// listen listens on a loopback address only.
func listen(addr string) net.Listener {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		die("%s: %v", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		die("%s: loopback addresses only", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		die("%v", err)
	}
	return ln
}

func die(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "syncprims-testservers: "+format+"\n", args...)
	os.Exit(1)
}
