{{/*
pg2osync.pipelines: every pipeline with the defaults filled in, as JSON
({"items": [...]}), each with what the templates derive from it: the
object name, the configuration with metrics.bind, the metrics port (the
one metrics.bind names: the probes and the Service use it), the api port,
and the environment variables the configuration names. Refuses a
configuration that holds a secret inline, a pipeline without a Secret, and
two pipelines that would read through the same slot or replica id.
*/}}
{{- define "pg2osync.pipelines" -}}
{{- $root := . -}}
{{- $items := list -}}
{{- $slots := dict -}}
{{- if not .Values.pipelines }}{{ fail "pipelines: at least one pipeline is needed" }}{{ end -}}
{{- range $i, $pipe := .Values.pipelines -}}
{{- if not $pipe.name }}{{ fail (printf "pipelines[%d]: name is required" $i) }}{{ end -}}
{{- if not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" $pipe.name) -}}
{{- fail (printf "pipelines[%d]: name '%s' must be a DNS label (a-z, 0-9, -)" $i $pipe.name) -}}
{{- end -}}
{{- $p := deepCopy $root.Values.defaults -}}
{{- range $k, $v := $pipe }}{{ $_ := set $p $k $v }}{{ end -}}
{{- $cfg := deepCopy (required (printf "pipelines[%d] (%s): config is required" $i $pipe.name) $pipe.config) -}}
{{- $src := default dict $cfg.source -}}
{{- $tgt := default dict $cfg.target -}}
{{- if hasKey $src "url" -}}
{{- fail (printf "pipelines[%d] (%s): source.url would put the connection string (and its password) in a ConfigMap; name a variable of the Secret with source.url_env" $i $pipe.name) -}}
{{- end -}}
{{- if hasKey $tgt "password" -}}
{{- fail (printf "pipelines[%d] (%s): target.password would put a password in a ConfigMap; name a variable of the Secret with target.password_env" $i $pipe.name) -}}
{{- end -}}
{{- if not (hasKey $cfg "metrics") -}}
{{- $_ := set $cfg "metrics" (dict "bind" (printf "0.0.0.0:%d" (int $p.metricsPort))) -}}
{{- end -}}
{{- $bind := required (printf "pipelines[%d] (%s): metrics.bind is required (the probes use it)" $i $pipe.name) $cfg.metrics.bind -}}
{{- if not (regexMatch ":[0-9]+$" $bind) }}{{ fail (printf "pipelines[%d] (%s): metrics.bind '%s' has no port" $i $pipe.name $bind) }}{{ end -}}
{{- if regexMatch "^(127\\.|localhost:|\\[::1\\]:)" $bind -}}
{{- fail (printf "pipelines[%d] (%s): metrics.bind '%s' is loopback: the kubelet's probes could not reach it" $i $pipe.name $bind) -}}
{{- end -}}
{{- $port := regexReplaceAll "^.*:" $bind "" | int -}}
{{- $apiPort := 0 -}}
{{- if and $cfg.api $cfg.api.bind }}{{ $apiPort = regexReplaceAll "^.*:" $cfg.api.bind "" | int }}{{ end -}}
{{- $envs := list -}}
{{- range $sec := list "source" "target" "metrics" "api" -}}
{{- $s := index $cfg $sec -}}
{{- if kindIs "map" $s -}}
{{- range $k, $v := $s -}}
{{- if hasSuffix "_env" $k }}{{ $envs = append $envs $v }}{{ end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and $envs (not $p.secretName) -}}
{{- fail (printf "pipelines[%d] (%s): the configuration names %s: secretName must name the Secret that holds them" $i $pipe.name (join ", " $envs)) -}}
{{- end -}}
{{- $reader := "" -}}
{{- if hasKey $src "server_id" }}{{ $reader = printf "replica id %v" $src.server_id }}{{ else }}{{ $reader = printf "slot %s" (default "pg2osync" $src.slot_name) }}{{ end -}}
{{- $reader = printf "%s on %s" $reader (default ($src.url_env | toString) $p.secretName) -}}
{{- if hasKey $slots $reader -}}
{{- fail (printf "pipelines[%d] (%s): %s is read by pipeline %s already; one reader each" $i $pipe.name $reader (get $slots $reader)) -}}
{{- end -}}
{{- $_ := set $slots $reader $pipe.name -}}
{{- $_ := set $p "fullname" (printf "%s-%s" $root.Release.Name $pipe.name | trunc 63 | trimSuffix "-") -}}
{{- $_ := set $p "configYaml" (toYaml $cfg) -}}
{{- $_ := set $p "metricsPort" $port -}}
{{- $_ := set $p "apiPort" $apiPort -}}
{{- $_ := set $p "envs" (uniq $envs) -}}
{{- $_ := set $p "hasToken" (hasKey $cfg.metrics "token_env") -}}
{{- $_ := set $p "tokenEnv" (default "" $cfg.metrics.token_env) -}}
{{- $items = append $items $p -}}
{{- end -}}
{{- dict "items" $items | toJson -}}
{{- end -}}

{{- define "pg2osync.labels" -}}
app.kubernetes.io/name: pg2osync
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .p.name }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{- define "pg2osync.selector" -}}
app.kubernetes.io/name: pg2osync
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .p.name }}
{{- end -}}
