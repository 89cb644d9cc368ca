/**
 * The import rules between the folders of src/ (run by `npm run lint`). The allowed direction is
 *
 *   auth → users → core        course-modules → users → core        health → core
 *
 * and every feature may use database/, storage/ and config/, and write to audit/ and events/ (which import no
 * feature); core/ uses config/ only. No other edge between
 * folders is allowed, so the folders form a graph without cycles.
 */
const FEATURES = 'auth|users|course-modules|health|webhooks';

/** A rule forbidding imports from one src/ folder into others. */
const forbid = (name, from, to, comment) => ({
  name,
  comment,
  severity: 'error',
  from: { path: `^src/(${from})/` },
  to: { path: `^src/(${to})/` },
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
      'core-imports-no-feature',
      'core',
      `${FEATURES}|database|storage`,
      'core/ is shared by every feature and knows none.',
    ),
    forbid(
      'config-imports-nothing',
      'config',
      `${FEATURES}|core|database|storage`,
      'config/ is read by everything else.',
    ),
    forbid(
      'database-imports-no-feature',
      'database',
      `${FEATURES}|storage`,
      'database/ holds shared SQL pieces and the transaction helper only.',
    ),
    forbid(
      'storage-imports-no-feature',
      'storage',
      `${FEATURES}|database`,
      'storage/ is a feature-neutral file store.',
    ),
    forbid(
      'users-imports-no-other-feature',
      'users',
      'auth|course-modules|health',
      'users/ is below auth/ and course-modules/.',
    ),
    forbid('auth-uses-users-only', 'auth', 'course-modules|health', 'auth/ builds on users/ only.'),
    forbid(
      'course-modules-uses-users-only',
      'course-modules',
      'auth|health',
      'course-modules/ builds on users/ only.',
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
      'auth|users|course-modules|health|audit',
      'events/ is the outbox every feature writes to; it knows none of them.',
    ),
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
