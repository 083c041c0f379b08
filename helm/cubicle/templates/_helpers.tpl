{{/* The release's resource name prefix: "<release>-cubicle", or the release name when it already says cubicle. */}}
{{- define "cubicle.fullname" -}}
{{- if contains "cubicle" .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-cubicle" .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels every object carries. */}}
{{- define "cubicle.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: cubicle
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: cubicle
{{- end -}}

{{/*
Selector labels of one component. app.kubernetes.io/name=cubicle plus the instance and the
api or worker component is what the sandbox NetworkPolicy admits (see
"cubicle.controlPlaneSelector").
*/}}
{{- define "cubicle.selectorLabels" -}}
app.kubernetes.io/name: cubicle
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/*
The selector the worker puts into the sandbox NetworkPolicy (KUBE_CONTROL_PLANE_SELECTOR): this
release's api and worker Pods only — never web, the migration Job, PostgreSQL or Redis.
*/}}
{{- define "cubicle.controlPlaneSelector" -}}
app.kubernetes.io/name=cubicle,app.kubernetes.io/instance={{ .Release.Name }},app.kubernetes.io/component in (api,worker)
{{- end -}}

{{/* The Pod Security Admission level enforced on the sandbox namespace. */}}
{{- define "cubicle.sandboxPodSecurity" -}}
{{- $s := .Values.sandboxes -}}
{{- if $s.podSecurity.enforce -}}
{{- $s.podSecurity.enforce -}}
{{- else if has "kubevirt" $s.backends -}}
privileged
{{- else -}}
restricted
{{- end -}}
{{- end -}}

{{- define "cubicle.image" -}}
{{- $tag := .root.Values.image.tag | default .root.Chart.AppVersion -}}
{{- if .root.Values.image.registry -}}
{{- printf "%s/%s/%s:%s" .root.Values.image.registry .root.Values.image.repository .component $tag -}}
{{- else -}}
{{- printf "%s/%s:%s" .root.Values.image.repository .component $tag -}}
{{- end -}}
{{- end -}}

{{- define "cubicle.keysSecretName" -}}
{{- .Values.secrets.existingSecret | default (printf "%s-keys" (include "cubicle.fullname" .)) -}}
{{- end -}}

{{- define "cubicle.connectionsSecretName" -}}
{{- printf "%s-connections" (include "cubicle.fullname" .) -}}
{{- end -}}

{{/* The Secret and key holding DATABASE_URL. */}}
{{- define "cubicle.databaseSecret" -}}
{{- if .Values.database.existingSecret -}}
name: {{ .Values.database.existingSecret }}
key: {{ .Values.database.existingSecretKey }}
{{- else -}}
name: {{ include "cubicle.connectionsSecretName" . }}
key: database-url
{{- end -}}
{{- end -}}

{{/* The Secret and key holding REDIS_URL. */}}
{{- define "cubicle.redisSecret" -}}
{{- if .Values.redis.existingSecret -}}
name: {{ .Values.redis.existingSecret }}
key: {{ .Values.redis.existingSecretKey }}
{{- else -}}
name: {{ include "cubicle.connectionsSecretName" . }}
key: redis-url
{{- end -}}
{{- end -}}

{{/* Refuse a release without a database or Redis: a process would only crash-loop on it. */}}
{{- define "cubicle.validate" -}}
{{- $db := .Values.database -}}
{{- if not (or $db.existingSecret $db.url $db.inChart.enabled) -}}
{{- fail "database: set database.existingSecret (recommended), database.url, or database.inChart.enabled=true" -}}
{{- end -}}
{{- $r := .Values.redis -}}
{{- if not (or $r.existingSecret $r.url $r.inChart.enabled) -}}
{{- fail "redis: set redis.existingSecret (recommended), redis.url, or redis.inChart.enabled=true" -}}
{{- end -}}
{{- end -}}

{{- define "cubicle.apiUrl" -}}
{{- printf "http://%s-api.%s.svc:%v" (include "cubicle.fullname" .) .Release.Namespace .Values.api.port -}}
{{- end -}}

{{- define "cubicle.publicApiUrl" -}}
{{- if .Values.publicUrls.api -}}
{{- .Values.publicUrls.api -}}
{{- else if and .Values.ingress.enabled .Values.ingress.apiHost -}}
{{- printf "%s://%s" (ternary "https" "http" (gt (len .Values.ingress.tls) 0)) .Values.ingress.apiHost -}}
{{- end -}}
{{- end -}}

{{- define "cubicle.publicWebUrl" -}}
{{- if .Values.publicUrls.web -}}
{{- .Values.publicUrls.web -}}
{{- else if and .Values.ingress.enabled .Values.ingress.webHost -}}
{{- printf "%s://%s" (ternary "https" "http" (gt (len .Values.ingress.tls) 0)) .Values.ingress.webHost -}}
{{- else -}}
{{- printf "http://%s-web.%s.svc:%v" (include "cubicle.fullname" .) .Release.Namespace .Values.web.port -}}
{{- end -}}
{{- end -}}

{{/* Env of every process: the connection strings, from Secrets only. */}}
{{- define "cubicle.connectionEnv" -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      {{- include "cubicle.databaseSecret" . | nindent 6 }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      {{- include "cubicle.redisSecret" . | nindent 6 }}
- name: QUEUE_PREFIX
  value: {{ .Values.queuePrefix | quote }}
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
- name: NODE_ENV
  value: production
{{- end -}}

{{/* The egress policy's installation settings, the same for the api and the worker. */}}
{{- define "cubicle.egressEnv" -}}
- name: CUBICLE_EGRESS_DEFAULT
  value: {{ .Values.egress.default | quote }}
- name: CUBICLE_EGRESS_OPERATOR_ALLOW
  value: {{ join "," .Values.egress.operatorAllow | quote }}
- name: CUBICLE_EGRESS_HOST_ADDRESSES
  value: {{ join "," .Values.egress.hostAddresses | quote }}
{{- end -}}

{{/* The object store's variables (api and worker name the same store); keys from a Secret. */}}
{{- define "cubicle.objectStoreEnv" -}}
{{- $o := .Values.objectStore -}}
- name: CUBICLE_OBJECT_STORE
  value: {{ $o.kind | quote }}
{{- if eq $o.kind "s3" }}
{{- with $o.s3.endpoint }}
- name: CUBICLE_S3_ENDPOINT
  value: {{ . | quote }}
{{- end }}
- name: CUBICLE_S3_REGION
  value: {{ $o.s3.region | quote }}
- name: CUBICLE_S3_BUCKET
  value: {{ $o.s3.bucket | quote }}
- name: CUBICLE_S3_FORCE_PATH_STYLE
  value: {{ ternary "1" "0" $o.s3.forcePathStyle | quote }}
- name: CUBICLE_S3_ACCESS_KEY_ID
  valueFrom:
    secretKeyRef: { name: {{ $o.s3.credentialsSecret }}, key: {{ $o.s3.accessKeyIdKey }} }
- name: CUBICLE_S3_SECRET_ACCESS_KEY
  valueFrom:
    secretKeyRef: { name: {{ $o.s3.credentialsSecret }}, key: {{ $o.s3.secretAccessKeyKey }} }
{{- else }}
- name: CUBICLE_OBJECT_STORE_DIR
  value: /var/lib/cubicle/objects
{{- end }}
{{- end -}}

{{/* The fs object store's volume and mount (nothing for s3). */}}
{{- define "cubicle.objectStoreMount" -}}
{{- if eq .Values.objectStore.kind "fs" }}
- { name: objects, mountPath: /var/lib/cubicle/objects }
{{- end }}
{{- end -}}
{{- define "cubicle.objectStoreVolume" -}}
{{- $o := .Values.objectStore -}}
{{- if eq $o.kind "fs" }}
- name: objects
  {{- if $o.fs.existingClaim }}
  persistentVolumeClaim: { claimName: {{ $o.fs.existingClaim }} }
  {{- else }}
  emptyDir: {}
  {{- end }}
{{- end }}
{{- end -}}

{{/* Pod-level settings shared by every Deployment. */}}
{{- define "cubicle.podCommon" -}}
{{- with .root.Values.image.pullSecrets }}
imagePullSecrets:
  {{- range . }}
  - name: {{ . }}
  {{- end }}
{{- end }}
securityContext:
  {{- toYaml .root.Values.podSecurityContext | nindent 2 }}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* A map as an equality selector "a=b,c=d" (keys sorted). */}}
{{- define "cubicle.equalitySelector" -}}
{{- $pairs := list -}}
{{- range $k, $v := . -}}
{{- $pairs = append $pairs (printf "%s=%s" $k $v) -}}
{{- end -}}
{{- join "," $pairs -}}
{{- end -}}
