import { z } from 'zod';
import { READINESS_LABELS } from '../../domain/readiness';
import { Timestamp, Uuid } from './common';

const Signal = z
  .object({
    name: z.string(),
    value: z.union([z.string(), z.number(), z.null()]),
    points: z.number(),
    max: z.number(),
    criterion: z
      .object({ values: z.array(z.string()), exclude: z.boolean() })
      .optional()
      .describe('fit signals: the ICP criterion'),
    evidence: z
      .array(z.object({ value: z.string(), source: z.string(), confidence: z.number() }))
      .optional()
      .describe('fit signals: the facts the result rests on, each with its source'),
  })
  .openapi('ReadinessSignal');

const Reason = z.string().describe('one line saying what earned the score (or why there is none), biggest contributions first');
const Axis = z.object({ score: z.number().int().min(0).max(100), reason: Reason, signals: z.array(Signal) });

export const ReadinessProfile = z
  .object({
    id: Uuid,
    account_id: Uuid,
    label: z.enum(READINESS_LABELS).describe('derived from the three axes by the documented rule'),
    fit: z
      .object({
        score: z.number().int().min(0).max(100).nullable().describe('null without a default ICP profile, or with nothing known to score'),
        reason: Reason,
        grade: z.enum(['A', 'B', 'C', 'D']).nullable(),
        confidence: z.number().nullable(),
        signals: z.array(Signal).describe('the ICP breakdown: one signal per criterion, points in criterion weight, with evidence'),
      })
      .openapi('ReadinessFit'),
    engagement: Axis.openapi('ReadinessEngagement'),
    timing: Axis.openapi('ReadinessTiming'),
    icp_profile_id: Uuid.nullable(),
    icp_profile_version: z.number().int().nullable(),
    trigger: z.enum(['manual', 'nightly']),
    computed_at: Timestamp,
  })
  .openapi('ReadinessProfile');

export const ReadinessHistory = z.object({ account_id: Uuid, profiles: z.array(ReadinessProfile) }).openapi('ReadinessHistory');
export const ReadinessHistoryQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).default(20) });
export const ReadinessRefreshStarted = z.object({ workflow_id: z.string() }).openapi('ReadinessRefreshStarted');
export const ReadinessParams = z.object({ account_id: Uuid });
