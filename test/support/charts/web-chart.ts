// A small chart for the Helm tests, packaged as `helm package` lays it out
// (every file under web/): a ConfigMap and a Deployment of the values, a CRD
// in crds/ (its group given, so that each run has its own) and a CR of it, a
// pre-install hook and a test hook. Built here: templates are not YAML, and
// the fixtures' YAML is read by the yaml-subset test.
import { tarGz } from '../tarball.js';

export const WEB_CHART = { name: 'web', version: '1.0.0' };

/** The chart's files, by path inside the chart folder. */
export function webChartFiles(group: string): Record<string, string> {
  return {
    'Chart.yaml': `apiVersion: v2\nname: ${WEB_CHART.name}\nversion: ${WEB_CHART.version}\nappVersion: "1.0"\n`,
    'values.yaml': 'message: hello\nreplicas: 0\nwidget: true\ndb:\n  password: none\n',
    'crds/widgets.yaml': [
      'apiVersion: apiextensions.k8s.io/v1',
      'kind: CustomResourceDefinition',
      'metadata:',
      `  name: widgets.${group}`,
      'spec:',
      `  group: ${group}`,
      '  scope: Namespaced',
      '  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}',
      '  versions:',
      '    - name: v1',
      '      served: true',
      '      storage: true',
      '      schema:',
      '        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}',
      '',
    ].join('\n'),
    'templates/configmap.yaml': [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      '  name: {{ .Release.Name }}-config',
      'data:',
      '  message: {{ .Values.message | quote }}',
      '  password: {{ .Values.db.password | quote }}',
      '  namespace: {{ .Release.Namespace }}',
      '  kubeVersion: {{ .Capabilities.KubeVersion.Version | quote }}',
      '',
    ].join('\n'),
    'templates/deployment.yaml': [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata:',
      '  name: {{ .Release.Name }}',
      'spec:',
      '  replicas: {{ .Values.replicas }}',
      '  selector: {matchLabels: {app: {{ .Release.Name }}}}',
      '  template:',
      '    metadata: {labels: {app: {{ .Release.Name }}}}',
      '    spec: {containers: [{name: web, image: registry.invalid/web:1.0}]}',
      '',
    ].join('\n'),
    'templates/widget.yaml': [
      '{{- if .Values.widget }}',
      `apiVersion: ${group}/v1`,
      'kind: Widget',
      'metadata:',
      '  name: {{ .Release.Name }}-widget',
      'spec:',
      '  message: {{ .Values.message | quote }}',
      '{{- end }}',
      '',
    ].join('\n'),
    'templates/hook-pre.yaml': [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      '  name: {{ .Release.Name }}-pre',
      '  annotations: {"helm.sh/hook": "pre-install,pre-upgrade", "helm.sh/hook-weight": "-1"}',
      'data: {step: pre}',
      '',
    ].join('\n'),
    'templates/tests/test.yaml': [
      'apiVersion: v1',
      'kind: Pod',
      'metadata:',
      '  name: {{ .Release.Name }}-test',
      '  annotations: {"helm.sh/hook": test}',
      'spec: {containers: [{name: t, image: registry.invalid/test:1.0}]}',
      '',
    ].join('\n'),
  };
}

/** The packaged chart (.tgz). */
export function packageWebChart(group: string): Promise<Buffer> {
  return tarGz(Object.entries(webChartFiles(group)).map(([path, data]) => ({ name: `${WEB_CHART.name}/${path}`, data })));
}
