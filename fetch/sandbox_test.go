package main

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/syncprims/syncprims/fetch/internal/testserve"
)

// helper runs this test binary as the helper (walls and all), as the
// operator runs it: an empty environment, in /, the input on stdin.
func helper(t *testing.T, in any, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-memory", "268435456", "-timeout", "30s"}, args...)...)
	cmd.Env = []string{"SYNCPRIMS_FETCH_AS_HELPER=1"}
	cmd.Dir = "/"
	data, _ := json.Marshal(in)
	cmd.Stdin = bytes.NewReader(data)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func TestProbe(t *testing.T) {
	stdout, stderr, code := helper(t, nil, "-probe")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Walls    walls             `json:"walls"`
		Attempts map[string]string `json:"attempts"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if !got.Walls.Seccomp || !got.Walls.NoNewPrivs {
		t.Fatalf("walls %+v", got.Walls)
	}
	for _, a := range []string{"execve /bin/true", "write /tmp", "socket AF_UNIX", "bind 127.0.0.1:0"} {
		if !strings.HasPrefix(got.Attempts[a], "refused") {
			t.Fatalf("%s: %s", a, got.Attempts[a])
		}
	}
	for _, a := range []string{"socket AF_INET", "read /etc/resolv.conf"} {
		if got.Attempts[a] != "ok" && !strings.Contains(got.Attempts[a], "no such file") {
			t.Fatalf("%s: %s (the fetch needs it)", a, got.Attempts[a])
		}
	}
	if abi, err := llsys.LandlockGetABIVersion(); err == nil && abi > 0 {
		if got.Walls.Landlock == 0 || got.Attempts["read /etc/hostname"] != "refused: permission denied" {
			t.Fatalf("Landlock ABI %d: walls %+v, read /etc/hostname %s", abi, got.Walls, got.Attempts["read /etc/hostname"])
		}
	}
	t.Logf("walls here: %+v", got.Walls)
}

// The whole helper, behind its walls: git over HTTP by name (DNS reads
// /etc/hosts through Landlock), and OCI over TLS with caPEM (crypto/x509
// reads the system roots through Landlock).
func TestSandboxedFetch(t *testing.T) {
	r := newRepo(t, "walled")
	r.write("a.yaml", "a: 1\n")
	commit := r.commit("a")
	url := strings.Replace(r.serveHTTP(nil), "127.0.0.1", "localhost", 1)
	stdout, stderr, code := helper(t, input{Op: "fetch", Kind: "git", URL: url})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out output
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Resolved != commit || !out.Walls.Seccomp || untar(t, out.Data)["a.yaml"].body != "a: 1\n" {
		t.Fatalf("got %+v", out)
	}
	// The first line of stderr is the message; the exit code its kind.
	_, stderr, code = helper(t, input{Op: "fetch", Kind: "git", URL: url, DenyCIDRs: []string{"127.0.0.0/8", "::1/128"}})
	if code != exitRefused || !strings.HasPrefix(stderr, "connection to localhost refused: it resolves to ") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	_, stderr, code = helper(t, input{Op: "fetch", Kind: "git", URL: url, MaxOutputBytes: 100})
	if code != exitOutput || !strings.Contains(stderr, "maxOutputBytes") {
		t.Fatalf("exit %d: %s", code, stderr)
	}

	srv := httptest.NewTLSServer(testserve.Registry(testserve.NewCounts(), "", ""))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "https://")
	ref, _ := name.ParseReference(host + "/app:v1")
	img, _ := mutate.Append(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), fluxConfigMediaType), layer(gzipped(t, []byte("x")), fluxContentMediaType, nil))
	if err := remote.Write(ref, img, remote.WithTransport(srv.Client().Transport)); err != nil {
		t.Fatal(err)
	}
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	stdout, stderr, code = helper(t, input{Op: "fetch", Kind: "oci", URL: "oci://" + host + "/app", Ref: sourceRef{Tag: "v1"}, CAPEM: caPEM})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || !strings.HasPrefix(out.Revision, "v1@sha256:") {
		t.Fatalf("%v: %s", err, stdout)
	}
}

func TestTimeLimit(t *testing.T) {
	// A server that never answers: the helper stops itself at its time limit.
	ln := listenOn(t, "127.0.0.1:0")
	defer ln.Close()
	_, stderr, code := helper(t, input{Op: "resolve", Kind: "git", URL: "http://" + ln.Addr().String() + "/r.git"}, "-timeout", "500ms")
	if code != exitTime || !strings.Contains(stderr, "time limit") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}
