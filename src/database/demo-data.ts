import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { type DataSource, type EntityManager } from 'typeorm';

/**
 * The users writer's two set-based writes the demo needs; UsersService has them (database/ imports no feature,
 * so the caller hands it in). Users are written only there (docs/architecture.md, "The users writer").
 */
export interface DemoUsersWriter {
  /** Inserts a user for each `(username, email)` row of the SELECT `generator`; how many were added. */
  insertGenerated(
    generator: string,
    params: readonly unknown[],
    passwordHash: string,
    manager: EntityManager,
  ): Promise<number>;
  /** Points a user without an avatar at `key`; whether it did. */
  setAvatarIfNone(id: string, key: string, contentType: string): Promise<boolean>;
}

/** The size and the extras of what {@link seedDemoData} generates. */
export interface DemoOptions {
  scale: number;
  /** Where the users are written: UsersService. */
  users: DemoUsersWriter;
  /** The one password of every generated user, hashed once by the caller (one argon2 run, not thousands). */
  passwordHash: string;
  /** Users at another scale than the modules (the benchmark's scale curve grows the modules alone). */
  usersScale?: number;
  /** False: users and modules only, no role rows. */
  withRoles?: boolean;
  /** Where avatars go (STORAGE_DIR); none are written when unset. */
  storageDir?: string;
  /** Called after each step with the fraction done and the step's name. */
  progress?: (done: number, step: string) => void;
}

export interface DemoResult {
  users: number;
  modules: number;
  roles: number;
  avatars: number;
  /** Rows this run inserted (0 on a second run). */
  inserted: { users: number; modules: number; roles: number };
  /**
   * The academic-year rollover to try (docs/api.md §13): the latest year, its modules, and how many of their codes
   * the next year already has (none until someone rolls them over).
   */
  rollover: { fromYear: number; toYear: number; modules: number; alreadyRolledOver: number };
}

export const DEMO_COMMON_WORD = 'Introduction';
export const DEMO_RARE_WORD = 'palaeography';
const DEPARTMENTS = [
  ['CSC', 'Computer Science'],
  ['MAT', 'Mathematics'],
  ['PHY', 'Physics'],
  ['CHE', 'Chemistry'],
  ['BIO', 'Biology'],
  ['ECO', 'Economics'],
  ['HIS', 'History'],
  ['LAW', 'Law'],
  ['MED', 'Medicine'],
  ['ENG', 'Engineering'],
  ['PSY', 'Psychology'],
  ['SOC', 'Sociology'],
  ['GEO', 'Geography'],
  ['ART', 'Fine Art'],
  ['MUS', 'Music'],
  ['PHI', 'Philosophy'],
  ['LIN', 'Linguistics'],
  ['STA', 'Statistics'],
  ['EEE', 'Electrical Engineering'],
  ['MEC', 'Mechanical Engineering'],
];
const LEVELS = [`${DEMO_COMMON_WORD} to`, 'Foundations of', 'Topics in', 'Advanced', 'Research Methods in'];
const TOPICS = [
  'algebra',
  'analysis',
  'modelling',
  'ethics',
  'history',
  'theory',
  'practice',
  'design',
  'systems',
  'data',
  'computation',
  'writing',
  'fieldwork',
  'laboratory skills',
  'policy',
  'networks',
  'optimisation',
  'probability',
  'structures',
  'communication',
  'law and regulation',
  'security',
  'materials',
  'signals',
  'perception',
];
const FIRST_NAMES = [
  'anna',
  'ben',
  'chloe',
  'david',
  'emma',
  'farid',
  'grace',
  'hugo',
  'ines',
  'jack',
  'kofi',
  'lena',
  'mei',
  'noah',
  'olga',
  'priya',
];
const LAST_NAMES = [
  'smith',
  'jones',
  'patel',
  'nguyen',
  'garcia',
  'muller',
  'rossi',
  'kim',
  'okafor',
  'silva',
  'novak',
  'haddad',
];
const AVATARS_MAX = 100;

/** Sizes at a scale: exported so the benchmark can name the measured records. */
export function demoSizes(scale: number, usersScale = scale) {
  const users = Math.round(1000 * usersScale);
  const modules = Math.round(2000 * scale);
  const lecturers = Math.max(20, Math.round(users * 0.05));
  const assistants = Math.max(1, Math.round(users * 0.04));
  const tutors = Math.max(1, Math.round(users * 0.06));
  const students = users - lecturers - assistants - tutors;
  // 900 codes (100-999) per department and year: more years when a scale needs more modules.
  const years = Math.max(8, Math.ceil(modules / (DEPARTMENTS.length * 900)));
  return {
    users,
    modules,
    lecturers,
    assistants,
    tutors,
    students,
    years,
    cohort: Math.round(students * 0.068),
    seminar: 8,
  };
}

/** The person behind user number n (1-based): kind, index within the kind, username. */
const PEOPLE_SQL = `
  SELECT n,
         CASE WHEN n <= $2 THEN 'Lecturer' WHEN n <= $2 + $3 THEN 'AssistantLecturer'
              WHEN n <= $2 + $3 + $4 THEN 'Tutor' ELSE 'Student' END AS kind,
         CASE WHEN n <= $2 THEN n - 1 WHEN n <= $2 + $3 THEN n - $2 - 1
              WHEN n <= $2 + $3 + $4 THEN n - $2 - $3 - 1 ELSE n - $2 - $3 - $4 - 1 END AS k,
         format('%s.%s%s', ($5::text[])[1 + n % cardinality($5::text[])],
                ($6::text[])[1 + (n / cardinality($5::text[])) % cardinality($6::text[])], n) AS username
  FROM generate_series(1, $1::int) n`;

/** Module number g (0-based): department, year, code, description (the same for a code in every year but for
 * the rare word), credits. */
const MODULES_SQL = `
  SELECT g, g % 20 AS dept, $3::int - (g / 20) % $2::int AS year,
         ($4::text[])[1 + g % 20] || (100 + g / (20 * $2::int))::text AS code,
         CASE WHEN (g / 20) % 23 = 22 THEN NULL
              ELSE format('%s %s: %s%s', ($6::text[])[1 + (g / (20 * $2::int) + g % 20) % 5], ($5::text[])[1 + g % 20],
                          ($7::text[])[1 + (g / (20 * $2::int) * 7 + g % 20 * 3) % 25],
                          CASE WHEN g % 997 = 500 THEN ', with ${DEMO_RARE_WORD}' ELSE '' END) END AS description,
         (ARRAY[5, 10, 15, 20, 30])[1 + (g / 7) % 5] AS credits
  FROM generate_series(0, $1::int - 1) g`;

/**
 * A realistic university, generated by set-based SQL (`generate_series`, joins on the unique keys): the
 * demo data of `npm run seed:demo` at scale 1, and the benchmark's dataset at scale 50. Deterministic and
 * idempotent: every row is keyed by its natural key (username, code + year, user + module) and inserted with
 * `ON CONFLICT DO NOTHING`, so a second run adds nothing.
 *
 * At scale s: 1 000·s users (5 % lecturers, 4 % assistant lecturers, 6 % tutors, 85 % students),
 * 2 000·s modules (20 departments, codes `CSC100`…, over at least 8 years ending this year), about 10 000·s
 * role rows: each module has a lecturer from its department, every second one an assistant lecturer, two in
 * three a tutor, and each student takes 3 to 10 modules (one in 500 takes 20). The first module (an
 * introductory course of the latest year) has a big cohort (6.8 % of the students), the second a seminar of
 * about a dozen people. "Introduction" is in about 20 % of the descriptions, "palaeography" in about 0.1 %.
 * The latest year's modules have no namesakes in the next year, so the academic-year rollover has work to do.
 */
export async function seedDemoData(dataSource: DataSource, options: DemoOptions): Promise<DemoResult> {
  const size = demoSizes(options.scale, options.usersScale);
  const progress = options.progress ?? (() => undefined);
  const latestYear = new Date().getUTCFullYear();
  const peopleParams = [size.users, size.lecturers, size.assistants, size.tutors, FIRST_NAMES, LAST_NAMES];
  const moduleParams = [
    size.modules,
    size.years,
    latestYear,
    DEPARTMENTS.map(([code]) => code),
    DEPARTMENTS.map(([, name]) => name),
    LEVELS,
    TOPICS,
  ];
  const inserted = await dataSource.transaction(async (manager) => {
    // Trigram indexes take new rows into their pending list and merge them once, rather than row by row.
    await manager.query(`SET LOCAL gin_pending_list_limit = '64MB'`);
    await manager.query(`SET LOCAL synchronous_commit = off`);
    // The service's pool cancels statements after 30 s; a million modules take longer on a busy machine.
    await manager.query(`SET LOCAL statement_timeout = 0`);
    // Role rows are built by joining the parent tables in this transaction, so their foreign keys hold by
    // construction; a superuser skips the per-row checks (a trigger each, most of the time at scale 50).
    // Only around the role inserts. That skips user_module_roles' own triggers too (migration MemberListsAtScale),
    // so the inserts write each row's `username_key` themselves and the modules' `module_member_counts` are
    // counted afresh after them (with the triggers on, the triggers write the same).
    const [{ superuser }] = await manager.query<{ superuser: boolean }[]>(
      `SELECT rolsuper AS superuser FROM pg_roles WHERE rolname = current_user`,
    );
    const skipForeignKeyChecks = async (skip: boolean) => {
      if (superuser)
        await manager.query(`SET LOCAL session_replication_role = ${skip ? 'replica' : 'origin'}`);
    };
    progress(0, 'users');
    const users = await options.users.insertGenerated(
      `SELECT p.username, p.username || '@demo.example.edu' FROM (${PEOPLE_SQL}) p`,
      peopleParams,
      options.passwordHash,
      manager,
    );
    progress(0.2, 'modules');
    const modules = await countInserted(
      manager,
      `INSERT INTO modules (code, year, description, credits)
       SELECT code, year, description, credits FROM (${MODULES_SQL}) m
       ON CONFLICT DO NOTHING`,
      moduleParams,
    );
    if (options.withRoles === false) return { users, modules, roles: 0 };
    progress(0.35, 'people and modules by number');
    // Number → id maps for the role statements, through the unique indexes.
    await manager.query(
      `CREATE TEMP TABLE demo_people ON COMMIT DROP AS
       SELECT p.n, p.kind, p.k, u.id, lower(u.username) AS username_key
       FROM (${PEOPLE_SQL}) p JOIN users u ON lower(u.username) = lower(p.username)`,
      peopleParams,
    );
    await manager.query(
      `CREATE TEMP TABLE demo_modules ON COMMIT DROP AS
       SELECT m.g, m.dept, u.id FROM (${MODULES_SQL}) m JOIN modules u ON u.code = m.code AND u.year = m.year`,
      moduleParams,
    );
    await manager.query(`CREATE INDEX ON demo_people (kind, k)`);
    await manager.query(`CREATE INDEX ON demo_modules (g)`);
    await manager.query(`ANALYZE demo_people`);
    await manager.query(`ANALYZE demo_modules`);
    await skipForeignKeyChecks(true);
    progress(0.45, 'staff roles');
    // A lecturer of the module's department; an assistant lecturer on even modules; a tutor on two in three.
    const staff = await countInserted(
      manager,
      `INSERT INTO user_module_roles (user_id, module_id, role, username_key)
       SELECT p.id, m.id, s.kind::module_role, p.username_key
       FROM demo_modules m
       CROSS JOIN LATERAL (VALUES
         ('Lecturer', m.dept + 20 * ((m.g / 20 * 7) % ($1::int / 20))),
         ('AssistantLecturer', CASE WHEN m.g % 2 = 0 THEN (m.g / 2 * 7) % $2::int END),
         ('Tutor', CASE WHEN m.g % 3 <> 0 THEN (m.g * 11) % $3::int END)) s(kind, k)
       JOIN demo_people p ON p.kind = s.kind AND p.k = s.k
       ON CONFLICT DO NOTHING`,
      [size.lecturers, size.assistants, size.tutors],
    );
    progress(0.6, 'student roles');
    // Student k takes 3 + k % 8 modules spread over the table (one in 500 takes 20); distinct per student
    // because the stride is a prime that does not divide the module count.
    const students = await countInserted(
      manager,
      `INSERT INTO user_module_roles (user_id, module_id, role, username_key)
       SELECT p.id, m.id, 'Student', p.username_key
       FROM demo_people p
       CROSS JOIN LATERAL generate_series(0, CASE WHEN p.k % 500 = 0 THEN 19 ELSE 2 + p.k % 8 END) j
       JOIN demo_modules m ON m.g = (p.k::bigint * 7919 + j * 104729) % $1::int
       WHERE p.kind = 'Student'
       ON CONFLICT DO NOTHING`,
      [size.modules],
    );
    progress(0.85, 'cohort and seminar');
    // The big introductory cohort on module 0 and a seminar on module 1.
    const extra = await countInserted(
      manager,
      `INSERT INTO user_module_roles (user_id, module_id, role, username_key)
       SELECT p.id, m.id, 'Student', p.username_key
       FROM demo_people p
       JOIN demo_modules m ON m.g = CASE WHEN p.k < $1::int THEN 0 ELSE 1 END
       WHERE p.kind = 'Student' AND p.k < $1::int + $2::int
       ON CONFLICT DO NOTHING`,
      [size.cohort, size.seminar],
    );
    await skipForeignKeyChecks(false);
    await manager.query(
      `INSERT INTO module_member_counts AS c (module_id, role, members)
       SELECT r.module_id, r.role, count(*) FROM user_module_roles r
       WHERE r.module_id IN (SELECT id FROM demo_modules)
       GROUP BY r.module_id, r.role ORDER BY r.module_id, r.role
       ON CONFLICT (module_id, role) DO UPDATE SET members = EXCLUDED.members`,
    );
    return { users, modules, roles: staff + students + extra };
  });
  progress(0.9, 'avatars');
  const avatars = options.storageDir ? await writeAvatars(dataSource, options.users, options.storageDir) : 0;
  progress(0.95, 'statistics');
  await dataSource.query(`SET statement_timeout = 0`);
  await dataSource.query(`VACUUM ANALYZE users, modules, user_module_roles`);
  const [counts] = await dataSource.query<{ users: number; modules: number; roles: number }[]>(
    `SELECT (SELECT count(*) FROM users)::int AS users, (SELECT count(*) FROM modules)::int AS modules,
            (SELECT count(*) FROM user_module_roles)::int AS roles`,
  );
  const [rollover] = await dataSource.query<{ modules: number; alreadyRolledOver: number }[]>(
    `SELECT count(*)::int AS modules,
            count(*) FILTER (WHERE EXISTS (SELECT 1 FROM modules n WHERE n.code = m.code AND n.year = $1 + 1))::int
              AS "alreadyRolledOver"
     FROM modules m WHERE m.year = $1`,
    [latestYear],
  );
  progress(1, 'done');
  return {
    ...counts,
    avatars,
    inserted,
    rollover: { fromYear: latestYear, toYear: latestYear + 1, ...rollover },
  };
}

/** Every tenth demo user (up to {@link AVATARS_MAX}) without an avatar gets a small PNG of their own colour. */
async function writeAvatars(
  dataSource: DataSource,
  writer: DemoUsersWriter,
  storageDir: string,
): Promise<number> {
  const users = await dataSource.query<{ id: string }[]>(
    `SELECT id::text AS id FROM users
     WHERE email LIKE '%@demo.example.edu' AND avatar_key IS NULL AND id % 10 = 0
     ORDER BY id LIMIT $1`,
    [AVATARS_MAX],
  );
  for (const { id } of users) {
    const key = `avatars/${id}/${randomUUID()}`;
    await mkdir(path.join(storageDir, 'avatars', id), { recursive: true });
    await writeFile(path.join(storageDir, key), solidPng(Number(id)), { mode: 0o640 });
    await writer.setAvatarIfNone(id, key, 'image/png');
  }
  return users.length;
}

/** Runs an INSERT and returns how many rows it added. */
async function countInserted(manager: EntityManager, insert: string, params: unknown[]): Promise<number> {
  const [{ n }] = await manager.query<{ n: number }[]>(
    `WITH added AS (${insert} RETURNING 1) SELECT count(*)::int AS n FROM added`,
    params,
  );
  return n;
}

/** A 32×32 PNG in one colour picked from `seed`. */
export function solidPng(seed: number): Buffer {
  const side = 32;
  const [r, g, b] = [(seed * 97) % 200, (seed * 57) % 200, (seed * 31) % 200].map((c) => c + 40);
  const row = Buffer.alloc(1 + side * 3);
  for (let x = 0; x < side; x++) row.set([r, g, b], 1 + x * 3);
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(Array.from({ length: side }, () => row)))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
