package main

import (
	"bytes"
	"encoding/json"
	"strings"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/strvals"
)

// layer is one layer of values: YAML text (as `-f file`), one string at a
// path (as `--set-string targetPath=value`), or an object (as `-f` of its JSON).
type layer struct {
	From       string          `json:"from"`
	YAML       *string         `json:"yaml,omitempty"`
	TargetPath string          `json:"targetPath,omitempty"`
	Value      *string         `json:"value,omitempty"`
	Object     json.RawMessage `json:"object,omitempty"`
}

// mergeLayers merges the layers in order, later ones winning, as
// `helm template -f a -f b --set-string ...` does (Helm's MergeMaps for
// files, maps merged deeply; its strvals for --set-string): an error names
// the layer's `from`.
func mergeLayers(layers []layer) (map[string]any, error) {
	base := map[string]any{}
	for _, l := range layers {
		switch {
		case l.TargetPath != "":
			if l.Value == nil {
				return nil, failed("values from %s: targetPath %q has no value", l.From, l.TargetPath)
			}
			if err := strvals.ParseIntoString(l.TargetPath+"="+escapeValue(*l.Value), base); err != nil {
				return nil, failed("values from %s: failed parsing --set-string data: %v", l.From, err)
			}
		case l.YAML != nil || len(l.Object) > 0:
			text := l.Object // JSON is YAML: an object reads as `-f` of its JSON would
			if l.YAML != nil {
				text = []byte(*l.YAML)
			}
			m, err := loader.LoadValues(bytes.NewReader(text))
			if err != nil {
				return nil, failed("values from %s: failed to parse: %v", l.From, err)
			}
			base = loader.MergeMaps(base, m)
		default:
			return nil, failed("values from %s: a layer with no yaml, object or targetPath", l.From)
		}
	}
	return base, nil
}

// escapeValue is a value as strvals reads it back whole: a comma would end
// it (the next key=value), a backslash escapes the next character, and a
// leading `{` would make it a list.
func escapeValue(v string) string {
	v = strings.NewReplacer(`\`, `\\`, `,`, `\,`).Replace(v)
	if strings.HasPrefix(v, "{") {
		v = `\` + v
	}
	return v
}
