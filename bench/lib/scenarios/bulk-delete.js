// DELETE /api/modules/bulk of 1 000 modules with their roles, assignments and files.
import { Buffer } from 'node:buffer';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import process from 'node:process';
import pg from 'pg';
import { log } from '../options.js';

const BULK_MODULES = 1000;
const BULK_ROUNDS = 3;

/**
 * `DELETE /api/modules/bulk` of 1 000 modules, each with 10 role rows, an assignment and a 1 KiB file in the
 * service's storage directory, made afresh for each round (set-based SQL, files written here). The answer
 * comes after the transaction committed and the files were removed, so its time is the whole delete.
 */
export async function bulkDeleteTiming(servers, databaseUrl, token) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const rounds = [];
  try {
    for (let round = 0; round < BULK_ROUNDS; round += 1) {
      await client.query('BEGIN');
      const { rows: modules } = await client.query(
        `INSERT INTO modules (code, year, description, credits)
         SELECT 'BLK' || lpad(i::text, 3, '0'), 2099, 'Bulk delete subject ' || i, 15
         FROM generate_series(0, $1 - 1) i
         RETURNING id::text AS id`,
        [BULK_MODULES],
      );
      const ids = modules.map((row) => row.id);
      await client.query(
        `INSERT INTO user_module_roles (user_id, module_id, role)
         SELECT u.id, m.id, 'Student'
         FROM unnest($1::bigint[]) m(id)
         CROSS JOIN LATERAL (SELECT id FROM users ORDER BY id OFFSET (m.id % 1000) LIMIT 10) u`,
        [ids],
      );
      const { rows: files } = await client.query(
        `WITH a AS (
           INSERT INTO assignments (module_id, name, type)
           SELECT m.id, 'Essay', 'coursework' FROM unnest($1::bigint[]) m(id)
           RETURNING id, module_id)
         INSERT INTO assignment_files (assignment_id, module_id, file_type, original_name, storage_key, size)
         SELECT a.id, a.module_id, 'text/plain', 'essay.txt',
                'modules/' || a.module_id || '/' || gen_random_uuid(), 1024
         FROM a
         RETURNING storage_key AS key`,
        [ids],
      );
      await client.query('COMMIT');
      const body = Buffer.alloc(1024, 'x');
      for (const { key } of files) {
        await mkdir(path.dirname(path.join(servers.storageDir, key)), { recursive: true });
        await writeFile(path.join(servers.storageDir, key), body);
      }
      const started = process.hrtime.bigint();
      const response = await globalThis.fetch(`${servers.service.url}/api/modules/bulk`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ module_ids: ids.map(Number) }),
      });
      const json = await response.json();
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (response.status !== 200 || json.data?.deleted !== BULK_MODULES)
        throw new Error(`bulk delete answered ${response.status}: ${JSON.stringify(json).slice(0, 300)}`);
      const { rows: left } = await client.query(
        `SELECT (SELECT count(*) FROM modules WHERE id = ANY($1::bigint[]))::int AS modules,
                (SELECT count(*) FROM user_module_roles WHERE module_id = ANY($1::bigint[]))::int AS roles,
                (SELECT count(*) FROM assignment_files WHERE module_id = ANY($1::bigint[]))::int AS files`,
        [ids],
      );
      const stillThere = await Promise.all(
        files.map(({ key }) =>
          readFile(path.join(servers.storageDir, key)).then(
            () => 1,
            () => 0,
          ),
        ),
      );
      const filesLeft = stillThere.reduce((a, b) => a + b, 0);
      if (left[0].modules + left[0].roles + left[0].files + filesLeft > 0)
        throw new Error(`bulk delete left ${JSON.stringify({ ...left[0], filesLeft })}`);
      rounds.push(Number(ms.toFixed(1)));
      log(
        `bulk delete of ${BULK_MODULES} modules (10 roles, 1 assignment, 1 file each): ${ms.toFixed(0)} ms`,
      );
    }
  } finally {
    await client.end();
  }
  const sorted = [...rounds].sort((a, b) => a - b);
  return {
    modules: BULK_MODULES,
    rolesPerModule: 10,
    rounds,
    medianMs: sorted[Math.floor(sorted.length / 2)],
  };
}
