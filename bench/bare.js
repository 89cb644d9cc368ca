// The benchmark's reference point (see bench/README.md): the read routes of the service written as plainly as
// the machine allows. Plain Fastify and `pg`, hand-written SQL as named prepared statements, the JSON of every
// record built by PostgreSQL (row_to_json, compact), the envelope concatenated around it. Same bodies byte for
// byte and the same headers as the service (run.js proves it before timing). Authentication is the service's:
// an HS256 token verified with node:crypto, then the user re-check (exists, admin flag, password-change time)
// cached for 5 s per process, as the service does.
//
// Lean on purpose: no logger, no hooks, no per-request object spreads; the headers are one precomputed flat
// list written with the body in a single writeHead/end (the request is hijacked from Fastify's reply path),
// each list shape's SQL text and statement name are built once, not on every request.
//
// Forked by run.js with DATABASE_URL, JWT_SECRET and DB_POOL_SIZE; sends `{ url }` once it listens.
import { Buffer } from 'node:buffer';
import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import process from 'node:process';
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DB_POOL_SIZE ?? 10),
  application_name: 'bench-bare',
});
const secret = Buffer.from(process.env.JWT_SECRET ?? '', 'utf8');

/** The service's headers (helmet with its policy, request id, JSON type); Date and Connection come from Node. */
const HEADER_OBJECT = {
  'content-security-policy': "default-src 'none';base-uri 'none';form-action 'none';frame-ancestors 'none'",
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'no-referrer',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'DENY',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
  'content-type': 'application/json; charset=utf-8',
};

/** The same headers as one flat [name, value, …] list, built once. */
const HEADERS = Object.entries(HEADER_OBJECT).flat();

function send(reply, status, body, extra = []) {
  reply.hijack();
  reply.raw.writeHead(status, [
    ...HEADERS,
    ...extra,
    'x-request-id',
    randomUUID(),
    'content-length',
    String(Buffer.byteLength(body)),
  ]);
  reply.raw.end(body);
  return reply;
}

// docs/api.md §17, lean: the paging links of a list, and a single read's strong ETag (a hash of its data's text)
// with a 304 when If-None-Match names it.
const BASE_URL = process.env.PUBLIC_BASE_URL ?? 'http://127.0.0.1';

function pagingLinks(url, page, perPage, total) {
  const at = url.indexOf('?');
  const route = at === -1 ? url : url.slice(0, at);
  const kept = (at === -1 ? [] : url.slice(at + 1).split('&')).filter((part) => {
    const name = decodeURIComponent(part.split('=')[0].replaceAll('+', ' '));
    return part !== '' && name !== 'page' && name !== 'per_page';
  });
  const href = (n) => `<${BASE_URL}${route}?${[...kept, `page=${n}`, `per_page=${perPage}`].join('&')}>`;
  const last = Math.max(1, Math.ceil(total / perPage));
  const links = [`${href(1)}; rel="first"`];
  if (page > 1) links.push(`${href(page - 1)}; rel="prev"`);
  if (page < last) links.push(`${href(page + 1)}; rel="next"`);
  links.push(`${href(last)}; rel="last"`);
  return links.join(', ');
}

function okRead(request, reply, data, message) {
  const etag = `"${createHash('sha256').update(data).digest('base64url').slice(0, 22)}"`;
  const validators = ['etag', etag, 'cache-control', 'private, no-cache'];
  const given = request.headers['if-none-match'];
  if (given !== undefined && given.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) {
    reply.hijack();
    reply.raw.writeHead(304, [...HEADERS.slice(0, -2), ...validators, 'x-request-id', randomUUID()]);
    reply.raw.end();
    return reply;
  }
  return send(reply, 200, `{"success":true,"data":${data},"message":"${message}"}`, validators);
}

const fail = (reply, status, message) =>
  send(reply, status, `{"success":false,"data":null,"message":${JSON.stringify(message)}}`);
const ok = (reply, data, message) =>
  send(reply, 200, `{"success":true,"data":${data},"message":"${message}"}`);

// ---------------------------------------------------------------------------------------------------------
// Authentication: HS256 verification and the cached user re-check.

function verify(header) {
  if (typeof header !== 'string' || !header.startsWith('Bearer ')) return undefined;
  const token = header.slice(7);
  const [head, body, signature] = token.split('.');
  if (signature === undefined) return undefined;
  const expected = createHmac('sha256', secret).update(`${head}.${body}`).digest();
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  let claims;
  try {
    claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Number.isSafeInteger(claims.sub) || typeof claims.iat !== 'number') return undefined;
  if (typeof claims.exp === 'number' && claims.exp * 1000 <= Date.now()) return undefined;
  return claims;
}

const users = new Map();
const USER_SQL = {
  name: 'user',
  text: `SELECT admin, floor(extract(epoch FROM password_changed_at))::int8 AS changed FROM users WHERE id = $1`,
};

async function viewer(request, reply) {
  const claims = verify(request.headers.authorization);
  if (!claims) {
    fail(reply, 401, request.headers.authorization ? 'Invalid or expired token' : 'Authentication required');
    return undefined;
  }
  const now = Date.now();
  let cached = users.get(claims.sub);
  if (!cached || now - cached.at >= 5000) {
    const { rows } = await pool.query({ name: USER_SQL.name, text: USER_SQL.text, values: [claims.sub] });
    cached = { at: now, user: rows[0] };
    users.set(claims.sub, cached);
  }
  const user = cached.user;
  if (!user || claims.iat < Number(user.changed)) {
    fail(reply, 401, 'Invalid or expired token');
    return undefined;
  }
  return { id: claims.sub, admin: claims.admin === true && user.admin };
}

// ---------------------------------------------------------------------------------------------------------
// SQL: records as compact JSON text from PostgreSQL.

const ts = (column) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const MODULE_JSON = `(SELECT row_to_json(x)::text FROM (SELECT m.id, m.code, m.year, m.description, m.credits,
  ${ts('m.created_at')} AS created_at, ${ts('m.updated_at')} AS updated_at) x)`;
const USER_JSON = `(SELECT row_to_json(x)::text FROM (SELECT u.id, u.username, u.email, u.given_name,
  u.family_name, u.display_name, u.active, u.admin,
  ${ts('u.created_at')} AS created_at, ${ts('u.updated_at')} AS updated_at,
  CASE WHEN u.avatar_key <> '' THEN '/api/users/' || u.id || '/avatar' END AS avatar_url) x)`;

// The membership lifecycle (docs/api.md §15), written out as plain predicates on the role row `r` (the columns of
// the covering index ix_user_module_roles_member): effective `active` grants rights and is what /me lists by
// default; effective `active` or `completed` lets a member read the module and see it in their list.
const ACTIVE = (r) =>
  `${r}.status = 'active' AND (${r}.starts_at IS NULL OR ${r}.starts_at <= now()) AND (${r}.ends_at IS NULL OR ${r}.ends_at > now())`;
const READS = (r) =>
  `${r}.status <> 'inactive' AND (${r}.status = 'completed' OR ${r}.ends_at <= now() OR ${r}.starts_at IS NULL OR ${r}.starts_at <= now())`;

const SORT = {
  code: 'm.code',
  created_at: 'm.created_at',
  year: 'm.year',
  credits: 'm.credits',
  description: 'm.description',
};

/** Statement (name and SQL text) by list shape: each shape is built once and planned once per connection. */
const statements = new Map();
function listStatement(shape) {
  const key = `${shape.member ? 'm' : ''}${shape.query ? 'q' : ''}${shape.key}`;
  let statement = statements.get(key);
  if (statement === undefined)
    statements.set(key, (statement = { name: `s${statements.size}`, text: listSql(shape) }));
  return statement;
}

function listSql({ member, query, sort }) {
  const where = [];
  if (member)
    where.push(
      `EXISTS (SELECT 1 FROM user_module_roles r WHERE r.user_id = $3 AND r.module_id = m.id AND ${READS('r')})`,
    );
  // The text filter as lower(col) LIKE lower(pattern), on the trigram indexes of lower(code) and lower(description).
  const p = `lower($${member ? 4 : 3})`;
  if (query) where.push(`(lower(m.code) LIKE ${p} OR lower(m.description) LIKE ${p})`);
  const condition = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
  const order = [
    ...sort.map(({ column, descending }) => `${column} ${descending ? 'DESC' : 'ASC'} NULLS LAST`),
    'm.id ASC',
  ];
  // An admin search in the default order: one statement, the total counted over the matches as the page is cut
  // (count(*) OVER ()); measured faster than count-then-page when the matches are few (bench/search-plans.js). With
  // a sort, the page walks the sort's index and stops, while the window would sort every match: count-then-page.
  if (query && !member && sort.length === 0)
    return `SELECT coalesce(max(total), (SELECT count(*) FROM modules m ${condition})) AS total,
      coalesce(string_agg(${MODULE_JSON}, ','), '') AS items
    FROM (SELECT m.*, count(*) OVER () AS total FROM modules m ${condition}
          ORDER BY ${order.join(', ')} LIMIT $1 OFFSET $2) m`;
  return `SELECT (SELECT count(*) FROM modules m ${condition}) AS total,
    (SELECT coalesce(string_agg(p.j, ','), '') FROM (
       SELECT ${MODULE_JSON} AS j FROM modules m ${condition} ORDER BY ${order.join(', ')} LIMIT $1 OFFSET $2) p) AS items`;
}

const int32 = (value, fallback) => {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !/^-?\d+$/.test(value) || Math.abs(Number(value)) > 2_147_483_647)
    return undefined;
  return Number(value);
};
const likePattern = (text) => `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;

// ---------------------------------------------------------------------------------------------------------
// Routes.

const app = Fastify({ logger: false });

app.get('/api/health', (request, reply) => ok(reply, '"OK"', 'Health check passed'));

app.get('/api/modules', async (request, reply) => {
  const user = await viewer(request, reply);
  if (!user) return reply;
  const q = request.query;
  const page = int32(q.page, 1);
  const perPage = int32(q.per_page, 20);
  if (page === undefined || perPage === undefined) return fail(reply, 400, 'page must be an integer');
  const sort = [];
  let sortKey = '';
  for (const entry of typeof q.sort === 'string' ? q.sort.split(',') : []) {
    const key = entry.trim();
    if (key === '') continue;
    const column = SORT[key.replace(/^-/, '')];
    if (!column) return fail(reply, 400, 'Invalid field used for sorting');
    sort.push({ column, descending: key.startsWith('-') });
    sortKey += `,${key}`;
  }
  const p = Math.max(page, 1);
  const size = Math.min(Math.max(perPage, 1), 100);
  const query = typeof q.query === 'string' && q.query !== '' ? q.query : undefined;
  const values = [size, (p - 1) * size];
  if (!user.admin) values.push(user.id);
  if (query) values.push(likePattern(query));
  const { name, text } = listStatement({ member: !user.admin, query, sort, key: sortKey });
  const { rows } = await pool.query({ name, text, values });
  return send(
    reply,
    200,
    `{"success":true,"data":{"modules":[${rows[0].items}],"page":${p},"per_page":${size},"total":${rows[0].total}},"message":"Modules retrieved successfully"}`,
    ['link', pagingLinks(request.url, p, size, Number(rows[0].total))],
  );
});

const MINE_SQL = `SELECT
  coalesce(string_agg(j, ',' ORDER BY year DESC, code, id) FILTER (WHERE role = 'Student'), '') AS s,
  coalesce(string_agg(j, ',' ORDER BY year DESC, code, id) FILTER (WHERE role = 'Tutor'), '') AS t,
  coalesce(string_agg(j, ',' ORDER BY year DESC, code, id) FILTER (WHERE role = 'Lecturer'), '') AS l,
  coalesce(string_agg(j, ',' ORDER BY year DESC, code, id) FILTER (WHERE role = 'AssistantLecturer'), '') AS a
  FROM (SELECT r.role, m.year, m.code, m.id, ${MODULE_JSON} AS j
        FROM user_module_roles r JOIN modules m ON m.id = r.module_id WHERE r.user_id = $1 AND ${ACTIVE('r')}) mine`;

app.get('/api/modules/me', async (request, reply) => {
  const user = await viewer(request, reply);
  if (!user) return reply;
  const {
    rows: [g],
  } = await pool.query({ name: 'mine', text: MINE_SQL, values: [user.id] });
  return ok(
    reply,
    `{"as_student":[${g.s}],"as_tutor":[${g.t}],"as_lecturer":[${g.l}],"as_assistant_lecturer":[${g.a}]}`,
    'My module details retrieved successfully',
  );
});

const READ_SQL = `SELECT ${MODULE_JSON} AS module,
    (SELECT r.role FROM user_module_roles r WHERE r.module_id = m.id AND r.user_id = $2 AND ${READS('r')}) AS caller_role,
    people.*
  FROM modules m
  CROSS JOIN LATERAL (SELECT
    coalesce(string_agg(j, ',' ORDER BY lu, id) FILTER (WHERE role = 'Lecturer'), '') AS l,
    coalesce(string_agg(j, ',' ORDER BY lu, id) FILTER (WHERE role = 'AssistantLecturer'), '') AS a,
    coalesce(string_agg(j, ',' ORDER BY lu, id) FILTER (WHERE role = 'Tutor'), '') AS t,
    coalesce(string_agg(j, ',' ORDER BY lu, id) FILTER (WHERE role = 'Student'), '') AS s
    FROM (SELECT r.role, lower(u.username) AS lu, u.id, ${USER_JSON} AS j
          FROM user_module_roles r JOIN users u ON u.id = r.user_id WHERE r.module_id = m.id AND ${ACTIVE('r')}) people) people
  WHERE m.id = $1`;

app.get('/api/modules/:id', async (request, reply) => {
  const user = await viewer(request, reply);
  if (!user) return reply;
  const id = request.params.id;
  if (!/^[1-9][0-9]{0,17}$/.test(id)) return fail(reply, 400, 'Invalid module ID');
  const {
    rows: [row],
  } = await pool.query({ name: 'read', text: READ_SQL, values: [id, user.id] });
  if (!row) return fail(reply, 404, 'Module not found');
  if (!user.admin && row.caller_role === null)
    return fail(reply, 403, 'You do not have permission to perform this action');
  return okRead(
    request,
    reply,
    `${row.module.slice(0, -1)},"lecturers":[${row.l}],"assistant_lecturers":[${row.a}],"tutors":[${row.t}],"students":[${row.s}]}`,
    'Module retrieved successfully',
  );
});

// The user list (admin only), lean: the total counted on every request, the text filter on the service's trigram
// index over the lower-cased searched text (migration UserStats), each field then matched on its own.
const USER_TEXT = `lower(u.username || ' ' || u.email || ' ' || coalesce(u.given_name, '') || ' ' ||
        coalesce(u.family_name, '') || ' ' || coalesce(u.display_name, '') || ' ' || coalesce(u.external_id, ''))`;
const USER_QUERY = `${USER_TEXT} LIKE lower($3) AND (lower(u.username) LIKE lower($3) OR u.email LIKE lower($3)
  OR lower(u.given_name) LIKE lower($3) OR lower(u.family_name) LIKE lower($3) OR lower(u.display_name) LIKE lower($3)
  OR lower(u.external_id) LIKE lower($3))`;
const usersSql = (where) => `SELECT (SELECT count(*) FROM users u ${where}) AS total,
    (SELECT coalesce(string_agg(p.j, ','), '') FROM (
       SELECT ${USER_JSON} AS j FROM users u ${where} ORDER BY u.id LIMIT $1 OFFSET $2) p) AS items`;
const USERS_SQL = usersSql('');
const USERS_QUERY_SQL = usersSql(`WHERE ${USER_QUERY}`);

app.get('/api/users', async (request, reply) => {
  const user = await viewer(request, reply);
  if (!user) return reply;
  if (!user.admin) return fail(reply, 403, 'You do not have permission to perform this action');
  const q = request.query;
  const page = Math.max(int32(q.page, 1) ?? 1, 1);
  const size = Math.min(Math.max(int32(q.per_page, 20) ?? 20, 1), 100);
  const query = typeof q.query === 'string' && q.query !== '' ? q.query : undefined;
  const values = [size, (page - 1) * size];
  if (query) values.push(likePattern(query));
  // A text pattern unnamed, planned for its own pattern (a generic plan cannot tell a common name from a rare one).
  const { rows } = await pool.query(
    query ? { text: USERS_QUERY_SQL, values } : { name: 'users', text: USERS_SQL, values },
  );
  return send(
    reply,
    200,
    `{"success":true,"data":{"users":[${rows[0].items}],"page":${page},"per_page":${size},"total":${rows[0].total}},"message":"Users retrieved successfully"}`,
    ['link', pagingLinks(request.url, page, size, Number(rows[0].total))],
  );
});

await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.send?.({ url: `http://127.0.0.1:${address.port}` });

async function stop(code) {
  await app.close();
  await pool.end();
  process.exit(code);
}
process.on('message', (message) => {
  if (message === 'stop') void stop(0);
});
process.on('disconnect', () => void stop(1));
