package main

import (
	"strings"
	"testing"
)

func TestPathsThatLeaveTheChartAreRefused(t *testing.T) {
	bad := map[string]string{
		"../x":                     "`..` segment",
		"charts/web/../../x":       "`..` segment",
		"/etc/passwd":              "absolute path",
		"charts/web/a\x00b":        "NUL byte",
		"charts/web/a\nb":          "line break",
		"charts//web":              "not clean",
		"charts/./web/values.yaml": "not clean",
		"":                         "empty file name",
	}
	for p, why := range bad {
		err := checkPaths(map[string][]byte{"ok.yaml": nil, p: nil})
		if err == nil || err.(*failure).code != exitRefused || !strings.Contains(err.Error(), why) {
			t.Fatalf("%q: got %v", p, err)
		}
	}
	if err := checkPaths(map[string][]byte{"charts/web/Chart.yaml": nil, "a..b/c": nil}); err != nil {
		t.Fatal(err)
	}
}

func TestTheChartFolderIsChecked(t *testing.T) {
	for _, d := range []string{"../web", "/charts/web", "charts/../.."} {
		if _, err := chartDir(d); err == nil || err.(*failure).code != exitRefused {
			t.Fatalf("%q: got %v", d, err)
		}
	}
	if d, err := chartDir("charts/web/"); err != nil || d != "charts/web" {
		t.Fatalf("got %q, %v", d, err)
	}
}

func TestTheChartSeesOnlyItsFolder(t *testing.T) {
	got := chartFiles(map[string][]byte{"charts/web/Chart.yaml": nil, "charts/webx/Chart.yaml": nil, "secret.yaml": nil}, "charts/web")
	if _, ok := got["Chart.yaml"]; !ok || len(got) != 1 {
		t.Fatalf("got %v", got)
	}
}

func TestADependencyNotVendoredIsRefusedNamingIt(t *testing.T) {
	c, err := loadChart(bytesOf(map[string]string{
		"Chart.yaml":               "apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n- name: redis\n  version: 1.0.0\n- name: db\n  version: 1.0.0\n  condition: db.enabled\n",
		"charts/redis/Chart.yaml":  "apiVersion: v2\nname: redis\nversion: 1.0.0\n",
		"charts/redis/values.yaml": "a: 1\n",
		"charts/unused/Chart.yaml": "apiVersion: v2\nname: unused\nversion: 1.0.0\n",
		"templates/cm.yaml":        "kind: ConfigMap\n",
		"templates/.hidden.yaml":   "kind: Hidden\n",
		".helmignore":              "ignored/\n",
		"ignored/Chart.yaml":       "not yaml: [",
	}))
	if err != nil {
		t.Fatal(err)
	}
	err = checkDependencies(c, "charts/app")
	if err == nil || err.(*failure).code != exitRefused || !strings.Contains(err.Error(), "missing in charts/ directory: db") || !strings.Contains(err.Error(), "charts/app/charts/") {
		t.Fatalf("got %v", err)
	}
	for _, f := range c.Raw {
		if strings.HasPrefix(f.Name, "ignored/") || f.Name == "templates/.hidden.yaml" {
			t.Fatalf("%s is ignored by .helmignore and Helm's defaults, yet loaded", f.Name)
		}
	}
}

func bytesOf(files map[string]string) map[string][]byte {
	out := map[string][]byte{}
	for k, v := range files {
		out[k] = []byte(v)
	}
	return out
}
