package main

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// maxDepth is how deep kustomizations may include one another (a base of a
// base of ...): real overlays stay within a handful of levels.
const maxDepth = 20

// refusal is what the sandbox does not allow, named by the kustomization file and field.
type refusal struct {
	file, field, why string
}

func (r *refusal) Error() string {
	return fmt.Sprintf("%s: %s: %s", shown(r.file), r.field, r.why)
}

// check walks the kustomizations that dir includes, before kustomize runs,
// and refuses what the sandbox does not allow (remote bases and files,
// helm charts, plugins other than kustomize's builtins), cycles of bases
// and nesting deeper than maxDepth, naming the file and the field.
func check(fs filesys.FileSystem, dir string) error {
	return (&checker{fs: fs, done: map[string]bool{}}).visit(dir, nil)
}

type checker struct {
	fs   filesys.FileSystem
	done map[string]bool
}

func (c *checker) visit(dir string, chain []string) error {
	for i, d := range chain {
		if d == dir {
			cycle := append(append([]string{}, chain[i:]...), dir)
			for j := range cycle {
				cycle[j] = shown(cycle[j])
			}
			return &refusal{kustomizationIn(c.fs, chain[len(chain)-1]), "resources", "a cycle of bases: " + strings.Join(cycle, " -> ")}
		}
	}
	if len(chain) > maxDepth {
		return &refusal{kustomizationIn(c.fs, chain[len(chain)-1]), "resources", fmt.Sprintf("bases nested more than %d deep (%s -> ...)", maxDepth, shown(chain[0]))}
	}
	if c.done[dir] {
		return nil
	}
	file := kustomizationIn(c.fs, dir)
	if file == "" {
		return nil
	}
	data, err := c.fs.ReadFile(file)
	if err != nil {
		return nil
	}
	var k map[string]any
	if yaml.Unmarshal(data, &k) != nil {
		return nil // kustomize says what is wrong with it
	}
	if err := c.fields(file, k); err != nil {
		return err
	}
	for _, field := range []string{"resources", "bases", "components"} {
		for i, entry := range stringsOf(k[field]) {
			if err := c.include(file, fmt.Sprintf("%s[%d]", field, i), dir, entry, chain); err != nil {
				return err
			}
		}
	}
	c.done[dir] = true
	return nil
}

// include checks one entry of resources, bases or components.
func (c *checker) include(file, field, dir, entry string, chain []string) error {
	target := path.Join(dir, entry)
	if c.fs.IsDir(target) {
		return c.visit(target, append(chain, dir))
	}
	if c.fs.Exists(target) {
		return nil
	}
	if looksRemote(entry) {
		return &refusal{file, field, fmt.Sprintf("%q is a remote base (a git repository or a URL); only the source's own files can be used: vendor it into the source", entry)}
	}
	return nil
}

var helmFields = []string{"helmCharts", "helmGlobals", "helmChartInflationGenerator"}

// fields refuses helm and plugins, and remote files in the fields that name files.
func (c *checker) fields(file string, k map[string]any) error {
	for _, f := range helmFields {
		if _, ok := k[f]; ok {
			return &refusal{file, f, "helm charts are not supported (they need the helm program); render the chart into the source, or use a HelmRelease"}
		}
	}
	for _, f := range []string{"generators", "transformers", "validators"} {
		for i, entry := range stringsOf(k[f]) {
			if err := c.plugin(file, fmt.Sprintf("%s[%d]", f, i), path.Dir(file), entry); err != nil {
				return err
			}
		}
	}
	for _, f := range fileFields(k) {
		if isURL(f.value) {
			return &refusal{file, f.field, fmt.Sprintf("%q is a remote file; only the source's own files can be used", f.value)}
		}
	}
	return nil
}

type named struct{ field, value string }

// fileFields are the fields that name a file (each may be a URL to kustomize).
func fileFields(k map[string]any) []named {
	var out []named
	add := func(field string, v any) {
		if s, ok := v.(string); ok && s != "" {
			out = append(out, named{field, s})
		}
	}
	for _, f := range []string{"crds", "configurations", "patchesStrategicMerge"} {
		for i, s := range stringsOf(k[f]) {
			add(fmt.Sprintf("%s[%d]", f, i), s)
		}
	}
	for _, f := range []string{"patches", "patchesJson6902", "replacements"} {
		for i, item := range listOf(k[f]) {
			if m, ok := item.(map[string]any); ok {
				add(fmt.Sprintf("%s[%d].path", f, i), m["path"])
			}
		}
	}
	if m, ok := k["openapi"].(map[string]any); ok {
		add("openapi.path", m["path"])
	}
	for _, f := range []string{"configMapGenerator", "secretGenerator"} {
		for i, item := range listOf(k[f]) {
			m, _ := item.(map[string]any)
			for _, sub := range []string{"files", "envs"} {
				for j, s := range stringsOf(m[sub]) {
					add(fmt.Sprintf("%s[%d].%s[%d]", f, i, sub, j), s)
				}
			}
			add(fmt.Sprintf("%s[%d].env", f, i), m["env"])
		}
	}
	return out
}

var builtins = func() map[string]bool {
	names := map[string]bool{}
	for _, n := range krusty.GetBuiltinPluginNames() {
		names[n] = true
	}
	return names
}()

// plugin checks one entry of generators, transformers or validators: a file,
// a folder (a kustomization of plugin configs) or the config inline.
func (c *checker) plugin(file, field, dir, entry string) error {
	text := entry
	if !strings.Contains(entry, "\n") {
		target := path.Join(dir, entry)
		if isURL(entry) || looksRemote(entry) && !c.fs.Exists(target) {
			return &refusal{file, field, fmt.Sprintf("%q is remote; only the source's own files can be used", entry)}
		}
		if c.fs.IsDir(target) || !c.fs.Exists(target) {
			return nil // a kustomization of configs (checked when kustomize reads it), or missing (kustomize says so)
		}
		data, err := c.fs.ReadFile(target)
		if err != nil {
			return nil
		}
		text = string(data)
	}
	for _, doc := range strings.Split(text, "\n---") {
		var cfg struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		if yaml.Unmarshal([]byte(doc), &cfg) != nil || cfg.Kind == "" {
			continue
		}
		for _, a := range []string{"config.kubernetes.io/function", "config.k8s.io/function"} {
			if _, ok := cfg.Metadata.Annotations[a]; ok {
				return &refusal{file, field, fmt.Sprintf("%s is a KRM function plugin (%s: exec or container); plugins cannot run in the sandbox, only kustomize's builtin generators and transformers", cfg.Kind, a)}
			}
		}
		if cfg.Kind == "HelmChartInflationGenerator" {
			return &refusal{file, field, "helm charts are not supported (they need the helm program)"}
		}
		if !builtins[cfg.Kind] {
			return &refusal{file, field, fmt.Sprintf("%s is not one of kustomize's builtin plugins; exec, container and Go plugins cannot run in the sandbox", cfg.Kind)}
		}
	}
	return nil
}

// kustomizationIn is the kustomization file of dir, or "".
func kustomizationIn(fs filesys.FileSystem, dir string) string {
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		if p := path.Join(dir, n); fs.Exists(p) && !fs.IsDir(p) {
			return p
		}
	}
	return ""
}

func isURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme != "" && u.Host != ""
}

// remoteShape is what kustomize would take for a git repository: a host
// (github.com/org/repo), an scp-like address (git@host:org/repo), a ?ref=.
var remoteShape = regexp.MustCompile(`^(git::|[a-z0-9+.-]+://|[^/@\s]+@[^/:\s]+:|[a-z0-9-]+(\.[a-z0-9-]+)+(:\d+)?/)|[?&](ref|version|submodules|timeout)=`)

func looksRemote(s string) bool {
	return isURL(s) || remoteShape.MatchString(strings.ToLower(s))
}

func stringsOf(v any) []string {
	var out []string
	for _, x := range listOf(v) {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func listOf(v any) []any {
	l, _ := v.([]any)
	return l
}
