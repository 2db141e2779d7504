package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"hash/fnv"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Fixed, documented ports of the default clusters.
var wellKnownPorts = map[string]int{"mgmt": 6441, "edge-1": 6442, "edge-2": 6443}

// apiserverGrace is how long a kube-apiserver may take to stop after SIGTERM
// before it is killed. On SIGTERM it stops accepting connections at once,
// then waits for open watches to end (up to a minute: with any client
// watching, it always takes longer than a few seconds); a local cluster has
// nothing worth that wait (etcd keeps the data, and clients see their
// connections dropped either way). Each stop and restart of a cluster in the
// tests paid 5 s here.
const apiserverGrace = 1 * time.Second

// The embedded etcd's ports (--etcd-port changes them, so that a second,
// independent control plane can run beside the first).
var (
	etcdClientPort = 2389
	etcdPeerPort   = 2390
)

// defaultPort gives every cluster name a stable port: the well-known ones
// above, any other 6450 + FNV-1a(name) mod 1000.
func defaultPort(name string) int {
	if p, ok := wellKnownPorts[name]; ok {
		return p
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return 6450 + int(h.Sum32()%1000)
}

// clusterSpec is what a client asks for: a name, a port and feature gates.
type clusterSpec struct {
	Name         string `json:"name"`
	Port         int    `json:"port"`
	FeatureGates string `json:"featureGates,omitempty"`
	// More kube-apiserver flags, space-separated (e.g. --watch-cache=false,
	// so that watches are served by etcd itself and its compaction shows).
	APIServerFlags string `json:"apiserverFlags,omitempty"`
}

// parseClusterArg reads NAME or NAME:PORT.
func parseClusterArg(arg string) (clusterSpec, error) {
	name, portText, hasPort := strings.Cut(arg, ":")
	if !validName(name) {
		return clusterSpec{}, fmt.Errorf("cluster name %q: use lower-case letters, digits and '-' (at most 40)", name)
	}
	spec := clusterSpec{Name: name, Port: defaultPort(name)}
	if hasPort {
		p, err := strconv.Atoi(portText)
		if err != nil || (p != 0 && (p < 1024 || p > 65535)) {
			return clusterSpec{}, fmt.Errorf("cluster %q: port %q is not a number in 1024-65535 (or 0: any free port)", name, portText)
		}
		spec.Port = p
	}
	return spec, nil
}

func validName(name string) bool {
	if name == "" || len(name) > 40 || name[0] == '-' || name[len(name)-1] == '-' {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// cluster is one local Kubernetes cluster: a kube-apiserver process and a
// kube-controller-manager process sharing the supervisor's etcd under their
// own key prefix.
type cluster struct {
	spec      clusterSpec
	dir       string // the .local directory
	pki       pki
	apiserver *process
	kcm       *process
	mu        sync.Mutex // serialises start, stop and restart
}

func newCluster(spec clusterSpec, dir string, p pki, logf func(string, ...any)) *cluster {
	c := &cluster{spec: spec, dir: dir, pki: p}
	self, _ := os.Executable()
	c.apiserver = &process{
		name:    spec.Name + "/kube-apiserver",
		path:    self,
		args:    append([]string{"kube-apiserver"}, c.apiserverArgs()...),
		logFile: filepath.Join(dir, spec.Name+".log"),
		pidFile: filepath.Join(dir, spec.Name+".pid"),
		logf:    logf,
	}
	c.kcm = &process{
		name:    spec.Name + "/kube-controller-manager",
		path:    self,
		args:    append([]string{"kube-controller-manager"}, c.controllerManagerArgs()...),
		logFile: filepath.Join(dir, spec.Name+"-kcm.log"),
		pidFile: filepath.Join(dir, spec.Name+"-kcm.pid"),
		logf:    logf,
	}
	return c
}

func (c *cluster) kubeconfig() string { return filepath.Join(c.dir, c.spec.Name+".kubeconfig") }

func (c *cluster) stateDir() string { return filepath.Join(c.dir, "clusters", c.spec.Name) }

func (c *cluster) apiserverArgs() []string {
	s := c.spec
	args := []string{
		"--etcd-servers=" + fmt.Sprintf("http://127.0.0.1:%d", etcdClientPort),
		"--etcd-prefix=/clusters/" + s.Name,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(s.Port),
		"--cert-dir=" + filepath.Join(c.stateDir(), "certs"),
		"--tls-cert-file=" + c.pki.servingCert(),
		"--tls-private-key-file=" + c.pki.servingKey(),
		"--client-ca-file=" + c.pki.caCert(),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + c.pki.saKey(s.Name),
		"--service-account-signing-key-file=" + c.pki.saKey(s.Name),
		"--service-cluster-ip-range=10.0.0.0/24",
		"--allow-privileged=true",
		"--disable-admission-plugins=ServiceAccount",
		"--endpoint-reconciler-type=none",
		"--audit-policy-file=" + filepath.Join(c.dir, "audit-policy.yaml"),
		"--audit-log-path=" + filepath.Join(c.dir, s.Name+".audit.log"),
		"--audit-log-maxsize=200",
		"--audit-log-maxbackup=1",
		"--v=0",
	}
	if s.FeatureGates != "" {
		args = append(args, "--feature-gates="+s.FeatureGates)
	}
	args = append(args, strings.Fields(s.APIServerFlags)...)
	return args
}

func (c *cluster) controllerManagerArgs() []string {
	return []string{
		"--kubeconfig=" + filepath.Join(c.stateDir(), "kcm.kubeconfig"),
		"--controllers=garbage-collector-controller,namespace-controller,serviceaccount-controller",
		"--leader-elect=false",
		"--secure-port=0",
		"--v=0",
	}
}

// start brings the cluster up and returns once its /readyz answers ok.
func (c *cluster) start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := os.MkdirAll(filepath.Join(c.stateDir(), "certs"), 0o700); err != nil {
		return err
	}
	if err := c.pki.ensureServiceAccountKey(c.spec.Name); err != nil {
		return err
	}
	if err := c.pki.writeKubeconfig(c.kubeconfig(), c.spec.Name, c.spec.Port, adminUser); err != nil {
		return err
	}
	kcmConfig := filepath.Join(c.stateDir(), "kcm.kubeconfig")
	if err := c.pki.writeKubeconfig(kcmConfig, c.spec.Name, c.spec.Port, controllerManagerUser); err != nil {
		return err
	}
	if err := c.startAPIServer(ctx); err != nil {
		return err
	}
	return c.kcm.start()
}

func (c *cluster) startAPIServer(ctx context.Context) error {
	if !c.apiserver.running() {
		if portInUse(c.spec.Port) {
			return fmt.Errorf("cluster %s: port %d is already in use by another program", c.spec.Name, c.spec.Port)
		}
		if err := c.apiserver.start(); err != nil {
			return err
		}
	}
	if err := c.waitReady(ctx, 3*time.Minute); err != nil {
		c.apiserver.stop(10 * time.Second)
		return fmt.Errorf("cluster %s: %w (see %s)", c.spec.Name, err, c.apiserver.logFile)
	}
	return nil
}

// restart stops and starts the kube-apiserver process only; the controller
// manager reconnects by itself, as it would in a real cluster.
func (c *cluster) restart(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.apiserver.stop(apiserverGrace)
	return c.startAPIServer(ctx)
}

func (c *cluster) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range []*process{c.kcm, c.apiserver} {
		wg.Add(1)
		go func() { defer wg.Done(); p.stop(apiserverGrace) }()
	}
	wg.Wait()
}

func (c *cluster) running() bool { return c.apiserver.running() }

// waitReady polls /readyz (with the admin certificate) until it answers 200,
// the apiserver process exits, or the time is up.
func (c *cluster) waitReady(ctx context.Context, limit time.Duration) error {
	client, err := c.httpClient()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(limit)
	url := fmt.Sprintf("https://127.0.0.1:%d/readyz", c.spec.Port)
	for {
		if !c.apiserver.running() {
			return fmt.Errorf("kube-apiserver exited before it was ready")
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %s", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (c *cluster) httpClient() (*http.Client, error) {
	caPEM, err := os.ReadFile(c.pki.caCert())
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	cert, err := tls.LoadX509KeyPair(c.pki.clientCert(adminUser), c.pki.clientKey(adminUser))
	if err != nil {
		return nil, err
	}
	return &http.Client{
		Timeout: 2 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}},
		},
	}, nil
}
