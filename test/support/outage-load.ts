/**
 * The load of test/database-outage.slow-spec.ts: its bounds and timeouts, the records it keeps of every answer
 * and of the modules it writes, and what counts as a clean failure or a success for each operation.
 */
export const CLIENTS = 8;
/** Short on purpose, so that an outage shows within seconds; production defaults are in docs/operations.md. */
export const TIMEOUTS = { dbStatementTimeoutMs: 1500, dbQueryTimeoutMs: 2500, dbConnectTimeoutMs: 1500 };
/**
 * Every answer comes within this, during an outage too: a pool wait and a connect (1.5 s each) or a query
 * (2.5 s), plus room for a busy machine. The freeze lasts longer, so a request left waiting on a frozen
 * connection shows as too slow.
 */
export const ANSWER_BOUND_MS = 6000;
/** Liveness and readiness (1 s ping) answer within this. */
export const PROBE_BOUND_MS = 3000;
/**
 * The service's own defaults (no timeout configured): docs/operations.md promises every interactive answer
 * within 10 s and readiness within 2 s while the database does not answer. The freeze outlasts the 10 s.
 */
export const DEFAULT_BOUNDS = { answerMs: 10_000, probeMs: 2000 };
export const DEFAULTS_FREEZE_MS = 12_000;
/** Once PostgreSQL accepts connections again, the service serves within this. */
export const RECOVERY_BOUND_MS = 15_000;
/** A request still unanswered after this is recorded as hung (and fails the latency bound). */
export const HANG_MS = 20_000;
export const YEAR = 2031;
const GENERIC = 'An internal server error occurred';
/** docs/api.md §7; a request whose token check could not read its user answers the generic message. */
const FAILURE_MESSAGES: Record<string, string[]> = {
  list: [GENERIC],
  me: ['An error occurred while retrieving module details', GENERIC],
  read: ['Database error retrieving module', 'Failed to retrieve assigned personnel', GENERIC],
};
const SUCCESS_STATUS: Record<string, number> = { create: 201 };
export const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.alloc(64, 7),
]);

export interface Sample {
  op: string;
  startedAt: number;
  endedAt: number;
  status?: number;
  body?: any;
  /** A socket error's code, or `hang`. */
  error?: string;
}

export interface ModuleState {
  exists: boolean;
  description: string | null;
  tutors: boolean;
}
export const ABSENT: ModuleState = { exists: false, description: null, tutors: false };
export const key = (state: ModuleState) => JSON.stringify(state);

/** A module the load created or tried to: the states it may be in, given the answers the load got. */
export interface Tracked {
  code: string;
  id?: number;
  possible: ModuleState[];
  /** No more writes once an outcome is unknown (or the module was deleted). */
  retired: boolean;
  /** Deleted together by a bulk delete whose outcome is unknown: all of the group or none is gone. */
  group?: number;
}

/** A write whose answer was a failure: applied or not, it must be applied whole. */
export interface Uncertain {
  op: string;
  sample: Sample;
  module?: Tracked;
  before: string[];
}

export function countBy<T>(items: T[], by: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[by(item)] = (counts[by(item)] ?? 0) + 1;
  return counts;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function isFailureEnvelope(sample: Sample): boolean {
  const { status, body, op } = sample;
  if (op === 'ready') {
    return (
      status === 503 &&
      JSON.stringify(body) ===
        JSON.stringify({ success: false, data: { database: 'down' }, message: 'Service unavailable' })
    );
  }
  return (
    status === 500 &&
    typeof body === 'object' &&
    body !== null &&
    Object.keys(body).sort().join() === 'data,message,success' &&
    body.success === false &&
    body.data === null &&
    (FAILURE_MESSAGES[op] ?? [GENERIC]).includes(body.message)
  );
}

export function isSuccess(sample: Sample): boolean {
  return sample.status === (SUCCESS_STATUS[sample.op] ?? 200) && sample.body?.success === true;
}
