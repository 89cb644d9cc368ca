import { type ModuleSource, toModuleResponse } from './module.mapper.js';

const at = new Date('2026-11-21T08:41:00.123Z');
const module = (id: number, code = `ABC${id}`): ModuleSource => ({
  id,
  code,
  year: 2026,
  description: null,
  credits: 15,
  createdAt: at,
  updatedAt: new Date(at.getTime() + 1000),
});
describe('toModuleResponse', () => {
  it('maps to the wire shape with RFC 3339 millisecond timestamps', () => {
    expect(toModuleResponse({ ...module(7), id: '7' as unknown as number })).toEqual({
      id: 7,
      code: 'ABC7',
      year: 2026,
      description: null,
      credits: 15,
      created_at: '2026-11-21T08:41:00.123Z',
      updated_at: '2026-11-21T08:41:01.123Z',
    });
  });
});
