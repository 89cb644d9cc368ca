// `npm run build && node bench/writes.js`: the write path side by side with a lean bare writer (bench/README.md,
// "Writes"). The built service runs in a child process (bench/service.js) and takes each write over HTTP; the bare
// writer is plain `pg` in this process, one transaction per write, writing the same rows: the data, the same
// audit row and the same change events (type and data), and the feed's `pg_notify`. Scenarios: a module create,
// a personnel assign of 100 users, a 10 000-row roster import (CSV), a 10 000-row user import without passwords,
// a SCIM PATCH and a membership change (PATCH …/members). Rounds alternate the sides; each side also runs with
// its change events switched off (the service: its recorder swapped for a no-op, bench/service.js; the bare
// writer: no event rows and no notification), so the event's cost is a difference on each side. Then the bare
// writer toggles one part of the event at a time (the notification, the per-row transaction id, where the JSON
// is built, the module totals' triggers) on the scenarios where it matters.
//
//   node bench/writes.js                       embedded PostgreSQL in a temporary directory
//   DATABASE_URL=postgres://… node bench/writes.js    a database of its own on that server, dropped afterwards
//   node bench/writes.js --rounds=5 --only=roster,users
import { createHash, randomBytes } from 'node:crypto';
import process from 'node:process';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { call, database, runWithCleanups, startService, writeResults } from './harness.js';
import { cpuMillis, loadAverage } from './lib/measure.js';
import { arg, out } from './lib/options.js';

const ROUNDS = Number(arg('rounds', 3));
const ONLY = arg('only', '')
  .split(',')
  .filter((x) => x !== '');
const BIG = Number(arg('rows', 10_000));
/** Repetitions of a small write per round (their mean is the round's time). */
/** Clock ticks a second of /proc/<pid>/stat's times (USER_HZ: 100 on Linux). */
const SMALL = Number(arg('small', 50));
const cleanups = [];

// ---------------------------------------------------------------------------------------------------------
// The bare writer. `events` is one of: 'on' (as the service), 'off' (no event rows, no notification), or a
// toggle: 'no-notify' (event rows, no notification), 'txid-once' (the writing transaction's id read once and
// given to every row instead of the column's per-row default), 'json-node' (the event data built here and sent
// as one jsonb array, as the service sends it, instead of built by PostgreSQL from the written rows).

const NOTIFY = `pg_notify('change_events', '')`;
const MODULE_JSON = (m) => `jsonb_build_object('id', ${m}.id, 'code', ${m}.code, 'year', ${m}.year,
  'description', ${m}.description, 'credits', ${m}.credits,
  'created_at', to_char(${m}.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'updated_at', to_char(${m}.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`;
const USER_JSON = (u) => `jsonb_build_object('id', ${u}.id, 'username', ${u}.username, 'email', ${u}.email,
  'admin', ${u}.admin,
  'created_at', to_char(${u}.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'updated_at', to_char(${u}.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'avatar_url', CASE WHEN ${u}.avatar_key IS NOT NULL THEN '/api/users/' || ${u}.id || '/avatar' END,
  'given_name', ${u}.given_name, 'family_name', ${u}.family_name, 'display_name', ${u}.display_name,
  'active', ${u}.active, 'external_id', ${u}.external_id)`;

/** The event rows' CTE (or none) and the final SELECT's notification, per variant. */
function eventParts(variant, type, dataSql, from) {
  if (variant === 'off') return { cte: '', notify: '1' };
  const txid = variant === 'txid-once' ? ', txid' : '';
  const txidValue = variant === 'txid-once' ? ', (SELECT pg_current_xact_id()::text::bigint)' : '';
  return {
    cte: `, ev AS (INSERT INTO change_events (type, data${txid}) SELECT '${type}', ${dataSql}${txidValue} ${from})`,
    notify: variant === 'no-notify' ? '1' : NOTIFY,
  };
}

/** The `module.members_changed` of new members, built from the written role rows `w` (module $1). */
const membersAdded = (variant) =>
  eventParts(
    variant,
    'module.members_changed',
    `jsonb_build_object('module_id', $1::bigint, 'added',
       (SELECT jsonb_agg(jsonb_build_object('user_id', w.user_id, 'role', w.role) ORDER BY w.user_id) FROM w),
       'removed', '[]'::jsonb, 'changed', '[]'::jsonb)`,
    '',
  );

async function audit(client, actorId, action, targetType, targetIds, summary) {
  await client.query(
    `INSERT INTO audit_events (actor_id, action, target_type, target_ids, summary, request_id, client_ip)
     VALUES ($1, $2, $3, $4::bigint[], $5::jsonb, $6, '127.0.0.1')`,
    [actorId, action, targetType, targetIds, JSON.stringify(summary), randomBytes(8).toString('hex')],
  );
}

const bare = {
  /** One module: the row, its audit row and its `module.created`, one statement (an implicit transaction). */
  async createModule(client, { actorId, code, year }, variant) {
    const ev = eventParts(variant, 'module.created', MODULE_JSON('m'), 'FROM m');
    await client.query({
      name: `create-${variant}`,
      text: `WITH m AS (INSERT INTO modules (code, year, description, credits) VALUES ($1, $2, $3, 15)
                       RETURNING id, code, year, description, credits, created_at, updated_at),
             au AS (INSERT INTO audit_events (actor_id, action, target_type, target_ids, summary, request_id, client_ip)
                    SELECT $4, 'module.create', 'module', ARRAY[m.id],
                           jsonb_build_object('code', m.code, 'year', m.year, 'description', m.description, 'credits', m.credits), $5, '127.0.0.1' FROM m)
             ${ev.cte}
        SELECT m.id, ${ev.notify} FROM m`,
      values: [code, year, 'Bench module', actorId, randomBytes(8).toString('hex')],
    });
  },

  /** Assigns `userIds` a role in a module (new memberships): role rows, an audit row, one members_changed. */
  async assign(client, { actorId, moduleId, userIds, role = 'Student' }, variant) {
    await client.query('BEGIN');
    await client.query('SELECT 1 FROM modules WHERE id = $1 FOR SHARE', [moduleId]);
    const ev = membersAdded(variant);
    await client.query(
      `WITH w AS (INSERT INTO user_module_roles (user_id, module_id, role)
                  SELECT u, $1, $3::module_role FROM unnest($2::bigint[]) u
                  RETURNING user_id, role::text AS role)
       ${ev.cte}
       SELECT ${ev.notify}`,
      [moduleId, userIds, role],
    );
    await audit(client, actorId, 'personnel.assign', 'module', [moduleId], {
      user_ids: userIds,
      role,
    });
    await client.query('COMMIT');
  },

  /** A roster CSV of new members: parse, look the users up, lock the roster, write, audit, one event. */
  async rosterImport(client, { actorId, moduleId, csv }, variant) {
    const lines = csv.split('\r\n').filter((line) => line !== '');
    const names = [];
    const roles = [];
    for (const line of lines.slice(1)) {
      const comma = line.indexOf(',');
      names.push(line.slice(0, comma).trim().toLowerCase());
      roles.push(line.slice(comma + 1).trim());
    }
    await client.query('BEGIN');
    await client.query('SELECT 1 FROM modules WHERE id = $1 FOR UPDATE', [moduleId]);
    await client.query('SELECT user_id FROM user_module_roles WHERE module_id = $1 FOR UPDATE', [moduleId]);
    const { rows: found } = await client.query(
      `SELECT id, lower(username) AS username FROM users WHERE lower(username) = ANY($1::text[]) FOR SHARE`,
      [names],
    );
    const ids = new Map(found.map((row) => [row.username, row.id]));
    const userIds = names.map((name) => ids.get(name));
    if (userIds.includes(undefined)) throw new Error('bare roster: unknown user');
    const ev =
      variant === 'json-node'
        ? {
            cte: `, ev AS (INSERT INTO change_events (type, data) VALUES ('module.members_changed', $4::jsonb))`,
            notify: NOTIFY,
          }
        : membersAdded(variant);
    const params = [moduleId, userIds, roles];
    if (variant === 'json-node')
      params.push(
        JSON.stringify({
          module_id: moduleId,
          added: userIds
            .map((id, i) => ({ user_id: Number(id), role: roles[i] }))
            .sort((a, b) => a.user_id - b.user_id),
          removed: [],
          changed: [],
        }),
      );
    await client.query(
      `WITH w AS (INSERT INTO user_module_roles (user_id, module_id, role)
                  SELECT u, $1, r::module_role FROM unnest($2::bigint[], $3::text[]) AS x(u, r)
                  RETURNING user_id, role::text AS role)
       ${ev.cte}
       SELECT ${ev.notify}`,
      params,
    );
    await audit(client, actorId, 'roster.import', 'module', [moduleId], {
      mode: 'add',
      assigned: userIds.length,
      changed: 0,
      unchanged: 0,
      removed: 0,
    });
    await client.query('COMMIT');
  },

  /** A user CSV without passwords: parse, check clashes, insert with generated hashes, audit, one event per user. */
  async userImport(client, { actorId, csv }, variant) {
    const lines = csv.split('\r\n').filter((line) => line !== '');
    const usernames = [];
    const emails = [];
    const hashes = [];
    for (const line of lines.slice(1)) {
      const comma = line.indexOf(',');
      usernames.push(line.slice(0, comma).trim());
      emails.push(line.slice(comma + 1).trim());
      const password = randomBytes(24).toString('base64url');
      hashes.push(`sha256$${createHash('sha256').update(password).digest('hex')}`);
    }
    const { rows: clashes } = await client.query(
      `SELECT 1 FROM users WHERE lower(username) = ANY($1::text[]) OR lower(email) = ANY($2::text[]) LIMIT 1`,
      [usernames.map((name) => name.toLowerCase()), emails.map((email) => email.toLowerCase())],
    );
    if (clashes.length > 0) throw new Error('bare user import: clash');
    await client.query('BEGIN');
    let ev;
    if (variant === 'json-node') {
      ev = {
        cte: `, ev AS (INSERT INTO change_events (type, data)
                       SELECT 'user.created', e.value FROM jsonb_array_elements($4::jsonb) WITH ORDINALITY AS e(value, n)
                       ORDER BY e.n)`,
        notify: NOTIFY,
      };
    } else {
      ev = eventParts(variant, 'user.created', USER_JSON('w'), 'FROM w ORDER BY w.id');
    }
    const sql = (events) => `WITH w AS (INSERT INTO users (username, email, password_hash)
                  SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
                  RETURNING id, username, email, admin, created_at, updated_at, given_name, family_name,
                            display_name, active, external_id, avatar_key)
       ${events.cte}
       SELECT ${events.notify === '1' ? '' : `${events.notify}, `}
              (SELECT array_agg(id ORDER BY id) FROM w)::text AS ids`;
    let ids;
    if (variant === 'json-node') {
      // The service's way: the rows come back, the events' JSON is built here and sent in a second statement.
      const { rows } = await client.query(
        `INSERT INTO users (username, email, password_hash)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
         RETURNING id, username, email, admin, created_at, updated_at, given_name, family_name, display_name,
                   active, external_id`,
        [usernames, emails, hashes],
      );
      ids = rows.map((row) => row.id);
      await client.query(
        `INSERT INTO change_events (type, data)
         SELECT 'user.created', e.value FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS e(value, n)
         ORDER BY e.n`,
        [
          JSON.stringify(
            rows.map((row) => ({
              id: Number(row.id),
              username: row.username,
              email: row.email,
              admin: row.admin,
              avatar_url: null,
              created_at: row.created_at.toISOString(),
              updated_at: row.updated_at.toISOString(),
              given_name: row.given_name,
              family_name: row.family_name,
              display_name: row.display_name,
              active: row.active,
              external_id: row.external_id,
            })),
          ),
        ],
      );
      await client.query(`SELECT ${NOTIFY}`);
    } else {
      const { rows } = await client.query(sql(ev), [usernames, emails, hashes]);
      ids = rows[0].ids;
    }
    await audit(client, actorId, 'user.import', 'user', ids, {
      users: usernames.map((username) => ({ username })),
    });
    await client.query('COMMIT');
  },

  /** SCIM PATCH of one user's displayName: the update, its audit row, one user.updated. */
  async scimPatch(client, { actorId, userId, displayName }, variant) {
    const ev = eventParts(variant, 'user.updated', USER_JSON('w'), 'FROM w');
    await client.query({
      name: `scim-${variant}`,
      text: `WITH w AS (UPDATE users SET display_name = $2, updated_at = now() WHERE id = $1
                        RETURNING id, username, email, admin, created_at, updated_at, given_name, family_name,
                                  display_name, active, external_id, avatar_key),
             au AS (INSERT INTO audit_events (actor_id, action, target_type, target_ids, summary, request_id, client_ip)
                    SELECT $3, 'user.update', 'user', ARRAY[w.id],
                           jsonb_build_object('display_name', $2::text, 'via', 'scim', 'token_id', 1),
                           $4, '127.0.0.1' FROM w)
             ${ev.cte}
        SELECT ${ev.notify} FROM w`,
      values: [userId, displayName, actorId, randomBytes(8).toString('hex')],
    });
  },

  /** PATCH …/members: a status on `userIds`' memberships, its audit row, one members_changed with status_changed. */
  async membership(client, { actorId, moduleId, userIds, status }, variant) {
    await client.query('BEGIN');
    await client.query('SELECT 1 FROM modules WHERE id = $1 FOR SHARE', [moduleId]);
    const ev = eventParts(
      variant,
      'module.members_changed',
      `jsonb_build_object('module_id', $1::bigint, 'added', '[]'::jsonb, 'removed', '[]'::jsonb,
         'changed', '[]'::jsonb,
         'status_changed', (SELECT jsonb_agg(jsonb_build_object('user_id', w.user_id, 'from', w.before, 'to', w.status::text)
                                             ORDER BY w.user_id) FROM w))`,
      '',
    );
    await client.query(
      `WITH old AS (SELECT user_id, status::text AS before FROM user_module_roles
                    WHERE module_id = $1 AND user_id = ANY($2::bigint[]) FOR UPDATE),
            w AS (UPDATE user_module_roles r SET status = $3::membership_status
                  FROM old WHERE r.module_id = $1 AND r.user_id = old.user_id
                  RETURNING r.user_id, old.before, r.status, r.starts_at, r.ends_at)
       ${ev.cte}
       SELECT ${ev.notify}`,
      [moduleId, userIds, status],
    );
    await audit(client, actorId, 'members.update', 'module', [moduleId], { user_ids: userIds, status });
    await client.query('COMMIT');
  },
};

// ---------------------------------------------------------------------------------------------------------

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const ms = (value) => (value >= 100 ? value.toFixed(0) : value.toFixed(2));

async function main() {
  const databaseUrl = await database(cleanups, 'mas_writes_bench');
  const service = await startService(databaseUrl, cleanups, { SCIM_ENABLED: 'true' });
  const { token } = service;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  cleanups.push(() => client.end());
  out(`load average at start: ${loadAverage()}`);

  const {
    rows: [{ id: adminId }],
  } = await client.query(`SELECT id FROM users WHERE username = 'admin'`);
  const scimToken = `mas_${randomBytes(32).toString('base64url')}`;
  await client.query(
    `INSERT INTO integration_tokens (name, scopes, token_hash) VALUES ('bench', '{scim}', $1)`,
    [createHash('sha256').update(scimToken).digest()],
  );
  // The members to assign and import: BIG + 100 users, and 20 000 others so the tables are not tiny.
  await client.query(
    `INSERT INTO users (username, email, password_hash)
     SELECT 'member' || g, 'member' || g || '@uni.edu', NULL FROM generate_series(1, $1::int) g`,
    [BIG + 20_100],
  );
  await client.query('ANALYZE');
  const { rows: memberRows } = await client.query(
    `SELECT id::int AS id, username FROM users WHERE username LIKE 'member%' ORDER BY id LIMIT $1`,
    [BIG + 100],
  );
  const rosterCsv = `user,role\r\n${memberRows
    .slice(0, BIG)
    .map((row) => `${row.username},Student\r\n`)
    .join('')}`;
  const hundred = memberRows.slice(BIG, BIG + 100).map((row) => row.id);

  let sequence = 0;
  const newModule = async () => {
    sequence += 1;
    const { rows } = await client.query(
      `INSERT INTO modules (code, year, credits) VALUES ($1, 2100, 10) RETURNING id::int AS id`,
      [code(sequence)],
    );
    return rows[0].id;
  };
  const code = (n) =>
    String.fromCharCode(
      65 + (Math.floor(n / 676000) % 26),
      65 + (Math.floor(n / 26000) % 26),
      65 + (Math.floor(n / 1000) % 26),
    ) + String(n % 1000).padStart(3, '0');

  let userBatch = 0;
  const usersCsv = () => {
    userBatch += 1;
    let text = 'username,email\r\n';
    for (let i = 0; i < BIG; i++) text += `imp${userBatch}_${i},imp${userBatch}_${i}@uni.edu\r\n`;
    return text;
  };

  // A module whose 100 members the membership scenario toggles, on each side.
  const membershipModule = { service: await newModule(), bare: await newModule() };
  for (const moduleId of Object.values(membershipModule))
    await client.query(
      `INSERT INTO user_module_roles (user_id, module_id, role) SELECT u, $1, 'Student' FROM unnest($2::int[]) u`,
      [moduleId, hundred],
    );
  const statuses = { service: 'active', bare: 'active' };
  const flip = (side) => (statuses[side] = statuses[side] === 'active' ? 'inactive' : 'active');
  const scimUsers = memberRows.slice(0, 200).map((row) => row.id);
  let createYear = 2200;

  /** Each scenario: `service()` and `bare(variant)` do the write `reps` times; times are per write. */
  const scenarios = [
    {
      name: 'module create',
      key: 'create',
      reps: SMALL,
      prepare: () => ({ year: (createYear += 1) }),
      service: async (_, __, { year }, n) =>
        call(service.url, 'POST', '/api/modules', token, {
          code: code(n),
          year,
          description: 'Bench module',
          credits: 15,
        }),
      bare: async (variant, __, { year }, n) =>
        bare.createModule(client, { actorId: adminId, code: code(n), year }, variant),
      toggles: ['no-notify', 'txid-once', 'no-triggers'],
    },
    {
      name: 'personnel assign, 100 users',
      key: 'assign',
      reps: Math.max(5, Math.floor(SMALL / 5)),
      prepare: async (reps) => {
        const modules = [];
        for (let i = 0; i < reps; i++) modules.push(await newModule());
        return { modules };
      },
      service: async (_, i, { modules }) =>
        call(service.url, 'POST', `/api/modules/${modules[i]}/personnel`, token, {
          user_ids: hundred,
          role: 'Student',
        }),
      bare: async (variant, i, { modules }) =>
        bare.assign(client, { actorId: adminId, moduleId: modules[i], userIds: hundred }, variant),
      toggles: ['no-notify'],
    },
    {
      name: `roster import, ${BIG} rows`,
      key: 'roster',
      reps: 1,
      prepare: async () => ({ moduleId: await newModule() }),
      service: async (_, __, { moduleId }) =>
        call(service.url, 'POST', `/api/modules/${moduleId}/roster/import`, token, rosterCsv, 'text/csv'),
      bare: async (variant, __, { moduleId }) =>
        bare.rosterImport(client, { actorId: adminId, moduleId, csv: rosterCsv }, variant),
      toggles: ['no-notify', 'json-node'],
    },
    {
      name: `user import, ${BIG} rows, no passwords`,
      key: 'users',
      reps: 1,
      prepare: () => ({ csv: usersCsv() }),
      service: async (_, __, { csv }) =>
        call(service.url, 'POST', '/api/users/import', token, csv, 'text/csv'),
      bare: async (variant, __, { csv }) => bare.userImport(client, { actorId: adminId, csv }, variant),
      toggles: ['no-notify', 'txid-once', 'json-node'],
    },
    {
      name: 'SCIM PATCH (displayName)',
      key: 'scim',
      reps: SMALL,
      prepare: () => ({ tag: randomBytes(3).toString('hex') }),
      service: async (_, i, { tag }) =>
        call(
          service.url,
          'PATCH',
          `/api/scim/v2/Users/${scimUsers[i % 100]}`,
          scimToken,
          { Operations: [{ op: 'replace', path: 'displayName', value: `S ${tag} ${i}` }] },
          'application/scim+json',
        ),
      bare: async (variant, i, { tag }) =>
        bare.scimPatch(
          client,
          { actorId: null, userId: scimUsers[100 + (i % 100)], displayName: `B ${tag} ${i}` },
          variant,
        ),
      toggles: ['no-notify'],
    },
    {
      name: 'membership change, 100 users',
      key: 'membership',
      reps: Math.max(5, Math.floor(SMALL / 5)),
      prepare: () => ({}),
      service: async () =>
        call(service.url, 'PATCH', `/api/modules/${membershipModule.service}/members`, token, {
          user_ids: hundred,
          status: flip('service'),
        }),
      bare: async (variant) =>
        bare.membership(
          client,
          { actorId: adminId, moduleId: membershipModule.bare, userIds: hundred, status: flip('bare') },
          variant,
        ),
      toggles: ['no-notify'],
    },
  ].filter((scenario) => ONLY.length === 0 || ONLY.includes(scenario.key));

  /** CPU ms so far of the writing side's process, and of each PostgreSQL backend of this database by pid. */
  const cpuNow = async (side) => {
    const { rows } = await client.query(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`,
    );
    const own =
      side === 'service'
        ? await cpuMillis(service.pid)
        : (process.cpuUsage().user + process.cpuUsage().system) / 1000;
    const backends = new Map();
    for (const { pid } of rows) backends.set(pid, await cpuMillis(pid));
    return { own, backends };
  };
  /** CPU ms between two readings: a backend that ended meanwhile counts 0, one that started is left out. */
  const cpuSpent = (before, after) => {
    let total = after.own - before.own;
    for (const [pid, cpu] of before.backends) total += Math.max(0, (after.backends.get(pid) ?? cpu) - cpu);
    return total;
  };

  const results = [];
  for (const scenario of scenarios) {
    out(`\n## ${scenario.name} (${scenario.reps} per round, ${ROUNDS} rounds)`);
    const runs = [
      ['service', 'on'],
      ['service', 'off'],
      ['bare', 'on'],
      ['bare', 'off'],
      ...scenario.toggles.map((toggle) => ['bare', toggle]),
    ];
    const times = new Map(runs.map(([side, variant]) => [`${side}:${variant}`, []]));
    // A warm-up of each side (plans, caches), not counted; it also proves that both write the same rows.
    const written = {};
    for (const [side, variant] of runs.slice(0, 4)) {
      const before = await marks();
      await timed(scenario, side, variant, 1);
      if (variant === 'on') written[side] = await writtenSince(before);
    }
    if (written.service !== written.bare && !process.env.WRITES_LAX)
      throw new Error(
        `${scenario.name}: the sides wrote different rows:\n${written.service}\n${written.bare}`,
      );
    out(`  same rows: ${written.bare}`);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? runs : [...runs].reverse();
      for (const [side, variant] of order)
        times.get(`${side}:${variant}`).push(await timed(scenario, side, variant, scenario.reps));
    }
    const get = (key) => ({
      wall: median(times.get(key).map((t) => t.wall)),
      cpu: median(times.get(key).map((t) => t.cpu)),
    });
    const row = {
      name: scenario.name,
      service: get('service:on'),
      serviceOff: get('service:off'),
      bare: get('bare:on'),
      bareOff: get('bare:off'),
      toggles: Object.fromEntries(scenario.toggles.map((toggle) => [toggle, get(`bare:${toggle}`)])),
      load: loadAverage(),
    };
    results.push(row);
    for (const [key, values] of times)
      out(
        `  ${key.padEnd(18)} ${values.map((t) => ms(t.wall)).join(' / ')} ms, CPU ${values.map((t) => ms(t.cpu)).join(' / ')} ms`,
      );
  }

  async function marks() {
    const { rows } = await client.query(
      `SELECT (SELECT coalesce(max(id), 0) FROM change_events) AS e, (SELECT coalesce(max(id), 0) FROM audit_events) AS a`,
    );
    return rows[0];
  }

  /** What a write left in the outbox and the audit trail: types, actions and the keys of their JSON. */
  async function writtenSince({ e, a }) {
    const { rows } = await client.query(
      `SELECT (SELECT string_agg(DISTINCT type || ' ' || keys, '; ') || ' ×' || count(*)
               FROM (SELECT type, (SELECT string_agg(k, ',' ORDER BY k) FROM jsonb_object_keys(data) k) AS keys
                     FROM change_events WHERE id > $1) x) AS events,
              (SELECT string_agg(action || ' ' || target_type || ' ' ||
                        (SELECT string_agg(k, ',' ORDER BY k) FROM jsonb_object_keys(summary) k), '; ')
               FROM audit_events WHERE id > $2) AS audit`,
      [e, a],
    );
    return `events: ${rows[0].events}; audit: ${rows[0].audit}`;
  }

  async function timed(scenario, side, variant, reps) {
    const state = await scenario.prepare(reps);
    if (side === 'service') await service.events(variant === 'on');
    if (variant === 'no-triggers') await client.query(`SET session_replication_role = replica`);
    const cpuBefore = await cpuNow(side);
    const started = performance.now();
    for (let i = 0; i < reps; i++) {
      sequence += 1;
      if (side === 'service') await scenario.service(variant, i, state, sequence);
      else await scenario.bare(variant === 'no-triggers' ? 'on' : variant, i, state, sequence);
    }
    const elapsed = (performance.now() - started) / reps;
    const cpuAfter = await cpuNow(side);
    if (variant === 'no-triggers') await client.query(`SET session_replication_role = origin`);
    if (side === 'service') await service.events(true);
    return { wall: elapsed, cpu: cpuSpent(cpuBefore, cpuAfter) / reps };
  }

  out(`\nload average at end: ${loadAverage()}`);
  out(
    '\n| write | service ms (CPU) | bare ms (CPU) | bare ÷ service: time (CPU) | event: service, time (CPU) | event: bare, time (CPU) | bare toggles: time (CPU) ms |',
  );
  out('|---|---|---|---|---|---|---|');
  const both = (t) => `${ms(t.wall)} (${ms(t.cpu)})`;
  const pct = (on, off) => `${Math.round(((on - off) / off) * 100)} %`;
  const share = (on, off) => `${pct(on.wall, off.wall)} (${pct(on.cpu, off.cpu)})`;
  for (const row of results)
    out(
      `| ${row.name} | ${both(row.service)} | ${both(row.bare)} | ` +
        `${(row.bare.wall / row.service.wall).toFixed(2)} (${(row.bare.cpu / row.service.cpu).toFixed(2)}) | ` +
        `${share(row.service, row.serviceOff)} | ${share(row.bare, row.bareOff)} | ` +
        `${Object.entries(row.toggles)
          .map(([toggle, value]) => `${toggle} ${both(value)}`)
          .join(', ')} |`,
    );
  await writeWritesResults(results);
}

/** Time targets of the two imports (docs/performance.md): under 2 s and under 3 s for 10 000 rows. */
const IMPORT_TARGETS_MS = { 'roster import': 2000, 'user import': 3000 };

/**
 * bench/results/writes.json (the medians) and bench/results/writes.svg: per write, its CPU without the change
 * event ÷ with it (at least 1 ÷ 1.2 when the event costs at most 20 %), and per import, its time target ÷ its
 * time (at least 1 when met). docs/images/benchmark-writes.svg is a copy of a recorded run's chart.
 */
async function writeWritesResults(results) {
  const rows = results.map((row) => ({
    route: `${row.name}: CPU without ÷ with event`,
    ratio: row.serviceOff.cpu / row.service.cpu,
    target: 1 / 1.2,
  }));
  for (const row of results) {
    const target = Object.entries(IMPORT_TARGETS_MS).find(([name]) => row.name.startsWith(name))?.[1];
    if (target)
      rows.push({
        route: `${row.name}: ${target / 1000} s ÷ time`,
        ratio: target / row.service.wall,
        target: 1,
      });
  }
  const chart = {
    title: "Writes: the change event's cost and the imports' time targets (service, medians)",
    marks: [
      [1 / 1.2, '0.83'],
      [1, '1.0'],
    ],
    legend:
      'green: the event costs at most 20 % of the write (≥ 0.83), or the import is within its target (≥ 1); red: not',
  };
  out('');
  await writeResults('writes', { results }, rows, chart, out);
}

await runWithCleanups(main, cleanups);
