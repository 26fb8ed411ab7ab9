import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small OAuth 2.0 token endpoint (RFC 6749 sections 4.4 and 6) on 127.0.0.1: it checks client
 * authentication (HTTP Basic or form fields), answers the refresh_token and client_credentials grants
 * with JSON tokens, and can be told to refuse (400 invalid_grant), to fail (503), to hang, or to answer
 * like a careless server that echoes the request it refuses (`echo`: 400 invalid_request whose
 * error_description and other fields repeat the Authorization header and the form body, as sent).
 */
export interface TokenServer {
  url: string;
  /** Every token request received, with its form fields and Authorization header. */
  requests: { grant_type: string; form: Record<string, string>; authorization: string | undefined }[];
  mode: 'ok' | 'invalid_grant' | 'unavailable' | 'hang' | 'echo';
  /** Delay before answering, to hold a refresh in flight. */
  delayMs: number;
  expiresIn: number;
  /** Rotate the refresh token on every refresh_token grant. */
  rotate: boolean;
  issued: string[];
  close(): Promise<void>;
}

export async function startTokenServer(clients: Record<string, string>, validRefreshTokens: Set<string>): Promise<TokenServer> {
  const hanging = new Set<http.ServerResponse>();
  let counter = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const form = Object.fromEntries(new URLSearchParams(raw));
      state.requests.push({ grant_type: form.grant_type ?? '', form, authorization: req.headers.authorization });
      const answer = (status: number, body: unknown) => {
        setTimeout(() => {
          if (res.destroyed) return;
          res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
          res.end(JSON.stringify(body));
        }, state.delayMs);
      };
      if (state.mode === 'hang') return void hanging.add(res);
      if (state.mode === 'unavailable') return answer(503, { error: 'temporarily_unavailable' });
      if (state.mode === 'echo') {
        const authorization = req.headers.authorization ?? '';
        return answer(400, {
          error: 'invalid_request',
          error_description: `Rejected ${authorization ? `Authorization: ${authorization}, ` : ''}body: ${raw}`,
          request: { headers: req.headers, body: raw, form },
        });
      }
      // Client authentication: Basic header first, then form fields.
      let clientId = form.client_id;
      let secret = form.client_secret;
      const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
      if (basic) {
        const [id, pw] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':').map(decodeURIComponent);
        clientId = id;
        secret = pw;
      }
      if (!clientId || clients[clientId] === undefined || (clients[clientId] !== '' && clients[clientId] !== secret))
        return answer(401, { error: 'invalid_client', error_description: 'Client authentication failed' });
      if (state.mode === 'invalid_grant' || (form.grant_type === 'refresh_token' && !validRefreshTokens.has(form.refresh_token ?? '')))
        return answer(400, { error: 'invalid_grant', error_description: 'The refresh token is invalid or expired' });
      if (form.grant_type !== 'refresh_token' && form.grant_type !== 'client_credentials')
        return answer(400, { error: 'unsupported_grant_type' });
      const accessToken = `at-${++counter}-${Math.random().toString(36).slice(2)}`;
      state.issued.push(accessToken);
      const body: Record<string, unknown> = { access_token: accessToken, token_type: 'Bearer', expires_in: state.expiresIn };
      if (form.scope) body.scope = form.scope;
      if (form.grant_type === 'refresh_token' && state.rotate) {
        const next = `rt-${counter}-${Math.random().toString(36).slice(2)}`;
        validRefreshTokens.delete(form.refresh_token!);
        validRefreshTokens.add(next);
        body.refresh_token = next;
      }
      answer(200, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const state: TokenServer = {
    url: `http://127.0.0.1:${port}/oauth/token`,
    requests: [],
    mode: 'ok',
    delayMs: 0,
    expiresIn: 3600,
    rotate: true,
    issued: [],
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return state;
}
