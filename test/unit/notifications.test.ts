import { describe, expect, it } from 'vitest';
import { NOTIFICATION_EVENTS, SUBSCRIBABLE_EVENTS, findEventDefinition } from '../../domain/notification-events';
import {
  dealChangeEvents,
  describeEvent,
  effectivePreference,
  escapeHtml,
  nextDigestAt,
  renderDigestEmail,
} from '../../domain/notifications';

describe('notification registry', () => {
  it('has unique <entity>.<change> types, and the subscribable list leaves out always-send alerts only', () => {
    const types = NOTIFICATION_EVENTS.map((e) => e.event_type);
    expect(new Set(types).size).toBe(types.length);
    for (const t of types) expect(t).toMatch(/^[a-z_]+\.[a-z_]+$/);
    expect(SUBSCRIBABLE_EVENTS.length).toBe(NOTIFICATION_EVENTS.length - 3);
    expect(findEventDefinition('credential.refresh_failed')?.always_send).toBe(true);
    expect(findEventDefinition('integration.needs_reconnect')?.always_send).toBe(true);
    expect(findEventDefinition('webhook_endpoint.disabled')?.always_send).toBe(true);
  });
});

describe('effectivePreference', () => {
  const won = findEventDefinition('deal.won')!;
  it("takes the user's values where set and the catalog's elsewhere", () => {
    expect(effectivePreference(won)).toEqual({ in_app: true, email_cadence: 'immediate' });
    expect(effectivePreference(won, { in_app: false, email_cadence: null })).toEqual({ in_app: false, email_cadence: 'immediate' });
    expect(effectivePreference(won, { in_app: null, email_cadence: 'off' })).toEqual({ in_app: true, email_cadence: 'off' });
  });
  it('ignores preferences for always-send events', () => {
    expect(effectivePreference(findEventDefinition('credential.refresh_failed')!, { in_app: false, email_cadence: 'off' })).toEqual({
      in_app: true,
      email_cadence: 'immediate',
    });
  });
});

describe('nextDigestAt', () => {
  const daily = { intervalSeconds: 86_400, offsetSeconds: 8 * 3600 };
  it('is the next fixed hour of the day, strictly after now', () => {
    expect(new Date(nextDigestAt(Date.parse('2030-01-01T07:59:59Z'), daily)).toISOString()).toBe('2030-01-01T08:00:00.000Z');
    expect(new Date(nextDigestAt(Date.parse('2030-01-01T08:00:00Z'), daily)).toISOString()).toBe('2030-01-02T08:00:00.000Z');
    expect(new Date(nextDigestAt(Date.parse('2030-01-01T23:00:00Z'), daily)).toISOString()).toBe('2030-01-02T08:00:00.000Z');
  });
  it('works for short windows', () => {
    expect(nextDigestAt(10_500, { intervalSeconds: 3, offsetSeconds: 0 })).toBe(12_000);
  });
});

describe('dealChangeEvents', () => {
  const deal = { id: 'd', name: 'N', stage: 'prospecting', value: 10, currency: 'USD', owner_id: 'a' };
  it('a create is deal.created (and won/lost when created closed)', () => {
    expect(dealChangeEvents(null, deal).map((e) => e.event_type)).toEqual(['deal.created']);
    expect(dealChangeEvents(null, { ...deal, stage: 'closed_lost' }).map((e) => e.event_type)).toEqual(['deal.created', 'deal.lost']);
  });
  it('a close replaces the stage change; owner and value changes carry old and new', () => {
    const events = dealChangeEvents(deal, { ...deal, stage: 'closed_won', owner_id: 'b', value: 12.5 });
    expect(events.map((e) => e.event_type)).toEqual(['deal.won', 'deal.owner_changed', 'deal.value_changed']);
    expect(events[1]!.payload).toMatchObject({ owner_id: 'a', new_owner_id: 'b' });
    expect(events[2]!.payload).toMatchObject({ old: '10.00 USD', new: '12.50 USD' });
    expect(dealChangeEvents(deal, { ...deal })).toEqual([]);
  });
});

describe('rendering', () => {
  it('describes events from their payload', () => {
    expect(
      describeEvent({
        event_type: 'deal.stage_changed',
        entity_type: 'deal',
        entity_id: 'd',
        payload: { deal_name: 'X', old: 'a', new: 'b' },
      }),
    ).toEqual({
      title: 'Deal stage changed: X',
      body: 'Stage moved from a to b.',
    });
  });
  it('escapes every user value in HTML', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    const mail = renderDigestEmail([{ title: '<b>T</b>', body: '"B"', created_at: new Date(0) }]);
    expect(mail.html).toContain('&lt;b&gt;T&lt;/b&gt;');
    expect(mail.html).not.toContain('<b>T</b>');
    expect(mail.subject).toBe('Your notification digest: 1 update');
  });
});
