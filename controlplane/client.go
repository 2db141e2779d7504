package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

var defaultClusters = []string{"mgmt", "edge-1", "edge-2"}

// socketClient talks HTTP to the supervisor over its unix socket.
func socketClient(dir string, timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", socketPath(dir))
			},
		},
	}
}

func call(dir, method, path string, body any, timeout time.Duration) (string, error) {
	var reader io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return "", err
		}
		reader = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, "http://supervisor"+path, reader)
	if err != nil {
		return "", err
	}
	resp, err := socketClient(dir, timeout).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", errors.New(strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

func supervisorUp(dir string) bool {
	_, err := call(dir, http.MethodGet, "/status", nil, 2*time.Second)
	return err == nil
}

// parseUpArgs reads cluster names (NAME or NAME:PORT) and any number of
// --feature-gates NAME=Gate=bool[,Gate=bool] and --apiserver-flag NAME=--flag[=value].
func parseUpArgs(args []string) ([]clusterSpec, error) {
	gates := map[string]string{}
	flags := map[string][]string{}
	var names []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		var value string
		switch {
		case a == "--apiserver-flag" && i+1 < len(args):
			i++
			name, flag, ok := strings.Cut(args[i], "=")
			if !ok || !strings.HasPrefix(flag, "--") || strings.ContainsAny(flag, " \t") {
				return nil, fmt.Errorf("--apiserver-flag %q: want NAME=--flag[=value]", args[i])
			}
			flags[name] = append(flags[name], flag)
			continue
		case a == "--feature-gates" && i+1 < len(args):
			i++
			value = args[i]
		case strings.HasPrefix(a, "--feature-gates="):
			value = strings.TrimPrefix(a, "--feature-gates=")
		case strings.HasPrefix(a, "-"):
			return nil, fmt.Errorf("unknown flag %q", a)
		default:
			names = append(names, a)
			continue
		}
		name, g, ok := strings.Cut(value, "=")
		if !ok || g == "" {
			return nil, fmt.Errorf("--feature-gates %q: want NAME=Gate=bool[,Gate=bool]", value)
		}
		gates[name] = g
	}
	if len(names) == 0 {
		names = defaultClusters
	}
	specs := make([]clusterSpec, 0, len(names))
	for _, n := range names {
		spec, err := parseClusterArg(n)
		if err != nil {
			return nil, err
		}
		spec.FeatureGates = gates[spec.Name]
		delete(gates, spec.Name)
		spec.APIServerFlags = strings.Join(flags[spec.Name], " ")
		delete(flags, spec.Name)
		specs = append(specs, spec)
	}
	for name := range gates {
		return nil, fmt.Errorf("--feature-gates names cluster %q, which is not being started", name)
	}
	for name := range flags {
		return nil, fmt.Errorf("--apiserver-flag names cluster %q, which is not being started", name)
	}
	return specs, nil
}

func up(dir string, args []string) error {
	specs, err := parseUpArgs(args)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := ensureSupervisor(dir); err != nil {
		return err
	}
	results := make([]string, len(specs))
	errs := make([]error, len(specs))
	var wg sync.WaitGroup
	for i, spec := range specs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = call(dir, http.MethodPost, "/start", spec, 5*time.Minute)
		}()
	}
	wg.Wait()
	for i, spec := range specs {
		if errs[i] != nil {
			continue
		}
		// A supervisor started by an older build answers with the path alone.
		started := startResult{Kubeconfig: strings.TrimSpace(results[i]), Port: spec.Port}
		_ = json.Unmarshal([]byte(results[i]), &started)
		fmt.Printf("%-8s https://127.0.0.1:%d  KUBECONFIG=%s\n", spec.Name, started.Port, started.Kubeconfig)
	}
	return errors.Join(errs...)
}

// ensureSupervisor starts the supervisor unless one answers already; a lock
// file keeps two concurrent 'up' commands from starting two.
func ensureSupervisor(dir string) error {
	lock, err := os.OpenFile(filepath.Join(dir, "controlplane.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }()
	if supervisorUp(dir) {
		return nil
	}
	return startSupervisor(dir)
}

// startSupervisor runs 'serve' detached in its own session, its output in
// controlplane.log, and waits until it answers on its socket.
func startSupervisor(dir string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	logPath := filepath.Join(dir, "controlplane.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(self, "--dir", dir, "--etcd-port", strconv.Itoa(etcdClientPort), "serve")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(90 * time.Second)
	for !supervisorUp(dir) {
		select {
		case err := <-exited:
			return fmt.Errorf("the supervisor exited (%v); the end of %s:\n%s", err, logPath, tail(logPath, 15))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the supervisor did not answer within 90s; see %s", logPath)
		}
	}
	return nil
}

func down(dir string) error {
	pid := readPid(supervisorPidFile(dir))
	if supervisorUp(dir) {
		if _, err := call(dir, http.MethodPost, "/shutdown", nil, 5*time.Second); err != nil {
			return err
		}
	} else if pid > 0 && alive(pid) {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	if pid > 0 {
		deadline := time.Now().Add(90 * time.Second)
		for alive(pid) {
			if time.Now().After(deadline) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				return fmt.Errorf("the supervisor (pid %d) did not stop within 90s: killed it", pid)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	fmt.Println("control plane stopped")
	return nil
}

func clusterAction(dir, action string, names []string) error {
	if len(names) == 0 {
		return fmt.Errorf("%s: name at least one cluster", action)
	}
	if !supervisorUp(dir) {
		return errors.New("the control plane is not running (run 'controlplane up')")
	}
	var errs []error
	for _, n := range names {
		if _, err := call(dir, http.MethodPost, "/"+action+"/"+n, nil, 5*time.Minute); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", action, n, err))
			continue
		}
		fmt.Printf("%s: %s\n", n, map[string]string{"stop": "stopped", "restart": "restarted"}[action])
	}
	return errors.Join(errs...)
}

func status(dir string, asJSON bool) error {
	if !supervisorUp(dir) {
		if asJSON {
			fmt.Println(`{"running": false, "clusters": []}`)
		} else {
			fmt.Println("the control plane is not running")
		}
		return nil
	}
	out, err := call(dir, http.MethodGet, "/status", nil, 5*time.Second)
	if err != nil {
		return err
	}
	if asJSON {
		fmt.Printf("{\"running\": true, \"clusters\": %s}\n", out)
		return nil
	}
	var all []clusterStatus
	if err := json.Unmarshal([]byte(out), &all); err != nil {
		return err
	}
	for _, c := range all {
		state := "running"
		if !c.Running {
			state = "down"
		}
		gates := ""
		if c.FeatureGates != "" {
			gates = "  feature-gates=" + c.FeatureGates
		}
		if c.APIServerFlags != "" {
			gates += "  apiserver-flags=" + c.APIServerFlags
		}
		fmt.Printf("%-8s %-7s https://127.0.0.1:%d  KUBECONFIG=%s%s\n", c.Name, state, c.Port, c.Kubeconfig, gates)
	}
	return nil
}

func readPid(file string) int {
	raw, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	return pid
}

func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	// A zombie is as good as gone.
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat))
	return len(fields) < 3 || fields[2] != "Z"
}

func tail(file string, lines int) string {
	raw, _ := os.ReadFile(file)
	all := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
