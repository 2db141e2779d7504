package main

import (
	"strings"

	release "helm.sh/helm/v4/pkg/release/v1"
)

// file is one rendered document (or a CRD file, which may hold several), by its chart path.
type file struct {
	Path string `json:"path"`
	Data string `json:"data"`
}

// hook is a rendered hook with what Helm read of its annotations.
type hook struct {
	Path           string   `json:"path"`
	Data           string   `json:"data"`
	Events         []string `json:"events"`
	Weight         int      `json:"weight"`
	DeletePolicies []string `json:"deletePolicies"`
}

// sourceMark starts each document of a release's manifest: "---\n# Source: <path>\n<document>\n".
const sourceMark = "---\n# Source: "

// split is the release's manifests, one per document in the order `helm
// template` prints them (Helm's install order of kinds), and its hooks (all
// of them, test hooks too) in the order it prints those after them. A
// document never holds a line starting with `---` (Helm split there), so
// the marks cannot occur inside one.
func split(r *release.Release) *output {
	out := &output{CRDs: []file{}, Manifests: []file{}, Hooks: []hook{}}
	if rest, ok := strings.CutPrefix(r.Manifest, sourceMark); ok {
		for _, block := range strings.Split(strings.TrimSuffix(rest, "\n"), "\n"+sourceMark) {
			name, data, _ := strings.Cut(block, "\n")
			out.Manifests = append(out.Manifests, file{Path: name, Data: data})
		}
	}
	for _, h := range r.Hooks {
		events := make([]string, len(h.Events))
		for i, e := range h.Events {
			events[i] = string(e)
		}
		policies := make([]string, len(h.DeletePolicies))
		for i, p := range h.DeletePolicies {
			policies[i] = string(p)
		}
		out.Hooks = append(out.Hooks, hook{Path: h.Path, Data: h.Manifest, Events: events, Weight: h.Weight, DeletePolicies: policies})
	}
	return out
}
