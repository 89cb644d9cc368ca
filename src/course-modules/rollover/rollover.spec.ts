import { rolloverResult } from './rollover.js';

describe(rolloverResult.name, () => {
  const sources = [
    { id: '12', code: 'MAT200', toId: null },
    { id: '10', code: 'CSC100', toId: '40' },
    { id: '11', code: 'BIO300', toId: null },
  ];

  it('lists sources and missing codes by code, with the counts', () => {
    const result = rolloverResult({
      sources,
      codes: ['MAT200', 'ZZZ999', 'CSC100', 'BIO300', 'AAA000', 'ZZZ999'],
      created: new Map([
        ['MAT200', '41'],
        ['BIO300', '42'],
      ]),
      toIds: new Map([
        ['MAT200', '41'],
        ['BIO300', '42'],
        ['CSC100', '40'],
      ]),
      copied: new Map([
        ['12', 3],
        ['10', 1],
      ]),
      dryRun: false,
    });
    expect(result).toEqual({
      modules: [
        { code: 'AAA000', from_id: null, to_id: null, action: 'missing', members_copied: 0 },
        { code: 'BIO300', from_id: 11, to_id: 42, action: 'create', members_copied: 0 },
        { code: 'CSC100', from_id: 10, to_id: 40, action: 'exists', members_copied: 1 },
        { code: 'MAT200', from_id: 12, to_id: 41, action: 'create', members_copied: 3 },
        { code: 'ZZZ999', from_id: null, to_id: null, action: 'missing', members_copied: 0 },
      ],
      created: 2,
      existing: 1,
      missing: 2,
      members_copied: 4,
      dry_run: false,
    });
  });

  it('on a dry run, shows a module still to create with no to_id', () => {
    const result = rolloverResult({
      sources,
      codes: undefined,
      created: new Map(),
      toIds: new Map([['CSC100', '40']]),
      copied: new Map(),
      dryRun: true,
    });
    expect(result.modules.map((row) => [row.code, row.action, row.to_id])).toEqual([
      ['BIO300', 'create', null],
      ['CSC100', 'exists', 40],
      ['MAT200', 'create', null],
    ]);
    expect(result).toMatchObject({ created: 2, existing: 1, missing: 0, dry_run: true });
  });
});
