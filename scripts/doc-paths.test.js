// `node --test scripts/doc-paths.test.js`: what scripts/doc-paths.js takes for a named path, and what not
// (run by .ci/steps/25-doc-paths.sh before the check itself).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  existence,
  hashCommentTokens,
  markdownTokens,
  namedPath,
  scriptCommentTokens,
  tokensOf,
} from './doc-paths.js';

void describe('namedPath', () => {
  void it('takes paths under a top-level folder and names with a known extension', () => {
    assert.equal(namedPath('src/app.ts'), 'src/app.ts');
    assert.equal(namedPath('src/course-modules/'), 'src/course-modules/');
    assert.equal(namedPath('.ci/steps/56-openapi-fresh.sh'), '.ci/steps/56-openapi-fresh.sh');
    assert.equal(namedPath('openapi.setup.ts'), 'openapi.setup.ts');
    assert.equal(namedPath('membership/module-roles.repository.ts'), 'membership/module-roles.repository.ts');
    assert.equal(namedPath('.redocly.lint-ignore.yaml'), '.redocly.lint-ignore.yaml');
  });

  void it('drops an anchor, a query, a line number and a leading ./', () => {
    assert.equal(namedPath('api.md#12-change-events'), 'api.md');
    assert.equal(namedPath('src/app.ts:94'), 'src/app.ts');
    assert.equal(namedPath('./sql/README.md'), 'sql/README.md');
  });

  void it('leaves out globs, placeholders, commands, URLs, absolute paths, packages and built output', () => {
    for (const token of [
      '*.shape.ts',
      'src/<feature>/*.controller.ts',
      'npm run build',
      'https://example.edu/docs/api.md',
      '/etc/hosts.json',
      '~/.npmrc.json',
      '@nestjs/swagger',
      'dist/src/main.js',
      'node_modules/pg/package.json',
      'module.members_changed',
      'e.g.',
      '#anchor-only',
      'request.user',
      'POST /api/modules',
    ]) {
      assert.equal(namedPath(token), undefined, token);
    }
  });
});

void describe('the tokens of a file', () => {
  void it('in Markdown: code spans and link targets, not fenced blocks', () => {
    const text = [
      'See `src/app.ts` and [the API](api.md#4-modules), or `npm test`.',
      '```sh',
      'node dist/src/openapi-document.js docs/missing.json',
      '```',
      'Then `docs/sql/`.',
    ].join('\n');
    assert.deepEqual(markdownTokens(text), ['src/app.ts', 'npm test', 'api.md#4-modules', 'docs/sql/']);
  });

  void it("in TypeScript: the comments' words, not the strings or the code", () => {
    const text = [
      "const url = 'http://host/a.ts'; // documented in (scim.openapi.ts),",
      '/**',
      ' * Built by openapi/setup.ts; see docs/api.md.',
      ' */',
      "import { x } from './other.js';",
      'const pattern = `/*not a comment*/ ${y}`;',
    ].join('\n');
    const tokens = scriptCommentTokens(text);
    assert.ok(tokens.includes('scim.openapi.ts'));
    assert.ok(tokens.includes('openapi/setup.ts'));
    assert.ok(tokens.includes('docs/api.md'));
    assert.ok(!tokens.some((token) => token.includes('other.js') || token.includes('a.ts')));
    assert.ok(!tokens.includes('not'));
  });

  void it('in shell and YAML: the # comments, not the shebang', () => {
    const text = [
      '#!/usr/bin/env bash',
      '# step: see .ci/steps/README.md',
      'echo "a#b.sh" # and (x.yaml)',
    ].join('\n');
    assert.deepEqual(
      hashCommentTokens(text).filter((token) => namedPath(token) !== undefined),
      ['.ci/steps/README.md', 'x.yaml'],
    );
  });

  void it('only in README.md and docs/ among Markdown files', () => {
    assert.deepEqual(tokensOf('bench/README.md', '`src/gone.ts`'), []);
    assert.deepEqual(tokensOf('docs/api.md', '`src/gone.ts`'), ['src/gone.ts']);
  });
});

void describe('existence', () => {
  const exists = existence(['src/app.ts', 'src/scim/scim.openapi.ts', 'docs/sql/README.md', 'docs/api.md']);

  void it('from the root, from the naming file, as a tail, as a folder, and a .js for its .ts', () => {
    assert.ok(exists('src/app.ts', 'README.md'));
    assert.ok(exists('sql/README.md', 'docs/architecture.md'));
    assert.ok(exists('scim.openapi.ts', 'src/scim/scim.controller.ts'));
    assert.ok(exists('scim/scim.openapi.ts', 'src/app.ts'));
    assert.ok(exists('src/scim/', 'docs/api.md'));
    assert.ok(exists('scim/scim.openapi.js', 'src/app.ts'));
  });

  void it('not a name that is no file, nor a partial name', () => {
    assert.ok(!exists('openapi.setup.ts', 'src/openapi/openapi.ts'));
    assert.ok(!exists('openapi/scim-paths.ts', 'src/scim/scim.controller.ts'));
    assert.ok(!exists('pp.ts', 'README.md'));
    assert.ok(!exists('src/sci/', 'README.md'));
  });
});
