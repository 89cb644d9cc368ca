/** Numbered placeholders for SQL assembled from optional parts: `params.add(value)` returns `$n`. */
export class SqlParams {
  readonly values: unknown[] = [];

  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** `WHERE a AND b`, or nothing when there are no conditions. */
export function whereClause(conditions: readonly string[]): string {
  return conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
}
