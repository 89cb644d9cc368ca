import { fieldsOf } from '../../core/wire-shape.js';

/**
 * The Module of the contract (docs/api.md §3), the one place its fields are written: the mapper
 * (`toModuleResponse`, module.mapper.ts), the JSON text built in SQL (`MODULE_JSON_SQL`,
 * course-modules.repository.ts) and the OpenAPI schema (`moduleProperties`, module.schemas.ts) each hold one
 * entry per field, checked against this interface when the project compiles (core/wire-shape.ts).
 */
export interface ModuleResponse {
  id: number;
  code: string;
  year: number;
  description: string | null;
  credits: number;
  created_at: string;
  updated_at: string;
}

/** The Module's fields in the order the contract and every serialisation write them. */
export const MODULE_FIELDS = fieldsOf<ModuleResponse>()([
  'id',
  'code',
  'year',
  'description',
  'credits',
  'created_at',
  'updated_at',
] as const);

/** The `data` of `module.deleted`: the deleted module's identity. */
export type ModuleDeleted = Pick<ModuleResponse, 'id' | 'code' | 'year'>;

export const MODULE_DELETED_FIELDS = fieldsOf<ModuleDeleted>()(['id', 'code', 'year'] as const);

declare module '../../events/change-event.shape.js' {
  /** The module events' `data` (docs/api.md §12). */
  interface ChangeEventPayloads {
    'module.created': ModuleResponse;
    'module.updated': ModuleResponse;
    'module.deleted': ModuleDeleted;
  }
}
