// Command syncprims-kustomize builds one kustomization as `kubectl kustomize`
// (v1.36, kustomize v5.8.1) does, in a sandbox: the files it may read arrive
// on stdin and live only in memory, nothing reaches the network or runs a
// program, and memory and time are bounded. The YAML it prints is what
// `kubectl kustomize` prints for the same folder, byte for byte.
//
// Input (stdin): JSON {"dir": "overlays/prod", "files": {"path": "<base64>"}}.
// Output: the YAML on stdout, exit 0; or one line on stderr and exit
// 10 (refused: the kustomization asks for something the sandbox does not allow),
// 11 (kustomize's own error), 12 (memory limit), 13 (time limit). Other codes
// are the Go runtime's (2: a panic).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

type input struct {
	Dir   string            `json:"dir"`
	Files map[string][]byte `json:"files"`
}

const (
	exitRefused = 10
	exitFailed  = 11
	exitMemory  = 12
	exitTime    = 13
)

func main() {
	memory := flag.Int64("memory", 64<<20, "bytes of Go heap the build may use")
	timeout := flag.Duration("timeout", 20*time.Second, "how long the build may take")
	flag.Parse()
	sandbox()
	watch(*memory, *timeout)
	var in input
	if err := json.NewDecoder(io.LimitReader(os.Stdin, 1<<30)).Decode(&in); err != nil {
		fail(exitFailed, "reading the input: %v", err)
	}
	out, code, err := build(in)
	if err != nil {
		fail(code, "%s", err)
	}
	if _, err := os.Stdout.Write(out); err != nil {
		fail(exitFailed, "writing the output: %v", err)
	}
}

func build(in input) ([]byte, int, error) {
	fs := filesys.MakeFsInMemory()
	for p, data := range in.Files {
		if err := fs.WriteFile("/"+p, data); err != nil {
			return nil, exitFailed, fmt.Errorf("%s: %v", p, err)
		}
	}
	dir := "/" + strings.TrimPrefix(in.Dir, "/")
	if err := check(fs, dir); err != nil {
		return nil, exitRefused, err
	}
	// As `kubectl kustomize DIR` with no flags: RootOnly load restrictor,
	// builtin plugins only, helm off, the kustomization's own sort order.
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified
	m, err := krusty.MakeKustomizer(opts).Run(fs, dir)
	if err != nil {
		return nil, exitFailed, fmt.Errorf("kustomize build %s: %s", shown(dir), strings.ReplaceAll(err.Error(), "\n", " "))
	}
	out, err := m.AsYaml()
	if err != nil {
		return nil, exitFailed, fmt.Errorf("kustomize build %s: %v", shown(dir), err)
	}
	return out, 0, nil
}

// shown is a path of the in-memory tree as the source names it: relative, `.` for the root.
func shown(p string) string {
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return "."
	}
	return p
}

func fail(code int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(code)
}
