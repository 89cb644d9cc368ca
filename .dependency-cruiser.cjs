/**
 * The import rules between the folders of src/ (run by `npm run lint`). The allowed direction is
 *
 *   auth → users, tokens   course-modules → users   webhooks → events   health → redis, database   scim → users
 *   exports → course-modules
 *
 * and every feature may use the shared infrastructure below it: database/, storage/, redis/, csv/, uploads/,
 * openapi/, observability/, core/ and config/, and write to audit/ and events/ (which import no feature). Among
 * the infrastructure: csv/ → openapi/ → http/ → core/ → config/, csv/ → uploads/ → core/, observability/ → config/,
 * database/ and storage/ use core/ and config/ only, redis/ config/ only. No other edge between folders is allowed, so the
 * folders form a graph without cycles (docs/architecture.md draws it).
 *
 * Inside course-modules/ the sub-folders form an order too (docs/architecture.md, "course-modules/ inside"):
 *
 *   personnel, roster, rollover ──► membership ──► modules
 *
 * modules/ (the module, its roles, the access rule, the module routes) imports no other sub-folder; membership/ (the
 * role rows, their lifecycle and summaries) imports modules/ only; each use case above imports modules/ and
 * membership/, never another use case. Only course-modules.module.ts imports them all.
 *
 * workers/ (the background work: every timer and loop) sits on top of the features whose passes it runs, and only
 * app.module.ts imports it, when the configuration turns the background work on (docs/architecture.md,
 * "Background work").
 */
const FEATURES = 'auth|users|course-modules|health|webhooks|tokens|scim|exports';
/** Shared infrastructure that knows no feature. */
const INFRASTRUCTURE = 'database|storage|redis|csv|uploads|openapi|observability|audit|events|idempotency';

/** A rule forbidding imports from one src/ folder into others. */
const forbid = (name, from, to, comment) => ({
  name,
  comment,
  severity: 'error',
  from: { path: `^src/(${from})/` },
  to: { path: `^src/(${to})/` },
});

/**
 * A rule letting files of the course-modules/ sub-folder(s) `from` (a pattern; `$1` in `mayImport` is its group)
 * import no course-modules/ file outside the sub-folders `mayImport`.
 */
const inCourseModules = (name, from, mayImport, comment) => ({
  name,
  comment,
  severity: 'error',
  from: { path: `^src/course-modules/${from}` },
  to: { path: '^src/course-modules/', pathNot: `^src/course-modules/(${mayImport})/` },
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Modules must not import each other, directly or through others.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    forbid(
      'core-is-the-request-pipeline',
      'core',
      `${FEATURES}|${INFRASTRUCTURE}|http`,
      'core/ is the request pipeline every route runs through; it uses config/ only.',
    ),
    forbid(
      'http-uses-core-only',
      'http',
      `${FEATURES}|${INFRASTRUCTURE}`,
      'http/ is the Fastify plumbing under the Nest pipeline (hooks, server options); it uses core/ and config/ only.',
    ),
    forbid(
      'config-imports-nothing',
      'config',
      `${FEATURES}|${INFRASTRUCTURE}|core|http`,
      'config/ is read by everything else.',
    ),
    forbid(
      'openapi-uses-core-only',
      'openapi',
      `${FEATURES}|database|storage|redis|csv|uploads|observability|audit|events`,
      'openapi/ builds the document and the console from the decorators; features use it, it knows none.',
    ),
    forbid(
      'csv-uses-core-and-openapi-only',
      'csv',
      `${FEATURES}|database|storage|redis|observability|audit|events`,
      'csv/ reads and writes CSV for any feature; it knows none.',
    ),
    forbid(
      'uploads-uses-core-only',
      'uploads',
      `${FEATURES}|database|storage|redis|csv|openapi|observability|audit|events`,
      'uploads/ reads upload bodies (the one file part, the accepted content types) for any feature; it knows none.',
    ),
    forbid(
      'observability-uses-config-only',
      'observability',
      `${FEATURES}|database|storage|redis|csv|uploads|openapi|audit|events|core|http`,
      'observability/ (logs and metrics) is used by everything and uses config/ only.',
    ),
    forbid(
      'redis-uses-config-only',
      'redis',
      `${FEATURES}|database|storage|csv|uploads|openapi|observability|audit|events|core|http`,
      'redis/ is a connection provider; it knows no feature.',
    ),
    forbid(
      'database-imports-no-feature',
      'database',
      `${FEATURES}|storage|redis|csv|uploads|openapi|observability|audit|events`,
      'database/ holds shared SQL pieces and the transaction helper only.',
    ),
    forbid(
      'storage-imports-no-feature',
      'storage',
      `${FEATURES}|database|redis|csv|uploads|openapi|observability|audit|events`,
      'storage/ is a feature-neutral file store.',
    ),
    forbid(
      'audit-imports-no-feature',
      'audit',
      `${FEATURES}|storage|redis|csv|uploads|events`,
      'audit/ is the trail every feature writes to; it knows none of them.',
    ),
    forbid(
      'users-imports-no-other-feature',
      'users',
      'auth|course-modules|health',
      'users/ is below auth/ and course-modules/.',
    ),
    forbid(
      'auth-uses-users-and-tokens-only',
      'auth',
      'course-modules|health|scim',
      'auth/ builds on users/ and tokens/ only.',
    ),
    forbid(
      'tokens-imports-no-feature',
      'tokens',
      'auth|users|course-modules|health|webhooks|scim',
      'tokens/ (integration tokens) is asked by auth/; it knows no feature.',
    ),
    forbid(
      'scim-uses-users-only',
      'scim',
      'auth|tokens|course-modules|health|webhooks',
      'scim/ provisions users through users/.',
    ),
    forbid(
      'no-feature-imports-scim',
      'auth|users|course-modules|health|webhooks|tokens|audit|events',
      'scim',
      'scim/ sits on top: nothing imports it but the application module.',
    ),
    forbid(
      'course-modules-uses-users-only',
      'course-modules',
      'auth|health',
      'course-modules/ builds on users/ only.',
    ),
    inCourseModules(
      'course-modules-modules-is-the-base',
      'modules/',
      'modules',
      'course-modules/modules/ (the module, its roles, the access rule, the module routes) imports no other sub-folder.',
    ),
    inCourseModules(
      'course-modules-membership-uses-modules-only',
      'membership/',
      'modules|membership',
      'course-modules/membership/ (role rows, their lifecycle and summaries) builds on modules/ only.',
    ),
    inCourseModules(
      'course-modules-use-cases-use-modules-and-membership-only',
      '(?!modules/|membership/)([^/]+)/',
      'modules|membership|$1',
      'Each other sub-folder of course-modules/ (personnel/, roster/, rollover/) is a use case: it builds on ' +
        'modules/ and membership/, and no use case imports another.',
    ),
    forbid(
      'webhooks-uses-audit-and-events-only',
      'webhooks',
      'auth|users|course-modules|health',
      'webhooks/ follows the change feed (events/) and writes to audit/; no feature knows it.',
    ),
    forbid(
      'no-feature-imports-webhooks',
      'auth|users|course-modules|health|audit|events',
      'webhooks',
      'webhooks/ sits on top: nothing imports it but the application module.',
    ),
    forbid(
      'events-imports-no-feature',
      'events',
      `${FEATURES}|audit|storage|redis|csv|uploads`,
      'events/ is the outbox every feature writes to; it knows none of them.',
    ),
    {
      name: 'only-unit-specs-use-testing',
      comment:
        "src/testing/ holds the unit specs' shared fakes; the build leaves it out, so no other code may import it.",
      severity: 'error',
      from: { path: '^src/', pathNot: ['\\.spec\\.ts$', '^src/testing/'] },
      to: { path: '^src/testing/' },
    },
    forbid(
      'exports-uses-course-modules-only',
      'exports',
      'auth|users|health|webhooks|tokens|scim',
      'exports/ reads the memberships through the shapes course-modules/ defines; it changes nothing of theirs.',
    ),
    forbid(
      'no-feature-imports-exports',
      'auth|users|course-modules|health|webhooks|tokens|scim|audit|events',
      'exports',
      'exports/ sits on top: nothing imports it but the application module.',
    ),
    {
      name: 'only-the-application-module-imports-workers',
      comment:
        'workers/ holds the background work; AppModule.forRoot imports it only when config.backgroundWorkers is ' +
        'true, so nothing else may start it.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/app\\.module\\.ts$', '^src/workers/'] },
      to: { path: '^src/workers/' },
    },
    forbid(
      'health-uses-no-feature',
      'health',
      'auth|users|course-modules',
      'health/ pings the database only.',
    ),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules|data)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
