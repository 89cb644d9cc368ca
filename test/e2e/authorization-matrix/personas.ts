// The callers of test/authorization-matrix.e2e-spec.ts (personas), the role each holds in the module a request
// addresses, and the personas each access class of the route-access table lets through.
import { ModuleRole } from '../../../src/course-modules/modules/module-role.js';
import { type TestApp } from '../../support/app.js';
import { type Access } from '../../support/route-access.js';

/**
 * A caller with a valid token. `demoted` is an admin demoted after their token was issued; `sso_*` callers send
 * an access token of the identity provider (docs/sso.md) for a local admin and a local Lecturer.
 */
export type Persona =
  | 'nobody'
  | 'student'
  | 'tutor'
  | 'assistant'
  | 'lecturer'
  | 'admin'
  | 'demoted'
  | 'sso_admin'
  | 'sso_lecturer'
  | 'lecturer_completed'
  | 'lecturer_upcoming'
  | 'lecturer_inactive';

export const PERSONAS: readonly Persona[] = [
  'nobody',
  'student',
  'tutor',
  'assistant',
  'lecturer',
  'admin',
  'demoted',
  'sso_admin',
  'sso_lecturer',
  'lecturer_completed',
  'lecturer_upcoming',
  'lecturer_inactive',
];

/** The role each persona holds in the module a request addresses. */
export const ROLE_OF: Record<Persona, ModuleRole | null> = {
  nobody: null,
  student: ModuleRole.Student,
  tutor: ModuleRole.Tutor,
  assistant: ModuleRole.AssistantLecturer,
  lecturer: ModuleRole.Lecturer,
  admin: null,
  demoted: null,
  sso_admin: null,
  sso_lecturer: ModuleRole.Lecturer,
  lecturer_completed: ModuleRole.Lecturer,
  lecturer_upcoming: ModuleRole.Lecturer,
  lecturer_inactive: ModuleRole.Lecturer,
};

/**
 * The membership lifecycle (docs/api.md §15) of the personas whose Lecturer role is not effective `active`: one
 * whose `ends_at` has passed (effective `completed`: read access only), one whose `starts_at` is still to come
 * (`upcoming`) and one `inactive` (both: as non-members).
 */
const LIFECYCLE_OF: Partial<Record<Persona, string>> = {
  lecturer_completed: `starts_at = now() - interval '30 days', ends_at = now() - interval '1 day'`,
  lecturer_upcoming: `starts_at = now() + interval '1 day'`,
  lecturer_inactive: `status = 'inactive'`,
};

/** Gives the role row of `userId` in `moduleId` the lifecycle of `persona`, if it has one. */
export async function applyLifecycle(app: TestApp, persona: Persona, userId: number, moduleId: number) {
  const set = LIFECYCLE_OF[persona];
  if (set === undefined) return;
  await app.dataSource.query(`UPDATE user_module_roles SET ${set} WHERE user_id = $1 AND module_id = $2`, [
    userId,
    moduleId,
  ]);
}

// The personas each access class of the route-access table lets through (docs/api.md §2, §15).
const SIGNED_IN = PERSONAS;
const SSO: readonly Persona[] = ['sso_admin', 'sso_lecturer'];
// A completed membership keeps read access (docs/api.md §15): the single read, and the module list (every caller).
const MEMBERS: readonly Persona[] = [
  'student',
  'tutor',
  'assistant',
  'lecturer',
  'admin',
  ...SSO,
  'lecturer_completed',
];
const TEACHING: readonly Persona[] = ['tutor', 'assistant', 'lecturer', 'admin', ...SSO];
const STAFF: readonly Persona[] = ['assistant', 'lecturer', 'admin', ...SSO];
const MANAGERS: readonly Persona[] = ['lecturer', 'admin', ...SSO];
const ADMIN: readonly Persona[] = ['admin', 'sso_admin'];

export const ALLOWED: Record<Access, 'public' | readonly Persona[]> = {
  public: 'public',
  'signed-in': SIGNED_IN,
  members: MEMBERS,
  teaching: TEACHING,
  staff: STAFF,
  managers: MANAGERS,
  admin: ADMIN,
};
