import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The chat page (GET /ai/chat): one static HTML file with its script inline, no outside resources and
 * no build step. Its Content-Security-Policy allows exactly that script (by hash) and calls to this
 * origin only; everything the model or the CRM says is put on the page as text, never as markup.
 */
function load() {
  const html = fs.readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'ai-chat.html'), 'utf8');
  const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
    (m) => `'sha256-${crypto.createHash('sha256').update(m[1]!).digest('base64')}'`,
  );
  const csp = [
    "default-src 'none'",
    `script-src ${scripts.join(' ')}`,
    "style-src 'unsafe-inline'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { html, csp };
}

export const AI_CHAT_PAGE = load();
