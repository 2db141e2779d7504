package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// maxDepth bounds the tree's nesting (git itself has no bound).
const maxDepth = 256

// maxLinkTarget bounds a symlink's target (the longest path Linux takes).
const maxLinkTarget = 4096

// archiveTime is every entry's mtime: the archive is the tree's bytes only,
// so the same tree (whatever commit holds it) gives the same archive.
var archiveTime = time.Unix(0, 0).UTC()

// treeWriter writes a commit's tree as a tar: regular files with their
// modes, symlinks as symlinks, within the limits on files and bytes.
type treeWriter struct {
	store       storer.EncodedObjectStorer
	tw          *tar.Writer
	files       int
	bytes       int64
	maxFiles    int
	maxUnpacked int64
}

// treeArchive returns the commit's tree as a gzip'd tar, its count of files
// and its unpacked bytes. A submodule, a hostile name or a limit passed is a refusal.
// The archive is deterministic (the caller hashes it): entries in the tree's
// order (git's sorted order, folders implied by their files' paths), every
// mtime archiveTime, uid, gid and owner names empty, a gzip header with no
// name, no time and the "unknown" OS, at a fixed compression level.
func treeArchive(store storer.EncodedObjectStorer, c *object.Commit, maxFiles int, maxUnpacked int64) ([]byte, int, int64, error) {
	tree, err := c.Tree()
	if err != nil {
		return nil, 0, 0, failed("the commit %s has no tree here: %v", c.Hash, err)
	}
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	gz.Header = gzip.Header{OS: 255} // no name, no mtime, no comment
	w := &treeWriter{store: store, tw: tar.NewWriter(gz), maxFiles: maxFiles, maxUnpacked: maxUnpacked}
	if err := w.walk(tree, "", 0); err != nil {
		return nil, 0, 0, err
	}
	if err := w.tw.Close(); err != nil {
		return nil, 0, 0, err
	}
	if err := gz.Close(); err != nil {
		return nil, 0, 0, err
	}
	return buf.Bytes(), w.files, w.bytes, nil
}

func (w *treeWriter) walk(tree *object.Tree, dir string, depth int) error {
	if depth > maxDepth {
		return refused("the tree nests deeper than %d folders at %s; refused", maxDepth, dir)
	}
	for _, e := range tree.Entries {
		name := dir + e.Name
		if e.Name == "" || e.Name == "." || e.Name == ".." || strings.ContainsAny(e.Name, "/\x00") || strings.EqualFold(e.Name, ".git") {
			return refused("the tree has an entry named %q in %q; refused", e.Name, dir)
		}
		switch e.Mode {
		case filemode.Dir:
			sub, err := object.GetTree(w.store, e.Hash)
			if err != nil {
				return failed("the folder %s is missing from the fetched objects: %v", name, err)
			}
			if err := w.walk(sub, name+"/", depth+1); err != nil {
				return err
			}
		case filemode.Regular, filemode.Deprecated, filemode.Executable:
			if err := w.file(name, e.Hash, e.Mode == filemode.Executable); err != nil {
				return err
			}
		case filemode.Symlink:
			if err := w.symlink(name, e.Hash); err != nil {
				return err
			}
		case filemode.Submodule:
			return refused("the tree has a submodule at %s; submodules are not fetched: refused", name)
		default:
			return refused("the tree has %s with the mode %o, which is none of file, folder, symlink; refused", name, uint32(e.Mode))
		}
	}
	return nil
}

// blob returns the blob's reader after checking its size against what is left.
func (w *treeWriter) blob(name string, h plumbing.Hash) (io.ReadCloser, int64, error) {
	w.files++
	if w.files > w.maxFiles {
		return nil, 0, refused("the tree has more than %d files (maxFiles); refused", w.maxFiles)
	}
	obj, err := w.store.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return nil, 0, failed("the file %s is missing from the fetched objects: %v", name, err)
	}
	size := obj.Size()
	if size > w.maxUnpacked {
		return nil, 0, refused("the file %s is %d bytes, more than the %d bytes allowed for the whole tree (maxUnpackedBytes); refused", name, size, w.maxUnpacked)
	}
	if w.bytes+size > w.maxUnpacked {
		return nil, 0, refused("the tree unpacks to more than %d bytes (maxUnpackedBytes), passed at %s; refused", w.maxUnpacked, name)
	}
	w.bytes += size
	r, err := obj.Reader()
	if err != nil {
		return nil, 0, failed("reading %s: %v", name, err)
	}
	return r, size, nil
}

func (w *treeWriter) file(name string, h plumbing.Hash, executable bool) error {
	r, size, err := w.blob(name, h)
	if err != nil {
		return err
	}
	defer r.Close()
	mode := int64(0o644)
	if executable {
		mode = 0o755
	}
	if err := w.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: mode, ModTime: archiveTime, Format: tar.FormatPAX}); err != nil {
		return err
	}
	if _, err := io.CopyN(w.tw, r, size); err != nil {
		return failed("reading %s: %v", name, err)
	}
	return nil
}

func (w *treeWriter) symlink(name string, h plumbing.Hash) error {
	r, size, err := w.blob(name, h)
	if err != nil {
		return err
	}
	defer r.Close()
	if size > maxLinkTarget {
		return refused("the symlink %s has a target of %d bytes; refused", name, size)
	}
	target, err := io.ReadAll(r)
	if err != nil {
		return failed("reading %s: %v", name, err)
	}
	if bytes.IndexByte(target, 0) >= 0 || len(target) == 0 {
		return refused("the symlink %s has an empty target or a NUL in it; refused", name)
	}
	return w.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: string(target), Mode: 0o777, ModTime: archiveTime, Format: tar.FormatPAX})
}
