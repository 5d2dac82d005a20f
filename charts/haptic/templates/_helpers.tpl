{{/* The chart name, or nameOverride. */}}
{{- define "haptic.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The prefix of every object name: fullnameOverride, else the release name
when it contains the chart name, else "<release>-<chart>". Trimmed to 40
characters so that "<fullname>-controller-<hash>-<suffix>" pod names stay
within the 63 a label value allows.
*/}}
{{- define "haptic.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "haptic.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "haptic.labels" -}}
helm.sh/chart: {{ include "haptic.chart" . }}
app.kubernetes.io/name: {{ include "haptic.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: haptic
{{- end }}

{{/* Selector labels of one component: (list $ "controller"). */}}
{{- define "haptic.selectorLabels" -}}
{{- $ := index . 0 -}}
app.kubernetes.io/name: {{ include "haptic.name" $ }}
app.kubernetes.io/instance: {{ $.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{/* Labels of one component's objects: (list $ "controller"). */}}
{{- define "haptic.componentLabels" -}}
{{ include "haptic.labels" (index . 0) }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{- define "haptic.controllerName" -}}
{{- printf "%s-controller" (include "haptic.fullname" .) }}
{{- end }}

{{- define "haptic.haproxyName" -}}
{{- printf "%s-haproxy" (include "haptic.fullname" .) }}
{{- end }}

{{- define "haptic.serviceAccountName" -}}
{{- default (include "haptic.controllerName" .) .Values.serviceAccount.name }}
{{- end }}

{{/* The Secret holding the agents' bearer token, and its key. */}}
{{- define "haptic.tokenSecretName" -}}
{{- default (printf "%s-agent-token" (include "haptic.fullname" .)) .Values.agent.existingSecret }}
{{- end }}

{{- define "haptic.tokenSecretKey" -}}
{{- if .Values.agent.existingSecret }}{{ .Values.agent.existingSecretKey }}{{ else }}token{{ end }}
{{- end }}

{{/* An image reference from {repository, tag, digest} and a default tag. */}}
{{- define "haptic.imageRef" -}}
{{- $img := index . 0 -}}
{{- if $img.digest }}
{{- printf "%s@%s" $img.repository $img.digest }}
{{- else }}
{{- printf "%s:%s" $img.repository (toString (default (index . 1) $img.tag)) }}
{{- end }}
{{- end }}

{{- define "haptic.image" -}}
{{- include "haptic.imageRef" (list .Values.image .Chart.AppVersion) }}
{{- end }}

{{- define "haptic.haproxyImage" -}}
{{- include "haptic.imageRef" (list .Values.haproxy.image "3.4") }}
{{- end }}

{{/*
nbthread: the haproxy container's CPU limit rounded up (a quantity such as
2, "1.5" or "1500m"), or nothing when no CPU limit is set.
*/}}
{{- define "haptic.nbthread" -}}
{{- $cpu := dig "limits" "cpu" "" (.Values.haproxy.resources | default dict) | toString -}}
{{- if $cpu }}
{{- if hasSuffix "m" $cpu }}
{{- max 1 (div (add (trimSuffix "m" $cpu | atoi) 999) 1000) }}
{{- else }}
{{- max 1 (ceil (float64 $cpu) | int) }}
{{- end }}
{{- end }}
{{- end }}

{{/* The pod-level security context of every pod. */}}
{{- define "haptic.podSecurityContext" -}}
runAsNonRoot: true
{{- with .Values.securityContext.runAsUser }}
runAsUser: {{ . }}
{{- end }}
{{- with .Values.securityContext.runAsGroup }}
runAsGroup: {{ . }}
{{- end }}
{{- with .Values.securityContext.fsGroup }}
fsGroup: {{ . }}
{{- end }}
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* The security context of every container. */}}
{{- define "haptic.containerSecurityContext" -}}
runAsNonRoot: true
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/*
A preferred podAntiAffinity spreading one component's pods over nodes:
(list $ "controller").
*/}}
{{- define "haptic.spreadAffinity" -}}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- include "haptic.selectorLabels" . | nindent 12 }}
{{- end }}

{{/* GOMEMLIMIT from a container's memory limit, in bytes. */}}
{{- define "haptic.gomemlimit" -}}
- name: GOMEMLIMIT
  valueFrom:
    resourceFieldRef:
      containerName: {{ . }}
      resource: limits.memory
      divisor: "1"
{{- end }}

{{/* The admission webhook's objects: Service, ValidatingWebhookConfiguration, TLS Secret. */}}
{{- define "haptic.webhookName" -}}
{{- printf "%s-webhook" (include "haptic.fullname" .) }}
{{- end }}

{{- define "haptic.webhookSecretName" -}}
{{- printf "%s-webhook-tls" (include "haptic.fullname" .) }}
{{- end }}

{{/* Where the checker's Unix socket lives, in both containers. */}}
{{- define "haptic.checkerSocket" -}}
/run/haptic-checker/check.sock
{{- end }}
