import * as widgets from '../../services/agent-widgets';
import { orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { Widget, WidgetCreateBody, WidgetList, WidgetParams, WidgetUpdateBody } from '../schemas/agent-widgets';
import { ErrorBody, IdParams, authErrors, notFoundError, validationError } from '../schemas/common';

const READ = { scope: 'agentsRead' } as const;
const MANAGE = { scope: 'agentsManage' } as const;
const TAG = 'Agents' as const;
const widgetNotFound = { 404: { description: 'Agent or widget not in the organization', schema: ErrorBody } } as const;

/** An agent's widgets: the embeddable page and script that talk to the agent (the public side is in widgets.ts). */
export function registerAgentWidgetRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: '/core/agents/{id}/widgets',
    tag: TAG,
    summary: "List an agent's widgets, oldest first",
    auth: READ,
    params: IdParams,
    responses: {
      200: { description: 'Every widget of the agent', schema: WidgetList },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, auth }) => widgets.listAgentWidgets(deps, orgOf(auth), params.id),
  });

  routes.add({
    method: 'post',
    path: '/core/agents/{id}/widgets',
    tag: TAG,
    summary: 'Create a widget: a page and a script that let visitors of the allowed origins talk to the agent',
    description:
      "Embed it with a script element loading this API's `/widget.js` with the attribute `data-widget-id` set to the widget's id: a floating button opens the page " +
      '`GET /widgets/{widget_id}` in an iframe, which opens a session (`POST /widgets/{widget_id}/sessions`) and talks to the ' +
      "agent's published version from the microphone.",
    auth: MANAGE,
    params: IdParams,
    body: WidgetCreateBody,
    responses: {
      200: { description: 'Created', schema: Widget },
      409: { description: 'The agent already has the most widgets it may have', schema: ErrorBody },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, body, auth }) => reply(200, await widgets.createWidget(deps, orgOf(auth), params.id, body)),
  });

  routes.add({
    method: 'get',
    path: '/core/agents/{id}/widgets/{widget_id}',
    tag: TAG,
    summary: 'One widget',
    auth: READ,
    params: WidgetParams,
    responses: { 200: { description: 'The widget', schema: Widget }, ...authErrors, ...widgetNotFound, ...validationError },
    handler: async ({ params, auth }) => widgets.getWidget(deps, orgOf(auth), params.id, params.widget_id),
  });

  routes.add({
    method: 'patch',
    path: '/core/agents/{id}/widgets/{widget_id}',
    tag: TAG,
    summary: 'Change the name, allowed origins or config of a widget (only the fields sent; config only the keys sent)',
    auth: MANAGE,
    params: WidgetParams,
    body: WidgetUpdateBody,
    responses: {
      200: { description: 'The updated widget', schema: Widget },
      400: { description: 'Empty body', schema: ErrorBody },
      ...authErrors,
      ...widgetNotFound,
      ...validationError,
    },
    handler: async ({ params, body, auth }) => widgets.updateWidget(deps, orgOf(auth), params.id, params.widget_id, body),
  });

  routes.add({
    method: 'delete',
    path: '/core/agents/{id}/widgets/{widget_id}',
    tag: TAG,
    summary: 'Delete a widget; its page, script and sessions stop working at once (tokens already handed out run out within two minutes)',
    auth: MANAGE,
    params: WidgetParams,
    responses: { 204: { description: 'Deleted' }, ...authErrors, ...widgetNotFound, ...validationError },
    handler: async ({ params, auth }) => {
      await widgets.deleteWidget(deps, orgOf(auth), params.id, params.widget_id);
      return reply(204);
    },
  });
}
