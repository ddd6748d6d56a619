import { randomUUID } from 'node:crypto';
import { ApiError } from '../../errors.js';
import { jsonResponse, readBody } from '../../api/http-io.js';
import { forwardedHeader, WorkflowHeader } from '../headers.js';
import { lowerHeaders } from '../messages/spec.js';
import { parsed, pathDestination, requestHeaders } from './route-input.js';
import type { QStashRouteSet } from './route-set.js';

/**
 * `POST /v2/trigger/<workflow URL>`: QStash's REST way to start a workflow run without the SDK's
 * client (curl, `fetch` from another app, a step starting another app's workflow). The request is a
 * publish's (`Upstash-Forward-*` headers, `Upstash-Retries`, `-Delay`, `-Flow-Control-*`…, the body
 * the payload); the runner makes it the run's first message (a new `wfr_` id unless
 * `Upstash-Workflow-RunId` names one) and answers `{workflowRunId, workflowCreatedAt}`.
 *
 * Its deliveries carry the workflow protocol's version header, so the SDK runs the route at once; a
 * trigger with `Upstash-Workflow-Unknown-Sdk: true` has the SDK start the run over itself first
 * (handover.ts). An endpoint that is not a workflow served by an SDK of v1 or later fails the run
 * (non-workflow.ts).
 */
export const triggerRoutes: QStashRouteSet = (app, { engine, maxBodyBytes }) => {
  app.post('/trigger/*', async (c) => {
    const destination = pathDestination(c, 'trigger');
    const body = await readBody(c.req.raw, maxBodyBytes);
    const given = lowerHeaders(requestHeaders(c));
    const runId = given[WorkflowHeader.RunId] ?? `wfr_${randomUUID()}`;
    const headers = {
      ...given,
      [WorkflowHeader.RunId]: runId,
      [WorkflowHeader.Init]: 'true',
      [WorkflowHeader.Url]: destination,
      [forwardedHeader(WorkflowHeader.SdkVersion)]: '1',
    };
    const [result] = await engine.publish([{ ...parsed(destination, headers, body, 'trigger'), restTrigger: true }]);
    if (result?.deduplicated)
      throw new ApiError(
        409,
        'WORKFLOW_RUN_EXISTS',
        `Workflow run ${runId} exists already: a trigger names a new run id, or none.`,
      );
    const run = await engine.context.store.getRun(runId);
    return jsonResponse(200, { workflowRunId: runId, workflowCreatedAt: run?.createdAt ?? Date.now() });
  });
};
