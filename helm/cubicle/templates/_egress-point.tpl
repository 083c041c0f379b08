{{/*
The Kubernetes egress point (sandboxes.egress.mode: point; issue 32): the chart's own Deployment
and Service. Sandbox Pods get its Service as their only resolver and HTTP(S) proxy, and the
sandbox NetworkPolicy admits only its Pods, where every pool's egress policy is enforced.
*/}}
{{- define "cubicle.egressPointName" -}}
{{- printf "%s-egress" (include "cubicle.fullname" .) -}}
{{- end -}}

{{- define "cubicle.egressPointEnabled" -}}
{{- if eq .Values.sandboxes.egress.mode "point" }}true{{ end -}}
{{- end -}}

{{/* The point's Pods as the worker's NetworkPolicy names them. */}}
{{- define "cubicle.egressPointSelector" -}}
app.kubernetes.io/name=cubicle,app.kubernetes.io/instance={{ .Release.Name }},app.kubernetes.io/component=egress
{{- end -}}

{{/* The worker's variables that point sandbox Pods at the point (worker.yaml). */}}
{{- define "cubicle.egressPointWorkerEnv" -}}
{{- if include "cubicle.egressPointEnabled" . }}
- name: KUBE_EGRESS_POINT_SERVICE
  value: {{ include "cubicle.egressPointName" . | quote }}
{{- if ne .Values.sandboxes.namespace .Release.Namespace }}
- name: KUBE_EGRESS_POINT_NAMESPACE
  value: {{ .Release.Namespace | quote }}
{{- end }}
- name: KUBE_EGRESS_POINT_SELECTOR
  value: {{ include "cubicle.egressPointSelector" . | quote }}
- name: KUBE_EGRESS_POINT_DNS_PORT
  value: {{ .Values.egressPoint.dnsPort | quote }}
- name: KUBE_EGRESS_POINT_PROXY_PORT
  value: {{ .Values.egressPoint.proxyPort | quote }}
{{- end }}
{{- end -}}
