package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func str(s string) *string { return &s }

func TestLayersMergeInOrderLaterWinsMapsDeeply(t *testing.T) {
	got, err := mergeLayers([]layer{
		{From: "a", YAML: str("db:\n  host: a\n  port: 1\nlist: [1, 2]\n")},
		{From: "b", YAML: str("db:\n  host: b\nlist: [3]\n")},
		{From: "c", Object: json.RawMessage(`{"db": {"user": "u"}, "n": 5}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"db":   map[string]any{"host": "b", "port": float64(1), "user": "u"},
		"list": []any{float64(3)},
		"n":    float64(5),
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
}

func TestTargetPathIsSetStringWithTheValueWhole(t *testing.T) {
	for _, v := range []string{`p,a\ss`, "{a,b}", "true", "0123", "", `x=y`, "a\nb"} {
		got, err := mergeLayers([]layer{
			{From: "base", YAML: str("db:\n  password: old\n  host: h\n")},
			{From: "Secret apps/creds key password", TargetPath: "db.password", Value: str(v)},
		})
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		db := got["db"].(map[string]any)
		if db["password"] != v || db["host"] != "h" {
			t.Fatalf("%q: got %#v", v, db)
		}
	}
}

func TestALaterYAMLLayerWinsOverAnEarlierTargetPath(t *testing.T) {
	got, err := mergeLayers([]layer{
		{From: "secret", TargetPath: "a.b", Value: str("s")},
		{From: "yaml", YAML: str("a:\n  b: why\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got["a"].(map[string]any)["b"] != "why" {
		t.Fatalf("got %#v", got)
	}
}

func TestABadLayerNamesItsFrom(t *testing.T) {
	cases := []layer{
		{From: "ConfigMap apps/base key values.yaml", YAML: str("a: [\n")},
		{From: "Secret apps/creds key password", TargetPath: "a[x]", Value: str("v")},
		{From: "spec.helm.values", Object: json.RawMessage(`[1]`)},
		{From: "empty layer"},
	}
	for _, l := range cases {
		_, err := mergeLayers([]layer{l})
		if err == nil || !strings.HasPrefix(err.Error(), "values from "+l.From+": ") {
			t.Fatalf("%s: got %v", l.From, err)
		}
		if err.(*failure).code != exitFailed {
			t.Fatalf("%s: exit %d", l.From, err.(*failure).code)
		}
	}
}
