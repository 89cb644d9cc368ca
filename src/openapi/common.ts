/** Schema pieces every resource uses (see openapi.ts). */
export const timestamp = {
  type: 'string',
  format: 'date-time',
  example: '2026-11-21T08:41:00.123Z',
} as const;
export const id = { type: 'integer', format: 'int64', minimum: 1, example: 1 } as const;
