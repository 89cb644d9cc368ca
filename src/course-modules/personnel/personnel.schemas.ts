/** The counts the personnel, student and membership writes answer with, as response schemas (see openapi/openapi.ts). */
import { schema } from '../../openapi/openapi.js';

const count = (name: string, key: string) =>
  schema(name, {
    type: 'object',
    required: [key],
    additionalProperties: false,
    properties: { [key]: { type: 'integer', minimum: 0, example: 2 } },
  });
export const UpdatedCountSchema = count('UpdatedCount', 'updated');
export const AssignedCountSchema = count('AssignedCount', 'assigned');
export const RemovedCountSchema = count('RemovedCount', 'removed');
export const EnrolledCountSchema = count('EnrolledCount', 'enrolled');
