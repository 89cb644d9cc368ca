import { ModuleRole } from './module-role.js';

/** Who is asking, as far as one module is concerned. */
export interface ModuleViewer {
  admin: boolean;
  /** The caller's role in the module, or null. */
  role: ModuleRole | null;
}

const isStaff = (role: ModuleRole | null) =>
  role === ModuleRole.Lecturer || role === ModuleRole.AssistantLecturer;

/** Single read: admins and anyone holding a role in the module. */
export const canReadModule = (viewer: ModuleViewer) => viewer.admin || viewer.role !== null;

/** Personnel and eligible lists: admins and the module's staff. */
export const canViewPersonnel = (viewer: ModuleViewer) => viewer.admin || isStaff(viewer.role);

/** The student roster: admins and the module's teaching staff (Lecturer, AssistantLecturer, Tutor). */
export const canViewStudents = (viewer: ModuleViewer) =>
  viewer.admin || isStaff(viewer.role) || viewer.role === ModuleRole.Tutor;

/** Assigning or removing `role`: admins, or a Lecturer of the module for roles other than Lecturer. */
export const canManageRole = (viewer: ModuleViewer, role: ModuleRole) =>
  viewer.admin || (viewer.role === ModuleRole.Lecturer && role !== ModuleRole.Lecturer);

/**
 * A Lecturer may not change an existing Lecturer's role (their own included); `current` is each named
 * user's role before the assignment.
 */
export const mayReassign = (viewer: ModuleViewer, current: readonly (ModuleRole | null)[]) =>
  viewer.admin || !current.includes(ModuleRole.Lecturer);
