package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain runs the test binary as the helper itself when asked (the
// sandboxed end-to-end tests run it so, walls and all).
func TestMain(m *testing.M) {
	if os.Getenv("SYNCPRIMS_FETCH_AS_HELPER") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

const gitHTTPBackend = "/usr/lib/git-core/git-http-backend"

// gitCmd runs the git CLI in dir with no user or system configuration.
func gitCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{
		"HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "PATH=" + os.Getenv("PATH"),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// testRepo is a work tree whose .git is served (GIT_PROJECT_ROOT is its parent).
type testRepo struct {
	t    *testing.T
	root string // the served root
	dir  string // the work tree: root/name
	name string
}

func newRepo(t *testing.T, name string) *testRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git CLI")
	}
	root := t.TempDir()
	r := &testRepo{t: t, root: root, dir: filepath.Join(root, name), name: name}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, r.dir, "init", "-q", "-b", "main")
	gitCmd(t, r.dir, "config", "uploadpack.allowReachableSHA1InWant", "true")
	return r
}

func (r *testRepo) write(path, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *testRepo) commit(msg string) string {
	r.t.Helper()
	gitCmd(r.t, r.dir, "add", "-A")
	gitCmd(r.t, r.dir, "commit", "-q", "--allow-empty", "-m", msg)
	return gitCmd(r.t, r.dir, "rev-parse", "HEAD")
}

func (r *testRepo) git(args ...string) string {
	r.t.Helper()
	return gitCmd(r.t, r.dir, args...)
}

// serveHTTP serves the repository through git-http-backend over plain HTTP
// on 127.0.0.1, wrapped by wrap when it is not nil; the URL is returned.
func (r *testRepo) serveHTTP(wrap func(http.Handler) http.Handler) string {
	r.t.Helper()
	if _, err := os.Stat(gitHTTPBackend); err != nil {
		r.t.Skip("no git-http-backend")
	}
	var h http.Handler = &cgi.Handler{
		Path: gitHTTPBackend,
		Env:  []string{"GIT_PROJECT_ROOT=" + r.root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + r.root},
	}
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	r.t.Cleanup(srv.Close)
	return srv.URL + "/" + r.name + "/.git"
}

// runIn runs the helper's work in this process (no walls), with a time limit.
func runIn(t *testing.T, in input) (*output, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return run(ctx, &in)
}

func mustRun(t *testing.T, in input) *output {
	t.Helper()
	out, err := runIn(t, in)
	if err != nil {
		t.Fatalf("%s %s: %v", in.Op, in.URL, err)
	}
	return out
}

// wantFailure checks the error's exit code and that its message holds every part.
func wantFailure(t *testing.T, err error, code int, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want exit %d with %q", code, parts)
	}
	var f *failure
	if !errors.As(err, &f) {
		t.Fatalf("error %v (%T) is no failure; want exit %d", err, err, code)
	}
	if f.code != code {
		t.Fatalf("exit %d (%v); want %d", f.code, err, code)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("message %q lacks %q", err, p)
		}
	}
}

// entry is one tar entry read back.
type entry struct {
	typ  byte
	mode int64
	body string
	link string
}

func untar(t *testing.T, data []byte) map[string]entry {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string]entry{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		out[h.Name] = entry{typ: h.Typeflag, mode: h.Mode, body: string(body), link: h.Linkname}
	}
}

// listenOn listens on a loopback address (127.0.0.2 is loopback on Linux too).
func listenOn(t *testing.T, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	return ln
}
