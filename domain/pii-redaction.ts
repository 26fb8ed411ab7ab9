// Personal data taken out of a conversation's transcript (and, for the spans that held it, its
// recording) when the agent's recording settings say `redact_pii`: e-mail addresses, card and account
// numbers, phone numbers, national identifiers, spoken or written as digits.

const PATTERNS: [RegExp, string][] = [
  [/[A-Za-z0-9._%+-]+\s*(@|\bat\b)\s*[A-Za-z0-9-]+(\s*(\.|\bdot\b)\s*[A-Za-z]{2,})+/gi, '[email]'],
  // Six or more digits, possibly grouped by spaces, dashes, dots or commas (as recognizers write long numbers):
  // cards, accounts, phones, identifiers.
  [/(\+?\d[\d\s.,-]{4,}\d)/g, '[number]'],
  [
    /\b(zero|one|two|three|four|five|six|seven|eight|nine|oh)(\s+(zero|one|two|three|four|five|six|seven|eight|nine|oh)){5,}\b/gi,
    '[number]',
  ],
];

const countDigits = (s: string) => (s.match(/\d/g) ?? []).length;

/** The text with personal data replaced; `redacted` says whether anything was. */
export function redactPii(text: string): { text: string; redacted: boolean } {
  let out = text;
  for (const [re, label] of PATTERNS)
    out = out.replace(re, (match) => (label === '[number]' && /\d/.test(match) && countDigits(match) < 6 ? match : label));
  return { text: out, redacted: out !== text };
}
