// The statements PostgreSQL receives, recorded at the node-postgres client: every path of the repositories goes
// through it (TypeORM's query runners, the named prepared statements of prepared.ts on the pool, the cursors of
// query-stream.ts), whereas TypeORM's logger sees the first only.
import pg from 'pg';

/**
 * @typedef {object} Statement
 * @property {string} text
 * @property {unknown[]} values
 * @property {boolean} prepared a named prepared statement (prepared.ts)
 * @property {boolean} streamed read through a server-side cursor (query-stream.ts)
 */

/** @type {Statement[] | undefined} */
let recording;

const originalQuery = pg.Client.prototype.query;

/**
 * @param {unknown} config
 * @param {unknown} values
 * @returns {Statement}
 */
function describe(config, values) {
  if (typeof config === 'string') {
    return { text: config, values: Array.isArray(values) ? values : [], prepared: false, streamed: false };
  }
  const query =
    /** @type {{ text?: string, values?: unknown[], name?: string, cursor?: { text: string, values: unknown[] | null } }} */ (
      config
    );
  if (query.cursor !== undefined) {
    return { text: query.cursor.text, values: query.cursor.values ?? [], prepared: false, streamed: true };
  }
  return {
    text: query.text ?? '',
    values: query.values ?? (Array.isArray(values) ? values : []),
    prepared: typeof query.name === 'string' && query.name !== '',
    streamed: false,
  };
}

/** Records every statement sent by any client of this process while recording. */
export function installCapture() {
  /** @this {pg.Client} @param {unknown[]} args */
  pg.Client.prototype.query = function (...args) {
    if (recording !== undefined) recording.push(describe(args[0], args[1]));
    return Reflect.apply(originalQuery, this, args);
  };
}

/**
 * Runs `work` and returns what it resolved to with the statements it sent, in order.
 * @template T
 * @param {() => Promise<T>} work
 * @returns {Promise<{ result: T, statements: Statement[] }>}
 */
export async function recordStatements(work) {
  if (recording !== undefined) throw new Error('recordStatements is not reentrant');
  /** @type {Statement[]} */
  const statements = [];
  recording = statements;
  try {
    const result = await work();
    return { result, statements };
  } finally {
    recording = undefined;
  }
}
