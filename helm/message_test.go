package main

import (
	"strings"
	"testing"
)

func TestHelmsLinesReadAsOne(t *testing.T) {
	cases := map[string]string{
		"c/templates/a.yaml:1:13\n  executing \"c/templates/a.yaml\" at <.Values.x.y>:\n    nil pointer evaluating interface {}.y":                                                                 `c/templates/a.yaml:1:13: executing "c/templates/a.yaml" at <.Values.x.y>: nil pointer evaluating interface {}.y`,
		"values don't meet the specifications of the schema(s) in the following chart(s):\nweb:\n- at '/a': got string, want integer\n- at '/b': missing\ndb:\n- at '': missing property 'port'\n": "values don't meet the specifications of the schema(s) in the following chart(s): web: - at '/a': got string, want integer; - at '/b': missing; db: - at '': missing property 'port'",
	}
	for in, want := range cases {
		if got := firstLine(in); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}

func TestANestedIncludeChainIsToldShort(t *testing.T) {
	chain := `template: c/templates/a.yaml:1:6: executing "c/templates/a.yaml" at <include "x" .>: ` +
		strings.Repeat(`error calling include: template: c/templates/_h.tpl:1:14: executing "x" at <include "x" .>: `, 1000) +
		`rendering template has a nested reference name: x: unable to execute template`
	want := `template: c/templates/a.yaml:1:6: executing "c/templates/a.yaml" at <include "x" .>: error calling include: (1000 nested includes) ... rendering template has a nested reference name: x: unable to execute template`
	if got := firstLine(chain); got != want {
		t.Fatalf("got %q", got)
	}
	if got := firstLine(strings.Repeat("x", 5000)); len(got) > maxLine+4 {
		t.Fatalf("a line of %d", len(got))
	}
}
