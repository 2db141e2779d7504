package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: None
`

// supervisor owns the embedded etcd and the clusters, and answers the
// commands of 'up', 'stop', 'restart', 'status' and 'down' on a unix socket.
type supervisor struct {
	dir      string
	pki      pki
	mu       sync.Mutex
	clusters map[string]*cluster
	// The port each cluster asked to start on any free port (NAME:0) was
	// given, kept after it stops: started again, it comes back there.
	freePorts map[string]int
	shutdown  chan struct{}
	once      sync.Once
}

func socketPath(dir string) string        { return filepath.Join(dir, "controlplane.sock") }
func supervisorPidFile(dir string) string { return filepath.Join(dir, "controlplane.pid") }

func serve(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	s := &supervisor{dir: dir, pki: pki{dir: filepath.Join(dir, "pki")}, clusters: map[string]*cluster{}, freePorts: map[string]int{}, shutdown: make(chan struct{})}
	if err := s.pki.ensure(); err != nil {
		return fmt.Errorf("certificates: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "audit-policy.yaml"), []byte(auditPolicy), 0o644); err != nil {
		return err
	}
	if etcdClientPort == 0 {
		port, err := freePortPair()
		if err != nil {
			return fmt.Errorf("etcd: no free pair of ports: %w", err)
		}
		etcdClientPort, etcdPeerPort = port, port+1
	} else if portInUse(etcdClientPort) {
		return fmt.Errorf("port %d (etcd) is in use: is another control plane running? try 'controlplane down'", etcdClientPort)
	}
	if err := os.WriteFile(filepath.Join(dir, "etcd.port"), []byte(strconv.Itoa(etcdClientPort)+"\n"), 0o644); err != nil {
		return err
	}
	etcd, err := startEtcd(dir)
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	sock := socketPath(dir)
	_ = os.Remove(sock)
	listener, err := net.Listen("unix", sock)
	if err != nil {
		etcd.Close()
		return err
	}
	if err := os.WriteFile(supervisorPidFile(dir), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		return err
	}
	server := &http.Server{Handler: s.routes()}
	go func() { _ = server.Serve(listener) }()
	log.Printf("supervisor ready (pid %d, socket %s)", os.Getpid(), sock)

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	select {
	case sig := <-signals:
		log.Printf("received %s: shutting down", sig)
	case <-s.shutdown:
		log.Printf("shutdown requested")
	}
	_ = server.Close()
	s.stopAll()
	etcd.Close()
	_ = os.Remove(sock)
	_ = os.Remove(supervisorPidFile(dir))
	log.Printf("stopped")
	return nil
}

func startEtcd(dir string) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Name = "syncprims-local"
	cfg.Dir = filepath.Join(dir, "etcd")
	cfg.LogLevel = "warn"
	cfg.UnsafeNoFsync = true
	client, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", etcdClientPort))
	peer, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", etcdPeerPort))
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*client}, []url.URL{*client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*peer}, []url.URL{*peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// Keep the database small under test churn.
	cfg.AutoCompactionMode = "periodic"
	cfg.AutoCompactionRetention = "5m"
	cfg.QuotaBackendBytes = 8 << 30
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, err
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, errors.New("not ready after 60s")
	}
}

func (s *supervisor) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /start", func(w http.ResponseWriter, r *http.Request) {
		var spec clusterSpec
		if err := json.NewDecoder(r.Body).Decode(&spec); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c, err := s.startCluster(r.Context(), spec)
		if err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		// The port too: asked for as 0, it is known only now.
		_ = json.NewEncoder(w).Encode(startResult{Kubeconfig: c.kubeconfig(), Port: c.spec.Port})
	})
	mux.HandleFunc("POST /stop/{name}", func(w http.ResponseWriter, r *http.Request) {
		c := s.lookup(r.PathValue("name"))
		if c == nil {
			http.Error(w, "no cluster named "+r.PathValue("name"), http.StatusNotFound)
			return
		}
		c.stop()
		s.mu.Lock()
		delete(s.clusters, c.spec.Name)
		s.mu.Unlock()
	})
	mux.HandleFunc("POST /restart/{name}", func(w http.ResponseWriter, r *http.Request) {
		c := s.lookup(r.PathValue("name"))
		if c == nil {
			http.Error(w, "no cluster named "+r.PathValue("name"), http.StatusNotFound)
			return
		}
		if err := c.restart(r.Context()); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(s.status())
	})
	mux.HandleFunc("POST /shutdown", func(w http.ResponseWriter, _ *http.Request) {
		s.once.Do(func() { close(s.shutdown) })
	})
	return mux
}

func (s *supervisor) lookup(name string) *cluster {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clusters[name]
}

func (s *supervisor) startCluster(ctx context.Context, spec clusterSpec) (*cluster, error) {
	s.mu.Lock()
	c := s.clusters[spec.Name]
	if spec.Port == 0 {
		port, err := s.portFor(spec.Name, c)
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		spec.Port = port
	}
	if c != nil && c.spec != spec {
		s.mu.Unlock()
		return nil, fmt.Errorf("cluster %s is already running as %+v; stop it first to change it", spec.Name, c.spec)
	}
	if c == nil {
		for _, other := range s.clusters {
			if other.spec.Port == spec.Port {
				s.mu.Unlock()
				return nil, fmt.Errorf("port %d of cluster %s is taken by cluster %s: give one NAME:PORT", spec.Port, spec.Name, other.spec.Name)
			}
		}
		c = newCluster(spec, s.dir, s.pki, log.Printf)
		s.clusters[spec.Name] = c
	}
	s.mu.Unlock()
	if err := c.start(ctx); err != nil {
		c.stop()
		s.mu.Lock()
		if s.clusters[spec.Name] == c {
			delete(s.clusters, spec.Name)
		}
		s.mu.Unlock()
		return nil, err
	}
	return c, nil
}

// portFor gives a cluster that asked for any free port (NAME:0) the one it
// runs on, else the one it had before if still free, else a new free one
// that no other cluster of this supervisor was given. Called with s.mu held.
func (s *supervisor) portFor(name string, running *cluster) (int, error) {
	if running != nil {
		return running.spec.Port, nil
	}
	if p, ok := s.freePorts[name]; ok && !portInUse(p) {
		return p, nil
	}
	taken := map[int]bool{}
	for _, c := range s.clusters {
		taken[c.spec.Port] = true
	}
	for _, p := range s.freePorts {
		taken[p] = true
	}
	for range 20 {
		p, err := freePort()
		if err != nil {
			return 0, err
		}
		if !taken[p] {
			s.freePorts[name] = p
			return p, nil
		}
	}
	return 0, fmt.Errorf("cluster %s: no free port found", name)
}

// startResult is what /start answers.
type startResult struct {
	Kubeconfig string `json:"kubeconfig"`
	Port       int    `json:"port"`
}

type clusterStatus struct {
	clusterSpec
	Kubeconfig string `json:"kubeconfig"`
	Running    bool   `json:"running"`
}

func (s *supervisor) status() []clusterStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []clusterStatus{}
	for _, c := range s.clusters {
		out = append(out, clusterStatus{clusterSpec: c.spec, Kubeconfig: c.kubeconfig(), Running: c.running()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (s *supervisor) stopAll() {
	s.mu.Lock()
	all := make([]*cluster, 0, len(s.clusters))
	for _, c := range s.clusters {
		all = append(all, c)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range all {
		wg.Add(1)
		go func() { defer wg.Done(); c.stop() }()
	}
	wg.Wait()
}
