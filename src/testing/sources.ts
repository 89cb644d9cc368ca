import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** A source file of src/, named relative to src/ with `/` (`users/users.service.ts`). */
export interface SourceFile {
  name: string;
  text: string;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'migrations' ? [] : sources(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [full] : [];
  });
}

/**
 * The service's TypeScript sources under src/ for the specs that hold a rule over the whole code: every `.ts`
 * file but the specs and the migrations, src/testing/ included (those specs skip it by name when it matters).
 */
export function serviceSources(): SourceFile[] {
  const src = path.resolve('src');
  return sources(src).map((file) => ({
    name: path.relative(src, file).split(path.sep).join('/'),
    text: readFileSync(file, 'utf8'),
  }));
}
