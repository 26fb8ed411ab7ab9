import { escapeHtml } from './cards';

// What a visitor's browser shows after posting the card's lead form as a plain HTML form (no script):
// a thank-you page, or the problems with what was sent. Every value escaped; no script, nothing loaded.

const STYLE = `body{margin:0;font-family:-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Arial,sans-serif;background:#f3f4f6;color:#111827}
main{max-width:420px;margin:15vh auto 0;padding:24px;background:#fff;border-radius:16px;box-shadow:0 1px 3px rgba(0,0,0,.1)}
h1{font-size:20px;margin:0 0 8px}p,li{line-height:1.5;color:#374151}p{margin:0 0 12px}a{color:#111827}`;

/** The pages' Content-Security-Policy: inline style only, nothing runs or loads. */
export const LEAD_PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const page = (title: string, body: string) => `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;

export const leadThanksPage = (cardName: string, backUrl: string) =>
  page(
    'Thank you',
    `<p>Your details were shared with ${escapeHtml(cardName)}.</p><p><a href="${escapeHtml(backUrl)}">Back to the card</a></p>`,
  );

/** The fields the form refused, each with why, and the way back to the form. */
export const leadProblemsPage = (problems: { field: string; message: string }[], backUrl: string) =>
  page(
    'Please check your details',
    `<ul>${problems.map((p) => `<li><strong>${escapeHtml(p.field)}</strong>: ${escapeHtml(p.message)}</li>`).join('')}</ul>
<p><a href="${escapeHtml(backUrl)}">Back to the form</a></p>`,
  );
