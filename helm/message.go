package main

import (
	"fmt"
	"regexp"
	"strings"
)

// templateAt is where text/template says an error happened, before the error itself.
var templateAt = regexp.MustCompile(`^template: \S+: executing "[^"]*" at <[^>]*>: `)

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
		inner = templateAt.ReplaceAllString(inner, "")
		msg = fmt.Sprintf("%s%s(%d nested includes) ... %s", msg[:first], includeCall, n, inner)
	}
	lines := strings.Split(msg, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			kept = append(kept, l)
		}
	}
	msg = joinLines(kept)
	if len(msg) > maxLine {
		msg = msg[:maxLine] + " ..."
	}
	return msg
}

// chartHeader is the line naming a chart in Helm's schema message ("web:").
var chartHeader = regexp.MustCompile(`^\S+:$`)

// joinLines joins Helm's lines as one: after a line ending in a colon with a
// space, before a listed item ("- at '/a': ...") or a chart's name with "; ",
// else with ": ".
func joinLines(lines []string) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			switch {
			case strings.HasSuffix(lines[i-1], ":"):
				b.WriteString(" ")
			case strings.HasPrefix(l, "- ") || chartHeader.MatchString(l):
				b.WriteString("; ")
			default:
				b.WriteString(": ")
			}
		}
		b.WriteString(l)
	}
	return b.String()
}
