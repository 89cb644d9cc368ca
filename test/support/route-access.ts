/**
 * Who may call each route of the service: the one access table of the tests, from the Access columns of
 * docs/api.md §2, §4, §4.1, §4.2, §5, §9, §10, §11 and §16. The authorization matrix turns it into the callers let
 * through and refused (authorization-matrix.e2e-spec.ts), the OpenAPI route test checks the document declares
 * it (openapi-document.e2e-spec.ts, which also checks the table against the routes the application serves, see
 * {@link routeTableDrift}), and the conventions test reads its paths.
 *
 * SCIM (docs/api.md §14) is not here: it is registered only when SCIM_ENABLED=true, takes integration tokens
 * only and is covered by scim.e2e-spec.ts.
 */
export type Access =
  /** No token needed. */
  | 'public'
  /** Any signed-in user. */
  | 'signed-in'
  /** Admins, and members of the module whose role is effective `active` or `completed` (read access). */
  | 'members'
  /** Admins, and the module's active Tutors, Assistant Lecturers and Lecturers. */
  | 'teaching'
  /** Admins, and the module's active Assistant Lecturers and Lecturers. */
  | 'staff'
  /** Admins, and the module's active Lecturers. */
  | 'managers'
  /** Admins only. */
  | 'admin';

export const ROUTE_ACCESS: Readonly<Record<string, Access>> = {
  'POST /api/auth/login': 'public',
  'GET /api/auth/config': 'public',
  'GET /api/auth/me': 'signed-in',
  'PUT /api/auth/password': 'signed-in',
  'POST /api/auth/sso-binding': 'admin',
  'GET /api/health': 'public',
  'GET /api/health/ready': 'public',

  'GET /api/modules': 'signed-in',
  'GET /api/modules/me': 'signed-in',
  'POST /api/modules': 'admin',
  'DELETE /api/modules/bulk': 'admin',
  'POST /api/modules/rollover': 'admin',
  'GET /api/modules/{module_id}': 'members',
  'PUT /api/modules/{module_id}': 'admin',
  'DELETE /api/modules/{module_id}': 'admin',

  'GET /api/modules/{module_id}/personnel': 'staff',
  'GET /api/modules/{module_id}/personnel/eligible': 'staff',
  'POST /api/modules/{module_id}/personnel': 'managers',
  'DELETE /api/modules/{module_id}/personnel': 'managers',
  'PATCH /api/modules/{module_id}/members': 'managers',
  'GET /api/modules/{module_id}/students': 'teaching',
  'POST /api/modules/{module_id}/students': 'managers',
  'DELETE /api/modules/{module_id}/students': 'managers',
  'POST /api/modules/{module_id}/roster/import': 'managers',
  'GET /api/modules/{module_id}/roster.csv': 'staff',

  'GET /api/users': 'admin',
  'POST /api/users': 'admin',
  'POST /api/users/bulk': 'admin',
  'POST /api/users/import': 'admin',
  'GET /api/users/export.csv': 'admin',
  'GET /api/users/{user_id}': 'admin',
  'PUT /api/users/{user_id}': 'admin',
  'DELETE /api/users/{user_id}': 'admin',
  'PUT /api/users/{user_id}/sso-binding': 'admin',
  'DELETE /api/users/{user_id}/sso-binding': 'admin',
  'GET /api/users/{user_id}/modules': 'admin',
  'PUT /api/users/{user_id}/avatar': 'admin',
  'GET /api/users/{user_id}/avatar': 'signed-in',

  'GET /api/audit': 'admin',

  'GET /api/webhooks': 'admin',
  'POST /api/webhooks': 'admin',
  'GET /api/webhooks/{webhook_id}': 'admin',
  'PUT /api/webhooks/{webhook_id}': 'admin',
  'DELETE /api/webhooks/{webhook_id}': 'admin',
  'POST /api/webhooks/{webhook_id}/test': 'admin',
  'GET /api/webhooks/{webhook_id}/deliveries': 'admin',
  'GET /api/events': 'admin',

  'GET /api/tokens': 'admin',
  'POST /api/tokens': 'admin',
  'DELETE /api/tokens/{token_id}': 'admin',

  'GET /api/exports/oneroster-1.1.zip': 'admin',
  'GET /api/exports/canvas-sis.zip': 'admin',
};

/** Whether some signed-in callers are refused (403): admin-only and module-scoped routes. */
export const isRestricted = (access: Access) => access !== 'public' && access !== 'signed-in';

/**
 * How the table and the routes the application serves (`METHOD /path/{param}`, as `servedRoutes` reads them from
 * the router) differ: routes without a row, and rows for no route. Both are empty when the table is complete.
 */
export function routeTableDrift(served: Iterable<string>): { missing: string[]; stale: string[] } {
  const routes = new Set(served);
  return {
    missing: [...routes].filter((key) => !(key in ROUTE_ACCESS)).sort(),
    stale: Object.keys(ROUTE_ACCESS)
      .filter((key) => !routes.has(key))
      .sort(),
  };
}
