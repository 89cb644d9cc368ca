import { randomUUID } from 'node:crypto';
import { type DataSource } from 'typeorm';
import { ModuleRole } from '../../src/course-modules/modules/module-role.js';
import { StorageService } from '../../src/storage/storage.service.js';
import { type TestApp } from './app.js';
import { assignRole, makeModule, makeUser, type ModuleRow, type UserRow } from './factories.js';
import { filesUnder, userJson } from './users-helpers.js';

// What a test of modules builds its rows with, from here too: the factories and the role names, the User summary
// and the error envelope it compares. A part then imports its fixtures, factories and expected answers from this
// one module.
export { assignRole, makeModule, makeUser, type ModuleRow, tokenFor, type UserRow } from './factories.js';
export { failure } from './http.js';
export { userJson } from './users-helpers.js';
export { ModuleRole };

/** The Module of the contract as the API must show a stored row. */
export function moduleJson(row: ModuleRow) {
  return {
    id: Number(row.id),
    code: row.code,
    year: row.year,
    description: row.description,
    credits: row.credits,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** A module with one user in each staff role, some students and one user without a role. */
export interface StaffedModule {
  module: ModuleRow;
  lecturer: UserRow;
  assistant: UserRow;
  tutor: UserRow;
  outsider: UserRow;
  students: UserRow[];
}

/**
 * Makes a module, then its Lecturer, AssistantLecturer and Tutor (generated names unless given), the outsider and
 * the students in that order, and gives each their role.
 */
export async function staffedModule(
  dataSource: DataSource,
  names: { lecturer?: string; assistant?: string; tutor?: string; outsider: string; students: string[] },
): Promise<StaffedModule> {
  const module = await makeModule(dataSource);
  const lecturer = await makeUser(dataSource, { username: names.lecturer });
  const assistant = await makeUser(dataSource, { username: names.assistant });
  const tutor = await makeUser(dataSource, { username: names.tutor });
  const outsider = await makeUser(dataSource, { username: names.outsider });
  const students: UserRow[] = [];
  for (const username of names.students) students.push(await makeUser(dataSource, { username }));
  await assignRole(dataSource, lecturer.id, module.id, ModuleRole.Lecturer);
  await assignRole(dataSource, assistant.id, module.id, ModuleRole.AssistantLecturer);
  await assignRole(dataSource, tutor.id, module.id, ModuleRole.Tutor);
  for (const student of students) await assignRole(dataSource, student.id, module.id, ModuleRole.Student);
  return { module, lecturer, assistant, tutor, outsider, students };
}

export const ids = (items: { id: number }[]) => items.map((item) => Number(item.id));

/** An assignment of the module with one file written to storage under `modules/<id>/`. Returns the file's key. */
export async function addAssignmentWithFile(
  app: TestApp,
  moduleId: number,
  content = 'coursework',
): Promise<string> {
  const [assignment] = await app.dataSource.query<{ id: number }[]>(
    `INSERT INTO assignments (module_id, name, type) VALUES ($1, 'Essay', 'coursework') RETURNING id`,
    [moduleId],
  );
  const key = `modules/${moduleId}/${randomUUID()}`;
  await app.service.app.get(StorageService).write(key, Buffer.from(content));
  await app.dataSource.query(
    `INSERT INTO assignment_files (assignment_id, module_id, file_type, original_name, storage_key, size)
     VALUES ($1, $2, 'text/plain', 'essay.txt', $3, $4)`,
    [assignment.id, moduleId, key, Buffer.byteLength(content)],
  );
  return key;
}

/**
 * A module with a new user in each role given (`members[role]`) and an assignment with one file for each content
 * given (`keys`, as {@link addAssignmentWithFile} answers them).
 */
export async function populatedModule<Role extends ModuleRole>(
  app: TestApp,
  roles: readonly Role[],
  files: readonly string[],
): Promise<{ module: ModuleRow; members: Record<Role, UserRow>; keys: string[] }> {
  const module = await makeModule(app.dataSource);
  const members = {} as Record<Role, UserRow>;
  for (const role of roles) members[role] = await makeUser(app.dataSource);
  for (const role of roles) await assignRole(app.dataSource, members[role].id, module.id, role);
  const keys: string[] = [];
  for (const content of files) keys.push(await addAssignmentWithFile(app, module.id, content));
  return { module, members, keys };
}

/** Every file under the storage root, as keys (`modules/12/…`), temporary files excluded. */
export async function storedFiles(storageDir: string): Promise<string[]> {
  return (await filesUnder(storageDir)).filter((key) => !key.startsWith('.tmp'));
}

/** How many rows of each table belong to the module. */
export async function rowsOfModule(dataSource: DataSource, moduleId: number) {
  const [row] = await dataSource.query<Record<string, number>[]>(
    `SELECT (SELECT count(*) FROM modules WHERE id = $1) AS modules,
            (SELECT count(*) FROM user_module_roles WHERE module_id = $1) AS user_module_roles,
            (SELECT count(*) FROM assignments WHERE module_id = $1) AS assignments,
            (SELECT count(*) FROM assignment_files WHERE module_id = $1) AS assignment_files`,
    [moduleId],
  );
  return row;
}

export async function roleOf(
  dataSource: DataSource,
  userId: number,
  moduleId: number,
): Promise<string | null> {
  const rows = await dataSource.query<{ role: string }[]>(
    `SELECT role FROM user_module_roles WHERE user_id = $1 AND module_id = $2`,
    [userId, moduleId],
  );
  return rows[0]?.role ?? null;
}

/**
 * A module's person as the personnel and student lists must show a stored user without an avatar: the User
 * summary, the role and an active membership with no dates (docs/api.md §15).
 */
export const memberJson = (user: UserRow, role: ModuleRole) => ({
  ...userJson(user),
  role,
  status: 'active',
  starts_at: null,
  ends_at: null,
  effective_status: 'active',
});

export const PERMISSION_DENIED = 'You do not have permission to perform this action';
export const INVALID_SORT = 'Invalid field used for sorting';
export const INVALID_ROLE = 'role must be one of Lecturer, AssistantLecturer, Tutor, Student';
