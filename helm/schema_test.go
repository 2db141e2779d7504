package main

import (
	"strings"
	"testing"
)

func schemaChart(t *testing.T, files map[string]string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{"Chart.yaml": []byte("apiVersion: v2\nname: app\nversion: 1.0.0\n")}
	for k, v := range files {
		out[k] = []byte(v)
	}
	return out
}

func TestARefOutsideTheChartIsRefusedNamingIt(t *testing.T) {
	refs := map[string]string{
		"../../etc/passwd":                 `"../../etc/passwd" leaves the chart`,
		"file:///var/run/secrets/x":        `"file:///var/run/secrets/x" is not a file of the chart`,
		"file://host/x.json":               `"file://host/x.json" is a file outside the chart`,
		"http://127.0.0.1:1/s.json":        `"http://127.0.0.1:1/s.json" is a URL; the sandbox fetches nothing`,
		"https://127.0.0.1:1/s.json#/defs": `"https://127.0.0.1:1/s.json" is a URL`,
	}
	for ref, want := range refs {
		files := schemaChart(t, map[string]string{"values.schema.json": `{"properties": {"a": {"$ref": "` + ref + `"}}}`})
		err := validateSchemas(files, map[string]any{"a": 1})
		if err == nil || err.(*failure).code != exitRefused || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: got %v", ref, err)
		}
		if !strings.HasPrefix(err.Error(), `values.schema.json of chart "app": $ref `) {
			t.Fatalf("%s: got %v", ref, err)
		}
	}
}

func TestAnIDThatMovesTheBaseToAURLIsRefused(t *testing.T) {
	files := schemaChart(t, map[string]string{"values.schema.json": `{"$id": "http://127.0.0.1:1/v.json", "properties": {"a": {"$ref": "defs.json"}}}`})
	err := validateSchemas(files, map[string]any{})
	if err == nil || err.(*failure).code != exitRefused || !strings.Contains(err.Error(), `"http://127.0.0.1:1/defs.json" is a URL`) {
		t.Fatalf("got %v", err)
	}
}

func TestARefToTheChartsOwnFileResolves(t *testing.T) {
	files := schemaChart(t, map[string]string{
		"values.schema.json": `{"properties": {"a": {"$ref": "schemas/defs.json#/$defs/port"}}}`,
		"schemas/defs.json":  `{"$defs": {"port": {"type": "integer"}}}`,
	})
	if err := validateSchemas(files, map[string]any{"a": 80}); err != nil {
		t.Fatal(err)
	}
	err := validateSchemas(files, map[string]any{"a": "eighty"})
	if err == nil || err.(*failure).code != exitFailed {
		t.Fatalf("got %v", err)
	}
	want := "values don't meet the specifications of the schema(s) in the following chart(s):\napp:\n- at '/a': got string, want integer\n"
	if err.Error() != want {
		t.Fatalf("got %q, want %q", err.Error(), want)
	}
}

func TestASubchartsSchemaChecksItsValues(t *testing.T) {
	files := schemaChart(t, map[string]string{
		"charts/db/Chart.yaml":         "apiVersion: v2\nname: db\nversion: 1.0.0\n",
		"charts/db/values.schema.json": `{"required": ["port"]}`,
	})
	err := validateSchemas(files, map[string]any{"db": map[string]any{"host": "h"}})
	if err == nil || !strings.Contains(err.Error(), "db:\n- at '': missing property 'port'") {
		t.Fatalf("got %v", err)
	}
}
