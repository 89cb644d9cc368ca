import {
  canManageRole,
  canReadModule,
  canViewPersonnel,
  canViewStudents,
  mayReassign,
  type ModuleViewer,
} from './module-access.js';
import { ModuleRole } from './module-role.js';

const { Lecturer, AssistantLecturer, Tutor, Student } = ModuleRole;
const member = (role: ModuleRole | null): ModuleViewer => ({ admin: false, role });
const admin: ModuleViewer = { admin: true, role: null };

describe('module access rules', () => {
  it('lets admins and every role holder read a module', () => {
    expect(
      [admin, member(Lecturer), member(AssistantLecturer), member(Tutor), member(Student)].every(
        canReadModule,
      ),
    ).toBe(true);
    expect(canReadModule(member(null))).toBe(false);
  });

  it('shows personnel to admins and staff only', () => {
    expect([admin, member(Lecturer), member(AssistantLecturer)].every(canViewPersonnel)).toBe(true);
    expect([member(Tutor), member(Student), member(null)].some(canViewPersonnel)).toBe(false);
  });

  it('shows students to admins and teaching staff', () => {
    expect([admin, member(Lecturer), member(AssistantLecturer), member(Tutor)].every(canViewStudents)).toBe(
      true,
    );
    expect([member(Student), member(null)].some(canViewStudents)).toBe(false);
  });

  it('lets admins manage every role and Lecturers every role but Lecturer', () => {
    for (const role of Object.values(ModuleRole)) {
      expect(canManageRole(admin, role)).toBe(true);
      expect(canManageRole(member(Lecturer), role)).toBe(role !== Lecturer);
      for (const other of [AssistantLecturer, Tutor, Student, null])
        expect(canManageRole(member(other), role)).toBe(false);
    }
  });

  it("keeps Lecturers from changing an existing Lecturer's role", () => {
    expect(mayReassign(member(Lecturer), [Student, null, Tutor])).toBe(true);
    expect(mayReassign(member(Lecturer), [Student, Lecturer])).toBe(false);
    expect(mayReassign(admin, [Lecturer])).toBe(true);
  });
});
