#!/usr/bin/env bash
# Runs a cross-section of the test suite on Node.js 24 LTS (`scripts/install-tools.sh node24`), so nothing
# Node 20-only creeps in. Only `node` is put first on PATH: the child processes the tests start
# (service, worker, launcher) run on it too. Extra arguments replace the default file list.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
node24="$root/.tools/node24"
[ -x "$node24/node" ] || bash "$root/scripts/install-tools.sh" node24
export PATH="$node24:$PATH"
echo "[node24] $(node --version)"
cd "$root"
if [ "$#" -gt 0 ]; then files=("$@"); else
  files=(test/integration/foundation.test.ts test/integration/crm-contacts.test.ts test/integration/campaigns.test.ts
    test/integration/credentials.test.ts test/integration/knowledge-base.test.ts test/integration/launcher.test.ts
    test/integration/replay.test.ts test/integration/integrations.test.ts
    test/integration/outreach-sending.test.ts test/integration/llm-local.test.ts test/integration/ai-chat.test.ts test/integration/analytics-assistant-query.test.ts test/unit)
fi
# VITEST_JSON_REPORT (npm test sets it): vitest's JSON report beside the usual output, for .ci/run's count.
report=()
if [ -n "${VITEST_JSON_REPORT:-}" ]; then report=(--reporter=default --reporter=json "--outputFile.json=$VITEST_JSON_REPORT"); fi
exec node node_modules/vitest/vitest.mjs run ${report[@]+"${report[@]}"} "${files[@]}"
