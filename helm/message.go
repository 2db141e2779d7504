package main

import (
	"fmt"
	"strings"
)

// maxLine is how long the first line of stderr may be.
const maxLine = 1500

// includeCall is how text/template names each level of a nested `include`.
const includeCall = "error calling include: "

// firstLine is a message on one line, short: Helm's multi-line messages
// (schema failures) joined with "; ", and a chain of nested includes (a
// template including itself prints one "error calling include" per level)
// told as its first level, how many there were, and the innermost error.
func firstLine(msg string) string {
	msg = strings.TrimSpace(msg)
	if n := strings.Count(msg, includeCall); n > 3 {
		first := strings.Index(msg, includeCall)
		last := strings.LastIndex(msg, includeCall)
		inner := msg[last+len(includeCall):]
		if i := strings.LastIndex(inner, ": "); i >= 0 && strings.HasPrefix(inner, "template: ") {
			inner = inner[i+2:]
		}
		msg = fmt.Sprintf("%s%s(%d nested includes) ... %s", msg[:first], includeCall, n, inner)
	}
	lines := strings.Split(msg, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			kept = append(kept, l)
		}
	}
	msg = strings.Join(kept, "; ")
	msg = strings.ReplaceAll(msg, ":;", ":")
	if len(msg) > maxLine {
		msg = msg[:maxLine] + " ..."
	}
	return msg
}
