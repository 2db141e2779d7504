package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
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
	url    string // as shown in messages: without user info
	store  *memory.Storage
	remote *git.Remote
	auth   transport.AuthMethod
	proxy  transport.ProxyOptions
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
		r.proxy = transport.ProxyOptions{URL: guardProxyScheme + "://dialer"}
		gitssh.DefaultSSHConfig = nil // no ~/.ssh/config
		useGuardForSSH(g)
	default:
		return nil, failed("url %s: the scheme %q is not one of https, http, ssh", shown, ep.Protocol)
	}
	client.InstallProtocol("file", nil)
	client.InstallProtocol("git", nil)
	r.store = memory.NewStorage()
	r.remote = git.NewRemote(r.store, &config.RemoteConfig{Name: "origin", URLs: []string{in.URL}})
	return r, nil
}

// refs is a ref listing: each ref's commit (an annotated tag's peeled), and where HEAD points.
type refs struct {
	commits map[plumbing.ReferenceName]plumbing.Hash
	head    plumbing.ReferenceName // the branch HEAD points to ("" if not said)
	headSHA plumbing.Hash
}

func (r *gitRemote) list(ctx context.Context) (*refs, error) {
	listed, err := r.remote.ListContext(ctx, &git.ListOptions{Auth: r.auth, PeelingOption: git.AppendPeeled, ProxyOptions: r.proxy})
	if err != nil {
		return nil, r.explain(err, "listing the refs of")
	}
	out := &refs{commits: map[plumbing.ReferenceName]plumbing.Hash{}}
	peeled := map[plumbing.ReferenceName]plumbing.Hash{}
	for _, ref := range listed {
		name := ref.Name()
		switch {
		case name == plumbing.HEAD && ref.Type() == plumbing.SymbolicReference:
			out.head = ref.Target()
		case name == plumbing.HEAD:
			out.headSHA = ref.Hash()
		case strings.HasSuffix(name.String(), "^{}"):
			peeled[plumbing.ReferenceName(strings.TrimSuffix(name.String(), "^{}"))] = ref.Hash()
		case ref.Type() == plumbing.HashReference:
			out.commits[name] = ref.Hash()
		}
	}
	for name, h := range peeled {
		out.commits[name] = h
	}
	if out.head != "" {
		out.headSHA = out.commits[out.head]
	}
	return out, nil
}

func (r *gitRemote) resolve(ctx context.Context, want sourceRef) (*resolution, error) {
	if want.Commit != "" {
		return commitResolution(want), nil
	}
	listed, err := r.list(ctx)
	if err != nil {
		return nil, err
	}
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

// fetch gets exactly one commit into memory and returns its tree as a tar.gz.
func (r *gitRemote) fetch(ctx context.Context, in *input) (*output, error) {
	var res *resolution
	var listed *refs
	var err error
	switch {
	case in.Resolved != "":
		if !commitPattern.MatchString(in.Resolved) {
			return nil, failed("resolved %q is not a full commit hash (40 hex digits)", in.Resolved)
		}
		if in.Ref.Commit != "" && in.Ref.Commit != in.Resolved {
			return nil, failed("resolved %s is not ref.commit %s", in.Resolved, in.Ref.Commit)
		}
		if listed, err = r.list(ctx); err != nil {
			return nil, err
		}
		res = nameResolved(listed, in.Ref, in.Resolved, r.url)
	case in.Ref.Commit != "":
		res = commitResolution(in.Ref)
		if listed, err = r.list(ctx); err != nil {
			return nil, err
		}
	default:
		if listed, err = r.list(ctx); err != nil {
			return nil, err
		}
		if res, err = listed.resolve(r.url, in.Ref); err != nil {
			return nil, err
		}
	}
	commit, err := r.fetchCommit(ctx, listed, res, in)
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

// fetchCommit brings the commit into memory: shallowly by the ref whose tip
// it is (every server allows that), else shallowly by its hash where the
// server allows wanting any reachable commit, else (as Flux does) the named
// branch or tag, or every branch, deeply, bounded by maxFetchedBytes.
func (r *gitRemote) fetchCommit(ctx context.Context, l *refs, res *resolution, in *input) (*object.Commit, error) {
	want := plumbing.NewHash(res.commit)
	fetch := func(spec string, depth int) error {
		err := r.remote.FetchContext(ctx, &git.FetchOptions{
			RefSpecs:     []config.RefSpec{config.RefSpec(spec)},
			Depth:        depth,
			Auth:         r.auth,
			Tags:         git.NoTags,
			Force:        true,
			ProxyOptions: r.proxy,
		})
		if errors.Is(err, git.NoErrAlreadyUpToDate) {
			return nil
		}
		return err
	}
	var err error
	if tip := l.tipNamed(want, res.ref); tip != "" {
		err = fetch("+"+tip.String()+":"+tip.String(), 1)
	} else {
		err = fetch(res.commit+":refs/heads/wanted", 1)
		if errors.Is(err, git.ErrExactSHA1NotSupported) {
			spec := "+refs/heads/*:refs/heads/*"
			switch {
			case res.ref.Branch != "":
				spec = "+refs/heads/" + res.ref.Branch + ":refs/heads/" + res.ref.Branch
			case res.ref.Tag != "":
				spec = "+refs/tags/" + res.ref.Tag + ":refs/tags/" + res.ref.Tag
			}
			err = fetch(spec, 0)
		}
	}
	if err != nil {
		return nil, r.explain(err, "fetching "+res.commit+" from")
	}
	c, err := object.GetCommit(r.store, want)
	if err != nil {
		return nil, failed("%s: the commit %s is not there (%v)", r.url, res.commit, err)
	}
	return c, nil
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
