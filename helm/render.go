package main

import (
	"context"
	"time"

	"github.com/mitchellh/copystructure"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	release "helm.sh/helm/v4/pkg/release/v1"
)

// render renders the chart as `helm template RELEASE DIR --namespace NS
// -f ... --set-string ... [--include-crds] [--kube-version V] [--api-versions A]`
// does: the install action, client-only (a dry run with no kube client,
// in-memory release storage, no registry client, no post-renderer), Replace
// set, Helm's schema check skipped for ours (schema.go).
func render(in input, deadline time.Time) (*output, error) {
	if err := checkPaths(in.Files); err != nil {
		return nil, err
	}
	dir, err := chartDir(in.Chart)
	if err != nil {
		return nil, err
	}
	files := chartFiles(in.Files, dir)
	if _, ok := files["Chart.yaml"]; !ok {
		return nil, failed("chart %s: no Chart.yaml in that folder of the source", shownDir(dir))
	}
	c, err := loadChart(files)
	if err != nil {
		return nil, err
	}
	if err := checkInstallable(c); err != nil {
		return nil, err
	}
	if err := checkDependencies(c, dir); err != nil {
		return nil, err
	}
	vals, err := mergeLayers(in.Values)
	if err != nil {
		return nil, err
	}
	client, err := newClient(in)
	if err != nil {
		return nil, err
	}
	if err := chartutil.ValidateReleaseName(client.ReleaseName); err != nil {
		return nil, failed("release name check failed: release name %q: %v", client.ReleaseName, err)
	}
	if err := validateSchemas(files, vals); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	rel, err := client.RunWithContext(ctx, c, vals)
	if err != nil {
		if ctx.Err() != nil {
			return nil, &failure{exitTime, "the render took longer than the Helm time limit: " + err.Error()}
		}
		return nil, failed("%v", err)
	}
	r, ok := rel.(*release.Release)
	if !ok {
		return nil, failed("unsupported release type: %T", rel)
	}
	out := split(r)
	if in.IncludeCRDs {
		out.CRDs = crdsOf(c)
	}
	out.Chart = chartInfo{Name: c.Metadata.Name, Version: c.Metadata.Version, AppVersion: c.Metadata.AppVersion}
	return out, nil
}

// newClient is the install action as `helm template` sets it up.
func newClient(in input) (*action.Install, error) {
	client := action.NewInstall(action.NewConfiguration())
	client.DryRunStrategy = action.DryRunClient
	client.ReleaseName = in.ReleaseName
	client.Namespace = in.Namespace
	if client.Namespace == "" {
		client.Namespace = "default"
	}
	client.Replace = true
	// CRDs are taken from the chart after the render (crdsOf), in the order
	// Helm prints them first: the manifest then holds templates only.
	client.IncludeCRDs = false
	client.SkipSchemaValidation = true
	client.APIVersions = common.VersionSet(in.APIVersions)
	if in.KubeVersion != "" {
		v, err := common.ParseKubeVersion(in.KubeVersion)
		if err != nil {
			return nil, failed("invalid kube version '%s': %v", in.KubeVersion, err)
		}
		client.KubeVersion = v
	}
	return client, nil
}

// validateSchemas validates the values as Helm would at the same point of
// the install: against a chart of its own (loaded again from the same files),
// its dependencies processed (conditions, tags, import-values) and the values
// coalesced with the chart's.
func validateSchemas(files map[string][]byte, vals map[string]any) error {
	c, err := loadChart(files)
	if err != nil {
		return err
	}
	copied, err := copystructure.Copy(vals)
	if err != nil {
		return failed("copying the values: %v", err)
	}
	v := copied.(map[string]any)
	if err := chartutil.ProcessDependencies(c, v); err != nil {
		return failed("chart dependencies processing failed: %v", err)
	}
	coalesced, err := util.CoalesceValues(c, v)
	if err != nil {
		return failed("%v", err)
	}
	return validateValues(c, coalesced)
}

// crdsOf are the chart's CRDs and its enabled subcharts', as Helm prints them.
func crdsOf(c *chart.Chart) []file {
	out := []file{}
	for _, crd := range c.CRDObjects() {
		out = append(out, file{Path: crd.Filename, Data: string(crd.File.Data)})
	}
	return out
}
