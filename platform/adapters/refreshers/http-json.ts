import { z } from 'zod';
import { WebFetchError } from '../web/guarded-http';
import { RefreshError, type Refresher } from './types';

// A generic refresher for APIs that hand out tokens over JSON: a request template, which response fields
// become which value keys, and where the expiry comes from. Templates name `{{value.<key>}}` (an entry
// of the credential's value) and `{{input.<key>}}` (an entry of `variables`); a string that is exactly
// one placeholder takes the entry's own JSON type.

const Path = z
  .string()
  .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'must be a dot path like data.token')
  .max(200);
const ValueKey = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'must be a value key (letters, digits, _)');

const HttpJsonInput = z.strictObject({
  url: z.url({ protocol: /^https?$/ }).max(2000),
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH']).default('POST'),
  headers: z.record(z.string().regex(/^[A-Za-z0-9-]{1,100}$/), z.string().max(4000)).default({}),
  body: z.unknown().optional(),
  body_format: z.enum(['json', 'form']).default('json'),
  variables: z.record(z.string().max(100), z.string().max(4000)).default({}),
  mapping: z.record(ValueKey, Path).refine((m) => Object.keys(m).length > 0, 'must name at least one value key'),
  expires_at: z
    .discriminatedUnion('from', [
      z.strictObject({ from: z.literal('none') }),
      z.strictObject({ from: z.literal('expires_in'), path: Path }),
      z.strictObject({ from: z.literal('timestamp'), path: Path }),
    ])
    .default({ from: 'none' }),
});

const PLACEHOLDER = /\{\{\s*(value|input)\.([A-Za-z0-9_-]+)\s*\}\}/g;
const WHOLE = /^\{\{\s*(value|input)\.([A-Za-z0-9_-]+)\s*\}\}$/;

function fill(template: unknown, scope: { value: Record<string, unknown>; input: Record<string, unknown> }): unknown {
  if (typeof template === 'string') {
    const whole = WHOLE.exec(template);
    if (whole) return scope[whole[1] as 'value' | 'input'][whole[2]!] ?? null;
    return template.replace(PLACEHOLDER, (_m, where: 'value' | 'input', key: string) => {
      const v = scope[where][key];
      return v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v);
    });
  }
  if (Array.isArray(template)) return template.map((t) => fill(t, scope));
  if (template && typeof template === 'object') return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, fill(v, scope)]));
  return template;
}

const at = (json: unknown, path: string): unknown =>
  path
    .split('.')
    .reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), json);

export function httpJsonRefresher(id: string): Refresher {
  return {
    id,
    kind: 'http_json',
    name: 'HTTP JSON',
    description:
      'Sends a request built from a template ({{value.key}} and {{input.key}} placeholders in headers and body, ' +
      '{{input.key}} in the URL), copies the response fields named by mapping into the value, and reads the expiry from expires_at.',
    inputSchema: HttpJsonInput,
    async refresh({ input, value, now, http }) {
      const i = HttpJsonInput.parse(input);
      const scope = { value, input: i.variables as Record<string, unknown> };
      const url = String(fill(i.url, { value: {}, input: scope.input }));
      const headers = Object.fromEntries(Object.entries(i.headers).map(([k, v]) => [k, String(fill(v, scope))]));
      let body: string | undefined;
      if (i.body !== undefined && i.method !== 'GET') {
        const filled = fill(i.body, scope);
        if (i.body_format === 'form') {
          headers['Content-Type'] ??= 'application/x-www-form-urlencoded';
          const pairs = Object.entries((filled ?? {}) as Record<string, unknown>).map(([k, v]): [string, string] => [
            k,
            typeof v === 'string' ? v : JSON.stringify(v),
          ]);
          body = new URLSearchParams(pairs).toString();
        } else {
          headers['Content-Type'] ??= 'application/json';
          body = JSON.stringify(filled);
        }
      }
      let response: Awaited<ReturnType<typeof http>>;
      try {
        response = await http({ method: i.method, url, headers, body });
      } catch (error) {
        if (error instanceof WebFetchError) throw new RefreshError(`Refresh endpoint: ${error.message}`, error.retryable);
        throw error;
      }
      if (response.status < 200 || response.status >= 300)
        throw new RefreshError(`Refresh endpoint answered ${response.status}`, response.status >= 500 || response.status === 429);
      if (response.json === undefined) throw new RefreshError('Refresh endpoint answered with something other than JSON', false);
      const next: Record<string, unknown> = {};
      for (const [key, path] of Object.entries(i.mapping)) {
        const found = at(response.json, path);
        if (found === undefined) throw new RefreshError(`Refresh response has no field ${path} (for ${key})`, false);
        next[key] = found;
      }
      let expiresAt: Date | null = null;
      if (i.expires_at.from !== 'none') {
        const raw = at(response.json, i.expires_at.path);
        if (i.expires_at.from === 'expires_in') {
          const seconds = Number(raw);
          if (!Number.isFinite(seconds))
            throw new RefreshError(`Refresh response field ${i.expires_at.path} is not a number of seconds`, false);
          expiresAt = new Date(now.getTime() + seconds * 1000);
        } else {
          const when = typeof raw === 'number' ? new Date(raw * 1000) : new Date(String(raw));
          if (raw === undefined || Number.isNaN(when.getTime()))
            throw new RefreshError(`Refresh response field ${i.expires_at.path} is not a timestamp`, false);
          expiresAt = when;
        }
      }
      return { value: next, expiresAt };
    },
  };
}
