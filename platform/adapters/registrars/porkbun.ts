import { RegistrarError, type DomainPurchase, type DomainQuote, type Registrar } from './types';

// A registrar speaking Porkbun's JSON API v3: POST `<base>/domain/checkDomain/<domain>` for availability
// and price (USD, a decimal string), POST `<base>/domain/create/<domain>` with the quoted cost in cents
// and `agreeToTerms`. Credentials travel in the body (`apikey`, `secretapikey`), as that API wants;
// they never reach an error message or a log line.

const TIMEOUT_MS = 15_000;

interface PorkbunAnswer {
  status?: string;
  message?: string;
  response?: { avail?: string; price?: string };
  [key: string]: unknown;
}

export function createPorkbunRegistrar(options: { baseUrl: string; apiKey: string; secretKey: string }): Registrar {
  const base = options.baseUrl.replace(/\/+$/, '');
  async function call(path: string, body: Record<string, unknown>): Promise<PorkbunAnswer> {
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ apikey: options.apiKey, secretapikey: options.secretKey, ...body }),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      throw new RegistrarError(`registrar unreachable (${(error as Error).name})`, 'failed');
    }
    const answer = (await res.json().catch(() => ({}))) as PorkbunAnswer;
    if (!res.ok || answer.status !== 'SUCCESS') {
      const message = typeof answer.message === 'string' ? answer.message.slice(0, 300) : `HTTP ${res.status}`;
      throw new RegistrarError(`registrar refused: ${message}`, 'failed');
    }
    return answer;
  }
  const check = async (domain: string): Promise<DomainQuote> => {
    const answer = await call(`/domain/checkDomain/${encodeURIComponent(domain)}`, {});
    const price = Number(answer.response?.price);
    if (!Number.isFinite(price) || price < 0) throw new RegistrarError('registrar answered no price', 'failed');
    return { domain, available: answer.response?.avail === 'yes', priceCents: Math.round(price * 100), currency: 'USD' };
  };
  return {
    name: 'porkbun',
    check,
    purchase: async (domain, opts): Promise<DomainPurchase> => {
      // The API registers for the registry's minimum term; longer terms are renewals, not purchases.
      if (opts.years !== 1) throw new RegistrarError('This registrar sells one year at a time: send years 1', 'unsupported');
      const quote = await check(domain);
      if (!quote.available) throw new RegistrarError(`${domain} is not available`, 'unavailable');
      if (opts.maxPriceCents !== undefined && quote.priceCents > opts.maxPriceCents) {
        throw new RegistrarError(`${domain} costs ${quote.priceCents} cents, above max_price_cents`, 'price_changed');
      }
      const answer = await call(`/domain/create/${encodeURIComponent(domain)}`, { cost: quote.priceCents, agreeToTerms: 'yes' });
      const until = new Date();
      until.setUTCFullYear(until.getUTCFullYear() + 1);
      const orderId = answer.orderId ?? answer.order_id ?? answer.id;
      return {
        domain,
        orderId: orderId === undefined ? `porkbun:${domain}` : String(orderId),
        priceCents: typeof answer.cost === 'number' ? answer.cost : quote.priceCents,
        currency: 'USD',
        registeredUntil: until,
      };
    },
  };
}
