import { expectInteger, expectObject } from '../protocol/validate.js';

/** `GET /v1/store`: how big the runner's database is, and how long it keeps finished runs. */
export interface StoreInfo {
  /** Bytes on disk: SQLite's pages plus its WAL; PostgreSQL's tables of the runner's schema with their indexes. */
  sizeBytes: number;
  /** Finished runs are deleted this long after they finished; 0: kept forever. */
  retentionMs: number;
}

export function parseStoreInfo(u: unknown, where = 'the store answer'): StoreInfo {
  const o = expectObject(u, where);
  return { sizeBytes: expectInteger(o, 'sizeBytes', where), retentionMs: expectInteger(o, 'retentionMs', where) };
}
