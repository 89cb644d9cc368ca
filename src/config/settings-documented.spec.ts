import { readFileSync } from 'node:fs';

/** Every variable loadConfig() reads, found in its source, so a new setting cannot go undocumented. */
function settingsRead(): string[] {
  const source = readFileSync('src/config/app-config.ts', 'utf8');
  const names = [
    ...source.matchAll(/\b(?:read|int|bool|fraction)\(env, '([A-Z][A-Z0-9_]*)'|\benv\.([A-Z][A-Z0-9_]*)/g),
  ].map((match) => match[1] ?? match[2]);
  return [...new Set(names)].sort();
}

describe('settings are documented', () => {
  const settings = settingsRead();

  it('finds the settings loadConfig reads', () => {
    expect(settings).toEqual(
      expect.arrayContaining(['DATABASE_URL', 'DATABASE_PASSWORD', 'PORT', 'JWT_SECRET']),
    );
  });

  it('.env.example lists every setting', () => {
    const listed = new Set(
      [...readFileSync('.env.example', 'utf8').matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((match) => match[1]),
    );
    expect(settings.filter((name) => !listed.has(name))).toEqual([]);
  });

  it('the README names every setting', () => {
    const readme = readFileSync('README.md', 'utf8');
    expect(settings.filter((name) => !readme.includes(`\`${name}\``))).toEqual([]);
  });
});
