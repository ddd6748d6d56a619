import { parseNewSchedule } from '../../api/schedule-dto.js';
import { parseJson } from '../../protocol/validate.js';
import { ApiError } from '../errors.js';
import type { Runner } from '../runner.js';
import { jsonResponse, readBody } from './http-io.js';
import type { ApiRoute } from './api-route.js';

/** `/v1/schedules`: create, list, delete cron schedules (runner-core/schedules/). */
export function scheduleRoutes(runner: Runner, maxBodyBytes: number): ApiRoute[] {
  return [
    {
      method: 'POST',
      path: '/v1/schedules',
      access: 'token',
      handle: async (c) => {
        let request: ReturnType<typeof parseNewSchedule>;
        try {
          request = parseNewSchedule(parseJson(await readBody(c.req.raw, maxBodyBytes), 'the request body'));
        } catch (error) {
          if (error instanceof TypeError) throw new ApiError(400, 'BAD_REQUEST', error.message);
          throw error;
        }
        return jsonResponse(201, await runner.schedules.create(request));
      },
    },
    {
      method: 'GET',
      path: '/v1/schedules',
      access: 'read',
      handle: async () => jsonResponse(200, { schedules: await runner.store.schedules.listSchedules() }),
    },
    {
      method: 'DELETE',
      path: '/v1/schedules/:id',
      access: 'dashboard-write',
      handle: async (c) => {
        const id = c.req.param('id') ?? '';
        if (!(await runner.store.schedules.deleteSchedule(id)))
          throw new ApiError(404, 'NOT_FOUND', `No schedule with id ${id}.`);
        return jsonResponse(200, { deleted: id });
      },
    },
  ];
}
