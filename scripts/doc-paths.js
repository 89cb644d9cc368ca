// `node scripts/doc-paths.js`: fails when a doc or a source comment names a repository file that does not exist
// (.ci/steps/25-doc-paths.sh). What counts as a named path, so that nothing else is ever reported:
// - where: in README.md and docs/**/*.md, the inline code spans (`…`, outside fenced blocks) and the link
//   targets (`](…)`); in the comments of the tracked .ts, .js and .cjs files (`// …`, `/* … */`) and of the
//   .sh, .yml and .yaml files (`# …`), every word;
// - what: a token of letters, digits and `_ . @ - /` only (so no glob, placeholder or command: `*.shape.ts`,
//   `src/<feature>/`, `npm run build`), not a URL, that either starts with a top-level folder of the repository
//   followed by `/` (`src/`, `docs/`, …) or ends with a file extension of the repository (`.ts`, `.md`, …);
//   `#anchor`, `:line` and `?query` tails are dropped first;
// - exists: as a file or folder of the repository (tracked, or new and not ignored), relative to its root or to
//   the naming file's folder (a link), or as the tail of such a path (`membership/module-roles.repository.ts`,
//   `app.ts`); a `.js` name may name the `.ts` file it is compiled from. Built and installed output (`dist/`, `node_modules/`) and what
//   git ignores (a run's output, `bench/results/latest.md`, and the folders it goes to) are not checked.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const FOLDERS = ['src', 'test', 'docs', 'scripts', 'bench', 'deploy', '.ci'];
const EXTENSIONS = ['ts', 'js', 'cjs', 'mjs', 'json', 'md', 'sh', 'yml', 'yaml', 'sql'];
const TOKEN = /^[\w.@/-]+$/;
const HAS_EXTENSION = new RegExp(`[A-Za-z0-9_-]\\.(${EXTENSIONS.join('|')})$`);
const IN_FOLDER = new RegExp(`^(${FOLDERS.map((f) => f.replace('.', '\\.')).join('|')})/`);
const NOT_OURS = /^(dist|node_modules|coverage)\//;

/** `token` without its `#anchor`, `?query` or `:line` tail and its leading `./`. @param {string} token */
function bare(token) {
  return token
    .replace(/[#?].*$/, '')
    .replace(/:\d+(-\d+)?$/, '')
    .replace(/^\.\//, '');
}

/**
 * The repository path `token` names (see the top of this file), or undefined when it names none.
 * @param {string} token
 * @returns {string | undefined}
 */
export function namedPath(token) {
  if (token.includes('://') || token.startsWith('/') || token.startsWith('~')) return undefined;
  const candidate = bare(token);
  if (!TOKEN.test(candidate) || NOT_OURS.test(candidate) || candidate.includes('//')) return undefined;
  return IN_FOLDER.test(candidate) || HAS_EXTENSION.test(candidate) ? candidate : undefined;
}

/**
 * The tokens a Markdown text names: inline code spans and link targets, outside fenced code blocks.
 * @param {string} text
 * @returns {string[]}
 */
export function markdownTokens(text) {
  /** @type {string[]} */
  const tokens = [];
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    for (const match of line.matchAll(/`([^`]+)`/g)) tokens.push(match[1].trim());
    for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) tokens.push(match[1]);
  }
  return tokens;
}

const WORD_EDGES = /^[\s([{'"`,;:]+|[\s)\]}'"`,;:.!?]+$/g;

/** The words of a text, without the punctuation around them. @param {string} text @returns {string[]} */
function words(text) {
  return text
    .split(/\s+/)
    .map((word) => word.replace(WORD_EDGES, ''))
    .filter((word) => word !== '');
}

/**
 * The words of the comments of a TypeScript or JavaScript source: `// …` to the line's end and `/* … *\/`.
 * @param {string} text
 * @returns {string[]}
 */
export function scriptCommentTokens(text) {
  /** @type {string[]} */
  const tokens = [];
  // A quoted string or template is skipped whole, so `'http://…'` or `'a/*'` starts no comment.
  const pattern = /'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|`(?:\\.|[^`\\])*`|\/\/[^\n]*|\/\*[\s\S]*?\*\//g;
  for (const match of text.matchAll(pattern)) {
    const found = match[0];
    if (found.startsWith('//')) tokens.push(...words(found.slice(2)));
    else if (found.startsWith('/*')) tokens.push(...words(found.slice(2, -2).replace(/^\s*\*/gm, ' ')));
  }
  return tokens;
}

/**
 * The words of the `#` comments of a shell or YAML file (a line's rest after a `#` that starts a word).
 * @param {string} text
 * @returns {string[]}
 */
export function hashCommentTokens(text) {
  /** @type {string[]} */
  const tokens = [];
  for (const line of text.split('\n')) {
    const at = line.search(/(^|\s)#(?!!)/);
    if (at >= 0) tokens.push(...words(line.slice(at).replace(/^\s*#/, '')));
  }
  return tokens;
}

/**
 * The tokens `file` names, by its kind; none for a kind that is not checked.
 * @param {string} file
 * @param {string} text
 * @returns {string[]}
 */
export function tokensOf(file, text) {
  if (file.endsWith('.md'))
    return file === 'README.md' || file.startsWith('docs/') ? markdownTokens(text) : [];
  if (/\.(ts|js|cjs|mjs)$/.test(file)) return scriptCommentTokens(text);
  if (/\.(sh|ya?ml)$/.test(file)) return hashCommentTokens(text);
  return [];
}

/**
 * A test of existence over the tracked files (and the folders that hold them).
 * @param {string[]} files
 * @returns {(name: string, from: string) => boolean}
 */
export function existence(files) {
  const known = new Set(files);
  for (const file of files) {
    for (let at = file.indexOf('/'); at >= 0; at = file.indexOf('/', at + 1)) known.add(file.slice(0, at));
  }
  const tails = new Set();
  for (const entry of known) {
    const parts = entry.split('/');
    for (let i = 1; i < parts.length; i++) tails.add(parts.slice(i).join('/'));
  }
  /** @param {string} name @param {string} from */
  const one = (name, from) =>
    known.has(name) ||
    known.has(path.posix.normalize(path.posix.join(path.posix.dirname(from), name))) ||
    tails.has(name);
  return (name, from) => {
    const trimmed = name.replace(/\/$/, '');
    return one(trimmed, from) || (trimmed.endsWith('.js') && one(trimmed.replace(/\.js$/, '.ts'), from));
  };
}

/**
 * Every named path that does not exist, as `file: path`, over the tracked files of `root`.
 * @param {string} root
 * @returns {string[]}
 */
export function missingPaths(root) {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((file) => file !== '');
  const exists = existence(files);
  /** @type {string[]} */
  const missing = [];
  for (const file of files) {
    if (file.startsWith('docs/sql/') || file === 'docs/openapi.json' || file === 'package-lock.json')
      continue;
    const tokens = tokensOf(file, readFileSync(path.join(root, file), 'utf8'));
    for (const token of tokens) {
      const name = namedPath(token);
      if (name !== undefined && !exists(name, file)) missing.push(`${file}: ${name}`);
    }
  }
  return withoutIgnored(root, [...new Set(missing)]);
}

/**
 * `missing` without the paths the project writes and git ignores (`bench/results/latest.md`) and the folders
 * that hold them (`bench/results/`): a run's output, named where it is written, not a checked-in file.
 * @param {string} root
 * @param {string[]} missing
 * @returns {string[]}
 */
function withoutIgnored(root, missing) {
  if (missing.length === 0) return missing;
  const names = missing.map((entry) => entry.slice(entry.indexOf(': ') + 2).replace(/\/$/, ''));
  const patterns = readFileSync(path.join(root, '.gitignore'), 'utf8').split('\n');
  const ignored = new Set(
    spawnSync('git', ['check-ignore', '--no-index', '--stdin'], {
      cwd: root,
      input: names.join('\n'),
      encoding: 'utf8',
    })
      .stdout.split('\n')
      .filter((name) => name !== ''),
  );
  return missing.filter(
    (_, i) => !ignored.has(names[i]) && !patterns.some((p) => p.startsWith(`${names[i]}/`)),
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const missing = missingPaths(root);
  if (missing.length > 0) {
    process.stderr.write(`Paths named in docs or comments that do not exist:\n  ${missing.join('\n  ')}\n`);
    process.exit(1);
  }
}
