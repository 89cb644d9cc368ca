/** A user's role in a course module; the values are the wire form and the PostgreSQL enum labels. */
export enum ModuleRole {
  Lecturer = 'Lecturer',
  AssistantLecturer = 'AssistantLecturer',
  Tutor = 'Tutor',
  Student = 'Student',
}

export const MODULE_ROLES: readonly ModuleRole[] = Object.values(ModuleRole);

export const INVALID_ROLE_MESSAGE = 'role must be one of Lecturer, AssistantLecturer, Tutor, Student';

const snakeCase = (role: string) => role.replace(/(?<=[a-z])(?=[A-Z])/g, '_').toLowerCase();

const byKey = new Map<string, ModuleRole>(
  MODULE_ROLES.flatMap((role) => [
    [role.toLowerCase(), role],
    [snakeCase(role), role],
  ]),
);

/** Accepts the canonical names case-insensitively and in snake case (`assistant_lecturer`); else undefined. */
export function parseModuleRole(value: unknown): ModuleRole | undefined {
  return typeof value === 'string' ? byKey.get(value.toLowerCase()) : undefined;
}
