package main

import (
	"path"
	"strings"

	"helm.sh/helm/v4/pkg/action"
	ci "helm.sh/helm/v4/pkg/chart"
	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// checkPaths refuses a file name that could leave the chart or confuse the
// loader: absolute, with a NUL or a line break, or with an empty, `.` or `..`
// segment. The caller gives no symlinks (the files are bytes by name).
func checkPaths(files map[string][]byte) error {
	for name := range files {
		if why := badPath(name); why != "" {
			return refused("file %q: %s", name, why)
		}
	}
	return nil
}

// badPath says what is wrong with a path inside the source, or "".
func badPath(p string) string {
	switch {
	case p == "":
		return "an empty file name"
	case strings.ContainsRune(p, 0):
		return "a file name with a NUL byte"
	case strings.ContainsAny(p, "\n\r"):
		return "a file name with a line break"
	case strings.HasPrefix(p, "/"):
		return "an absolute path (paths are relative to the source)"
	}
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "..":
			return "a path that leaves its folder (a `..` segment)"
		case ".", "":
			return "a path that is not clean (an empty or `.` segment)"
		}
	}
	return ""
}

// chartDir is the chart's folder as given ("" the root), checked.
func chartDir(dir string) (string, error) {
	if dir == "" || dir == "." {
		return "", nil
	}
	dir = strings.TrimSuffix(dir, "/")
	if why := badPath(dir); why != "" {
		return "", refused("chart %q: %s", dir, why)
	}
	return dir, nil
}

// chartFiles are the files under dir, named relative to it: the chart sees nothing else.
func chartFiles(files map[string][]byte, dir string) map[string][]byte {
	out := map[string][]byte{}
	for name, data := range files {
		if dir == "" {
			out[name] = data
		} else if rel, ok := strings.CutPrefix(name, dir+"/"); ok {
			out[rel] = data
		}
	}
	return out
}

// checkDependencies refuses a dependency of Chart.yaml that is not in
// charts/, as `helm template` does (action.CheckDependencies, before
// conditions and tags are read): the sandbox fetches no chart.
func checkDependencies(c *chart.Chart, dir string) error {
	if len(c.Metadata.Dependencies) == 0 {
		return nil
	}
	reqs := make([]ci.Dependency, len(c.Metadata.Dependencies))
	for i, d := range c.Metadata.Dependencies {
		reqs[i] = d
	}
	if err := action.CheckDependencies(c, reqs); err != nil {
		return refused("Chart.yaml of chart %q: a dependency is not vendored (%v): only the source's own files can be used: vendor it into %s (helm dependency build)", c.Name(), err, path.Join(dir, "charts")+"/")
	}
	return nil
}

// checkInstallable refuses what `helm template` does not render (a library chart).
func checkInstallable(c *chart.Chart) error {
	switch c.Metadata.Type {
	case "", "application":
		return nil
	}
	return failed("%s charts are not installable", c.Metadata.Type)
}

// shownDir is a folder as the source names it: `.` for the root.
func shownDir(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}
