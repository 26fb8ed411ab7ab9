import { describe, expect, it } from 'vitest';
import { scoreAccountHealth, type HealthInputs } from '../../domain/accounts';

const NOW = '2025-06-01T00:00:00.000Z';
const daysAgo = (d: number) => new Date(Date.parse(NOW) - d * 86_400_000).toISOString();
const inputs = (over: Partial<HealthInputs> = {}): HealthInputs => ({
  now: NOW,
  lastActivityAt: null,
  openDeals: 0,
  contacts: 0,
  engagedContacts: 0,
  ...over,
});

describe('scoreAccountHealth', () => {
  it('is 0 for an account with nothing going on', () => {
    expect(scoreAccountHealth(inputs())).toEqual({
      score: 0,
      factors: { recency: 0, deals: 0, engagement: 0, days_since_last_activity: null, open_deals: 0, contacts: 0, engaged_contacts: 0 },
    });
  });

  it('is 100 with a fresh activity, three open deals and every contact engaged', () => {
    expect(scoreAccountHealth(inputs({ lastActivityAt: daysAgo(1), openDeals: 3, contacts: 4, engagedContacts: 4 })).score).toBe(100);
  });

  it('gives full recency up to 7 days, decaying linearly to 0 at 90', () => {
    const recency = (d: number) => scoreAccountHealth(inputs({ lastActivityAt: daysAgo(d) })).factors.recency;
    expect(recency(0)).toBe(40);
    expect(recency(7)).toBe(40);
    expect(recency(48.5)).toBe(20);
    expect(recency(90)).toBe(0);
    expect(recency(400)).toBe(0);
    expect(recency(30)).toBeGreaterThan(recency(60));
  });

  it('treats an activity timestamp after now as fresh', () => {
    const { factors } = scoreAccountHealth(inputs({ lastActivityAt: '2025-06-02T00:00:00.000Z' }));
    expect(factors).toMatchObject({ recency: 40, days_since_last_activity: 0 });
  });

  it('gives 10 points per open deal, counting at most three', () => {
    const deals = (n: number) => scoreAccountHealth(inputs({ openDeals: n })).factors.deals;
    expect([0, 1, 2, 3, 4, 50].map(deals)).toEqual([0, 10, 20, 30, 30, 30]);
  });

  it('gives engagement as the share of contacts engaged, 0 without contacts', () => {
    const engagement = (contacts: number, engaged: number) =>
      scoreAccountHealth(inputs({ contacts, engagedContacts: engaged })).factors.engagement;
    expect(engagement(0, 0)).toBe(0);
    expect(engagement(4, 1)).toBe(7.5);
    expect(engagement(3, 3)).toBe(30);
    expect(engagement(2, 5)).toBe(30);
  });

  it('rounds the sum to an integer within 0-100', () => {
    // recency 40 * (90 - 10) / 83 = 38.55..., deals 10, engagement 10 → 58.55... → 59
    const { score } = scoreAccountHealth(inputs({ lastActivityAt: daysAgo(10), openDeals: 1, contacts: 3, engagedContacts: 1 }));
    expect(score).toBe(59);
    expect(Number.isInteger(score)).toBe(true);
  });
});
