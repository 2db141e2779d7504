package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/syncprims/syncprims/fetch/internal/testserve"
)

// refsRepo has main (two commits), a branch dev, a lightweight tag v1.0.0,
// an annotated tag v1.1.0, a pre-release v2.0.0-rc.1, and HEAD on main.
type refsRepo struct {
	*testRepo
	first, main, dev, v100, v110, rc string
}

func newRefsRepo(t *testing.T) *refsRepo {
	r := &refsRepo{testRepo: newRepo(t, "app")}
	r.write("a.yaml", "kind: A\n")
	r.first = r.commit("first")
	r.git("tag", "v1.0.0")
	r.write("b.yaml", "kind: B\n")
	r.v110 = r.commit("second")
	r.git("tag", "-a", "-m", "v1.1.0", "v1.1.0")
	r.v100 = r.first
	r.git("checkout", "-q", "-b", "dev")
	r.write("dev.yaml", "kind: Dev\n")
	r.dev = r.commit("dev")
	r.rc = r.dev
	r.git("tag", "v2.0.0-rc.1")
	r.git("checkout", "-q", "main")
	r.main = r.v110
	return r
}

func TestGitResolveRefs(t *testing.T) {
	r := newRefsRepo(t)
	url := r.serveHTTP(nil)
	cases := []struct {
		name     string
		ref      sourceRef
		commit   string
		revision string
		named    sourceRef
	}{
		{"branch", sourceRef{Branch: "main"}, r.main, "main@sha1:" + r.main, sourceRef{Branch: "main"}},
		{"other branch", sourceRef{Branch: "dev"}, r.dev, "dev@sha1:" + r.dev, sourceRef{Branch: "dev"}},
		{"lightweight tag", sourceRef{Tag: "v1.0.0"}, r.v100, "v1.0.0@sha1:" + r.v100, sourceRef{Tag: "v1.0.0"}},
		{"annotated tag: its commit", sourceRef{Tag: "v1.1.0"}, r.v110, "v1.1.0@sha1:" + r.v110, sourceRef{Tag: "v1.1.0"}},
		{"semver: no pre-release", sourceRef{Semver: ">=1.0.0"}, r.v110, "v1.1.0@sha1:" + r.v110, sourceRef{Tag: "v1.1.0"}},
		{"semver naming a pre-release", sourceRef{Semver: ">=2.0.0-rc.0"}, r.rc, "v2.0.0-rc.1@sha1:" + r.rc, sourceRef{Tag: "v2.0.0-rc.1"}},
		{"semver upper bound", sourceRef{Semver: "<1.1.0"}, r.v100, "v1.0.0@sha1:" + r.v100, sourceRef{Tag: "v1.0.0"}},
		{"HEAD: the branch it points to", sourceRef{}, r.main, "main@sha1:" + r.main, sourceRef{Branch: "main"}},
		{"commit with a branch", sourceRef{Commit: r.first, Branch: "main"}, r.first, "main@sha1:" + r.first, sourceRef{Branch: "main"}},
		{"commit alone", sourceRef{Commit: r.first}, r.first, "sha1:" + r.first, sourceRef{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := mustRun(t, input{Op: "resolve", Kind: "git", URL: url, Ref: c.ref})
			if out.Resolved != c.commit || out.Revision != c.revision || out.Ref != c.named {
				t.Fatalf("got %s %s %+v; want %s %s %+v", out.Resolved, out.Revision, out.Ref, c.commit, c.revision, c.named)
			}
			if out.Data != nil {
				t.Fatal("resolve returned data")
			}
		})
	}
	_, err := runIn(t, input{Op: "resolve", Kind: "git", URL: url, Ref: sourceRef{Branch: "nope"}})
	wantFailure(t, err, exitFailed, `no branch "nope"`)
	_, err = runIn(t, input{Op: "resolve", Kind: "git", URL: url, Ref: sourceRef{Semver: ">=9"}})
	wantFailure(t, err, exitFailed, "no tag in the semver range")
}

func TestGitFetchTree(t *testing.T) {
	r := newRepo(t, "tree")
	r.write("deploy/app.yaml", "kind: ConfigMap\n")
	r.write("run.sh", "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(r.dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("deploy/app.yaml", filepath.Join(r.dir, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../etc/passwd", filepath.Join(r.dir, "deploy/out")); err != nil {
		t.Fatal(err)
	}
	commit := r.commit("tree")
	url := r.serveHTTP(nil)
	out := mustRun(t, input{Op: "fetch", Kind: "git", URL: url, Ref: sourceRef{Branch: "main"}})
	if out.Resolved != commit || out.Revision != "main@sha1:"+commit || out.Name != "tree.tar.gz" {
		t.Fatalf("got %+v", out)
	}
	// One listing (GET info/refs), then the POST git-upload-pack.
	if out.Requests != 2 {
		t.Fatalf("requests %d, want 2", out.Requests)
	}
	if res := mustRun(t, input{Op: "resolve", Kind: "git", URL: url}); res.Requests != 1 {
		t.Fatalf("resolve: requests %d, want 1", res.Requests)
	}
	files := untar(t, out.Data)
	if len(files) != 4 || out.Files != 4 {
		t.Fatalf("files %d (%d in the tar), want 4: %v", out.Files, len(files), files)
	}
	if e := files["deploy/app.yaml"]; e.body != "kind: ConfigMap\n" || e.mode != 0o644 {
		t.Fatalf("deploy/app.yaml: %+v", e)
	}
	if e := files["run.sh"]; e.mode != 0o755 {
		t.Fatalf("run.sh mode %o, want 755", e.mode)
	}
	// Symlinks stay symlinks, even one out of the tree: the caller refuses those.
	if e := files["link.yaml"]; e.typ != '2' || e.link != "deploy/app.yaml" {
		t.Fatalf("link.yaml: %+v", e)
	}
	if e := files["deploy/out"]; e.typ != '2' || e.link != "../../etc/passwd" {
		t.Fatalf("deploy/out: %+v", e)
	}
	for name := range files {
		if strings.HasPrefix(name, ".git") {
			t.Fatalf("%s in the tree", name)
		}
	}
	if out.Bytes != int64(len("kind: ConfigMap\n")+len("#!/bin/sh\n")+len("deploy/app.yaml")+len("../../etc/passwd")) {
		t.Fatalf("bytes %d", out.Bytes)
	}
	// fetch with what resolve gave, and with a tag, a semver range, HEAD.
	again := mustRun(t, input{Op: "fetch", Kind: "git", URL: url, Ref: sourceRef{Branch: "main"}, Resolved: commit})
	if again.Revision != out.Revision || !bytesEqual(again.Data, out.Data) {
		t.Fatalf("fetch of resolved %s: %s", commit, again.Revision)
	}
	r.git("tag", "v0.1.0")
	for _, ref := range []sourceRef{{Tag: "v0.1.0"}, {Semver: "0.1.x"}, {}} {
		got := mustRun(t, input{Op: "fetch", Kind: "git", URL: url, Ref: ref})
		if got.Resolved != commit || len(untar(t, got.Data)) != 4 {
			t.Fatalf("%+v: %+v", ref, got)
		}
	}
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// A commit that is no longer a branch's tip: shallowly by hash where the
// server allows it, else from the branch's history.
func TestGitNonTipCommit(t *testing.T) {
	for _, allow := range []string{"true", "false"} {
		t.Run("allowReachableSHA1InWant="+allow, func(t *testing.T) {
			r := newRepo(t, "hist")
			r.git("config", "uploadpack.allowReachableSHA1InWant", allow)
			r.write("v.txt", "one\n")
			old := r.commit("one")
			r.write("v.txt", "two\n")
			r.commit("two")
			url := r.serveHTTP(nil)
			out := mustRun(t, input{Op: "fetch", Kind: "git", URL: url, Ref: sourceRef{Branch: "main", Commit: old}})
			if out.Resolved != old || out.Revision != "main@sha1:"+old {
				t.Fatalf("got %s %s", out.Resolved, out.Revision)
			}
			if got := untar(t, out.Data)["v.txt"].body; got != "one\n" {
				t.Fatalf("v.txt %q, want the old commit's", got)
			}
			out = mustRun(t, input{Op: "fetch", Kind: "git", URL: url, Ref: sourceRef{Branch: "main"}, Resolved: old})
			if out.Resolved != old || untar(t, out.Data)["v.txt"].body != "one\n" {
				t.Fatalf("resolved %s: got %s", old, out.Resolved)
			}
			out = mustRun(t, input{Op: "fetch", Kind: "git", URL: url, Ref: sourceRef{Commit: old}})
			if out.Revision != "sha1:"+old || untar(t, out.Data)["v.txt"].body != "one\n" {
				t.Fatalf("commit alone: got %s", out.Revision)
			}
			_, err := runIn(t, input{Op: "fetch", Kind: "git", URL: url, Ref: sourceRef{Branch: "main", Commit: strings.Repeat("ab", 20)}})
			wantFailure(t, err, exitFailed, strings.Repeat("ab", 20))
		})
	}
}

func basicAuth(user, password string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, p, ok := r.BasicAuth()
			if !ok || u != user || p != password {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "authentication required", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func TestGitBasicAuth(t *testing.T) {
	r := newRepo(t, "private")
	r.write("a.yaml", "a: 1\n")
	commit := r.commit("a")
	url := r.serveHTTP(basicAuth("u", "s3cret"))
	_, err := runIn(t, input{Op: "resolve", Kind: "git", URL: url})
	wantFailure(t, err, exitFailed, "authentication required")
	_, err = runIn(t, input{Op: "resolve", Kind: "git", URL: url, Auth: auth{Username: "u", Password: "wrong"}})
	wantFailure(t, err, exitFailed, "authentication")
	out := mustRun(t, input{Op: "fetch", Kind: "git", URL: url, Auth: auth{Username: "u", Password: "s3cret"}})
	if out.Resolved != commit {
		t.Fatalf("got %s", out.Resolved)
	}
	// Credentials in the URL are refused, and never shown.
	withUser := strings.Replace(url, "http://", "http://u:s3cret@", 1)
	_, err = runIn(t, input{Op: "resolve", Kind: "git", URL: withUser})
	wantFailure(t, err, exitRefused, "put credentials in the secretRef")
	if strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("the message shows the password: %v", err)
	}
}

func TestGitBearerToken(t *testing.T) {
	r := newRepo(t, "token")
	r.commit("empty")
	url := r.serveHTTP(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.Header.Get("Authorization") != "Bearer t0ken" {
				http.Error(w, "no", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, req)
		})
	})
	mustRun(t, input{Op: "resolve", Kind: "git", URL: url, Auth: auth{BearerToken: "t0ken"}})
}

func TestGitDeniedAddress(t *testing.T) {
	r := newRepo(t, "denied")
	r.commit("empty")
	url := r.serveHTTP(nil)
	_, err := runIn(t, input{Op: "resolve", Kind: "git", URL: url, DenyCIDRs: []string{"127.0.0.0/8"}})
	wantFailure(t, err, exitRefused, "connection to 127.0.0.1 refused: the address 127.0.0.1 is in 127.0.0.0/8, which --source-deny-cidrs denies; nothing was sent")
	// By name: every address localhost resolves to is checked.
	byName := strings.Replace(url, "127.0.0.1", "localhost", 1)
	_, err = runIn(t, input{Op: "resolve", Kind: "git", URL: byName, DenyCIDRs: []string{"127.0.0.0/8", "::1/128"}})
	wantFailure(t, err, exitRefused, "connection to localhost refused: it resolves to ", "127.0.0.1 (in 127.0.0.0/8)", "which --source-deny-cidrs denies; nothing was sent")
}

// A redirect to a denied address is refused at the dial, naming it.
func TestGitRedirectToDenied(t *testing.T) {
	r := newRepo(t, "moved")
	r.commit("empty")
	ln := listenOn(t, "127.0.0.2:0")
	target := httptest.NewUnstartedServer(http.NotFoundHandler())
	target.Listener.Close()
	target.Listener = ln
	target.Start()
	defer target.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, target.URL+req.URL.RequestURI(), http.StatusFound)
	}))
	defer redirect.Close()
	_, err := runIn(t, input{Op: "resolve", Kind: "git", URL: redirect.URL + "/moved/.git", DenyCIDRs: []string{"127.0.0.2/32"}})
	wantFailure(t, err, exitRefused, "connection to 127.0.0.2 refused: the address 127.0.0.2 is in 127.0.0.2/32, which --source-deny-cidrs denies; nothing was sent")
}

func TestGitLimits(t *testing.T) {
	r := newRepo(t, "big")
	r.write("small.yaml", "a: 1\n")
	r.write("huge/blob.bin", strings.Repeat("x", 3<<20))
	noise := make([]byte, 256<<10)
	rand.Read(noise)
	r.write("noise.txt", hex.EncodeToString(noise))
	r.commit("big")
	url := r.serveHTTP(nil)
	// The blob is refused from the pack's header, before it is inflated: by its id.
	_, err := runIn(t, input{Op: "fetch", Kind: "git", URL: url, MaxUnpackedBytes: 2 << 20})
	wantFailure(t, err, exitRefused, "the blob "+r.git("rev-parse", "HEAD:huge/blob.bin"), "--source-max-unpacked")
	_, err = runIn(t, input{Op: "fetch", Kind: "git", URL: url, MaxFetchedBytes: 100 << 10})
	wantFailure(t, err, exitRefused, "maxFetchedBytes")
	_, err = runIn(t, input{Op: "fetch", Kind: "git", URL: url, MaxFiles: 2})
	wantFailure(t, err, exitRefused, "maxFiles")
	out := mustRun(t, input{Op: "fetch", Kind: "git", URL: url})
	if out.Files != 3 {
		t.Fatalf("files %d", out.Files)
	}
}

func TestGitSubmoduleRefused(t *testing.T) {
	r := newRepo(t, "withsub")
	r.write("a.yaml", "a: 1\n")
	c := r.commit("a")
	r.git("update-index", "--add", "--cacheinfo", "160000,"+c+",vendor/lib")
	r.git("commit", "-q", "-m", "submodule")
	url := r.serveHTTP(nil)
	_, err := runIn(t, input{Op: "fetch", Kind: "git", URL: url})
	wantFailure(t, err, exitRefused, "submodule at vendor/lib")
}

func TestGitSchemes(t *testing.T) {
	for _, url := range []string{"file:///tmp/repo", "git://127.0.0.1/repo"} {
		_, err := runIn(t, input{Op: "resolve", Kind: "git", URL: url})
		wantFailure(t, err, exitFailed, "is not one of https, http, ssh")
	}
}

// The tree's archive is the same bytes for the same tree: the TypeScript
// side hashes it for a chart's revision. No times, names or owners in it.
func TestGitArchiveDeterministic(t *testing.T) {
	r := newRepo(t, "det")
	r.write("b/z.yaml", "z: 1\n")
	r.write("b/a.yaml", "a: 1\n")
	r.write("a-b.txt", "dash\n")
	r.write("Chart.yaml", "name: c\n")
	first := r.commit("tree")
	// The same tree in another commit, made at another time.
	cmd := exec.Command("git", "commit-tree", "-m", "again", first+"^{tree}")
	cmd.Dir = r.dir
	cmd.Env = []string{"HOME=" + r.dir, "GIT_CONFIG_NOSYSTEM=1", "PATH=" + os.Getenv("PATH"),
		"GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@example.com", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@example.com",
		"GIT_AUTHOR_DATE=2030-06-01T12:34:56Z", "GIT_COMMITTER_DATE=2030-06-01T12:34:56Z"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	second := strings.TrimSpace(string(out))
	r.git("branch", "other", second)
	url := r.serveHTTP(nil)
	a := mustRun(t, input{Op: "fetch", Kind: "git", URL: url, Ref: sourceRef{Branch: "main"}})
	b := mustRun(t, input{Op: "fetch", Kind: "git", URL: url, Ref: sourceRef{Branch: "main"}, Resolved: first})
	c := mustRun(t, input{Op: "fetch", Kind: "git", URL: url, Ref: sourceRef{Branch: "other"}})
	if c.Resolved != second {
		t.Fatalf("other is %s, want %s", c.Resolved, second)
	}
	if !bytes.Equal(a.Data, b.Data) || !bytes.Equal(a.Data, c.Data) {
		t.Fatal("the same tree gave different archives")
	}
	// gzip: no FNAME/FCOMMENT/FEXTRA flags, MTIME 0, OS unknown (255).
	d := a.Data
	if len(d) < 10 || d[0] != 0x1f || d[1] != 0x8b || d[3] != 0 || !bytes.Equal(d[4:8], []byte{0, 0, 0, 0}) || d[9] != 255 {
		t.Fatalf("gzip header % x", d[:10])
	}
	gz, err := gzip.NewReader(bytes.NewReader(d))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !h.ModTime.Equal(time.Unix(0, 0)) || h.Uname != "" || h.Gname != "" || h.Uid != 0 || h.Gid != 0 || len(h.PAXRecords) != 0 {
			t.Fatalf("%s: mtime %v owner %q/%q %d/%d pax %v", h.Name, h.ModTime, h.Uname, h.Gname, h.Uid, h.Gid, h.PAXRecords)
		}
		names = append(names, h.Name)
	}
	// git's order: a folder sorts as its name with a slash.
	if want := []string{"Chart.yaml", "a-b.txt", "b/a.yaml", "b/z.yaml"}; strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("entries %v, want %v", names, want)
	}
}

// What a fetch costs: one GET info/refs and one POST git-upload-pack,
// whatever it is given (a branch, what resolve gave, a semver range, a
// commit that is no tip); a resolve the GET alone.
func TestGitRequestCounts(t *testing.T) {
	r := newRepo(t, "counted")
	r.write("v.txt", "one\n")
	old := r.commit("one")
	r.git("tag", "v1.0.0")
	r.write("v.txt", "two\n")
	tip := r.commit("two")
	r.git("tag", "-a", "-m", "v1.1.0", "v1.1.0")
	counts := testserve.NewCounts()
	url := r.serveHTTP(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			counts.Add(req.Method + " " + req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:])
			next.ServeHTTP(w, req)
		})
	})
	for _, c := range []struct {
		name string
		in   input
		want string
	}{
		{"resolve", input{Op: "resolve", Ref: sourceRef{Branch: "main"}}, tip},
		{"fetch a branch", input{Op: "fetch", Ref: sourceRef{Branch: "main"}}, tip},
		{"fetch what resolve gave", input{Op: "fetch", Ref: sourceRef{Branch: "main"}, Resolved: tip}, tip},
		{"fetch what resolve gave, moved since", input{Op: "fetch", Ref: sourceRef{Branch: "main"}, Resolved: old}, old},
		{"fetch an annotated tag", input{Op: "fetch", Ref: sourceRef{Tag: "v1.1.0"}, Resolved: tip}, tip},
		{"fetch a semver range", input{Op: "fetch", Ref: sourceRef{Semver: "1.0.x"}, Resolved: old}, old},
		{"fetch a commit", input{Op: "fetch", Ref: sourceRef{Commit: old}}, old},
	} {
		counts.Reset()
		c.in.Kind, c.in.URL = "git", url
		out := mustRun(t, c.in)
		want := map[string]int{"GET refs": 1, "POST git-upload-pack": 1}
		if c.in.Op == "resolve" {
			want = map[string]int{"GET refs": 1}
		}
		got := counts.Snapshot()
		if out.Resolved != c.want || out.Requests != int64(len(want)) || len(got) != len(want) || got["GET refs"] != 1 || got["POST git-upload-pack"] != want["POST git-upload-pack"] {
			t.Fatalf("%s: %s, %d requests %v; want %s, %v", c.name, out.Resolved, out.Requests, got, c.want, want)
		}
	}
}

// A blob too large for maxUnpackedBytes is refused from the pack's object
// header, before it is inflated into memory (a 100 MiB blob of zeros is a
// pack of 100 KiB).
func TestGitHugeBlobRefusedBeforeInflating(t *testing.T) {
	r := newRepo(t, "zeros")
	r.write("zeros.bin", string(make([]byte, 100<<20)))
	r.write("a.yaml", "a: 1\n")
	r.commit("zeros")
	id := r.git("rev-parse", "HEAD:zeros.bin")
	url := r.serveHTTP(nil)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := runIn(t, input{Op: "fetch", Kind: "git", URL: url, MaxUnpackedBytes: 50 << 20})
	runtime.ReadMemStats(&after)
	wantFailure(t, err, exitRefused, "the blob "+id+" is 104857600 bytes unpacked", "52428800 bytes allowed", "--source-max-unpacked")
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Fatalf("%d MiB allocated to refuse it; want it refused before it is inflated", alloc>>20)
	}
	// Many blobs each within the limit, together past it: refused before unpacking too.
	r.git("rm", "-q", "zeros.bin")
	for i := 0; i < 4; i++ {
		r.write(fmt.Sprintf("z%d.bin", i), strings.Repeat(fmt.Sprint(i), 1<<20))
	}
	r.commit("four")
	_, err = runIn(t, input{Op: "fetch", Kind: "git", URL: url, MaxUnpackedBytes: 3 << 20})
	wantFailure(t, err, exitRefused, "the fetched objects unpack to more than 3145728 bytes", "--source-max-unpacked")
}
