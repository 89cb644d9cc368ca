import { type EntityMetadata } from 'typeorm';

/**
 * A row of a QueryBuilder's `returning(properties)` (which takes the entity's property names and returns the
 * columns under their database names), keyed by those properties again, in their order; the values as `pg`
 * parsed them.
 */
export function returnedRow<T, K extends keyof T & string>(
  metadata: EntityMetadata,
  properties: readonly K[],
  row: Record<string, unknown>,
): Pick<T, K> {
  return Object.fromEntries(
    properties.map((property) => [
      property,
      row[metadata.findColumnWithPropertyPath(property)!.databaseName],
    ]),
  ) as Pick<T, K>;
}
