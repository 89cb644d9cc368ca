import { messageOf, moduleBodyPipe as pipe } from '../../../../test/support/body-pipes.js';
import { ModuleBodyPipe } from './module-body.pipe.js';

describe(ModuleBodyPipe.name, () => {
  it('passes a valid body through', async () => {
    const body = { code: 'ABC123', year: 2026, description: null, credits: 5 };
    await expect(pipe().transform(body)).resolves.toMatchObject(body);
  });

  it('checks code against the default pattern, whole string only', () => {
    const check = pipe();
    for (const code of ['ABC123', 'ZZZ000']) expect(check.isValidCode(code)).toBe(true);
    for (const code of ['abc123', 'ABC1234', 'AB123', 'ABC123\n', ''])
      expect(check.isValidCode(code)).toBe(false);
  });

  it('uses the configured pattern and caps codes at 255 characters', () => {
    const check = pipe('^[A-Z]+$');
    expect(check.isValidCode('CS')).toBe(true);
    expect(check.isValidCode('ABC123')).toBe(false);
    expect(check.isValidCode('A'.repeat(255))).toBe(true);
    expect(check.isValidCode('A'.repeat(256))).toBe(false);
  });

  it('puts the code message first, then the others in field order, unknown properties last', async () => {
    expect(await messageOf(pipe().transform({ extra: 1, credits: 0, year: 1, code: 'bad' }))).toBe(
      'Module code must be in format ABC123; Year must be between 1900 and 9999; Credits must be a positive integer; property extra should not exist',
    );
    expect(await messageOf(pipe().transform({ code: 5, year: 2026, credits: 1 }))).toBe(
      'Module code must be in format ABC123',
    );
  });

  it('refuses a body that is not an object', async () => {
    for (const body of [null, undefined, [], 'x', 3]) {
      expect(await messageOf(pipe().transform(body))).toBe('Request body must be a JSON object');
    }
  });
});
