{{/*
Names are fixed (the server and its users find its objects by these names): one release per cluster.
*/}}

{{/* Labels every object carries. */}}
{{- define "kapi.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "kapi.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kapi
{{- end }}

{{/* Labels that select the kapi-apiserver pods; never change them (Deployment selectors are immutable). */}}
{{- define "kapi.selectorLabels" -}}
app.kubernetes.io/name: kapi-apiserver
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The container image: repository@digest when a digest is set, else repository:tag (default appVersion). */}}
{{- define "kapi.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end }}

{{/* logging.opensearch.fields as the key=field,... list --log-search-fields takes, in a stable order. */}}
{{- define "kapi.logSearchFields" -}}
{{- $pairs := list -}}
{{- range $key := keys . | sortAlpha -}}
{{- $pairs = append $pairs (printf "%s=%s" $key (index $ $key)) -}}
{{- end -}}
{{- join "," $pairs -}}
{{- end -}}

{{/* The admissionregistration version of the tenant guard (tenant-guard.yaml); empty: none. */}}
{{- define "kapi.tenantGuardVersion" -}}
{{- $wanted := .Values.tenantGuard.apiVersion -}}
{{- if eq $wanted "auto" -}}
{{- $picked := "" -}}
{{- range $version := list "v1" "v1beta1" "v1alpha1" -}}
{{- if and (not $picked) ($.Capabilities.APIVersions.Has (printf "admissionregistration.k8s.io/%s/ValidatingAdmissionPolicy" $version)) -}}
{{- $picked = $version -}}
{{- end -}}
{{- end -}}
{{- $picked -}}
{{- else if ne $wanted "none" -}}
{{- $wanted -}}
{{- end -}}
{{- end -}}

{{- /*
Whether the workspace quotas' webhook is installed: on, and the chart makes its certificate (generateSecrets; a
committed manifest must carry no key, so manifests/ leaves the webhook out).
*/}}
{{- define "kapi.workspaceQuotaWebhook" -}}
{{- if and .Values.workspaceQuotas.enabled .Values.generateSecrets }}true{{ end }}
{{- end }}
