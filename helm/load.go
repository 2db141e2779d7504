package main

import (
	"bytes"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/ignore"
	"sigs.k8s.io/yaml"
)

var utf8bom = []byte{0xEF, 0xBB, 0xBF}

// loadChart loads the chart from its files in memory as `helm template DIR`
// loads a chart folder (loader.LoadDir): the chart's .helmignore and Helm's
// default rules applied, files in the order of a walk of the folder, a UTF-8
// BOM dropped, at most archive.MaxDecompressedChartSize bytes in all. Only
// chart apiVersion v1 and v2 render (`helm template` refuses v3 the same way).
func loadChart(files map[string][]byte) (*chart.Chart, error) {
	meta, ok := files["Chart.yaml"]
	if !ok {
		return nil, failed("Chart.yaml file is missing")
	}
	var base struct {
		APIVersion string `json:"apiVersion,omitempty"`
	}
	if err := yaml.Unmarshal(meta, &base); err != nil {
		return nil, failed("cannot load Chart.yaml: %v", err)
	}
	switch base.APIVersion {
	case chart.APIVersionV1, chart.APIVersionV2, "":
	case "v3":
		return nil, failed("invalid chart apiVersion")
	default:
		return nil, failed("unsupported chart version")
	}
	rules := ignore.Empty()
	if data, ok := files[ignore.HelmIgnore]; ok {
		r, err := ignore.Parse(bytes.NewReader(data))
		if err != nil {
			return nil, failed("%s: %v", ignore.HelmIgnore, err)
		}
		rules = r
	}
	rules.AddDefaults()
	w := walker{rules: rules, budget: archive.MaxDecompressedChartSize}
	if err := w.walk(newTree(files), ""); err != nil {
		return nil, err
	}
	c, err := loader.LoadFiles(w.out)
	if err != nil {
		return nil, failed("%v", err)
	}
	return c, nil
}

// tree is a folder of the in-memory files: its files' data and its folders.
type tree struct {
	files map[string][]byte
	dirs  map[string]*tree
}

func newTree(files map[string][]byte) *tree {
	root := &tree{files: map[string][]byte{}, dirs: map[string]*tree{}}
	for name, data := range files {
		t := root
		parts := strings.Split(name, "/")
		for _, dir := range parts[:len(parts)-1] {
			if t.dirs[dir] == nil {
				t.dirs[dir] = &tree{files: map[string][]byte{}, dirs: map[string]*tree{}}
			}
			t = t.dirs[dir]
		}
		t.files[parts[len(parts)-1]] = data
	}
	return root
}

type walker struct {
	rules  *ignore.Rules
	budget int64
	out    []*archive.BufferedFile
}

// walk visits a folder's entries in name order, as filepath.Walk does,
// skipping what the rules ignore (a folder with all it holds).
func (w *walker) walk(t *tree, rel string) error {
	var names []string
	for n := range t.files {
		names = append(names, n)
	}
	for n := range t.dirs {
		if _, dup := t.files[n]; dup {
			return refused("%q is both a file and a folder", path.Join(rel, n))
		}
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := path.Join(rel, n)
		if sub, isDir := t.dirs[n]; isDir {
			if w.rules.Ignore(p, info{n, 0, true}) {
				continue
			}
			if err := w.walk(sub, p); err != nil {
				return err
			}
			continue
		}
		data := t.files[n]
		if w.rules.Ignore(p, info{n, int64(len(data)), false}) {
			continue
		}
		if int64(len(data)) > w.budget {
			return failed("error reading %s: chart exceeds maximum decompressed size of %d bytes", p, archive.MaxDecompressedChartSize)
		}
		w.budget -= int64(len(data))
		w.out = append(w.out, &archive.BufferedFile{Name: p, Data: bytes.TrimPrefix(data, utf8bom)})
	}
	return nil
}

// info is what the ignore rules ask of a file.
type info struct {
	name  string
	size  int64
	isDir bool
}

func (i info) Name() string { return i.name }
func (i info) Size() int64  { return i.size }
func (i info) Mode() fs.FileMode {
	if i.isDir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i info) ModTime() time.Time { return time.Time{} }
func (i info) IsDir() bool        { return i.isDir }
func (i info) Sys() any           { return nil }
