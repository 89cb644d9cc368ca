// How test/authorization-matrix.e2e-spec.ts makes a request that passes validation for every route.
import { ModuleRole } from '../../../src/course-modules/modules/module-role.js';
import { DEFAULT_PASSWORD, type ModuleRow, type UserRow } from '../../support/factories.js';
import { type DocOperation } from '../../support/openapi.js';
import { type Persona } from './personas.js';

/** What a request is built from: a fresh module and a fresh target user for every request. */
export interface Fixture {
  module: ModuleRow;
  /** The user a request names (path `user_id`, `user_ids`, a roster line). */
  target: UserRow;
  /** Unique within the run, for usernames and module codes that must not clash. */
  unique: number;
  /** A user who signs in, and one with an avatar: the same for every request. */
  login: UserRow;
  withAvatar: UserRow;
  /** An access token of the test IdP for an identity nobody is bound to: the body of POST /api/auth/sso-binding. */
  linkToken: string;
  /** A webhook a request may address (and delete). */
  webhook: { id: number };
  /** An integration token a request may address (and revoke). */
  token: { id: number };
}

export interface Built {
  /** Query string without `?`. */
  query?: string;
  json?: unknown;
  csv?: string;
  multipart?: boolean;
}

/** How a request to one route is made: what `concrete` needs beyond the path's module and target. */
interface Request {
  /** The role the target holds in the module before the request, so that a removal has something to remove. */
  targetRole?: ModuleRole;
  /** Path ids other than the fixture's module and target. */
  params?: (f: Fixture) => Record<string, number>;
  /**
   * A request that passes validation: a module role is checked after the body (docs/api.md §1, check order),
   * so only a valid request tells access apart from a bad body.
   */
  build?: (f: Fixture) => Built;
  /** Changes the caller's own credentials: run after every other operation. */
  last?: boolean;
  /** Personas of the access class the route refuses by a rule of its own: the 403 message each gets. */
  refuses?: Partial<Record<Persona, string>>;
}

export interface Row extends Request {
  /** `public`: no token needed (docs/api.md §2). Otherwise the personas let through; all others get 403. */
  allowed: 'public' | readonly Persona[];
}

const username = (f: Fixture) => `authz-${process.pid}-${f.unique}`;

/** How to build a request that passes validation, for the routes that need more than their path. */
export const REQUESTS: Record<string, Request> = {
  'POST /api/auth/login': {
    build: ({ login }) => ({ json: { username: login.username, password: DEFAULT_PASSWORD } }),
  },
  'PUT /api/auth/password': {
    build: () => ({ json: { current_password: DEFAULT_PASSWORD, new_password: DEFAULT_PASSWORD } }),
    last: true,
  },
  'POST /api/modules': {
    build: (f) => ({
      json: {
        code: `AZ${String.fromCharCode(65 + (Math.floor(f.unique / 1000) % 26))}${String(f.unique % 1000).padStart(3, '0')}`,
        year: 2031,
        credits: 10,
      },
    }),
  },
  'PUT /api/modules/{module_id}': {
    build: ({ module }) => ({
      json: {
        code: module.code,
        year: module.year,
        description: module.description,
        credits: module.credits,
      },
    }),
  },
  'DELETE /api/modules/bulk': {
    build: ({ module }) => ({ json: { module_ids: [module.id] } }),
  },
  'POST /api/modules/rollover': {
    build: ({ module }) => ({ json: { from_year: module.year, to_year: 2032, codes: [module.code] } }),
  },
  'POST /api/modules/{module_id}/personnel': {
    build: ({ target }) => ({ json: { user_ids: [target.id], role: 'Tutor' } }),
  },
  'DELETE /api/modules/{module_id}/personnel': {
    targetRole: ModuleRole.Tutor,
    build: ({ target }) => ({ json: { user_ids: [target.id], role: 'Tutor' } }),
  },
  'PATCH /api/modules/{module_id}/members': {
    targetRole: ModuleRole.Tutor,
    build: ({ target }) => ({ json: { user_ids: [target.id], status: 'completed' } }),
  },
  'POST /api/modules/{module_id}/students': {
    build: ({ target }) => ({ json: { user_ids: [target.id] } }),
  },
  'DELETE /api/modules/{module_id}/students': {
    targetRole: ModuleRole.Student,
    build: ({ target }) => ({ json: { user_ids: [target.id] } }),
  },
  'POST /api/modules/{module_id}/roster/import': {
    build: ({ target }) => ({ csv: `user,role\n${target.username},Student\n` }),
  },
  'POST /api/users': {
    build: (f) => ({
      json: { username: username(f), email: `${username(f)}@example.edu`, password: DEFAULT_PASSWORD },
    }),
  },
  'POST /api/users/bulk': {
    build: (f) => ({
      json: {
        users: [{ username: username(f), email: `${username(f)}@example.edu`, password: DEFAULT_PASSWORD }],
      },
    }),
  },
  'POST /api/users/import': {
    build: (f) => ({ csv: `username,email\n${username(f)},${username(f)}@example.edu\n` }),
  },
  'PUT /api/users/{user_id}': {
    build: (f) => ({ json: { email: `${username(f)}@example.edu` } }),
  },
  'PUT /api/users/{user_id}/sso-binding': {
    build: (f) => ({ json: { issuer: 'https://login.example.edu', subject: username(f) } }),
  },
  'POST /api/auth/sso-binding': {
    build: ({ linkToken }) => ({ json: { token: linkToken } }),
    // Linking needs a password sign-in (docs/sso.md): an admin signed in through the IdP is refused.
    refuses: { sso_admin: 'Sign in with your password to link an identity' },
  },
  'PUT /api/users/{user_id}/avatar': { build: () => ({ multipart: true }) },
  'GET /api/users/{user_id}/avatar': {
    params: ({ withAvatar }) => ({ user_id: withAvatar.id }),
  },
  'POST /api/webhooks': {
    build: () => ({ json: { url: 'https://203.0.113.10/hooks', types: ['user.deleted'] } }),
  },
  'PUT /api/webhooks/{webhook_id}': { build: () => ({ json: { description: 'authz' } }) },
  'POST /api/tokens': { build: () => ({ json: { name: 'authz', scopes: ['events'] } }) },
  'GET /api/exports/oneroster-1.1.zip': { build: ({ module }) => ({ query: `year=${module.year}` }) },
  'GET /api/exports/canvas-sis.zip': { build: ({ module }) => ({ query: `year=${module.year}` }) },
};

export interface Answer {
  status: number;
  /** Parsed JSON, or the text of anything else (a CSV, an image as text). */
  body: any;
  contentType: string;
}

/** One operation made concrete: its path with ids filled in and a request that passes validation. */
export function concrete(operation: DocOperation, row: Row, f: Fixture): { path: string; built: Built } {
  const ids: Record<string, number> = {
    module_id: f.module.id,
    user_id: f.target.id,
    webhook_id: f.webhook.id,
    token_id: f.token.id,
    ...row.params?.(f),
  };
  const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (ids[name] === undefined)
      throw new Error(`no fixture for path parameter ${name} of ${operation.path}`);
    return String(ids[name]);
  });
  return { path, built: row.build?.(f) ?? {} };
}
