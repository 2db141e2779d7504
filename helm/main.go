// Command syncprims-helm renders one Helm chart as `helm template` (helm v4.3.2)
// renders it, in a sandbox (docs/adr/0013-helm-charts.md): the walls go up
// first thing (no_new_privs, a seccomp filter on every thread refusing
// sockets, execve and every open, Landlock where the kernel has it), then the
// chart arrives on stdin and lives only in memory; memory, time and output
// are bounded. The protocol is PROTOCOL.md (beside this file): one JSON object
// in, one out; on failure stderr's first line is the message and the exit code
// says which kind: 10 refused, 11 failed to render, 12 memory, 13 time, 14
// output. Other codes are the Go runtime's (2: a panic).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"strings"
	"time"
)

const (
	exitRefused = 10
	exitFailed  = 11
	exitMemory  = 12
	exitTime    = 13
	exitOutput  = 14
)

// defaultMaxOutput is the output allowed when the input names no maxOutputBytes.
const defaultMaxOutput = 32 << 20

type input struct {
	Files          map[string][]byte `json:"files"`
	Chart          string            `json:"chart"`
	ReleaseName    string            `json:"releaseName"`
	Namespace      string            `json:"namespace"`
	Values         []layer           `json:"values"`
	IncludeCRDs    bool              `json:"includeCRDs"`
	KubeVersion    string            `json:"kubeVersion"`
	APIVersions    []string          `json:"apiVersions"`
	MaxOutputBytes int64             `json:"maxOutputBytes"`
}

type output struct {
	Chart     chartInfo `json:"chart"`
	CRDs      []file    `json:"crds"`
	Manifests []file    `json:"manifests"`
	Hooks     []hook    `json:"hooks"`
	Walls     walls     `json:"walls"`
}

type chartInfo struct {
	Name       string `json:"name"`
	Version    string `json:"version"`
	AppVersion string `json:"appVersion"`
}

// failure is an error with the exit code it ends the helper with.
type failure struct {
	code int
	msg  string
}

func (f *failure) Error() string { return f.msg }

func refused(format string, args ...any) error {
	return &failure{exitRefused, fmt.Sprintf(format, args...)}
}

func failed(format string, args ...any) error {
	return &failure{exitFailed, fmt.Sprintf(format, args...)}
}

// warnings holds what Helm logs (slog and the standard logger) while it
// renders: printed after the message, so that stderr's first line is it.
var warnings bytes.Buffer

func main() {
	memory := flag.Int64("memory", 256<<20, "bytes of Go heap the render may use")
	timeout := flag.Duration("timeout", 20*time.Second, "how long the render may take")
	noSandbox := flag.Bool("no-sandbox", false, "no walls (tests only)")
	probe := flag.Bool("probe", false, "try what the walls forbid and print what happened (tests)")
	probePort := flag.Int("probe-port", 0, "with -probe: a loopback TCP port to try to connect to")
	flag.Parse()
	// Time zone data is a file: read none (templates' `now` is UTC).
	time.Local = time.UTC
	var held walls
	var probeSocket int = -1
	if *probe && *probePort > 0 {
		probeSocket = socketBeforeWalls()
	}
	if !*noSandbox {
		var err error
		if held, err = raiseWalls(); err != nil {
			fail(exitRefused, "%v", err)
		}
	}
	if *probe {
		runProbe(held, probeSocket, *probePort)
		return
	}
	log.SetOutput(&warnings)
	log.SetFlags(0)
	slog.SetDefault(slog.New(slog.NewTextHandler(&warnings, &slog.HandlerOptions{Level: slog.LevelWarn})))
	deadline := watch(*memory, *timeout)
	var in input
	if err := json.NewDecoder(io.LimitReader(os.Stdin, 1<<30)).Decode(&in); err != nil {
		fail(exitFailed, "reading the input: %v", err)
	}
	out, err := render(in, deadline)
	if err != nil {
		code := exitFailed
		if f, ok := err.(*failure); ok {
			code = f.code
		}
		fail(code, "%s", err)
	}
	out.Walls = held
	write(out, in.MaxOutputBytes)
}

// write prints the output, or refuses it when it is larger than allowed.
func write(out *output, limit int64) {
	if limit <= 0 {
		limit = defaultMaxOutput
	}
	data, err := json.Marshal(out)
	if err != nil {
		fail(exitFailed, "writing the output: %v", err)
	}
	if int64(len(data)) > limit {
		fail(exitOutput, "the rendered chart is %d bytes, more than the %d bytes allowed (the Helm output limit)", len(data), limit)
	}
	if _, err := os.Stdout.Write(data); err != nil {
		fail(exitFailed, "writing the output: %v", err)
	}
	os.Stderr.Write(warnings.Bytes())
}

// fail ends the helper: the message on one line, then (when Helm's was
// longer, or on several lines) Helm's in full, then what Helm logged.
func fail(code int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	line := firstLine(msg)
	fmt.Fprintln(os.Stderr, line)
	if full := strings.TrimSpace(msg); full != line {
		fmt.Fprintln(os.Stderr, full[:min(len(full), 64<<10)])
	}
	os.Stderr.Write(warnings.Bytes())
	os.Exit(code)
}
