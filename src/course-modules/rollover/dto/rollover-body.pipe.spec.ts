import { messageOf, moduleBodyPipe } from '../../../../test/support/body-pipes.js';
import { ModuleRole } from '../../modules/module-role.js';
import { RolloverBodyPipe } from './rollover-body.pipe.js';

const pipe = (pattern?: string) => new RolloverBodyPipe(moduleBodyPipe(pattern));

describe(RolloverBodyPipe.name, () => {
  it('defaults to every module and the staff roles; makes roles canonical and distinct', async () => {
    await expect(pipe().transform({ from_year: 2026, to_year: 2027 })).resolves.toEqual({
      fromYear: 2026,
      toYear: 2027,
      codes: undefined,
      roles: [ModuleRole.Lecturer, ModuleRole.AssistantLecturer, ModuleRole.Tutor],
    });
    await expect(
      pipe().transform({
        from_year: 2027,
        to_year: 2026,
        codes: ['ABC123'],
        roles: ['tutor', 'TUTOR', 'student'],
      }),
    ).resolves.toEqual({
      fromYear: 2027,
      toYear: 2026,
      codes: ['ABC123'],
      roles: [ModuleRole.Tutor, ModuleRole.Student],
    });
  });

  it('checks codes against the configured pattern', async () => {
    await expect(
      pipe('^[A-Z]+$').transform({ from_year: 2026, to_year: 2027, codes: ['CS'] }),
    ).resolves.toMatchObject({
      codes: ['CS'],
    });
    expect(await messageOf(pipe().transform({ from_year: 2026, to_year: 2027, codes: ['CS'] }))).toBe(
      'codes must be an array of module codes in format ABC123',
    );
  });

  it('joins the messages in field order, unknown properties last', async () => {
    expect(
      await messageOf(
        pipe().transform({ extra: true, roles: ['Dean'], codes: ['abc'], to_year: 2026, from_year: 2026 }),
      ),
    ).toBe(
      'to_year must differ from from_year; codes must be an array of module codes in format ABC123; ' +
        'roles must be an array of roles: Lecturer, AssistantLecturer, Tutor, Student; property extra should not exist',
    );
    expect(await messageOf(pipe().transform({ roles: [], codes: [] }))).toBe(
      'Year must be between 1900 and 9999; codes must hold at least one module code',
    );
  });

  it('refuses a body that is not an object', async () => {
    for (const body of [null, undefined, [], 'x', 3]) {
      expect(await messageOf(pipe().transform(body))).toBe('Request body must be a JSON object');
    }
  });
});
