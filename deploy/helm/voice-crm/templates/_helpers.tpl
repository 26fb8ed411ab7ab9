{{/* The release's name for its objects: <release>-voice-crm, or the release name when it has the chart's. */}}
{{- define "voice-crm.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "voice-crm.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component: (list $ "api") */}}
{{- define "voice-crm.selectorLabels" -}}
{{- $ := index . 0 -}}
app.kubernetes.io/name: {{ $.Chart.Name }}
app.kubernetes.io/instance: {{ $.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{- define "voice-crm.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "voice-crm.secretName" -}}
{{- default (printf "%s-config" (include "voice-crm.fullname" .)) .Values.secret.existingSecret -}}
{{- end -}}

{{/* The Temporal frontend: the dependency's Service when it is on, else the address given by value. */}}
{{- define "voice-crm.temporalAddress" -}}
{{- if .Values.temporal.enabled -}}
{{- $name := "temporal" -}}
{{- if .Values.temporal.fullnameOverride -}}
{{- $name = .Values.temporal.fullnameOverride -}}
{{- else if contains "temporal" .Release.Name -}}
{{- $name = .Release.Name -}}
{{- else -}}
{{- $name = printf "%s-temporal" .Release.Name -}}
{{- end -}}
{{- printf "%s-frontend:7233" ($name | trunc 53 | trimSuffix "-") -}}
{{- else -}}
{{- .Values.temporalConnection.address -}}
{{- end -}}
{{- end -}}

{{/* What api and worker containers share: configuration (ConfigMap, then the Secret, which wins) and mounts. */}}
{{- define "voice-crm.appEnvFrom" -}}
envFrom:
  - configMapRef:
      name: {{ include "voice-crm.fullname" . }}
  - secretRef:
      name: {{ include "voice-crm.secretName" . }}
{{- end -}}

{{- define "voice-crm.appVolumeMounts" -}}
volumeMounts:
  # DATA_DIR: small local state (the worker's heartbeat); the image's filesystem stays as built.
  - name: data
    mountPath: /app/.data
  - name: tmp
    mountPath: /tmp
{{- if .Values.temporalConnection.tlsSecret }}
  - name: temporal-tls
    mountPath: /etc/temporal-tls
    readOnly: true
{{- end }}
{{- end -}}

{{- define "voice-crm.appVolumes" -}}
volumes:
  - name: data
    emptyDir: {}
  - name: tmp
    emptyDir: {}
{{- if .Values.temporalConnection.tlsSecret }}
  - name: temporal-tls
    secret:
      secretName: {{ .Values.temporalConnection.tlsSecret }}
{{- end }}
{{- end -}}

{{/* The worker's probe: its heartbeat file is younger than worker.heartbeatMaxAgeSeconds. */}}
{{- define "voice-crm.workerProbe" -}}
exec:
  command:
    - node
    - -e
    - {{ printf "const s = require('node:fs').statSync('/app/.data/worker-heartbeat.json', { throwIfNoEntry: false }); process.exit(s && Date.now() - s.mtimeMs < %d ? 0 : 1)" (mul (int .Values.worker.heartbeatMaxAgeSeconds) 1000) | quote }}
{{- end -}}

{{/* VOICE_PUBLIC_URL: voice.publicUrl, else wss://<voice.ingress.host> when the chart's Ingress is on. */}}
{{- define "voice-crm.voicePublicUrl" -}}
{{- if .Values.voice.publicUrl -}}
{{- .Values.voice.publicUrl -}}
{{- else if and .Values.voice.ingress.enabled .Values.voice.ingress.host -}}
{{- printf "wss://%s" .Values.voice.ingress.host -}}
{{- end -}}
{{- end -}}

{{/* The voice pod's grace period: the pre-stop sleep, the drain, then ending what is still live. */}}
{{- define "voice-crm.voiceGraceSeconds" -}}
{{- add (int .Values.voice.preStopSleepSeconds) (int .Values.voice.drainSeconds) (int .Values.voice.shutdownSeconds) -}}
{{- end -}}

{{- define "voice-crm.speechImage" -}}
{{- printf "%s:%s" .Values.speech.image.repository (default .Chart.AppVersion .Values.speech.image.tag) -}}
{{- end -}}
