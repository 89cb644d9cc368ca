import path from 'node:path';
import pg from 'pg';
import { ConfigError, loadConfig } from './app-config.js';

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      dataDir: path.resolve('data'),
      storageDir: path.resolve('data', 'files'),
      databaseUrl: undefined,
      jwtSecret: undefined,
      jwtExpiresIn: 3600,
      corsOrigins: [],
      logLevel: 'info',
      dbPoolSize: 10,
      moduleCodePattern: '^[A-Z]{3}[0-9]{3}$',
      adminUsername: 'admin',
      adminEmail: 'admin@localhost',
      adminPassword: undefined,
      swaggerEnabled: true,
      requestTimeoutMs: 120_000,
      trustProxy: false,
      dbStatementTimeoutMs: 5000,
      dbQueryTimeoutMs: 6000,
      dbConnectTimeoutMs: 2500,
      dbLongStatementTimeoutMs: 120_000,
      dbLongQueryTimeoutMs: 125_000,
      exportIdleTimeoutMs: 30_000,
      largeAnswerBudgetBytes: 128 * 1024 * 1024,
    });
  });

  it('runs the background work (webhook workers, dispatcher, sweeps, prunes): only the tests turn it off', () => {
    expect(loadConfig({}).backgroundWorkers).toBe(true);
    expect(loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) }).backgroundWorkers).toBe(true);
  });

  it('bounds an interactive request on a database that does not answer under 10 s by default', () => {
    const config = loadConfig({});
    // The worst case: waiting for a pooled connection (or opening one), then a query without an answer.
    expect(config.dbConnectTimeoutMs + config.dbQueryTimeoutMs).toBeLessThan(10_000);
  });

  it('bounds queries 1 s past the statement timeout unless DB_QUERY_TIMEOUT_MS says otherwise', () => {
    expect(loadConfig({ DB_STATEMENT_TIMEOUT_MS: '60000' }).dbQueryTimeoutMs).toBe(61_000);
    expect(
      loadConfig({ DB_STATEMENT_TIMEOUT_MS: '2000', DB_QUERY_TIMEOUT_MS: '2001' }).dbQueryTimeoutMs,
    ).toBe(2001);
  });

  it('bounds long work 5 s past its statement timeout unless DB_LONG_QUERY_TIMEOUT_MS says otherwise', () => {
    expect(loadConfig({ DB_LONG_STATEMENT_TIMEOUT_MS: '600000' }).dbLongQueryTimeoutMs).toBe(605_000);
    expect(
      loadConfig({ DB_LONG_STATEMENT_TIMEOUT_MS: '20000', DB_LONG_QUERY_TIMEOUT_MS: '21000' })
        .dbLongQueryTimeoutMs,
    ).toBe(21_000);
  });

  it.each([
    ['false', false],
    ['2', 2],
    ['10.0.0.1', ['10.0.0.1']],
    ['10.0.0.0/8, 192.168.1.7 ,::1, fd00::/8', ['10.0.0.0/8', '192.168.1.7', '::1', 'fd00::/8']],
  ])('reads TRUST_PROXY=%j', (value, expected) => {
    expect(loadConfig({ TRUST_PROXY: value }).trustProxy).toEqual(expected);
  });

  it('reads every setting', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '127.0.0.1',
      DATA_DIR: '/var/lib/mas',
      DATABASE_URL: 'postgres://u:p@db:5432/mas',
      JWT_SECRET: 'x'.repeat(32),
      JWT_EXPIRES_IN: '600',
      CORS_ORIGINS: 'https://a.example.edu, https://b.example.edu',
      LOG_LEVEL: 'WARN',
      DB_POOL_SIZE: '25',
      MODULE_CODE_PATTERN: '^[A-Z]{2}[0-9]{4}$',
      ADMIN_USERNAME: 'root',
      ADMIN_EMAIL: 'Root@Uni.example',
      ADMIN_PASSWORD: 'root-password',
      SWAGGER_ENABLED: 'false',
      REQUEST_TIMEOUT_MS: '30000',
      DB_STATEMENT_TIMEOUT_MS: '1500',
      DB_QUERY_TIMEOUT_MS: '4000',
      DB_CONNECT_TIMEOUT_MS: '2500',
      DB_LONG_STATEMENT_TIMEOUT_MS: '300000',
      DB_LONG_QUERY_TIMEOUT_MS: '310000',
      EXPORT_IDLE_TIMEOUT_MS: '60000',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      dataDir: '/var/lib/mas',
      storageDir: '/var/lib/mas/files',
      databaseUrl: 'postgres://u:p@db:5432/mas',
      jwtExpiresIn: 600,
      corsOrigins: ['https://a.example.edu', 'https://b.example.edu'],
      logLevel: 'warn',
      dbPoolSize: 25,
      adminEmail: 'root@uni.example',
      swaggerEnabled: false,
      requestTimeoutMs: 30_000,
      dbStatementTimeoutMs: 1500,
      dbQueryTimeoutMs: 4000,
      dbConnectTimeoutMs: 2500,
      dbLongStatementTimeoutMs: 300_000,
      dbLongQueryTimeoutMs: 310_000,
      exportIdleTimeoutMs: 60_000,
    });
  });

  it("takes an ADMIN_USERNAME under the user routes' rule, an identity provider's e-mail-shaped name included", () => {
    expect(loadConfig({ ADMIN_USERNAME: 'it.admin+ops@uni.edu' }).adminUsername).toBe('it.admin+ops@uni.edu');
  });

  it.each([
    [{ PORT: '70000' }, 'PORT'],
    [{ PORT: '-1' }, 'PORT'],
    [{ JWT_SECRET: 'short' }, 'JWT_SECRET'],
    [{ NODE_ENV: 'production' }, 'JWT_SECRET'],
    [{ JWT_EXPIRES_IN: '1h' }, 'JWT_EXPIRES_IN'],
    [{ DB_POOL_SIZE: '0' }, 'DB_POOL_SIZE'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    [{ CORS_ORIGINS: 'example.edu' }, 'CORS_ORIGINS'],
    [{ ADMIN_USERNAME: 'a' }, 'ADMIN_USERNAME'],
    [{ ADMIN_USERNAME: 'u'.repeat(129) }, 'ADMIN_USERNAME'],
    [{ ADMIN_EMAIL: 'nope' }, 'ADMIN_EMAIL'],
    [{ ADMIN_PASSWORD: 'short' }, 'ADMIN_PASSWORD'],
    [{ TRUST_PROXY: 'true' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '0' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.0/33' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: 'proxy.local' }, 'TRUST_PROXY'],
    [{ DB_STATEMENT_TIMEOUT_MS: '5' }, 'DB_STATEMENT_TIMEOUT_MS'],
    [{ DB_QUERY_TIMEOUT_MS: '4000' }, 'DB_QUERY_TIMEOUT_MS'],
    [{ DB_STATEMENT_TIMEOUT_MS: '9000', DB_QUERY_TIMEOUT_MS: '8000' }, 'DB_QUERY_TIMEOUT_MS'],
    [{ DB_QUERY_TIMEOUT_MS: '2s' }, 'DB_QUERY_TIMEOUT_MS'],
    [{ DB_CONNECT_TIMEOUT_MS: '50' }, 'DB_CONNECT_TIMEOUT_MS'],
    [{ DB_LONG_STATEMENT_TIMEOUT_MS: '4000' }, 'DB_LONG_STATEMENT_TIMEOUT_MS'],
    [
      { DB_LONG_STATEMENT_TIMEOUT_MS: '90000', DB_LONG_QUERY_TIMEOUT_MS: '90000' },
      'DB_LONG_QUERY_TIMEOUT_MS',
    ],
    [{ DB_LONG_QUERY_TIMEOUT_MS: '2m' }, 'DB_LONG_QUERY_TIMEOUT_MS'],
    [{ EXPORT_IDLE_TIMEOUT_MS: '10' }, 'EXPORT_IDLE_TIMEOUT_MS'],
    [{ EXPORT_ID_PREFIX: 'mas/' }, 'EXPORT_ID_PREFIX'],
    [{ EXPORT_ID_PREFIX: 'x'.repeat(33) }, 'EXPORT_ID_PREFIX'],
    [{ EXPORT_ORG_NAME: 'Uni\tversity' }, 'EXPORT_ORG_NAME'],
    [{ EXPORT_YEAR_START: '02-29' }, 'EXPORT_YEAR_START'],
    [{ EXPORT_YEAR_START: '13-01' }, 'EXPORT_YEAR_START'],
    [{ EXPORT_YEAR_START: '9-1' }, 'EXPORT_YEAR_START'],
    [{ CANVAS_ACCOUNT_ID: 'a\nb' }, 'CANVAS_ACCOUNT_ID'],
    [{ REQUEST_TIMEOUT_MS: '0' }, 'REQUEST_TIMEOUT_MS'],
    [{ REQUEST_TIMEOUT_MS: '2m' }, 'REQUEST_TIMEOUT_MS'],
  ])('refuses %j naming %s', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(`Invalid configuration: ${variable}`);
  });

  it('reads the LMS export settings, with their defaults', () => {
    expect(loadConfig({}).lmsExport).toEqual({
      idPrefix: 'mas-',
      orgName: 'University',
      yearStart: { month: 1, day: 1 },
      canvasAccountId: undefined,
    });
    expect(
      loadConfig({
        EXPORT_ID_PREFIX: 'uni.',
        EXPORT_ORG_NAME: 'Université de Nulle Part',
        EXPORT_YEAR_START: '09-01',
        CANVAS_ACCOUNT_ID: 'sis_account_7',
      }).lmsExport,
    ).toEqual({
      idPrefix: 'uni.',
      orgName: 'Université de Nulle Part',
      yearStart: { month: 9, day: 1 },
      canvasAccountId: 'sis_account_7',
    });
  });

  it('takes DATABASE_PASSWORD as it is, whatever characters it has, for the URL without a password', () => {
    const password = 'p@ss:w/rd%41#?& é+';
    const { databaseUrl } = loadConfig({
      DATABASE_URL: 'postgres://mas@db:5432/mas',
      DATABASE_PASSWORD: password,
    });
    // What the driver will send: pg decodes the URL exactly as it does when the service connects.
    const client = new pg.Client({ connectionString: databaseUrl });
    expect(client).toMatchObject({ user: 'mas', password, host: 'db', port: 5432, database: 'mas' });
  });

  it.each([
    [{ DATABASE_PASSWORD: 'secret' }, 'needs DATABASE_URL'],
    [
      { DATABASE_URL: 'postgres://u:p@db/mas', DATABASE_PASSWORD: 'secret' },
      'is set while DATABASE_URL carries',
    ],
    [{ DATABASE_URL: 'postgres://db/mas', DATABASE_PASSWORD: 'secret' }, 'needs a user name'],
  ])('refuses DATABASE_PASSWORD with %j', (env, problem) => {
    expect(() => loadConfig(env)).toThrow(`Invalid configuration: DATABASE_PASSWORD ${problem}`);
    expect(() => loadConfig(env)).not.toThrow(/secret/);
  });

  it('never echoes a rejected secret', () => {
    expect(() => loadConfig({ JWT_SECRET: 'short-secret-value' })).toThrow(/^((?!short-secret-value).)*$/);
  });
});

describe('loadConfig: metrics', () => {
  it('serves no metrics unless METRICS_PORT is set, and listens on HOST by default', () => {
    expect(loadConfig({})).toMatchObject({ metricsPort: undefined, metricsHost: '0.0.0.0' });
    expect(loadConfig({ HOST: '10.0.0.5', METRICS_PORT: '9464' })).toMatchObject({
      metricsPort: 9464,
      metricsHost: '10.0.0.5',
    });
    expect(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '127.0.0.1' }).metricsHost).toBe('127.0.0.1');
  });

  it.each([
    [{ METRICS_PORT: 'on' }],
    [{ METRICS_PORT: '65536' }],
    [{ METRICS_PORT: '3000' }],
    [{ PORT: '9000', METRICS_PORT: '9000' }],
  ])('refuses %j naming METRICS_PORT', (env) => {
    expect(() => loadConfig(env)).toThrow('Invalid configuration: METRICS_PORT');
  });
});

describe('loadConfig: single sign-on', () => {
  const issuer = 'https://login.example.edu/realms/uni';

  it('is off unless OIDC_ISSUER is set, with password login on', () => {
    expect(loadConfig({})).toMatchObject({ oidc: undefined, passwordLogin: true });
  });

  it('reads the settings with their defaults', () => {
    expect(loadConfig({ OIDC_ISSUER: issuer, OIDC_AUDIENCE: 'module-admin-api' }).oidc).toEqual({
      issuer,
      audience: 'module-admin-api',
      usernameClaim: 'preferred_username',
      externalIdClaim: undefined,
      createUsers: false,
      clientId: undefined,
      scopes: ['openid', 'profile', 'email'],
      maxTokenAgeS: 86_400,
      refetchCooldownMs: 30_000,
    });
    const config = loadConfig({
      OIDC_ISSUER: issuer,
      OIDC_AUDIENCE: 'api://modules',
      OIDC_USERNAME_CLAIM: 'upn',
      OIDC_EXTERNAL_ID_CLAIM: 'oid',
      OIDC_CREATE_USERS: 'true',
      OIDC_CLIENT_ID: 'console',
      OIDC_SCOPES: 'openid  email',
      OIDC_MAX_TOKEN_AGE: '3600',
      ADMIN_OIDC_SUBJECT: 'f3b2c1d0-subject',
      PASSWORD_LOGIN: 'false',
    });
    expect(config.passwordLogin).toBe(false);
    expect(config.oidc).toMatchObject({
      usernameClaim: 'upn',
      externalIdClaim: 'oid',
      createUsers: true,
      clientId: 'console',
      scopes: ['openid', 'email'],
      maxTokenAgeS: 3600,
      adminSubject: 'f3b2c1d0-subject',
    });
  });

  it.each([
    [{ OIDC_ISSUER: 'login.example.edu' }, 'OIDC_ISSUER must be a URL'],
    [{ OIDC_ISSUER: 'http://login.example.edu', OIDC_AUDIENCE: 'a' }, 'OIDC_ISSUER must use https://'],
    [{ OIDC_ISSUER: `${issuer}?x=1`, OIDC_AUDIENCE: 'a' }, 'OIDC_ISSUER must not carry a query'],
    [{ OIDC_ISSUER: issuer }, 'OIDC_AUDIENCE is required with OIDC_ISSUER'],
    [{ OIDC_AUDIENCE: 'a' }, 'OIDC_AUDIENCE needs OIDC_ISSUER'],
    [{ OIDC_CLIENT_ID: 'console' }, 'OIDC_CLIENT_ID needs OIDC_ISSUER'],
    [{ OIDC_ISSUER: issuer, OIDC_AUDIENCE: 'a', OIDC_SCOPES: 'profile' }, 'OIDC_SCOPES must be'],
    [{ OIDC_ISSUER: issuer, OIDC_AUDIENCE: 'a', OIDC_USERNAME_CLAIM: 'a b' }, 'OIDC_USERNAME_CLAIM must be'],
    [
      { OIDC_ISSUER: issuer, OIDC_AUDIENCE: 'a', OIDC_EXTERNAL_ID_CLAIM: 'a b' },
      'OIDC_EXTERNAL_ID_CLAIM must be',
    ],
    [{ OIDC_ISSUER: issuer, OIDC_AUDIENCE: 'a', OIDC_CREATE_USERS: 'maybe' }, 'OIDC_CREATE_USERS must be'],
    [{ OIDC_ISSUER: issuer, OIDC_AUDIENCE: 'a', OIDC_MAX_TOKEN_AGE: '59' }, 'OIDC_MAX_TOKEN_AGE must be'],
    [{ OIDC_ISSUER: issuer, OIDC_AUDIENCE: 'a', OIDC_MAX_TOKEN_AGE: '1d' }, 'OIDC_MAX_TOKEN_AGE must be'],
    [{ OIDC_MAX_TOKEN_AGE: '3600' }, 'OIDC_MAX_TOKEN_AGE needs OIDC_ISSUER'],
    [{ ADMIN_OIDC_SUBJECT: 'sub-1' }, 'ADMIN_OIDC_SUBJECT needs OIDC_ISSUER'],
    [{ OIDC_ISSUER: issuer, OIDC_AUDIENCE: 'a', ADMIN_OIDC_SUBJECT: 'a\tb' }, 'ADMIN_OIDC_SUBJECT must be'],
    [{ PASSWORD_LOGIN: 'off' }, 'PASSWORD_LOGIN must be true or false'],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(
      new RegExp(`^Invalid configuration: ${message.replace(/[?]/g, '\\?')}`),
    );
  });

  it('allows plain http for an issuer on localhost only', () => {
    expect(loadConfig({ OIDC_ISSUER: 'http://127.0.0.1:4000', OIDC_AUDIENCE: 'a' }).oidc?.issuer).toBe(
      'http://127.0.0.1:4000',
    );
  });
});
