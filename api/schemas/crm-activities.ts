import { z } from 'zod';
import { HttpUrl } from './accounts';
import { Timestamp, Uuid, cappedLimit, offsetQuery, timestampInput } from './common';

export const ACTIVITY_FEED_DEFAULT = 50;
export const ACTIVITY_FEED_MAX = 200;

export const Attendee = z
  .object({ name: z.string().max(300), email: z.string().max(320) })
  .strict()
  .openapi('ActivityAttendee');

/**
 * The body of POST /accounts/{account_id}/activities and POST /deals/{deal_id}/activities. Only type
 * is required, and it is any non-empty string (no enumeration). direction is accepted and dropped.
 */
export const CreateActivityBody = z
  .object({
    type: z.string().trim().min(1).max(100).describe('any string; in practice note, call, meeting, email, task'),
    summary: z.string().max(1000).nullable().optional().describe('short headline, stored as the subject'),
    body: z.string().max(100_000).nullable().optional(),
    direction: z.string().max(100).nullable().optional().describe('accepted for compatibility; ignored and never stored'),
    contact_id: Uuid.nullable().optional().describe('a contact of the organization (404 otherwise)'),
    due_at: timestampInput('Drives effective_time when present').nullable().optional(),
    duration_minutes: z.number().int().min(0).max(1_000_000).nullable().optional(),
    attendees: z.array(Attendee).max(500).nullable().optional(),
    transcript: z.string().max(900_000).nullable().optional(),
    recording_url: HttpUrl.nullable().optional().describe('absolute http(s) URL'),
    location: z.string().max(2000).nullable().optional().describe('location or video-call link'),
    provider: z.string().max(100).nullable().optional().describe('e.g. gcal, zoom, teams, manual'),
  })
  .strict()
  .openapi('ActivityCreate');

export const ActivityCreated = z.object({ id: Uuid }).openapi('ActivityCreated');

export const Activity = z
  .object({
    id: Uuid,
    type: z.string(),
    summary: z.string().nullable(),
    body: z.string().nullable(),
    contact_id: Uuid.nullable(),
    due_at: Timestamp.nullable(),
    duration_minutes: z.number().int().nullable(),
    attendees: z.array(z.object({ name: z.string(), email: z.string() })).nullable(),
    transcript: z.string().nullable(),
    recording_url: z.string().nullable(),
    location: z.string().nullable(),
    provider: z.string().nullable(),
    account_id: Uuid.nullable(),
    deal_id: Uuid.nullable(),
    effective_time: Timestamp.describe('due_at when present, otherwise created_at'),
    created_at: Timestamp,
  })
  .openapi('Activity');

export const ActivityFeedQuery = z.object({
  exclude_future: z
    .enum(['true', 'false'])
    .default('false')
    .openapi({ description: 'true drops activities whose effective_time is in the future' }),
  limit: cappedLimit(ACTIVITY_FEED_DEFAULT, ACTIVITY_FEED_MAX),
  offset: offsetQuery(),
});

export const ActivityParams = z.object({ activity_id: Uuid });

export const Unlinked = z.object({ id: Uuid, account_id: z.null(), deal_id: z.null() }).openapi('ActivityUnlinked');
