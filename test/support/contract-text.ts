import { readFileSync } from 'node:fs';

const API = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');

/**
 * The field list the contract (docs/api.md) writes after `lead` (its first occurrence after `section`): the first `` `{a, b, …}` `` that follows it, its
 * names in the contract's order. Unit tests hold each wire shape's field tuple to it, so the single source is
 * itself checked against the text.
 */
export function contractFields(lead: string, section = ''): string[] {
  const at = API.indexOf(lead, API.indexOf(section));
  if (at < 0) throw new Error(`docs/api.md has no "${lead}"`);
  const list = /`\{([^}`]*)\}`/.exec(API.slice(at + lead.length))!;
  return list[1].split(',').map((name) => name.trim());
}
