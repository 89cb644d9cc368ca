// Part of test/modules-people.e2e-spec.ts: roster import and export.
import http from 'node:http';
import { type UsedTestApp } from '../../support/app.js';
import { auditEvents, csvLines, postCsv } from '../../support/csv.js';
import { freshAdmin } from '../../support/fresh-admin.js';
import {
  assignRole,
  failure,
  INVALID_ROLE,
  makeModule,
  makeUser,
  ModuleRole,
  type ModuleRow,
  PERMISSION_DENIED,
  tokenFor,
  type UserRow,
} from '../../support/modules-fixtures.js';

export function rosterTests({ app, api }: UsedTestApp): void {
  let admin: UserRow;
  let token: string;
  let mod: ModuleRow;
  let ann: UserRow;
  let bob: UserRow;
  let cid: UserRow;

  beforeEach(async () => {
    ({ admin, token } = await freshAdmin(app, { username: 'root' }));
    mod = await makeModule(app.dataSource);
    ann = await makeUser(app.dataSource, { username: 'ann', email: 'ann@example.edu' });
    bob = await makeUser(app.dataSource, { username: 'bob', email: 'bob@example.edu' });
    cid = await makeUser(app.dataSource, { username: 'cid', email: 'cid@example.edu' });
  });

  const importRoster = (text: string, query = '', as = token) =>
    postCsv(api, `/api/modules/${mod.id}/roster/import${query}`, as, text);
  const roster = async () =>
    (
      await app.dataSource.query<{ username: string; role: string }[]>(
        `SELECT u.username, r.role FROM user_module_roles r JOIN users u ON u.id = r.user_id
         WHERE r.module_id = $1 ORDER BY u.username`,
        [mod.id],
      )
    ).map((row) => `${row.username}:${row.role}`);

  it('assigns, changes and leaves roles by username or email, with one audit event', async () => {
    await assignRole(app.dataSource, bob.id, mod.id, ModuleRole.Student);
    await assignRole(app.dataSource, cid.id, mod.id, ModuleRole.Tutor);
    const res = await importRoster('user,role\nANN,student\nbob@example.edu,assistant_lecturer\ncid,TUTOR\n');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      message: 'Roster imported',
      data: {
        rows: [
          { line: 2, action: 'assign', user: 'ANN', user_id: Number(ann.id), role: 'Student' },
          {
            line: 3,
            action: 'change',
            user: 'bob@example.edu',
            user_id: Number(bob.id),
            role: 'AssistantLecturer',
          },
          { line: 4, action: 'unchanged', user: 'cid', user_id: Number(cid.id), role: 'Tutor' },
        ],
        assigned: 1,
        changed: 1,
        unchanged: 1,
        removed: [],
        errors: 0,
        exceeds_limit: false,
        dry_run: false,
      },
    });
    expect(await roster()).toEqual(['ann:Student', 'bob:AssistantLecturer', 'cid:Tutor']);
    expect(await auditEvents(app.dataSource, 'roster.import')).toEqual([
      expect.objectContaining({
        actor_id: Number(admin.id),
        target_type: 'module',
        target_ids: [String(mod.id)],
        summary: { mode: 'add', assigned: 1, changed: 1, unchanged: 1, removed: 0 },
      }),
    ]);

    const again = await importRoster(
      'user,role\nANN,student\nbob@example.edu,assistant_lecturer\ncid,TUTOR\n',
    );
    expect(again.body.data).toMatchObject({ assigned: 0, changed: 0, unchanged: 3 });
    expect(await auditEvents(app.dataSource, 'roster.import')).toHaveLength(1);
  });

  it('answers a dry run with 200 "Roster checked" and changes nothing', async () => {
    const res = await importRoster('user,role\nann,Student\n', '?dry_run=true');
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Roster checked');
    expect(res.body.data).toMatchObject({ assigned: 1, dry_run: true });
    expect(await roster()).toEqual([]);
    expect(await auditEvents(app.dataSource)).toEqual([]);
  });

  it('answers 422 with every row when any row is wrong, and changes nothing', async () => {
    const res = await importRoster(
      'user,role\nann,Student\nnobody,Student\nbob,Boss\nANN@example.edu,Tutor\n',
    );
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('Import has errors; nothing was changed');
    expect(res.body.data.rows).toEqual([
      { line: 2, action: 'assign', user: 'ann', user_id: Number(ann.id), role: 'Student' },
      {
        line: 3,
        action: 'error',
        user: 'nobody',
        user_id: null,
        role: 'Student',
        errors: ['Unknown user: nobody'],
      },
      {
        line: 4,
        action: 'error',
        user: 'bob',
        user_id: Number(bob.id),
        role: 'Boss',
        errors: [INVALID_ROLE],
      },
      {
        line: 5,
        action: 'error',
        user: 'ANN@example.edu',
        user_id: Number(ann.id),
        role: 'Tutor',
        errors: ['Duplicate user in file'],
      },
    ]);
    expect(res.body.data.errors).toBe(3);
    expect(await roster()).toEqual([]);
    expect(await auditEvents(app.dataSource)).toEqual([]);
  });

  it('lets a Lecturer import other roles but not name or change Lecturers', async () => {
    const lecturer = await makeUser(app.dataSource, { username: 'lect' });
    await assignRole(app.dataSource, lecturer.id, mod.id, ModuleRole.Lecturer);
    await assignRole(app.dataSource, bob.id, mod.id, ModuleRole.Lecturer);
    const as = tokenFor(lecturer);
    const wrong = await importRoster('user,role\nann,Lecturer\nbob,Student\ncid,Tutor\n', '', as);
    expect(wrong.status).toBe(422);
    expect(wrong.body.data.rows.map((row: { errors?: string[] }) => row.errors)).toEqual([
      [PERMISSION_DENIED],
      [PERMISSION_DENIED],
      undefined,
    ]);
    const ok = await importRoster('user,role\nann,Student\ncid,Tutor\n', '', as);
    expect(ok.status).toBe(200);
    expect(await roster()).toEqual(['ann:Student', 'bob:Lecturer', 'cid:Tutor', 'lect:Lecturer']);
  });

  it('refuses callers who may not change personnel (403) and unknown modules (404)', async () => {
    const assistant = await makeUser(app.dataSource);
    await assignRole(app.dataSource, assistant.id, mod.id, ModuleRole.AssistantLecturer);
    expect(await importRoster('user,role\nann,Student\n', '', tokenFor(assistant))).toMatchObject({
      status: 403,
      body: failure(PERMISSION_DENIED),
    });
    expect(
      await postCsv(api, `/api/modules/999999999/roster/import`, token, 'user,role\nann,Student\n'),
    ).toMatchObject({
      status: 404,
      body: failure('Module not found'),
    });
    expect(await importRoster('user\nann\n')).toMatchObject({
      status: 400,
      body: failure('Missing column: role'),
    });
    expect(await importRoster('user,role\nann,Student\n', '?mode=replace')).toMatchObject({
      status: 400,
      body: failure('mode must be add or sync'),
    });
    expect(await importRoster('user,role\nann,Student\n', '?mode=sync&max_removals=-1')).toMatchObject({
      status: 400,
      body: failure('max_removals must be an integer of at least 0'),
    });
    expect(await auditEvents(app.dataSource)).toEqual([]);
  });

  /**
   * Starts an import whose body never ends (chunked, a first part sent) and resolves with the answer: an answer
   * that comes proves the service decided without reading the file.
   */
  const answerWithoutBody = (path: string, as: string) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const url = new URL(app.url + path);
      const request = http.request({
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': 'text/csv', authorization: `Bearer ${as}` },
      });
      request.on('response', (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          request.destroy();
          resolve({ status: response.statusCode!, body: JSON.parse(text) });
        });
      });
      request.on('error', reject);
      // Without a decision before the body, no answer ever comes: fail instead of waiting for Jest's timeout.
      request.setTimeout(10_000, () => reject(new Error('no answer before the body ended')));
      request.write(`user,role\n${'ann,Student\n'.repeat(1000)}`);
    });

  it('checks the module (404) and the role of the caller (403) before reading the file', async () => {
    const outsider = await makeUser(app.dataSource);
    const tutor = await makeUser(app.dataSource);
    await assignRole(app.dataSource, tutor.id, mod.id, ModuleRole.Tutor);
    expect(await answerWithoutBody(`/api/modules/${mod.id}/roster/import`, tokenFor(outsider))).toEqual({
      status: 403,
      body: failure(PERMISSION_DENIED),
    });
    expect(await answerWithoutBody(`/api/modules/${mod.id}/roster/import`, tokenFor(tutor))).toEqual({
      status: 403,
      body: failure(PERMISSION_DENIED),
    });
    expect(await answerWithoutBody('/api/modules/999999999/roster/import', token)).toEqual({
      status: 404,
      body: failure('Module not found'),
    });
    // A file the caller could not import anyway is not looked at: no 400 for its shape.
    expect(await importRoster('user\nann\n', '', tokenFor(outsider))).toMatchObject({
      status: 403,
      body: failure(PERMISSION_DENIED),
    });
    expect(await roster()).toEqual([`${tutor.username}:Tutor`]);
  });

  describe('mode=sync', () => {
    let students: UserRow[];

    beforeEach(async () => {
      students = [];
      for (let i = 0; i < 20; i++) {
        const student = await makeUser(app.dataSource, { username: `s${String(i).padStart(2, '0')}` });
        await assignRole(app.dataSource, student.id, mod.id, ModuleRole.Student);
        students.push(student);
      }
    });

    const keepAllBut = (n: number) =>
      `user,role\n${students
        .slice(n)
        .map((student) => `${student.username},Student`)
        .join('\n')}\n`;

    it('removes members not in the file, within the default limit of 10 %', async () => {
      const res = await importRoster(keepAllBut(2), '?mode=sync');
      expect(res.status).toBe(200);
      expect(res.body.data.removed).toEqual([
        { user_id: Number(students[0].id), username: 's00', role: 'Student' },
        { user_id: Number(students[1].id), username: 's01', role: 'Student' },
      ]);
      expect(await roster()).toHaveLength(18);
      expect((await auditEvents(app.dataSource, 'roster.import'))[0].summary).toMatchObject({
        mode: 'sync',
        removed: 2,
      });
    });

    it('refuses with 409 past the limit unless it is raised; a dry run reports exceeds_limit', async () => {
      const res = await importRoster(keepAllBut(3), '?mode=sync');
      expect(res).toMatchObject({
        status: 409,
        body: failure('Sync would remove 3 members; the limit is 2'),
      });
      expect(await roster()).toHaveLength(20);
      const dry = await importRoster(keepAllBut(3), '?mode=sync&dry_run=true');
      expect(dry.status).toBe(200);
      expect(dry.body.data).toMatchObject({ exceeds_limit: true, dry_run: true });
      expect(dry.body.data.removed).toHaveLength(3);
      expect(await auditEvents(app.dataSource)).toEqual([]);
      const raised = await importRoster(keepAllBut(3), '?mode=sync&max_removals=3');
      expect(raised.status).toBe(200);
      expect(await roster()).toHaveLength(17);
    });

    it('never has a Lecturer remove Lecturers', async () => {
      const lecturer = await makeUser(app.dataSource, { username: 'lect' });
      const other = await makeUser(app.dataSource, { username: 'other-lect' });
      await assignRole(app.dataSource, lecturer.id, mod.id, ModuleRole.Lecturer);
      await assignRole(app.dataSource, other.id, mod.id, ModuleRole.Lecturer);
      const res = await importRoster(keepAllBut(1), '?mode=sync', tokenFor(lecturer));
      expect(res.status).toBe(200);
      expect(res.body.data.removed).toEqual([
        { user_id: Number(students[0].id), username: 's00', role: 'Student' },
      ]);
      expect(await roster()).toEqual(expect.arrayContaining(['lect:Lecturer', 'other-lect:Lecturer']));
    });
  });

  describe('GET /api/modules/{id}/roster.csv', () => {
    beforeEach(async () => {
      await assignRole(app.dataSource, ann.id, mod.id, ModuleRole.Student);
      await assignRole(app.dataSource, bob.id, mod.id, ModuleRole.Tutor);
      const tricky = await makeUser(app.dataSource, { username: '-cmd', email: '=evil,"x"@example.edu' });
      await assignRole(app.dataSource, tricky.id, mod.id, ModuleRole.Student);
    });

    it('streams the members as CSV with the list filters and sort, guarding formula cells', async () => {
      const res = await fetch(`${app.url}/api/modules/${mod.id}/roster.csv?sort=-username`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(res.headers.get('content-disposition')).toBe(
        `attachment; filename="module-${mod.id}-roster.csv"`,
      );
      const text = await res.text();
      expect(text.endsWith('\r\n')).toBe(true);
      const lines = csvLines(text);
      expect(lines[0]).toBe('user_id,username,email,role,status,starts_at,ends_at,effective_status');
      expect(lines.slice(1).map((line) => line.split(',')[1])).toEqual(['bob', 'ann', "'-cmd"]);
      expect(lines[3]).toMatch(/^\d+,'-cmd,"'=evil,""x""@example.edu",Student,active,,,active$/);

      // A spreadsheet whose list separator is ; splits no cell, and full-width formula starts are guarded.
      const wide = await makeUser(app.dataSource, { username: 'wide', email: '－1;=2@example.edu' });
      await assignRole(app.dataSource, wide.id, mod.id, ModuleRole.Student);
      const guarded = await fetch(`${app.url}/api/modules/${mod.id}/roster.csv?query=wide`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(csvLines(await guarded.text())[1]).toBe(
        `${wide.id},wide,"'－1;=2@example.edu",Student,active,,,active`,
      );

      const students = await fetch(`${app.url}/api/modules/${mod.id}/roster.csv?role=student&query=an`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(csvLines(await students.text())).toEqual([
        'user_id,username,email,role,status,starts_at,ends_at,effective_status',
        `${ann.id},ann,ann@example.edu,Student,active,,,active`,
      ]);
    });

    it('answers JSON errors before the first byte: 400, 403, 404', async () => {
      expect(await api.get(`/api/modules/${mod.id}/roster.csv?sort=nope`, { token })).toMatchObject({
        status: 400,
        body: failure('Invalid field used for sorting'),
      });
      expect(await api.get(`/api/modules/${mod.id}/roster.csv`, { token: tokenFor(bob) })).toMatchObject({
        status: 403,
        body: failure(PERMISSION_DENIED),
      });
      expect(await api.get(`/api/modules/999999999/roster.csv`, { token })).toMatchObject({
        status: 404,
        body: failure('Module not found'),
      });
      expect(await api.get(`/api/modules/${mod.id}/roster.csv`)).toMatchObject({ status: 401 });
    });
  });
}
