import { parseArgs } from 'node:util';
import { ALL_SCOPES } from '../api/auth/scopes';
import { loadConfigOrExit } from '../platform/core/config';
import { loadDevIdp } from '../platform/core/dev-idp';

// `npm run --silent cli -- session --user U --org O [--org O2] [--scopes "a b"] [--email E] [--ttl SECONDS]`
// prints a session JWT of the development identity provider, and nothing else, on stdout.
const [command, ...rest] = process.argv.slice(2);
const usage =
  'usage: cli session --user <user_id> --org <org_id> [--org <another>] [--scopes "api:read api:manage ..."] [--email address] [--ttl seconds]';

if (command !== 'session') {
  process.stderr.write(`${usage}\n`);
  process.exit(2);
}
const { values } = parseArgs({
  args: rest,
  options: {
    user: { type: 'string' },
    org: { type: 'string', multiple: true },
    scopes: { type: 'string' },
    email: { type: 'string' },
    ttl: { type: 'string' },
  },
});
if (!values.user) {
  process.stderr.write(`${usage}\n`);
  process.exit(2);
}
const config = loadConfigOrExit();
if (config.IDP_JWKS_URL) {
  process.stderr.write('an external identity provider is configured (IDP_JWKS_URL); sessions come from it\n');
  process.exit(1);
}
const orgs = values.org ?? [];
const idp = await loadDevIdp(config.dataDir);
const token = await idp.sign(
  {
    sub: values.user,
    ...(orgs[0] ? { org_id: orgs[0] } : {}),
    org_ids: orgs,
    permissions: values.scopes ? values.scopes.split(/[\s,]+/).filter(Boolean) : ALL_SCOPES,
    ...(values.email ? { email: values.email } : {}),
  },
  values.ttl ? Number(values.ttl) : undefined,
);
process.stdout.write(`${token}\n`);
