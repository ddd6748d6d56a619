import { alerts } from './alerts.js';
import { deliverySchedules } from './delivery-schedules.js';
import type { Migration } from './dialect.js';
import { flowControl } from './flow-control.js';
import { hardening } from './hardening.js';
import { initial } from './initial.js';
import { qstashWaits } from './qstash-waits.js';
import { qstash } from './qstash.js';
import { retention } from './retention.js';
import { scheduleRefusals } from './schedule-refusals.js';
import { schedules } from './schedules.js';
import { search } from './search.js';
import { stepLogs } from './step-logs.js';
import { workflowApi } from './workflow-api.js';

/**
 * The table changes of both stores, in order, each written once for both dialects. Append only:
 * never edit an entry that has shipped (a database that applied it keeps what it did). Stored
 * functions are no entries: PostgreSQL re-creates them at every start (../postgres/functions.ts).
 *
 * SQLite applies each as its own version (sqlite.ts); PostgreSQL shipped the first two as its
 * version 1, so its version numbers are one less from there on (postgres.ts).
 */
export const TABLE_CHANGES: readonly Migration[] = [
  initial,
  workflowApi,
  hardening,
  schedules,
  flowControl,
  stepLogs,
  alerts,
  search,
  qstash,
  qstashWaits,
  scheduleRefusals,
  retention,
  deliverySchedules,
];
