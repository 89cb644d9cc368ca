import { JsonText, pageJsonText } from '../../core/json-text.js';
import { type Paging } from '../../core/query.js';
import { type UserSummary } from '../../users/user.shape.js';
import { type CourseModule } from './course-module.entity.js';
import { type ModuleRole } from './module-role.js';
import { type ModuleResponse } from './module.shape.js';

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

export interface ModuleList {
  modules: ModuleResponse[];
  page: number;
  per_page: number;
  total: number;
}

/** A page of `GET /api/modules` as JSON text: the modules are comma-joined JSON texts from PostgreSQL. */
export function moduleListJson(modulesJson: string, paging: Paging, total: number): JsonText<ModuleList> {
  return pageJsonText<ModuleList>('modules', modulesJson, paging, total);
}

/** The row of the `GET /api/modules/me` statement: each group's comma-joined Module JSON texts. */
export interface MyModulesJson {
  as_student: string;
  as_tutor: string;
  as_lecturer: string;
  as_assistant_lecturer: string;
}

/** `GET /api/modules/me` as JSON text, from the groups PostgreSQL built. */
export function myModulesJson(groups: MyModulesJson): JsonText<MyModules> {
  return new JsonText(
    '{"as_student":[',
    groups.as_student,
    '],"as_tutor":[',
    groups.as_tutor,
    '],"as_lecturer":[',
    groups.as_lecturer,
    '],"as_assistant_lecturer":[',
    groups.as_assistant_lecturer,
    ']}',
  );
}

/** The row of the single read's personnel statement: each role's comma-joined User summary JSON texts. */
export interface PersonnelJson {
  lecturers: string;
  assistants: string;
  tutors: string;
  students: string;
}

/**
 * The single read as JSON text: the Module's JSON text (`moduleJson`, built by PostgreSQL, or
 * `JSON.stringify(toModuleResponse(…))`) with the four lists PostgreSQL built spliced in before its closing brace.
 * The lists are taken out of `people` (the driver's row), which is left with empty ones: the driver's objects
 * and the request's promises that still reach that row may have been promoted to V8's old generation while the
 * statement ran, and a young-generation collection keeps whatever they point at, so a module's lists (up to
 * megabytes of strings) would be promoted to the large-object space and freed only by a full collection
 * (JsonText.release, docs/performance.md, "Peak memory under the large read").
 */
export function moduleWithPersonnelJson(
  moduleJsonText: string,
  people: PersonnelJson,
): JsonText<ModuleWithPersonnel> {
  const text = new JsonText<ModuleWithPersonnel>(
    moduleJsonText.slice(0, -1),
    ',"lecturers":[',
    people.lecturers,
    '],"assistant_lecturers":[',
    people.assistants,
    '],"tutors":[',
    people.tutors,
    '],"students":[',
    people.students,
    ']}',
  );
  people.lecturers = people.assistants = people.tutors = people.students = '';
  return text;
}
