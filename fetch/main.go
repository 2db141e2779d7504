// Command syncprims-fetch reads one git repository or OCI artifact for the
// operator (docs/adr/0014-git-and-oci-sources.md): go-git v5 and
// go-containerregistry in a process of its own. The walls go up first thing
// (no_new_privs; a seccomp filter on every thread refusing execve, ptrace,
// mounts, kernel programs, io_uring, every socket but IPv4 and IPv6 ones,
// bind, listen and every open for writing; Landlock where the kernel has it:
// reads of what DNS and TLS need only, no writes, no TCP bind), then the
// request arrives on stdin. Every connection goes through one dialer that
// refuses the denied addresses and counts the bytes received; repositories
// are cloned into memory. The protocol is PROTOCOL.md beside this file: one
// JSON object in, one out; on failure stderr's first line is the message and
// the exit code says which kind: 10 refused, 11 failed, 12 memory, 13 time,
// 14 output. Other codes are the Go runtime's (2: a panic).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
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

// The limits when the input names none (PROTOCOL.md's example values).
const (
	defaultMaxFetched  = 50 << 20
	defaultMaxUnpacked = 200 << 20
	defaultMaxFiles    = 10000
	defaultMaxOutput   = 300 << 20
)

type input struct {
	Op               string        `json:"op"`
	Kind             string        `json:"kind"`
	URL              string        `json:"url"`
	Ref              sourceRef     `json:"ref"`
	Auth             auth          `json:"auth"`
	CAPEM            string        `json:"caPEM"`
	Insecure         bool          `json:"insecure"`
	DenyCIDRs        []string      `json:"denyCidrs"`
	MaxFetchedBytes  int64         `json:"maxFetchedBytes"`
	MaxUnpackedBytes int64         `json:"maxUnpackedBytes"`
	MaxFiles         int           `json:"maxFiles"`
	MaxOutputBytes   int64         `json:"maxOutputBytes"`
	LayerSelector    layerSelector `json:"layerSelector"`
	Verify           verify        `json:"verify"`
	Resolved         string        `json:"resolved"`
}

type sourceRef struct {
	Branch string `json:"branch,omitempty"`
	Tag    string `json:"tag,omitempty"`
	Semver string `json:"semver,omitempty"`
	Commit string `json:"commit,omitempty"`
	Digest string `json:"digest,omitempty"`
}

type auth struct {
	Username           string `json:"username"`
	Password           string `json:"password"`
	BearerToken        string `json:"bearerToken"`
	Identity           string `json:"identity"`
	IdentityPassphrase string `json:"identityPassphrase"`
	KnownHosts         string `json:"knownHosts"`
	DockerConfigJSON   string `json:"dockerConfigJson"`
}

type layerSelector struct {
	MediaType string `json:"mediaType"`
	Operation string `json:"operation"`
}

type verify struct {
	Provider   string   `json:"provider"`
	PublicKeys []string `json:"publicKeys"`
}

type output struct {
	Revision string    `json:"revision"`
	Resolved string    `json:"resolved"`
	Ref      sourceRef `json:"ref"`
	Name     string    `json:"name,omitempty"`
	Data     []byte    `json:"data,omitempty"`
	Files    int       `json:"files"`
	Bytes    int64     `json:"bytes"`
	Verified string    `json:"verified"`
	Requests int64     `json:"requests"`
	Walls    walls     `json:"walls"`
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

func main() {
	memory := flag.Int64("memory", 256<<20, "bytes of Go heap the fetch may use")
	timeout := flag.Duration("timeout", 60*time.Second, "how long the fetch may take")
	noSandbox := flag.Bool("no-sandbox", false, "no walls (tests only)")
	probe := flag.Bool("probe", false, "print the walls this kernel gives, and what they refuse (JSON)")
	flag.Parse()
	time.Local = time.UTC
	var held walls
	if !*noSandbox {
		var err error
		if held, err = raiseWalls(); err != nil {
			fail(exitRefused, "%v", err)
		}
	}
	if *probe {
		runProbe(held)
		return
	}
	deadline := watch(*memory, *timeout)
	var in input
	if err := json.NewDecoder(io.LimitReader(os.Stdin, 64<<20)).Decode(&in); err != nil {
		fail(exitFailed, "reading the input: %v", err)
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	out, err := run(ctx, &in)
	if err != nil {
		fail(codeOf(err), "%s", err)
	}
	out.Walls = held
	write(out, in.MaxOutputBytes)
}

// run does what the input asks, with the network guarded as it says.
func run(ctx context.Context, in *input) (*output, error) {
	applyDefaults(in)
	g, err := newGuard(in)
	if err != nil {
		return nil, err
	}
	var out *output
	switch in.Kind {
	case "git":
		out, err = runGit(ctx, g, in)
	case "oci":
		out, err = runOCI(ctx, g, in)
	default:
		return nil, failed("kind %q: one of git, oci", in.Kind)
	}
	// A refusal on the network (a denied address, the fetched-bytes limit)
	// is the reason, whatever the library made of it.
	if r := g.refusal(); r != nil {
		return nil, r
	}
	if err != nil {
		return nil, err
	}
	out.Requests = g.requests.Load()
	return out, nil
}

func applyDefaults(in *input) {
	if in.MaxFetchedBytes <= 0 {
		in.MaxFetchedBytes = defaultMaxFetched
	}
	if in.MaxUnpackedBytes <= 0 {
		in.MaxUnpackedBytes = defaultMaxUnpacked
	}
	if in.MaxFiles <= 0 {
		in.MaxFiles = defaultMaxFiles
	}
	if in.MaxOutputBytes <= 0 {
		in.MaxOutputBytes = defaultMaxOutput
	}
}

func codeOf(err error) int {
	var f *failure
	if errors.As(err, &f) {
		return f.code
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return exitTime
	}
	return exitFailed
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
		fail(exitOutput, "the output is %d bytes, more than the %d bytes allowed (maxOutputBytes)", len(data), limit)
	}
	if _, err := os.Stdout.Write(data); err != nil {
		fail(exitFailed, "writing the output: %v", err)
	}
}

// fail ends the helper: the message on one line, then (when it was longer) in full.
func fail(code int, format string, args ...any) {
	msg := strings.TrimSpace(fmt.Sprintf(format, args...))
	line, _, _ := strings.Cut(msg, "\n")
	fmt.Fprintln(os.Stderr, line)
	if msg != line {
		fmt.Fprintln(os.Stderr, msg[:min(len(msg), 64<<10)])
	}
	os.Exit(code)
}
