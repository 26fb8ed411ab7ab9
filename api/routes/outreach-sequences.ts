import { SEQUENCE_MOVES, SEQUENCE_MOVE_NAMES } from '../../domain/outreach/sequences';
import * as analytics from '../../services/outreach/analytics';
import * as sequences from '../../services/outreach/sequences';
import { actor, orgOf, type AuthRule } from '../auth/context';
import type { AppDeps } from '../deps';
import { badRequest } from '../errors';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError, workflowUnavailable } from '../schemas/common';
import { SequenceAnalytics } from '../schemas/outreach-analytics';
import {
  CreateSequenceBody,
  EnrollBody,
  EnrollResult,
  Enrollment,
  EnrollmentList,
  EnrollmentListQuery,
  EnrollmentParams,
  PatchSequenceBody,
  Sequence,
  SequenceList,
  SequenceListQuery,
  SequenceParams,
} from '../schemas/outreach-sequences';

// Routes only declare: schemas, auth, the statuses they answer, and a one-line call into the service.

const READ: AuthRule = { scope: 'outreachRead' };
const MANAGE: AuthRule = { scope: 'outreachManage' };
const TAG = 'Outreach';
const BASE = '/outreach/sequencer/sequences';
const badCursor = { 400: { description: 'Invalid cursor or filter value', schema: ErrorBody } } as const;

export function registerOutreachSequenceRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'post',
    path: BASE,
    tag: TAG,
    summary: 'Create a sequence (draft): steps with templates and delays, mailbox pool, schedule, stop-on-reply',
    auth: MANAGE,
    body: CreateSequenceBody,
    responses: {
      200: { description: 'The sequence, in draft', schema: Sequence },
      ...authErrors,
      404: { description: 'A mailbox of the pool is not in the organization', schema: ErrorBody },
      ...validationError,
    },
    handler: async ({ body, auth }) => reply(200, await sequences.createSequence(deps, orgOf(auth), actor(auth), body)),
  });

  routes.add({
    method: 'get',
    path: BASE,
    tag: TAG,
    summary: "The organization's sequences, newest first",
    auth: READ,
    query: SequenceListQuery,
    responses: { 200: { description: 'One page', schema: SequenceList }, ...badCursor, ...authErrors, ...validationError },
    handler: async ({ query, auth }) => sequences.listSequences(deps, orgOf(auth), query),
  });

  routes.add({
    method: 'get',
    path: `${BASE}/{sequence_id}`,
    tag: TAG,
    summary: 'A sequence with its enrollment counts per status',
    auth: READ,
    params: SequenceParams,
    responses: { 200: { description: 'The sequence', schema: Sequence }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => sequences.getSequence(deps, orgOf(auth), params.sequence_id),
  });

  routes.add({
    method: 'get',
    path: `${BASE}/{sequence_id}/analytics`,
    tag: TAG,
    summary:
      'Figures of a sequence, per step and per A/B variant: sent, delivered, bounced, replied (by class), automatic answers, unsubscribed, with rates',
    auth: READ,
    params: SequenceParams,
    responses: { 200: { description: 'The figures', schema: SequenceAnalytics }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => analytics.sequenceAnalytics(deps, orgOf(auth), params.sequence_id),
  });

  routes.add({
    method: 'patch',
    path: `${BASE}/{sequence_id}`,
    tag: TAG,
    summary: 'Edit a sequence: steps, pool, schedule and stop-on-reply while draft or paused; the name unless archived',
    auth: MANAGE,
    params: SequenceParams,
    body: PatchSequenceBody,
    responses: {
      200: { description: 'The updated sequence', schema: Sequence },
      400: { description: 'Empty body', schema: ErrorBody },
      ...authErrors,
      404: { description: 'Sequence, or a mailbox of the pool, not in the organization', schema: ErrorBody },
      409: { description: 'The sequence’s status does not allow this edit', schema: ErrorBody },
      ...validationError,
    },
    handler: async ({ params, body, auth }) => {
      if (Object.keys(body).length === 0) throw badRequest('Empty patch body');
      return sequences.updateSequence(deps, orgOf(auth), actor(auth), params.sequence_id, body);
    },
  });

  for (const move of SEQUENCE_MOVE_NAMES) {
    const { from, to } = SEQUENCE_MOVES[move];
    routes.add({
      method: 'post',
      path: `${BASE}/{sequence_id}/${move}`,
      tag: TAG,
      summary: `Lifecycle move ${move}: ${from.join(' or ')} → ${to}${to === 'active' ? '; starts (or wakes) the sequence’s sender workflow' : ''}`,
      auth: MANAGE,
      params: SequenceParams,
      responses: {
        200: { description: 'The sequence in its new status', schema: Sequence },
        ...authErrors,
        ...notFoundError,
        409: {
          description: `The sequence is not ${from.join(' or ')}${to === 'active' ? ', or has no step or no mailbox' : ''}`,
          schema: ErrorBody,
        },
        ...validationError,
        ...workflowUnavailable,
      },
      handler: async ({ params, auth }) => sequences.moveSequence(deps, orgOf(auth), actor(auth), params.sequence_id, move),
    });
  }

  routes.add({
    method: 'post',
    path: `${BASE}/{sequence_id}/enrollments`,
    tag: TAG,
    summary: 'Enroll CRM contacts; contacts already enrolled or without an email are listed as skipped',
    auth: MANAGE,
    params: SequenceParams,
    body: EnrollBody,
    responses: {
      200: { description: 'Enrolled and skipped contacts', schema: EnrollResult },
      ...authErrors,
      404: { description: 'Sequence or a contact not in the organization (nothing is enrolled)', schema: ErrorBody },
      409: { description: 'The sequence is completed or archived', schema: ErrorBody },
      ...validationError,
    },
    handler: async ({ params, body, auth }) => sequences.enrollContacts(deps, orgOf(auth), params.sequence_id, body.contact_ids),
  });

  routes.add({
    method: 'get',
    path: `${BASE}/{sequence_id}/enrollments`,
    tag: TAG,
    summary: 'The sequence’s enrollments (status per contact), oldest first',
    auth: READ,
    params: SequenceParams,
    query: EnrollmentListQuery,
    responses: {
      200: { description: 'One page', schema: EnrollmentList },
      ...badCursor,
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, query, auth }) => sequences.listEnrollments(deps, orgOf(auth), params.sequence_id, query),
  });

  routes.add({
    method: 'get',
    path: `${BASE}/{sequence_id}/enrollments/{enrollment_id}`,
    tag: TAG,
    summary: 'One enrollment',
    auth: READ,
    params: EnrollmentParams,
    responses: { 200: { description: 'The enrollment', schema: Enrollment }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => sequences.getEnrollment(deps, orgOf(auth), params.sequence_id, params.enrollment_id),
  });

  routes.add({
    method: 'delete',
    path: `${BASE}/{sequence_id}/enrollments/{enrollment_id}`,
    tag: TAG,
    summary: 'Remove a contact from the sequence: no further step is sent; its thread stays',
    auth: MANAGE,
    params: EnrollmentParams,
    responses: {
      200: { description: 'The enrollment, removed', schema: Enrollment },
      ...authErrors,
      ...notFoundError,
      409: { description: 'The enrollment already ended (completed, replied, bounced, removed, failed)', schema: ErrorBody },
      ...validationError,
    },
    handler: async ({ params, auth }) => sequences.removeEnrollment(deps, orgOf(auth), params.sequence_id, params.enrollment_id),
  });
}
