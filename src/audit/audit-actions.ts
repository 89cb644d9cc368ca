/** Every action the trail records (docs/api.md §10). */
export const AUDIT_ACTIONS = [
  'module.create',
  'module.update',
  'module.delete',
  'module.bulk_delete',
  'personnel.assign',
  'personnel.remove',
  'students.enrol',
  'students.remove',
  'roster.import',
  'members.update',
  'module.rollover',
  'user.create',
  'user.bulk_create',
  'user.import',
  'user.update',
  'user.delete',
  'user.avatar',
  'auth.password_change',
  'auth.login_failed',
  'auth.login_throttled',
  'webhook.create',
  'webhook.update',
  'webhook.delete',
  'webhook.disable',
  'token.create',
  'token.revoke',
  'export.lms',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export type AuditTargetType = 'module' | 'user' | 'webhook' | 'token';

export const INVALID_AUDIT_ACTION_MESSAGE = 'Invalid audit action';

const known = new Set<string>(AUDIT_ACTIONS);

export const isAuditAction = (value: string): value is AuditAction => known.has(value);

/** Who made a change and from where: taken from the request by the controller, passed down to the service. */
export interface RequestContext {
  /** Null when nobody is signed in (login events). */
  actorId: number | null;
  requestId: string | null;
  clientIp: string | null;
}

/** What a service records about its change. */
export interface AuditEntry {
  action: AuditAction;
  targetType: AuditTargetType | null;
  targetIds: readonly (number | string)[];
  summary?: Record<string, unknown>;
}
