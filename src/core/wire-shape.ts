/**
 * Checks that keep each wire shape written once (docs/architecture.md, "Wire shapes"). A shape is an interface
 * and the tuple of its fields in the contract's order ({@link fieldsOf}); the mapper, the JSON text built in SQL
 * and the OpenAPI schema each hold one entry per field ({@link PerField}), so a field added to the interface and
 * missing from any of them fails `npm run typecheck`, and each writes its fields in the tuple's order.
 */

/** The keys of `T` that the tuple `F` leaves out. */
type Missing<T, F extends readonly PropertyKey[]> = Exclude<keyof T, F[number]>;

/** The keys the tuple `F` names twice or more. */
type Repeated<F extends readonly PropertyKey[], Seen = never> = F extends readonly [
  infer Head,
  ...infer Rest extends readonly PropertyKey[],
]
  ? (Head extends Seen ? Head : never) | Repeated<Rest, Seen | Head>
  : never;

/** `unknown` when `F` names every key of `T` exactly once; otherwise a type no tuple matches, naming the fault. */
type EveryKeyOnce<T, F extends readonly PropertyKey[]> = [Missing<T, F>] extends [never]
  ? [Repeated<F>] extends [never]
    ? unknown
    : { repeated: Repeated<F> }
  : { missing: Missing<T, F> };

/**
 * The fields of the shape `T` in wire order: `fieldsOf<T>()(['a', 'b'] as const)` compiles only when the tuple
 * names every key of `T` exactly once (and no other).
 */
export const fieldsOf =
  <T>() =>
  <const F extends readonly (keyof T & string)[]>(fields: F & EveryKeyOnce<T, F>): F =>
    fields;

/** One entry per field of the shape `T`: a missing or an extra key fails to compile. */
export type PerField<T, V> = { readonly [K in keyof T]-?: V };

/** The entries of `table` in the order of `fields` (an object's string keys keep their insertion order). */
export function inFieldOrder<K extends string, V>(
  fields: readonly K[],
  table: Readonly<Record<K, V>>,
): Record<K, V> {
  return Object.fromEntries(fields.map((field) => [field, table[field]])) as Record<K, V>;
}
