// The repository classes and their public methods, read from the TypeScript sources (a `private` method is
// indistinguishable from a public one at run time).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * @typedef {object} SourceMethod
 * @property {string} name
 * @property {string[]} params the parameters' names, in order
 * @property {string} doc the first paragraph of its doc comment, on one line ('' when none)
 *
 * @typedef {object} SourceClass
 * @property {string} file relative to the project's root, with `/`
 * @property {string} name
 * @property {SourceMethod[]} methods the public methods, in source order
 */

/**
 * Every `src/**\/*.repository.ts`, sorted by path.
 * @param {string} root
 * @returns {string[]}
 */
export function repositoryFiles(root) {
  return readdirSync(path.join(root, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.repository.ts'))
    .map((file) => path.posix.join('src', file.split(path.sep).join('/')))
    .sort();
}

/** @param {ts.Node} node */
function isHidden(node) {
  const modifiers = ts.canHaveModifiers(node) ? (ts.getModifiers(node) ?? []) : [];
  return modifiers.some(
    (modifier) =>
      modifier.kind === ts.SyntaxKind.PrivateKeyword || modifier.kind === ts.SyntaxKind.ProtectedKeyword,
  );
}

/** @param {ts.Node} node */
function docOf(node) {
  const [doc] = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc);
  const text = doc === undefined ? '' : (ts.getTextOfJSDocComment(doc.comment) ?? '');
  return text
    .split(/\n\s*\n/)[0]
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The exported classes of `file` with their public methods.
 * @param {string} root
 * @param {string} file
 * @returns {SourceClass[]}
 */
export function classesOf(root, file) {
  const text = readFileSync(path.join(root, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  /** @type {SourceClass[]} */
  const classes = [];
  for (const statement of source.statements) {
    if (!ts.isClassDeclaration(statement) || statement.name === undefined) continue;
    const exported = (ts.getModifiers(statement) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (!exported) continue;
    /** @type {SourceMethod[]} */
    const methods = [];
    for (const member of statement.members) {
      if (!ts.isMethodDeclaration(member) || !ts.isIdentifier(member.name) || isHidden(member)) continue;
      // Overload signatures have no body; the implementation is listed once.
      if (member.body === undefined) continue;
      methods.push({
        name: member.name.text,
        params: member.parameters.map((param, index) =>
          ts.isIdentifier(param.name) ? param.name.text : `arg${index + 1}`,
        ),
        doc: docOf(member),
      });
    }
    classes.push({ file, name: statement.name.text, methods });
  }
  return classes;
}

/**
 * Files outside the repositories that send SQL themselves, and why they may: anything else that calls
 * `query`, `createQueryBuilder` or `getRepository` stops the generator, since its SQL would be missing here.
 */
const SQL_OUTSIDE_REPOSITORIES = {
  'src/database/':
    'the shared database infrastructure: migrations, transactions, probes, prepared statements',
  'src/events/change-event-notifications.ts': 'LISTEN on its own connection (docs/events.md)',
  'src/webhooks/delivery-queue.ts':
    "the job queue's take on pg-boss's own pool and tables (docs/webhooks.md)",
  'src/cli.ts': 'an operator command, not a request path',
  'src/seed-demo.ts': 'the demo data generator, not a request path',
};

/**
 * The files under src/ (tests aside) that send SQL without being a repository or allowed above.
 * @param {string} root
 * @returns {string[]}
 */
export function unlistedSqlSenders(root) {
  return readdirSync(path.join(root, 'src'), { recursive: true, encoding: 'utf8' })
    .map((file) => path.posix.join('src', file.split(path.sep).join('/')))
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts') && !file.endsWith('.repository.ts'))
    .filter((file) => !Object.keys(SQL_OUTSIDE_REPOSITORIES).some((allowed) => file.startsWith(allowed)))
    .filter((file) =>
      /\.(query|createQueryBuilder|getRepository)\s*[<(]/.test(readFileSync(path.join(root, file), 'utf8')),
    )
    .sort();
}
