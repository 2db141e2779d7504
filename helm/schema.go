package main

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// schemaURL is where Helm places a chart's values.schema.json: its `$ref`s resolve against it.
const schemaURL = "file:///values.schema.json"

// validateValues checks the values against the chart's values.schema.json and
// its subcharts', as Helm does before it renders (util.ValidateAgainstSchema,
// with the same library and the same messages), but a `$ref` resolves only to
// the chart's own files: `file:///x.json` (a relative `x.json`) is the chart's
// x.json; another file or any URL is refused, never read or fetched.
func validateValues(c *chart.Chart, values map[string]any) error {
	msg, err := validateTree(c, values)
	if err != nil {
		return err
	}
	if msg != "" {
		return failed("values don't meet the specifications of the schema(s) in the following chart(s):\n%s", msg)
	}
	return nil
}

// validateTree is Helm's message for the chart and its subcharts ("" when the
// values meet every schema), or a refusal.
func validateTree(c *chart.Chart, values map[string]any) (string, error) {
	var sb strings.Builder
	if c.Schema != nil {
		if err := validateOne(c, values); err != nil {
			var f *failure
			if errors.As(err, &f) {
				return "", f
			}
			fmt.Fprintf(&sb, "%s:\n", c.Name())
			sb.WriteString(err.Error())
		}
	}
	for _, sub := range c.Dependencies() {
		raw, exists := values[sub.Name()]
		if !exists || raw == nil {
			continue
		}
		subValues, ok := raw.(map[string]any)
		if !ok {
			fmt.Fprintf(&sb, "%s:\ninvalid type for values: expected object (map), got %T\n", sub.Name(), raw)
			continue
		}
		msg, err := validateTree(sub, subValues)
		if err != nil {
			return "", err
		}
		sb.WriteString(msg)
	}
	return sb.String(), nil
}

// validateOne validates against one chart's schema (util.ValidateAgainstSingleSchema).
func validateOne(c *chart.Chart, values common.Values) (reterr error) {
	defer func() {
		if r := recover(); r != nil {
			reterr = fmt.Errorf("unable to validate schema: %s", r)
		}
	}()
	schema, err := jsonschema.UnmarshalJSON(bytes.NewReader(c.Schema))
	if err != nil {
		return err
	}
	if ref := refLeaving(schema); ref != "" {
		return refused("values.schema.json of chart %q: $ref %q leaves the chart (a `..` segment); only the chart's own files can be referred to", c.Name(), ref)
	}
	loader := &chartLoader{chart: c}
	compiler := jsonschema.NewCompiler()
	compiler.UseLoader(loader)
	if err := compiler.AddResource(schemaURL, schema); err != nil {
		return err
	}
	validator, err := compiler.Compile(schemaURL)
	if loader.refusal != nil {
		return loader.refusal
	}
	if err != nil {
		return err
	}
	if err := validator.Validate(values.AsMap()); err != nil {
		// As Helm's JSONSchemaValidationError prints it.
		return errors.New(strings.TrimPrefix(err.Error(), "jsonschema validation failed with '"+schemaURL+"#'\n") + "\n")
	}
	return nil
}

// chartLoader resolves a schema's `$ref`s to the chart's own files only.
type chartLoader struct {
	chart   *chart.Chart
	refusal error
}

func (l *chartLoader) Load(ref string) (any, error) {
	doc, err := l.load(ref)
	if f, ok := err.(*failure); ok && l.refusal == nil {
		l.refusal = f
	}
	return doc, err
}

func (l *chartLoader) load(ref string) (any, error) {
	where := fmt.Sprintf("values.schema.json of chart %q: $ref %q", l.chart.Name(), ref)
	u, err := url.Parse(ref)
	if err != nil {
		return nil, refused("%s: not a URL the sandbox can resolve: %v", where, err)
	}
	switch u.Scheme {
	case "file":
		name := strings.TrimPrefix(u.Path, "/")
		if u.Host != "" || badPath(name) != "" {
			return nil, refused("%s is a file outside the chart; only the chart's own files can be referred to", where)
		}
		for _, f := range l.chart.Raw {
			if f.Name == name {
				return jsonschema.UnmarshalJSON(bytes.NewReader(f.Data))
			}
		}
		return nil, refused("%s is not a file of the chart (a file outside it, or missing); only the chart's own files can be referred to", where)
	case "urn":
		// As Helm: an unresolved URN is a permissive schema, with a warning.
		slog.Warn("unresolved URN reference ignored; using permissive schema", "urn", ref)
		return true, nil
	}
	return nil, refused("%s is a URL; the sandbox fetches nothing: only the chart's own files can be referred to", where)
}

// refLeaving is the first relative `$ref` of a schema document with a `..`
// segment: resolved against the schema's place at the chart's root it would
// be cleaned into a chart file of another name, so it is refused as written.
func refLeaving(doc any) string {
	switch v := doc.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok {
			if u, err := url.Parse(ref); err == nil && u.Scheme == "" && u.Host == "" {
				for _, seg := range strings.Split(u.Path, "/") {
					if seg == ".." {
						return ref
					}
				}
			}
		}
		for _, child := range v {
			if ref := refLeaving(child); ref != "" {
				return ref
			}
		}
	case []any:
		for _, child := range v {
			if ref := refLeaving(child); ref != "" {
				return ref
			}
		}
	}
	return ""
}
