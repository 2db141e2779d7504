package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"

	"github.com/Masterminds/semver/v3"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/go-git/go-git/v5/storage/memory"
)

var commitPattern = regexp.MustCompile(`^[0-9a-f]{40}$`)

// gitRemote is one repository as this run reaches it: the remote over
// in-memory storage, and the options every call to it takes.
type gitRemote struct {
	url   string // as shown in messages: without user info
	ep    *transport.Endpoint
	store *memory.Storage
	auth  transport.AuthMethod
}

// resolution is a ref resolved to a commit, named as Flux names it.
type resolution struct {
	commit   string
	revision string
	ref      sourceRef
}

func runGit(ctx context.Context, g *guard, in *input) (*output, error) {
	r, err := openGitRemote(g, in)
	if err != nil {
		return nil, err
	}
	if err := checkGitRef(in.Ref); err != nil {
		return nil, err
	}
	switch in.Op {
	case "resolve":
		res, err := r.resolve(ctx, in.Ref)
		if err != nil {
			return nil, err
		}
		return &output{Revision: res.revision, Resolved: res.commit, Ref: res.ref, Verified: "absent"}, nil
	case "fetch":
		return r.fetch(ctx, in)
	}
	return nil, failed("op %q: one of resolve, fetch", in.Op)
}

func checkGitRef(ref sourceRef) error {
	named := 0
	for _, s := range []string{ref.Branch, ref.Tag, ref.Semver} {
		if s != "" {
			named++
		}
	}
	switch {
	case ref.Digest != "":
		return failed("ref.digest is for oci sources; a git ref is a branch, tag, semver or commit")
	case named > 1:
		return failed("ref: at most one of branch, tag and semver")
	case ref.Commit != "" && ref.Semver != "":
		return failed("ref: a commit goes alone, or with a branch or a tag, not with a semver range")
	case ref.Commit != "" && !commitPattern.MatchString(ref.Commit):
		return failed("ref.commit %q is not a full commit hash (40 hex digits)", ref.Commit)
	}
	return nil
}

// openGitRemote checks the URL and installs this run's transports: HTTP(S)
// through the guard's client, SSH through the guard's dialer; no other
// scheme (file:// would run git-upload-pack, git:// dials by itself).
func openGitRemote(g *guard, in *input) (*gitRemote, error) {
	ep, err := transport.NewEndpoint(in.URL)
	if err != nil {
		return nil, failed("url %q is not a git URL: %v", redactURL(in.URL), err)
	}
	shown := redactURL(in.URL)
	r := &gitRemote{url: shown}
	switch ep.Protocol {
	case "http", "https":
		if ep.User != "" || ep.Password != "" {
			return nil, refused("url %s has user info: put credentials in the secretRef", shown)
		}
		rt, err := g.httpTransport(in.CAPEM)
		if err != nil {
			return nil, err
		}
		hc := &http.Client{Transport: rt}
		t := githttp.NewClientWithOptions(hc, &githttp.ClientOptions{RedirectPolicy: githttp.FollowInitialRedirects})
		client.InstallProtocol("http", t)
		client.InstallProtocol("https", t)
		switch {
		case in.Auth.BearerToken != "":
			r.auth = &githttp.TokenAuth{Token: in.Auth.BearerToken}
		case in.Auth.Username != "" || in.Auth.Password != "":
			r.auth = &githttp.BasicAuth{Username: in.Auth.Username, Password: in.Auth.Password}
		}
	case "ssh":
		if ep.Password != "" {
			return nil, refused("url %s has a password: put credentials in the secretRef", shown)
		}
		a, err := newSSHAuth(g, ep, in.Auth)
		if err != nil {
			return nil, err
		}
		r.auth = a
		ep.Proxy = transport.ProxyOptions{URL: guardProxyScheme + "://dialer"}
		gitssh.DefaultSSHConfig = nil // no ~/.ssh/config
		useGuardForSSH(g)
	default:
		return nil, failed("url %s: the scheme %q is not one of https, http, ssh", shown, ep.Protocol)
	}
	client.InstallProtocol("file", nil)
	client.InstallProtocol("git", nil)
	r.ep = ep
	r.store = memory.NewStorage()
	return r, nil
}

// refs is a ref listing: each ref's commit (an annotated tag's peeled), its
// value as advertised (what a want may name), and where HEAD points.
type refs struct {
	commits map[plumbing.ReferenceName]plumbing.Hash
	raw     map[plumbing.ReferenceName]plumbing.Hash
	head    plumbing.ReferenceName // the branch HEAD points to ("" if not said)
	headSHA plumbing.Hash
	caps    *capability.List
}

// advertise opens an upload-pack session and reads the refs it advertises:
// one GET info/refs, or one SSH connection, which the fetch then goes on in.
func (r *gitRemote) advertise(ctx context.Context) (transport.UploadPackSession, *refs, error) {
	c, err := client.NewClient(r.ep)
	if err != nil {
		return nil, nil, r.explain(err, "listing the refs of")
	}
	sess, err := c.NewUploadPackSession(r.ep, r.auth)
	if err != nil {
		return nil, nil, r.explain(err, "listing the refs of")
	}
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		sess.Close()
		return nil, nil, r.explain(err, "listing the refs of")
	}
	all, err := ar.AllReferences()
	if err != nil {
		sess.Close()
		return nil, nil, r.explain(err, "listing the refs of")
	}
	out := &refs{commits: map[plumbing.ReferenceName]plumbing.Hash{}, raw: map[plumbing.ReferenceName]plumbing.Hash{}, caps: ar.Capabilities}
	for name, ref := range all {
		switch {
		case name == plumbing.HEAD && ref.Type() == plumbing.SymbolicReference:
			out.head = ref.Target()
		case name == plumbing.HEAD:
			out.headSHA = ref.Hash()
		case ref.Type() == plumbing.HashReference:
			out.commits[name], out.raw[name] = ref.Hash(), ref.Hash()
		}
	}
	for name, h := range ar.Peeled {
		if _, ok := out.raw[plumbing.ReferenceName(name)]; ok {
			out.commits[plumbing.ReferenceName(name)] = h
		}
	}
	if out.head != "" {
		out.headSHA = out.commits[out.head]
	}
	return sess, out, nil
}

func (r *gitRemote) resolve(ctx context.Context, want sourceRef) (*resolution, error) {
	if want.Commit != "" {
		return commitResolution(want), nil
	}
	sess, listed, err := r.advertise(ctx)
	if err != nil {
		return nil, err
	}
	sess.Close()
	return listed.resolve(r.url, want)
}

// commitResolution: a commit wins, the branch or tag beside it names it.
func commitResolution(want sourceRef) *resolution {
	res := &resolution{commit: want.Commit, revision: "sha1:" + want.Commit}
	switch {
	case want.Branch != "":
		res.revision = want.Branch + "@" + res.revision
		res.ref = sourceRef{Branch: want.Branch}
	case want.Tag != "":
		res.revision = want.Tag + "@" + res.revision
		res.ref = sourceRef{Tag: want.Tag}
	}
	return res
}

func (l *refs) resolve(url string, want sourceRef) (*resolution, error) {
	named := func(name, kind string, short string) (*resolution, error) {
		h, ok := l.commits[plumbing.ReferenceName(name)]
		if !ok {
			return nil, failed("%s has no %s %q", url, kind, short)
		}
		ref := sourceRef{Branch: short}
		if kind == "tag" {
			ref = sourceRef{Tag: short}
		}
		return &resolution{commit: h.String(), revision: short + "@sha1:" + h.String(), ref: ref}, nil
	}
	switch {
	case want.Branch != "":
		return named("refs/heads/"+want.Branch, "branch", want.Branch)
	case want.Tag != "":
		return named("refs/tags/"+want.Tag, "tag", want.Tag)
	case want.Semver != "":
		tag, err := pickSemver(l.tags(), want.Semver)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", url, err)
		}
		return named("refs/tags/"+tag, "tag", tag)
	}
	if l.head != "" && l.headSHA != plumbing.ZeroHash {
		branch := l.head.Short()
		return &resolution{commit: l.headSHA.String(), revision: branch + "@sha1:" + l.headSHA.String(), ref: sourceRef{Branch: branch}}, nil
	}
	if l.headSHA != plumbing.ZeroHash {
		return &resolution{commit: l.headSHA.String(), revision: "HEAD@sha1:" + l.headSHA.String()}, nil
	}
	return nil, failed("%s has no HEAD (an empty repository?)", url)
}

func (l *refs) tags() []string {
	var out []string
	for name := range l.commits {
		if name.IsTag() {
			out = append(out, name.Short())
		}
	}
	sort.Strings(out)
	return out
}

// pickSemver returns the highest tag in the range. A pre-release is taken
// only when the range names one (Masterminds' rule).
func pickSemver(tags []string, rng string) (string, error) {
	c, err := semver.NewConstraint(rng)
	if err != nil {
		return "", failed("semver range %q: %v", rng, err)
	}
	var best *semver.Version
	var bestTag string
	for _, t := range tags {
		v, err := semver.NewVersion(t)
		if err != nil || !c.Check(v) {
			continue
		}
		if best == nil || v.GreaterThan(best) {
			best, bestTag = v, t
		}
	}
	if best == nil {
		return "", failed("no tag in the semver range %q", rng)
	}
	return bestTag, nil
}

// fetch gets exactly one commit into memory and returns its tree as a
// tar.gz. The refs are listed once: the upload-pack session that lists them
// (one GET info/refs, or one SSH connection) is the one the pack comes in.
func (r *gitRemote) fetch(ctx context.Context, in *input) (*output, error) {
	if in.Resolved != "" {
		if !commitPattern.MatchString(in.Resolved) {
			return nil, failed("resolved %q is not a full commit hash (40 hex digits)", in.Resolved)
		}
		if in.Ref.Commit != "" && in.Ref.Commit != in.Resolved {
			return nil, failed("resolved %s is not ref.commit %s", in.Resolved, in.Ref.Commit)
		}
	}
	sess, listed, err := r.advertise(ctx)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	var res *resolution
	switch {
	case in.Resolved != "":
		res = nameResolved(listed, in.Ref, in.Resolved, r.url)
	case in.Ref.Commit != "":
		res = commitResolution(in.Ref)
	default:
		if res, err = listed.resolve(r.url, in.Ref); err != nil {
			return nil, err
		}
	}
	commit, err := r.fetchCommit(ctx, sess, listed, res, in)
	if err != nil {
		return nil, err
	}
	data, files, size, err := treeArchive(r.store, commit, in.MaxFiles, in.MaxUnpackedBytes)
	if err != nil {
		return nil, err
	}
	return &output{Revision: res.revision, Resolved: res.commit, Ref: res.ref, Name: "tree.tar.gz", Data: data, Files: files, Bytes: size, Verified: "absent"}, nil
}

// nameResolved names a commit an earlier resolve gave as that resolve did:
// by the ref asked for when it still points there, else by the commit, with
// the branch or tag asked for (a semver range: the tag in it at that commit).
func nameResolved(l *refs, want sourceRef, commit, url string) *resolution {
	if want.Commit == "" {
		if res, err := l.resolve(url, want); err == nil && res.commit == commit {
			return res
		}
	}
	pinned := want
	pinned.Commit = commit
	if want.Semver != "" {
		pinned.Semver = ""
		if c, err := semver.NewConstraint(want.Semver); err == nil {
			for _, t := range l.tags() {
				v, err := semver.NewVersion(t)
				if err == nil && c.Check(v) && l.commits[plumbing.NewTagReferenceName(t)].String() == commit {
					pinned.Tag = t
				}
			}
		}
	}
	return commitResolution(pinned)
}

// fetchCommit brings the commit into memory in one upload-pack request:
// shallowly by the ref whose tip it is (every server allows that), else
// shallowly by its hash where the server allows wanting any reachable
// commit, else (as Flux does) the named branch or tag, or every branch,
// deeply, bounded by maxFetchedBytes. The pack is checked before it is
// unpacked (checkPack).
func (r *gitRemote) fetchCommit(ctx context.Context, sess transport.UploadPackSession, l *refs, res *resolution, in *input) (*object.Commit, error) {
	want := plumbing.NewHash(res.commit)
	var wants []plumbing.Hash
	depth := 1
	if tip := l.tipNamed(want, res.ref); tip != "" {
		wants = []plumbing.Hash{l.raw[tip]} // an annotated tag: the tag, which brings its commit
	} else if l.caps.Supports(capability.AllowReachableSHA1InWant) {
		wants = []plumbing.Hash{want}
	} else {
		depth = 0
		switch {
		case res.ref.Branch != "" && !l.raw[plumbing.NewBranchReferenceName(res.ref.Branch)].IsZero():
			wants = []plumbing.Hash{l.raw[plumbing.NewBranchReferenceName(res.ref.Branch)]}
		case res.ref.Tag != "" && !l.raw[plumbing.NewTagReferenceName(res.ref.Tag)].IsZero():
			wants = []plumbing.Hash{l.raw[plumbing.NewTagReferenceName(res.ref.Tag)]}
		default:
			seen := map[plumbing.Hash]bool{}
			for name, h := range l.raw {
				if name.IsBranch() && !seen[h] {
					seen[h] = true
					wants = append(wants, h)
				}
			}
			sort.Slice(wants, func(i, j int) bool { return wants[i].String() < wants[j].String() })
		}
		if len(wants) == 0 {
			return nil, failed("%s: the commit %s is no ref's tip, the server allows no wants by hash, and there is no branch to fetch it from", r.url, res.commit)
		}
	}
	req := packp.NewUploadPackRequestFromCapabilities(l.caps)
	req.Wants = wants
	if depth > 0 {
		req.Depth = packp.DepthCommits(depth)
		if err := req.Capabilities.Set(capability.Shallow); err != nil {
			return nil, failed("%s: %v", r.url, err)
		}
	}
	if l.caps.Supports(capability.NoProgress) {
		if err := req.Capabilities.Set(capability.NoProgress); err != nil {
			return nil, failed("%s: %v", r.url, err)
		}
	}
	doing := "fetching " + res.commit + " from"
	resp, err := sess.UploadPack(ctx, req)
	if err != nil {
		return nil, r.explain(err, doing)
	}
	defer resp.Close()
	pack, err := io.ReadAll(demuxed(req.Capabilities, resp))
	if err != nil {
		return nil, r.explain(err, doing)
	}
	if err := checkPack(pack, in.MaxUnpackedBytes); err != nil {
		return nil, r.explain(err, doing)
	}
	if err := packfile.UpdateObjectStorage(r.store, bytes.NewReader(pack)); err != nil {
		return nil, r.explain(err, doing)
	}
	c, err := object.GetCommit(r.store, want)
	if err != nil {
		return nil, failed("%s: the commit %s is not there (%v)", r.url, res.commit, err)
	}
	return c, nil
}

// demuxed is the pack out of the side band, when the server sends one.
func demuxed(caps *capability.List, r io.Reader) io.Reader {
	switch {
	case caps.Supports(capability.Sideband64k):
		return sideband.NewDemuxer(sideband.Sideband64k, r)
	case caps.Supports(capability.Sideband):
		return sideband.NewDemuxer(sideband.Sideband, r)
	}
	return r
}

// tipNamed returns a ref whose tip is the commit: the one named if it is, else any.
func (l *refs) tipNamed(want plumbing.Hash, named sourceRef) plumbing.ReferenceName {
	if named.Branch != "" && l.commits[plumbing.NewBranchReferenceName(named.Branch)] == want {
		return plumbing.NewBranchReferenceName(named.Branch)
	}
	if named.Tag != "" && l.commits[plumbing.NewTagReferenceName(named.Tag)] == want {
		return plumbing.NewTagReferenceName(named.Tag)
	}
	var names []string
	for name, h := range l.commits {
		if h == want && (name.IsBranch() || name.IsTag()) {
			names = append(names, name.String())
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	return plumbing.ReferenceName(names[0])
}

// explain turns go-git's errors into the helper's messages.
func (r *gitRemote) explain(err error, doing string) error {
	var f *failure
	switch {
	case errors.As(err, &f):
		return err
	case errors.Is(err, context.DeadlineExceeded):
		return &failure{exitTime, fmt.Sprintf("%s %s took longer than the fetch time limit", doing, r.url)}
	case errors.Is(err, transport.ErrAuthenticationRequired):
		return failed("%s %s: authentication required (the secretRef's credentials are missing or wrong)", doing, r.url)
	case errors.Is(err, transport.ErrAuthorizationFailed):
		return failed("%s %s: authorization failed (the secretRef's credentials were refused)", doing, r.url)
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return failed("%s %s: repository not found", doing, r.url)
	case errors.Is(err, transport.ErrEmptyRemoteRepository):
		return failed("%s %s: the repository is empty", doing, r.url)
	}
	return failed("%s %s: %v", doing, r.url, err)
}
