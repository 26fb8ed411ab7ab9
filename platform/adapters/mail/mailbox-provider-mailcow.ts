import { randomBytes } from 'node:crypto';
import { MailboxProviderError, type MailboxProvider } from './mailbox-provider-types';

// A mailbox provider speaking the mailcow API (`X-API-Key` header): the domain is added first
// (`POST /api/v1/add/domain`, an existing one is fine), then the mailbox (`POST /api/v1/add/mailbox`)
// with a generated password. The mailbox sends through the server's submission port (587, STARTTLS)
// and is read over IMAPS (993), on the API's host.

const TIMEOUT_MS = 15_000;

type MailcowAnswer = { type?: string; msg?: string | string[] }[];

export function createMailcowProvider(options: { baseUrl: string; apiKey: string }): MailboxProvider {
  const base = options.baseUrl.replace(/\/+$/, '');
  const host = new URL(base).hostname;
  async function call(path: string, body: Record<string, unknown>, tolerated: string[] = []): Promise<void> {
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'x-api-key': options.apiKey },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      throw new MailboxProviderError(`mailbox provider unreachable (${(error as Error).name})`);
    }
    const answer = (await res.json().catch(() => null)) as MailcowAnswer | null;
    const first = Array.isArray(answer) ? answer[0] : undefined;
    const msg = [first?.msg ?? []].flat().map(String);
    if (res.ok && first?.type === 'success') return;
    if (res.ok && msg.some((m) => tolerated.includes(m))) return;
    throw new MailboxProviderError(`mailbox provider refused: ${msg.join(' ').slice(0, 300) || `HTTP ${res.status}`}`);
  }
  return {
    name: 'mailcow',
    provision: async (request) => {
      const address = `${request.localPart}@${request.domain}`.toLowerCase();
      await call('/api/v1/add/domain', { domain: request.domain, active: '1' }, ['domain_exists']);
      const password = randomBytes(24).toString('base64url');
      await call('/api/v1/add/mailbox', {
        local_part: request.localPart,
        domain: request.domain,
        name: request.displayName ?? request.localPart,
        password,
        password2: password,
        active: '1',
      });
      return {
        emailAddress: address,
        kind: 'smtp',
        smtp: { host, port: 587, secure: false, username: address },
        imap: { host, port: 993, secure: true, username: address },
        password,
      };
    },
  };
}
