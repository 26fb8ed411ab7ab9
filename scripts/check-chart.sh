#!/usr/bin/env bash
# Renders the Helm chart deploy/helm/voice-crm with `helm template` and validates every object with
# kubeconform against Kubernetes' own JSON schemas, offline, in strict mode (a field outside the schema
# fails), for the oldest and the newest Kubernetes of scripts/install-tools.sh's KUBERNETES_SCHEMA_VERSIONS.
# Every rendered kind has a schema: no -ignore-missing-schemas (the chart has no custom resources).
# Installs what it needs first (scripts/install-tools.sh chart: pinned helm, kubeconform, schemas).
#
# The official Temporal chart is a declared dependency (Chart.yaml, off by default) that only
# `helm dependency build` can fetch, from go.temporal.io; offline, the chart is rendered as installed
# with temporal.enabled=false, from a copy whose Chart.yaml leaves the dependency out, after checking
# that the dependency is declared pinned and conditional.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
chart="$root/deploy/helm/voice-crm"
tools="$root/.tools"
helm="$tools/bin/helm"
kubeconform="$tools/bin/kubeconform"
schemas="$tools/kubernetes-json-schema"
say() { printf '[chart] %s\n' "$*"; }

bash "$root/scripts/install-tools.sh" chart >/dev/null || { say "could not install helm, kubeconform and the schemas (scripts/install-tools.sh chart)"; exit 1; }
# shellcheck disable=SC2207
versions=($(sed -n 's/^KUBERNETES_SCHEMA_VERSIONS="\([^"]*\)".*/\1/p' "$root/scripts/install-tools.sh"))
[ "${#versions[@]}" -gt 0 ] || { say "KUBERNETES_SCHEMA_VERSIONS not found in scripts/install-tools.sh"; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export HELM_CACHE_HOME="$work/helm/cache" HELM_CONFIG_HOME="$work/helm/config" HELM_DATA_HOME="$work/helm/data"

# The dependency: Temporal's official chart, an exact version, off unless temporal.enabled.
node --input-type=module - "$chart/Chart.yaml" "$work/voice-crm" <<'JS'
import fs from 'node:fs';
import path from 'node:path';
import { parseDocument } from 'yaml';
const [file, copy] = process.argv.slice(2);
const doc = parseDocument(fs.readFileSync(file, 'utf8'));
const deps = doc.toJS().dependencies ?? [];
const temporal = deps.find((d) => d.name === 'temporal');
const problems = [];
if (!temporal) problems.push('no `temporal` dependency');
else {
  if (temporal.repository !== 'https://go.temporal.io/helm-charts') problems.push(`repository ${temporal.repository}`);
  if (!/^\d+\.\d+\.\d+$/.test(String(temporal.version))) problems.push(`version ${temporal.version} is not pinned`);
  if (temporal.condition !== 'temporal.enabled') problems.push(`condition ${temporal.condition}`);
}
if (deps.length !== 1) problems.push(`${deps.length} dependencies, expected only temporal`);
if (problems.length) {
  console.error(`[chart] Chart.yaml: ${problems.join('; ')}`);
  process.exit(1);
}
fs.cpSync(path.dirname(file), copy, { recursive: true });
doc.delete('dependencies');
fs.writeFileSync(path.join(copy, 'Chart.yaml'), doc.toString());
console.log(`[chart] dependency: temporal ${temporal.version} from ${temporal.repository}, when temporal.enabled`);
JS

grep -q '^  enabled: false$' <(sed -n '/^temporal:/,/^[^ ]/p' "$chart/values.yaml") || { say "values.yaml: temporal.enabled must default to false"; exit 1; }

"$helm" lint --strict "$work/voice-crm" -f "$chart/ci/default-values.yaml" >"$work/lint.log" 2>&1 || { cat "$work/lint.log"; say "helm lint failed"; exit 1; }
say "helm lint --strict: passed"

failed=0
for values in "$chart"/ci/*-values.yaml; do
  name="$(basename "$values" -values.yaml)"
  for version in "${versions[@]}"; do
    out="$work/$name-$version.yaml"
    if ! "$helm" template voice-crm "$work/voice-crm" --namespace voice-crm --kube-version "$version" -f "$values" >"$out" 2>"$work/render.log"; then
      cat "$work/render.log"; say "$name: helm template failed (Kubernetes $version)"; failed=1; continue
    fi
    if summary="$("$kubeconform" -strict -summary -kubernetes-version "$version" \
      -schema-location "$schemas/{{ .NormalizedKubernetesVersion }}-local-strict/{{ .ResourceKind }}{{ .KindSuffix }}.json" "$out")"; then
      say "$name values, Kubernetes $version: ${summary#*- }"
    else
      printf '%s\n' "$summary"; say "$name values, Kubernetes $version: kubeconform failed"; failed=1
    fi
  done
done
exit "$failed"
