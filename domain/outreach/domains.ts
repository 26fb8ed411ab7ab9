// Sending domains: the DNS records a domain needs to send cold email (SPF, DKIM, DMARC, a tracking
// CNAME) and how what DNS answers is judged against them. Pure: the service resolves, these rules judge.

export type DomainStatus = 'pending' | 'verified' | 'failed';
export type RecordPurpose = 'spf' | 'dkim' | 'dmarc' | 'tracking';
export type RecordStatus = 'pending' | 'verified' | 'mismatch' | 'missing' | 'error';

export const RECORD_PURPOSES: readonly RecordPurpose[] = ['spf', 'dkim', 'dmarc', 'tracking'];

/** A lower-case host name with at least two labels, each 1-63 letters, digits or inner hyphens; an alphabetic top-level label. */
export const DOMAIN_NAME = /^(?=.{3,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

export const DKIM_SELECTOR = 'outreach';
export const TRACKING_LABEL = 'track';

export interface RequiredRecord {
  purpose: RecordPurpose;
  type: 'TXT' | 'CNAME';
  host: string;
  value: string;
}

/** `name` normalized: lower case, no trailing dot. */
export const normalizeDomain = (name: string): string => name.trim().toLowerCase().replace(/\.$/, '');

/**
 * The four records of a sending domain. `publicKey` is the DKIM public key (base64 DER,
 * SubjectPublicKeyInfo), `trackingTarget` the host the tracking CNAME points at.
 */
export function requiredRecords(domain: string, publicKey: string, trackingTarget: string, selector = DKIM_SELECTOR): RequiredRecord[] {
  return [
    { purpose: 'spf', type: 'TXT', host: domain, value: 'v=spf1 mx a ~all' },
    { purpose: 'dkim', type: 'TXT', host: `${selector}._domainkey.${domain}`, value: `v=DKIM1; k=rsa; p=${publicKey}` },
    { purpose: 'dmarc', type: 'TXT', host: `_dmarc.${domain}`, value: `v=DMARC1; p=none; rua=mailto:dmarc@${domain}` },
    { purpose: 'tracking', type: 'CNAME', host: `${TRACKING_LABEL}.${domain}`, value: trackingTarget },
  ];
}

/** What a lookup of one record's host answered: TXT strings (chunks already joined) or CNAME targets; null when the lookup itself failed. */
export type Lookup = { answers: string[] } | null;

const tagsOf = (record: string): Map<string, string> =>
  new Map(
    record
      .split(';')
      .map((part) => part.trim())
      .filter(Boolean)
      .map((part) => {
        const eq = part.indexOf('=');
        return eq < 0 ? [part.toLowerCase(), ''] : [part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).replace(/\s+/g, '')];
      }),
  );
const hostOf = (name: string) => name.toLowerCase().replace(/\.$/, '');

/**
 * Judges one record against what DNS answered:
 * - SPF: exactly one `v=spf1` TXT record (two are a permanent error for receivers) carrying every mechanism we need;
 * - DKIM: a `v=DKIM1` record whose `p=` is our public key;
 * - DMARC: exactly one `v=DMARC1` record, any policy;
 * - tracking: a CNAME to our tracking host.
 */
export function judgeRecord(record: RequiredRecord, lookup: Lookup): RecordStatus {
  if (lookup === null) return 'error';
  const answers = lookup.answers;
  switch (record.purpose) {
    case 'spf': {
      const spf = answers.filter((a) => /^v=spf1(\s|$)/i.test(a.trim()));
      if (spf.length === 0) return 'missing';
      if (spf.length > 1) return 'mismatch';
      const have = new Set(spf[0]!.toLowerCase().split(/\s+/).slice(1));
      const need = record.value
        .toLowerCase()
        .split(/\s+/)
        .slice(1)
        .filter((m) => !/^[~?+-]?all$/.test(m));
      return need.every((m) => have.has(m)) ? 'verified' : 'mismatch';
    }
    case 'dkim': {
      const dkim = answers.filter((a) => /^v=dkim1\s*(;|$)/i.test(a.trim()) || tagsOf(a).has('p'));
      if (dkim.length === 0) return 'missing';
      const key = tagsOf(record.value).get('p');
      return dkim.some((a) => tagsOf(a).get('p') === key) ? 'verified' : 'mismatch';
    }
    case 'dmarc': {
      const dmarc = answers.filter((a) => /^v=dmarc1\s*(;|$)/i.test(a.trim()));
      if (dmarc.length === 0) return 'missing';
      return dmarc.length === 1 ? 'verified' : 'mismatch';
    }
    case 'tracking': {
      if (answers.length === 0) return 'missing';
      return answers.some((a) => hostOf(a) === hostOf(record.value)) ? 'verified' : 'mismatch';
    }
  }
}

/** The tracking CNAME is needed only while the domain tracks opens and clicks; the others always. */
export const isRecordRequired = (purpose: RecordPurpose, trackingEnabled: boolean): boolean => purpose !== 'tracking' || trackingEnabled;

/** The domain's status from its records: verified when every required record is. */
export const requiredStatusOf = (
  records: readonly { purpose: RecordPurpose; status: RecordStatus }[],
  trackingEnabled: boolean,
): DomainStatus => domainStatusOf(records.filter((r) => isRecordRequired(r.purpose, trackingEnabled)).map((r) => r.status));

/** A domain is verified when every record is. */
export const domainStatusOf = (statuses: RecordStatus[]): DomainStatus => (statuses.every((s) => s === 'verified') ? 'verified' : 'failed');
