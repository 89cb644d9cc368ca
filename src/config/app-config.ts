import { isIP } from 'node:net';
import path from 'node:path';

export interface AppConfig {
  nodeEnv: string;
  port: number;
  host: string;
  dataDir: string;
  storageDir: string;
  /** Unset: the service starts an embedded PostgreSQL under `dataDir`. */
  databaseUrl: string | undefined;
  /** Unset outside production: generated once and kept in `dataDir` (see jwt-secret.ts). */
  jwtSecret: string | undefined;
  jwtExpiresIn: number;
  /** Empty: no CORS headers are sent. */
  corsOrigins: string[];
  logLevel: LogLevel;
  dbPoolSize: number;
  /** PostgreSQL's statement_timeout for every pooled connection (interactive requests), in milliseconds. */
  dbStatementTimeoutMs: number;
  /** This side's bound on one query, for a server that cannot answer at all (frozen, unreachable). */
  dbQueryTimeoutMs: number;
  /** Bound on connecting to PostgreSQL and on waiting for a free pooled connection. */
  dbConnectTimeoutMs: number;
  /** The statement timeout of long-running work: imports, exports, rollover, migrations, the demo generator. */
  dbLongStatementTimeoutMs: number;
  /** This side's bound on one query of long-running work (an export: its whole cursor). */
  dbLongQueryTimeoutMs: number;
  /** A CSV export whose client has taken nothing for this long is cut and its connection released. */
  exportIdleTimeoutMs: number;
  /**
   * How many bytes the large single reads (a module of more than LARGE_READ_MEMBERS people) may hold at once on
   * this replica; the rest wait their turn (docs/decisions.md, "Large answers").
   */
  largeAnswerBudgetBytes: number;
  /** The LMS roster exports (docs/lms-exports.md). */
  lmsExport: LmsExportSettings;
  moduleCodePattern: string;
  adminUsername: string;
  adminEmail: string;
  adminPassword: string | undefined;
  swaggerEnabled: boolean;
  /** How long one request, head and body, may take to arrive before it is answered 408 and its connection closed. */
  requestTimeoutMs: number;
  /** Fastify's `trustProxy`: off, a hop count, or the proxies' addresses/CIDRs (see TRUST_PROXY). */
  trustProxy: false | number | string[];
  /** Unset: no metrics are served. Otherwise Prometheus metrics on this port of `metricsHost`, apart from the API. */
  metricsPort: number | undefined;
  metricsHost: string;
  /** Audit events older than this many days are pruned at start and daily; 0 keeps them forever. */
  auditRetentionDays: number;
  /** Change events older than this many days are pruned at start and daily; 0 keeps them forever. */
  eventRetentionDays: number;
  /** How many `GET /api/events` requests may wait (long-poll) at once on this replica. */
  eventFeedMaxWaiting: number;
  /**
   * How often a replica looks for memberships whose `starts_at` or `ends_at` has passed, to write their change
   * events (docs/api.md §15: within 60 s); one replica sweeps at a time.
   */
  membershipSweepIntervalMs: number;
  /** Set: failed-login counters live in Redis, shared by every replica. Unset: in this process. */
  redisUrl: string | undefined;
  /** Prefix of every Redis key the service writes (several deployments may share one Redis). */
  redisKeyPrefix: string;
  /** Set: files live in this S3 bucket. Unset: under `storageDir`. */
  s3: S3Settings | undefined;
  /** Outbound webhook deliveries (docs/webhooks.md). */
  webhooks: WebhookSettings;
  /** POST /api/auth/login answers 403 when false (single sign-on only). */
  passwordLogin: boolean;
  /** PUT/DELETE of a module, user or webhook and PATCH of members answer 428 without If-Match (docs/api.md §17). */
  requireIfMatch: boolean;
  /** Set: tokens of this OpenID Connect provider are accepted beside the service's own (docs/sso.md). */
  oidc: OidcSettings | undefined;
  /** How long a replica may reuse its per-request read of a token's user (exists, admin, password change); 0: never. */
  userCacheTtlMs: number;
  /**
   * The work that runs beside the requests: the webhook job engine's workers and maintenance, the webhook
   * dispatcher, the start-up sweeps of stray files, the membership sweep and the daily retention prunes, all in
   * the WorkersModule (src/workers/), which AppModule imports only when this is true. Not a setting: always on in
   * the service; the tests turn it off unless a test asks for it (test/support/app.ts).
   */
  backgroundWorkers: boolean;
  /** SCIM 2.0 provisioning under /api/scim/v2 (docs/provisioning.md); off: those paths are unknown routes. */
  scimEnabled: boolean;
  /** The service's public origin (`https://modules.uni.edu`) for absolute URLs such as SCIM's `Location`;
   * unset: taken from each request's scheme and host. */
  publicBaseUrl: string | undefined;
}

/** Single sign-on: this service as a resource server of the university's identity provider. */
export interface OidcSettings {
  /** Exactly as the IdP writes it into `iss` (discovery at `<issuer>/.well-known/openid-configuration`). */
  issuer: string;
  /** A token's `aud` must contain this. */
  audience: string;
  /** The claim naming the local user. */
  usernameClaim: string;
  /**
   * A claim matched against users' `external_id` before anything else (Entra ID's `oid`); unset: none
   * (docs/sso.md, "Who the person is").
   */
  externalIdClaim?: string;
  /** Create a local user on first sight of an unknown username. */
  createUsers: boolean;
  /** Public client of the Swagger UI console (authorization code + PKCE); unset: no console sign-in. */
  clientId: string | undefined;
  scopes: string[];
  /** ADMIN_OIDC_SUBJECT: the bootstrap admin, when unbound, is bound to (issuer, this) at start. */
  adminSubject?: string;
  /**
   * Longest lifetime (`exp` - `iat`, seconds) of an accepted IdP token; a token without `iat` is refused
   * (docs/sso.md, "Token lifetime").
   */
  maxTokenAgeS: number;
  /**
   * Least time between two fetches of the IdP's keys for an unknown `kid`, and between two discovery attempts
   * while the IdP cannot be reached. Not a setting (30 s); tests shorten it.
   */
  refetchCooldownMs: number;
  /** How long the IdP's keys are used before they are refreshed in the background. Not a setting (10 min). */
  keysMaxAgeMs?: number;
}

/** Identifiers and names of the LMS roster exports (docs/api.md §16). */
export interface LmsExportSettings {
  /** `EXPORT_ID_PREFIX`: the start of every identifier the exports make up (`mas-org`, `mas-class-42`). */
  idPrefix: string;
  /** `EXPORT_ORG_NAME`: the organisation's name in OneRoster's orgs.csv. */
  orgName: string;
  /** `EXPORT_YEAR_START` as month (1..12) and day: the first day of an academic year. */
  yearStart: { month: number; day: number };
  /** `CANVAS_ACCOUNT_ID`: the sub-account of Canvas's courses.csv; undefined: left empty (the root account). */
  canvasAccountId: string | undefined;
}

/** Webhook URL rules and delivery timing. */
interface WebhookSettings {
  /** `http://` URLs are accepted too (tests, a receiver on a private network). */
  allowHttp: boolean;
  /** URLs may resolve to loopback, link-local and private addresses (tests only). */
  allowPrivate: boolean;
  /** One delivery attempt: connect, send and answer within this. */
  timeoutMs: number;
  /** Multiplies the retry schedule and the 3-day windows (1 in production; tests shrink it). */
  retryScale: number;
}

/** S3-compatible object storage; credentials come from the AWS SDK's default chain (env, profile, IRSA…). */
export interface S3Settings {
  bucket: string;
  /** Unset: AWS itself. Set for MinIO, Ceph, R2 and the like. */
  endpoint: string | undefined;
  region: string;
  forcePathStyle: boolean;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Thrown at boot for a bad setting; the message names the variable. */
export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function read(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `must be an integer between ${min} and ${max} (got "${raw}")`);
  }
  return Number(raw);
}

/** A decimal number in (0, 1]: digits with an optional fraction, no exponent. */
function fraction(env: Env, name: string, fallback: number): number {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || value <= 0 || value > 1) {
    throw new ConfigError(name, `must be a decimal number above 0 and at most 1 (got "${raw}")`);
  }
  return value;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = read(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['true', '1', 'yes'].includes(raw)) return true;
  if (['false', '0', 'no'].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false (got "${raw}")`);
}

/**
 * DATABASE_PASSWORD, when set, is the password for DATABASE_URL's server, taken as it is (no URL encoding
 * needed), so a container setup never has to put a password into a URL.
 */
function withDatabasePassword(
  databaseUrl: string | undefined,
  password: string | undefined,
): string | undefined {
  if (password === undefined || password === '') return databaseUrl;
  if (databaseUrl === undefined) {
    throw new ConfigError(
      'DATABASE_PASSWORD',
      'needs DATABASE_URL (the embedded database makes its own password)',
    );
  }
  const url = new URL(databaseUrl);
  if (url.password !== '') {
    throw new ConfigError(
      'DATABASE_PASSWORD',
      'is set while DATABASE_URL carries a password too: give it in one place',
    );
  }
  if (url.username === '') {
    throw new ConfigError(
      'DATABASE_PASSWORD',
      'needs a user name in DATABASE_URL (postgres://user@host:5432/db)',
    );
  }
  // encodeURIComponent first: the URL setter alone would leave '%' as it is, which the driver then decodes.
  url.password = encodeURIComponent(password);
  return url.toString();
}

/**
 * TRUST_PROXY: unset or `false` trusts no proxy (the client address is the socket's; X-Forwarded-For is
 * ignored); a number trusts that many hops; otherwise a comma-separated list of proxy addresses or CIDRs.
 */
function trustProxy(env: Env): false | number | string[] {
  const raw = read(env, 'TRUST_PROXY');
  if (raw === undefined || raw.toLowerCase() === 'false') return false;
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    if (hops < 1 || hops > 10) throw new ConfigError('TRUST_PROXY', `hop count must be 1-10 (got "${raw}")`);
    return hops;
  }
  const entries = raw.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const [address, prefix, ...extra] = entry.split('/');
    const family = isIP(address);
    const bits = family === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= bits);
    if (family === 0 || !prefixOk || extra.length > 0) {
      throw new ConfigError(
        'TRUST_PROXY',
        `must be false, a hop count, or a comma-separated list of proxy addresses or CIDRs such as ` +
          `10.0.0.0/8 (got "${entry}")`,
      );
    }
  }
  return entries;
}

/** Reads and validates every setting once; nothing else in the service reads `process.env`. */
export function loadConfig(env: Env): AppConfig {
  const nodeEnv = read(env, 'NODE_ENV') ?? 'development';
  const dataDir = path.resolve(read(env, 'DATA_DIR') ?? './data');

  let databaseUrl = read(env, 'DATABASE_URL');
  if (databaseUrl !== undefined) {
    let protocol: string;
    try {
      protocol = new URL(databaseUrl).protocol;
    } catch {
      throw new ConfigError('DATABASE_URL', 'must be a URL such as postgres://user:password@host:5432/db');
    }
    if (protocol !== 'postgres:' && protocol !== 'postgresql:') {
      throw new ConfigError('DATABASE_URL', 'must use the postgres:// scheme');
    }
  }
  databaseUrl = withDatabasePassword(databaseUrl, env.DATABASE_PASSWORD);

  const jwtSecret = read(env, 'JWT_SECRET');
  if (jwtSecret !== undefined && [...jwtSecret].length < 32) {
    throw new ConfigError('JWT_SECRET', 'must be at least 32 characters');
  }
  if (jwtSecret === undefined && nodeEnv === 'production') {
    throw new ConfigError('JWT_SECRET', 'is required when NODE_ENV=production');
  }

  const logLevel = (read(env, 'LOG_LEVEL') ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  }

  const moduleCodePattern = read(env, 'MODULE_CODE_PATTERN') ?? '^[A-Z]{3}[0-9]{3}$';
  try {
    new RegExp(moduleCodePattern, 'u');
  } catch {
    throw new ConfigError('MODULE_CODE_PATTERN', 'must be a valid regular expression');
  }

  const adminUsername = read(env, 'ADMIN_USERNAME') ?? 'admin';
  // The username rule of docs/api.md §5 (users/user-rules.ts), which config/ cannot import.
  if (!/^[A-Za-z0-9._@+-]{3,128}$/.test(adminUsername)) {
    throw new ConfigError(
      'ADMIN_USERNAME',
      "must be 3-128 characters of letters, digits, '.', '_', '-', '@' or '+'",
    );
  }
  const adminEmail = (read(env, 'ADMIN_EMAIL') ?? 'admin@localhost').toLowerCase();
  if (!/^[^\s@]+@[^\s@]+$/.test(adminEmail)) {
    throw new ConfigError('ADMIN_EMAIL', 'must be an email address');
  }
  const adminPassword = env.ADMIN_PASSWORD === '' ? undefined : env.ADMIN_PASSWORD;
  if (adminPassword !== undefined && ([...adminPassword].length < 8 || [...adminPassword].length > 128)) {
    throw new ConfigError('ADMIN_PASSWORD', 'must be 8-128 characters');
  }

  const corsOrigins = (read(env, 'CORS_ORIGINS') ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');
  for (const origin of corsOrigins) {
    if (origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin)) {
      throw new ConfigError(
        'CORS_ORIGINS',
        `must be a comma-separated list of origins such as https://app.example.edu (got "${origin}")`,
      );
    }
  }

  // Off unless set; 0 picks a free port (tests).
  const metricsPort =
    read(env, 'METRICS_PORT') === undefined ? undefined : int(env, 'METRICS_PORT', 0, 0, 65535);
  if (metricsPort !== undefined && metricsPort !== 0 && metricsPort === int(env, 'PORT', 3000, 0, 65535)) {
    throw new ConfigError('METRICS_PORT', 'must differ from PORT: metrics are served apart from the API');
  }
  const redisUrl = read(env, 'REDIS_URL');
  if (redisUrl !== undefined && !/^rediss?:\/\/[^\s]+$/.test(redisUrl)) {
    throw new ConfigError('REDIS_URL', 'must be a URL such as redis://host:6379/0 or rediss://host:6380');
  }
  const redisKeyPrefix = read(env, 'REDIS_KEY_PREFIX') ?? 'mas:';
  if (!/^[A-Za-z0-9:._-]{1,64}$/.test(redisKeyPrefix)) {
    throw new ConfigError('REDIS_KEY_PREFIX', "must be 1-64 letters, digits, ':', '.', '_' or '-'");
  }

  // Interactive defaults: a pool wait (or a connect) plus one query without an answer stays under 10 s
  // (docs/operations.md, "When the database fails").
  const dbStatementTimeoutMs = int(env, 'DB_STATEMENT_TIMEOUT_MS', 5000, 100, 3_600_000);
  const dbQueryTimeoutMs = int(env, 'DB_QUERY_TIMEOUT_MS', dbStatementTimeoutMs + 1000, 200, 3_605_000);
  if (dbQueryTimeoutMs <= dbStatementTimeoutMs) {
    // Below it, every slow statement would cost a connection instead of being cancelled by the server.
    throw new ConfigError(
      'DB_QUERY_TIMEOUT_MS',
      `must be greater than DB_STATEMENT_TIMEOUT_MS (${dbStatementTimeoutMs}); got "${dbQueryTimeoutMs}"`,
    );
  }
  const dbLongStatementTimeoutMs = int(env, 'DB_LONG_STATEMENT_TIMEOUT_MS', 120_000, 100, 86_400_000);
  if (dbLongStatementTimeoutMs < dbStatementTimeoutMs) {
    throw new ConfigError(
      'DB_LONG_STATEMENT_TIMEOUT_MS',
      `must be at least DB_STATEMENT_TIMEOUT_MS (${dbStatementTimeoutMs}); got "${dbLongStatementTimeoutMs}"`,
    );
  }
  const dbLongQueryTimeoutMs = int(
    env,
    'DB_LONG_QUERY_TIMEOUT_MS',
    dbLongStatementTimeoutMs + 5000,
    200,
    86_405_000,
  );
  if (dbLongQueryTimeoutMs <= dbLongStatementTimeoutMs) {
    throw new ConfigError(
      'DB_LONG_QUERY_TIMEOUT_MS',
      `must be greater than DB_LONG_STATEMENT_TIMEOUT_MS (${dbLongStatementTimeoutMs}); got "${dbLongQueryTimeoutMs}"`,
    );
  }

  return {
    nodeEnv,
    port: int(env, 'PORT', 3000, 0, 65535),
    host: read(env, 'HOST') ?? '0.0.0.0',
    dataDir,
    storageDir: path.resolve(read(env, 'STORAGE_DIR') ?? path.join(dataDir, 'files')),
    databaseUrl,
    jwtSecret,
    jwtExpiresIn: int(env, 'JWT_EXPIRES_IN', 3600, 1, 31_536_000),
    corsOrigins,
    logLevel: logLevel as LogLevel,
    dbPoolSize: int(env, 'DB_POOL_SIZE', 10, 1, 500),
    dbStatementTimeoutMs,
    dbQueryTimeoutMs,
    dbConnectTimeoutMs: int(env, 'DB_CONNECT_TIMEOUT_MS', 2500, 100, 600_000),
    dbLongStatementTimeoutMs,
    dbLongQueryTimeoutMs,
    exportIdleTimeoutMs: int(env, 'EXPORT_IDLE_TIMEOUT_MS', 30_000, 100, 3_600_000),
    largeAnswerBudgetBytes: int(env, 'LARGE_ANSWER_BUDGET_MB', 128, 8, 4096) * 1024 * 1024,
    lmsExport: loadLmsExportSettings(env),
    moduleCodePattern,
    adminUsername,
    adminEmail,
    adminPassword,
    swaggerEnabled: bool(env, 'SWAGGER_ENABLED', true),
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 120_000, 1000, 3_600_000),
    trustProxy: trustProxy(env),
    metricsPort,
    metricsHost: read(env, 'METRICS_HOST') ?? read(env, 'HOST') ?? '0.0.0.0',
    auditRetentionDays: int(env, 'AUDIT_RETENTION_DAYS', 365, 0, 36_500),
    eventRetentionDays: int(env, 'EVENT_RETENTION_DAYS', 30, 0, 36_500),
    eventFeedMaxWaiting: int(env, 'EVENT_FEED_MAX_WAITING', 100, 1, 10_000),
    membershipSweepIntervalMs: int(env, 'MEMBERSHIP_SWEEP_INTERVAL_MS', 10_000, 100, 50_000),
    redisUrl,
    redisKeyPrefix,
    s3: loadS3Settings(env),
    webhooks: {
      allowHttp: bool(env, 'WEBHOOK_ALLOW_HTTP', false),
      allowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE', false),
      timeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
      retryScale: fraction(env, 'WEBHOOK_RETRY_SCALE', 1),
    },
    passwordLogin: bool(env, 'PASSWORD_LOGIN', true),
    requireIfMatch: bool(env, 'REQUIRE_IF_MATCH', false),
    oidc: loadOidcSettings(env),
    userCacheTtlMs: int(env, 'USER_CACHE_TTL_MS', 5000, 0, 5000),
    backgroundWorkers: true,
    scimEnabled: bool(env, 'SCIM_ENABLED', false),
    publicBaseUrl: publicBaseUrl(env),
  };
}

/** Printable text without control characters (they would break a CSV cell or a consumer's display). */
const PLAIN_TEXT = /^[^\p{Cc}]+$/u;

function loadLmsExportSettings(env: Env): LmsExportSettings {
  const idPrefix = read(env, 'EXPORT_ID_PREFIX') ?? 'mas-';
  // Identifiers go into URLs and SIS ids unquoted: the characters every consumer accepts.
  if (!/^[A-Za-z0-9._-]{1,32}$/.test(idPrefix)) {
    throw new ConfigError(
      'EXPORT_ID_PREFIX',
      `must be 1-32 of A-Z, a-z, 0-9, '.', '_', '-' (got "${idPrefix}")`,
    );
  }
  const orgName = read(env, 'EXPORT_ORG_NAME') ?? 'University';
  if (!PLAIN_TEXT.test(orgName) || [...orgName].length > 200) {
    throw new ConfigError('EXPORT_ORG_NAME', 'must be 1-200 characters without control characters');
  }
  const start = read(env, 'EXPORT_YEAR_START') ?? '01-01';
  const match = /^(\d{2})-(\d{2})$/.exec(start);
  const month = Number(match?.[1]);
  const day = Number(match?.[2]);
  // 2001 has no 29 February: a start that every year has.
  if (!match || month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(2001, month, 0)).getUTCDate()) {
    throw new ConfigError(
      'EXPORT_YEAR_START',
      `must be a day of every year as MM-DD, e.g. 09-01 (got "${start}")`,
    );
  }
  const canvasAccountId = read(env, 'CANVAS_ACCOUNT_ID');
  if (canvasAccountId !== undefined && (!PLAIN_TEXT.test(canvasAccountId) || canvasAccountId.length > 255)) {
    throw new ConfigError('CANVAS_ACCOUNT_ID', 'must be 1-255 characters without control characters');
  }
  return { idPrefix, orgName, yearStart: { month, day }, canvasAccountId };
}

/** `PUBLIC_BASE_URL`: an http(s) origin with an optional path prefix, kept without its trailing slash. */
function publicBaseUrl(env: Env): string | undefined {
  const raw = read(env, 'PUBLIC_BASE_URL');
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('PUBLIC_BASE_URL', `must be a URL such as https://modules.uni.edu (got "${raw}")`);
  }
  if (
    (url.protocol !== 'https:' && url.protocol !== 'http:') ||
    url.search !== '' ||
    url.hash !== '' ||
    url.username !== '' ||
    url.password !== ''
  ) {
    throw new ConfigError('PUBLIC_BASE_URL', 'must be an http(s) URL without query, fragment or credentials');
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

function loadOidcSettings(env: Env): OidcSettings | undefined {
  const issuer = read(env, 'OIDC_ISSUER');
  const others = [
    'OIDC_AUDIENCE',
    'OIDC_USERNAME_CLAIM',
    'OIDC_EXTERNAL_ID_CLAIM',
    'OIDC_CREATE_USERS',
    'OIDC_CLIENT_ID',
    'OIDC_SCOPES',
    'OIDC_MAX_TOKEN_AGE',
    'ADMIN_OIDC_SUBJECT',
  ];
  if (issuer === undefined) {
    const stray = others.find((name) => read(env, name) !== undefined);
    if (stray) throw new ConfigError(stray, 'needs OIDC_ISSUER to be set too');
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new ConfigError('OIDC_ISSUER', 'must be a URL such as https://login.example.edu/realms/university');
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new ConfigError('OIDC_ISSUER', 'must use https:// (plain http only on localhost)');
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new ConfigError('OIDC_ISSUER', 'must not carry a query, fragment or credentials');
  }
  const audience = read(env, 'OIDC_AUDIENCE');
  if (audience === undefined) {
    throw new ConfigError(
      'OIDC_AUDIENCE',
      'is required with OIDC_ISSUER (the audience the IdP puts into tokens for this API)',
    );
  }
  const usernameClaim = read(env, 'OIDC_USERNAME_CLAIM') ?? 'preferred_username';
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(usernameClaim)) {
    throw new ConfigError('OIDC_USERNAME_CLAIM', 'must be a claim name such as preferred_username');
  }
  const externalIdClaim = read(env, 'OIDC_EXTERNAL_ID_CLAIM');
  if (externalIdClaim !== undefined && !/^[A-Za-z0-9_.:-]{1,64}$/.test(externalIdClaim)) {
    throw new ConfigError('OIDC_EXTERNAL_ID_CLAIM', 'must be a claim name such as oid');
  }
  const adminSubject = read(env, 'ADMIN_OIDC_SUBJECT');
  if (adminSubject !== undefined && !/^[^\p{Cc}]{1,255}$/u.test(adminSubject)) {
    throw new ConfigError('ADMIN_OIDC_SUBJECT', 'must be 1-255 characters without control characters');
  }
  const clientId = read(env, 'OIDC_CLIENT_ID');
  if (clientId !== undefined && !/^[\x21-\x7e]{1,255}$/.test(clientId)) {
    throw new ConfigError('OIDC_CLIENT_ID', 'must be 1-255 visible ASCII characters');
  }
  const scopes = (read(env, 'OIDC_SCOPES') ?? 'openid profile email').split(/\s+/);
  if (!scopes.includes('openid') || scopes.some((scope) => !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope))) {
    throw new ConfigError('OIDC_SCOPES', 'must be space-separated scopes including openid');
  }
  return {
    // The issuer is compared with `iss` exactly, so it is kept as written (no added or dropped slash).
    issuer,
    audience,
    usernameClaim,
    externalIdClaim,
    createUsers: bool(env, 'OIDC_CREATE_USERS', false),
    clientId,
    scopes,
    ...(adminSubject === undefined ? {} : { adminSubject }),
    maxTokenAgeS: int(env, 'OIDC_MAX_TOKEN_AGE', 86_400, 60, 2_592_000),
    refetchCooldownMs: 30_000,
  };
}

function loadS3Settings(env: Env): S3Settings | undefined {
  const bucket = read(env, 'STORAGE_S3_BUCKET');
  const others = ['STORAGE_S3_ENDPOINT', 'STORAGE_S3_REGION', 'STORAGE_S3_FORCE_PATH_STYLE'];
  if (bucket === undefined) {
    const stray = others.find((name) => read(env, name) !== undefined);
    if (stray) throw new ConfigError(stray, 'needs STORAGE_S3_BUCKET to be set too');
    return undefined;
  }
  // S3's bucket naming rules (3-63 lower-case letters, digits, dots and hyphens).
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new ConfigError(
      'STORAGE_S3_BUCKET',
      'must be a bucket name (3-63 lower-case letters, digits, . or -)',
    );
  }
  const endpoint = read(env, 'STORAGE_S3_ENDPOINT');
  if (endpoint !== undefined && !/^https?:\/\/[^/\s]+\/?$/.test(endpoint)) {
    throw new ConfigError('STORAGE_S3_ENDPOINT', 'must be a URL such as https://s3.example.edu:9000');
  }
  const region = read(env, 'STORAGE_S3_REGION') ?? 'us-east-1';
  if (!/^[a-z0-9-]{1,32}$/.test(region)) {
    throw new ConfigError('STORAGE_S3_REGION', 'must be a region name such as eu-west-1');
  }
  return { bucket, endpoint, region, forcePathStyle: bool(env, 'STORAGE_S3_FORCE_PATH_STYLE', false) };
}
