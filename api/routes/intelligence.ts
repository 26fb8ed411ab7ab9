import * as icpFit from '../../services/intelligence/icp-fit';
import * as profiles from '../../services/intelligence/profiles';
import * as research from '../../services/intelligence/research';
import { getRunByWorkflowId } from '../../services/intelligence/runs';
import { actor, orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError, workflowUnavailable } from '../schemas/common';
import {
  CancelAccepted,
  CreateIcpFitRunBody,
  CreateProfileBody,
  CreateResearchRunBody,
  IcpFitRun,
  IcpFitRunList,
  IcpFitRunQuery,
  IcpProfile,
  IcpProfileList,
  IcpProfileVersions,
  Page,
  PatchProfileBody,
  ProfileParams,
  ResearchRun,
  ResearchRunList,
  ResearchRunQuery,
  RunByWorkflow,
  RunParams,
  RunStarted,
  WorkflowParams,
} from '../schemas/intelligence';

// Routes only declare: schemas, auth, the statuses they answer, and a one-line call into the service.

const tag = 'Customer Intelligence' as const;
const duplicateName = { 409: { description: 'The organization already has a profile of that name', schema: ErrorBody } } as const;

export function registerIntelligenceRoutes(routes: Routes, deps: AppDeps): void {
  // ---- ICP profiles ----
  routes.add({
    method: 'post',
    path: '/intelligence/icp-profiles',
    tag,
    summary: 'Create an ICP profile (version 1); the first one becomes the default',
    auth: { scope: 'crmManage' },
    body: CreateProfileBody,
    responses: { 200: { description: 'Created', schema: IcpProfile }, ...duplicateName, ...authErrors, ...validationError },
    handler: async ({ body, auth }) => reply(200, await profiles.createProfile(deps, orgOf(auth), actor(auth), body)),
  });

  routes.add({
    method: 'get',
    path: '/intelligence/icp-profiles',
    tag,
    summary: "The organization's ICP profiles, newest first",
    auth: { scope: 'crmRead' },
    query: Page,
    responses: { 200: { description: 'Profiles', schema: IcpProfileList }, ...authErrors, ...validationError },
    handler: async ({ query, auth }) => profiles.listProfiles(deps, orgOf(auth), query),
  });

  routes.add({
    method: 'get',
    path: '/intelligence/icp-profiles/{profile_id}',
    tag,
    summary: 'One ICP profile, at its current version',
    auth: { scope: 'crmRead' },
    params: ProfileParams,
    responses: { 200: { description: 'The profile', schema: IcpProfile }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => profiles.getProfile(deps, orgOf(auth), params.profile_id),
  });

  routes.add({
    method: 'patch',
    path: '/intelligence/icp-profiles/{profile_id}',
    tag,
    summary: 'Rename, redescribe, make default, or change the criteria (a new version)',
    auth: { scope: 'crmManage' },
    params: ProfileParams,
    body: PatchProfileBody,
    responses: {
      200: { description: 'The updated profile', schema: IcpProfile },
      400: { description: 'Empty body', schema: ErrorBody },
      ...duplicateName,
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, body, auth }) => profiles.updateProfile(deps, orgOf(auth), params.profile_id, body),
  });

  routes.add({
    method: 'delete',
    path: '/intelligence/icp-profiles/{profile_id}',
    tag,
    summary: 'Delete an ICP profile (runs scored with it keep their results and version)',
    auth: { scope: 'crmManage' },
    params: ProfileParams,
    responses: { 204: { description: 'Deleted' }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      await profiles.deleteProfile(deps, orgOf(auth), params.profile_id);
      return reply(204);
    },
  });

  routes.add({
    method: 'get',
    path: '/intelligence/icp-profiles/{profile_id}/versions',
    tag,
    summary: "Every version of a profile's criteria, newest first",
    auth: { scope: 'crmRead' },
    params: ProfileParams,
    responses: { 200: { description: 'Versions', schema: IcpProfileVersions }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => profiles.listProfileVersions(deps, orgOf(auth), params.profile_id),
  });

  // ---- research runs ----
  routes.add({
    method: 'post',
    path: '/intelligence/research-runs',
    tag,
    summary: "Research a company's website in a workflow (research:<run_id>)",
    auth: { scope: 'crmManage' },
    body: CreateResearchRunBody,
    responses: {
      202: { description: 'Queued', schema: RunStarted },
      400: { description: 'The account has neither a website nor a domain', schema: ErrorBody },
      404: { description: 'Account not found in the organization', schema: ErrorBody },
      ...authErrors,
      ...validationError,
      ...workflowUnavailable,
    },
    handler: async ({ body, auth }) => reply(202, await research.startResearchRun(deps, orgOf(auth), actor(auth), body)),
  });

  routes.add({
    method: 'get',
    path: '/intelligence/research-runs',
    tag,
    summary: 'Research runs, newest first',
    auth: { scope: 'crmRead' },
    query: ResearchRunQuery,
    responses: { 200: { description: 'Runs', schema: ResearchRunList }, ...authErrors, ...validationError },
    handler: async ({ query, auth }) => research.listResearchRuns(deps, orgOf(auth), query),
  });

  routes.add({
    method: 'get',
    path: '/intelligence/research-runs/{run_id}',
    tag,
    summary: 'A research run: status, progress, facts with sources (partial while running)',
    auth: { scope: 'crmRead' },
    params: RunParams,
    responses: { 200: { description: 'The run', schema: ResearchRun }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => research.getResearchRun(deps, orgOf(auth), params.run_id),
  });

  routes.add({
    method: 'post',
    path: '/intelligence/research-runs/{run_id}/cancel',
    tag,
    summary: 'Cancel a queued or running research run; it ends as cancelled, using no credit',
    auth: { scope: 'crmManage' },
    params: RunParams,
    responses: {
      202: { description: 'Cancellation requested', schema: CancelAccepted },
      409: { description: 'The run is already final', schema: ErrorBody },
      ...authErrors,
      ...notFoundError,
      ...validationError,
      ...workflowUnavailable,
    },
    handler: async ({ params, auth }) => reply(202, await research.cancelResearchRun(deps, orgOf(auth), params.run_id)),
  });

  // ---- ICP-fit runs ----
  routes.add({
    method: 'post',
    path: '/intelligence/icp-fit-runs',
    tag,
    summary: 'Score 1-100 accounts against an ICP profile in one workflow (icp-fit:<run_id>)',
    auth: { scope: 'crmManage' },
    body: CreateIcpFitRunBody,
    responses: {
      202: { description: 'Queued', schema: RunStarted },
      404: { description: 'Profile not found in the organization', schema: ErrorBody },
      ...authErrors,
      ...validationError,
      ...workflowUnavailable,
    },
    handler: async ({ body, auth }) => reply(202, await icpFit.startIcpFitRun(deps, orgOf(auth), actor(auth), body)),
  });

  routes.add({
    method: 'get',
    path: '/intelligence/icp-fit-runs',
    tag,
    summary: 'ICP-fit runs, newest first (without their results)',
    auth: { scope: 'crmRead' },
    query: IcpFitRunQuery,
    responses: { 200: { description: 'Runs', schema: IcpFitRunList }, ...authErrors, ...validationError },
    handler: async ({ query, auth }) => icpFit.listIcpFitRuns(deps, orgOf(auth), query),
  });

  routes.add({
    method: 'get',
    path: '/intelligence/icp-fit-runs/{run_id}',
    tag,
    summary: 'An ICP-fit run with its per-account results, in input order',
    auth: { scope: 'crmRead' },
    params: RunParams,
    responses: { 200: { description: 'The run', schema: IcpFitRun }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => icpFit.getIcpFitRun(deps, orgOf(auth), params.run_id),
  });

  routes.add({
    method: 'get',
    path: '/intelligence/runs/by-workflow/{workflow_id}',
    tag,
    summary: 'Which run a workflow id (research:<id> or icp-fit:<id>) belongs to, within the organization',
    auth: { scope: 'crmRead' },
    params: WorkflowParams,
    responses: { 200: { description: 'The run', schema: RunByWorkflow }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => getRunByWorkflowId(deps, orgOf(auth), params.workflow_id),
  });
}
