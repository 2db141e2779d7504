// Command controlplane runs a real local Kubernetes control plane for syncprims:
// one embedded etcd and, per named cluster, a kube-apiserver and a
// kube-controller-manager (garbage collector, namespace and service-account
// controllers), each in its own OS process. See controlplane/README.md.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	kubectl "k8s.io/kubectl/pkg/cmd"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	kcm "k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

const usage = `usage: controlplane [--dir DIR] [--etcd-port PORT] COMMAND [ARGS]

Commands (state lives in DIR: default $SYNCPRIMS_LOCAL_DIR, else ./.local):
  up [NAME[:PORT]...] [--feature-gates NAME=Gate=bool[,Gate=bool]...] [--apiserver-flag NAME=--flag[=value]...]
                       start the control plane in the background (if needed) and the named
                       clusters (default: mgmt edge-1 edge-2); wait until each is ready and
                       print its kubeconfig path
  down                 stop every cluster and etcd; leave no process behind
  stop NAME...         stop the named clusters (their data stays in etcd)
  restart NAME...      restart the kube-apiserver process of the named clusters
  status [--json]      list the clusters that are running
  serve                run the supervisor in the foreground (what 'up' starts)
  kubectl ARGS...      the kubectl built from the same Kubernetes version

Fixed ports: etcd 127.0.0.1:2389 (peer 2390) unless --etcd-port; mgmt 6441, edge-1 6442, edge-2 6443; any other name
gets 6450 + (FNV-1a(name) mod 1000) unless given as NAME:PORT. Port 0 means any free port: NAME:0 keeps the
port the cluster had if it ran before under this supervisor (so a stopped cluster comes back where its
kubeconfig points), and --etcd-port 0 picks a free pair (written to DIR/etcd.port).
`

func main() {
	// A symlink named kubectl to this binary behaves as kubectl.
	if filepath.Base(os.Args[0]) == "kubectl" {
		runCobra(kubectl.NewDefaultKubectlCommand(), os.Args[1:])
		return
	}
	args := os.Args[1:]
	dir := os.Getenv("SYNCPRIMS_LOCAL_DIR")
	if dir == "" {
		dir = ".local"
	}
	for len(args) >= 2 && strings.HasPrefix(args[0], "--") {
		switch args[0] {
		case "--dir":
			dir = args[1]
		case "--etcd-port":
			p, err := strconv.Atoi(args[1])
			if err != nil || (p != 0 && (p < 1024 || p > 65534)) {
				fail(fmt.Errorf("--etcd-port %q: want a number in 1024-65534, or 0 for any free pair", args[1]))
			}
			etcdClientPort, etcdPeerPort = p, p+1
		default:
			fmt.Fprintf(os.Stderr, "unknown flag %q\n\n%s", args[0], usage)
			os.Exit(2)
		}
		args = args[2:]
	}
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		fail(err)
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "kube-apiserver":
		runCobra(apiserver.NewAPIServerCommand(), rest)
	case "kube-controller-manager":
		runCobra(kcm.NewControllerManagerCommand(), rest)
	case "kubectl":
		runCobra(kubectl.NewDefaultKubectlCommand(), rest)
	case "serve":
		fail(serve(abs))
	case "up":
		fail(up(abs, rest))
	case "down":
		fail(down(abs))
	case "stop", "restart":
		fail(clusterAction(abs, cmd, rest))
	case "status":
		fail(status(abs, len(rest) > 0 && rest[0] == "--json"))
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
}

type cobraCommand interface {
	SetArgs([]string)
	Execute() error
}

func runCobra(c cobraCommand, args []string) {
	c.SetArgs(args)
	if err := c.Execute(); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

func fail(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "controlplane:", err)
		os.Exit(1)
	}
}
