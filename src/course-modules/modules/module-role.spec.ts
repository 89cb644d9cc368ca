import { ModuleRole, parseModuleRole } from './module-role.js';

describe('parseModuleRole', () => {
  it.each([
    ['Lecturer', ModuleRole.Lecturer],
    ['lecturer', ModuleRole.Lecturer],
    ['AssistantLecturer', ModuleRole.AssistantLecturer],
    ['assistant_lecturer', ModuleRole.AssistantLecturer],
    ['ASSISTANT_LECTURER', ModuleRole.AssistantLecturer],
    ['assistantlecturer', ModuleRole.AssistantLecturer],
    ['TUTOR', ModuleRole.Tutor],
    ['student', ModuleRole.Student],
  ])('reads %j as %s', (input, role) => expect(parseModuleRole(input)).toBe(role));

  it.each([
    '',
    'Admin',
    'assistant-lecturer',
    'assistant lecturer',
    '_lecturer',
    'lect_urer',
    5,
    null,
    undefined,
    ['Tutor'],
  ])('refuses %j', (input) => expect(parseModuleRole(input)).toBeUndefined());
});
