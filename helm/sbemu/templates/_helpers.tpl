{{/* The release's name for its objects, at most 63 characters. */}}
{{- define "sbemu.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "sbemu.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "sbemu.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: emulator
{{- end -}}

{{- define "sbemu.postgresSelectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: postgres
{{- end -}}

{{/* The Secret with sas-key-name and sas-key. */}}
{{- define "sbemu.sasSecret" -}}
{{- default (printf "%s-sas" (include "sbemu.fullname" .)) .Values.sas.existingSecret -}}
{{- end -}}

{{/* The Secret with the database URL under the key url. */}}
{{- define "sbemu.postgresSecret" -}}
{{- if and (not .Values.postgres.bundled) .Values.postgres.existingSecret -}}
{{- .Values.postgres.existingSecret -}}
{{- else -}}
{{- printf "%s-postgres" (include "sbemu.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* The bundled database's Service (and host name). */}}
{{- define "sbemu.postgresHost" -}}
{{- printf "%s-postgres" (include "sbemu.fullname" .) -}}
{{- end -}}

{{/* The ConfigMap holding Config.json, or "" for the default entities. */}}
{{- define "sbemu.configMap" -}}
{{- if .Values.config.existingConfigMap -}}
{{- .Values.config.existingConfigMap -}}
{{- else if .Values.config.json -}}
{{- printf "%s-config" (include "sbemu.fullname" .) -}}
{{- end -}}
{{- end -}}
