import { type UserSummary, type UserSummarySource, toUserSummary } from '../users/user.mapper.js';
import { type CourseModule } from './course-module.entity.js';
import { type ModuleRole } from './module-role.js';

/** The Module of the contract (docs/api.md §3). */
export interface ModuleResponse {
  id: number;
  code: string;
  year: number;
  description: string | null;
  credits: number;
  created_at: string;
  updated_at: string;
}

/** An entity, or a raw row whose columns are aliased to the entity's property names. */
export type ModuleSource = Pick<
  CourseModule,
  'id' | 'code' | 'year' | 'description' | 'credits' | 'createdAt' | 'updatedAt'
>;

export function toModuleResponse(module: ModuleSource): ModuleResponse {
  return {
    id: Number(module.id),
    code: module.code,
    year: module.year,
    description: module.description,
    credits: module.credits,
    created_at: module.createdAt.toISOString(),
    updated_at: module.updatedAt.toISOString(),
  };
}

/** A Module with a user's role in it (`GET /api/users/{user_id}/modules`). */
export type ModuleWithRole = ModuleResponse & { role: ModuleRole };

/** A user in a module's personnel list: User summary plus the role held there. */
export type PersonnelMember = UserSummary & { role: ModuleRole };

export function toPersonnelMember(row: UserSummarySource & { role: ModuleRole }): PersonnelMember {
  return { ...toUserSummary(row), role: row.role };
}

export interface ModuleWithPersonnel extends ModuleResponse {
  lecturers: UserSummary[];
  assistant_lecturers: UserSummary[];
  tutors: UserSummary[];
  students: UserSummary[];
}

export interface MyModules {
  as_student: ModuleResponse[];
  as_tutor: ModuleResponse[];
  as_lecturer: ModuleResponse[];
  as_assistant_lecturer: ModuleResponse[];
}
