/**
 * A handler result that is already JSON text, built by PostgreSQL for a large body (a module with thousands of
 * people): the envelope interceptor writes the envelope around it as text, so the service neither parses the
 * rows into objects nor serialises them again.
 */
export class JsonText<T = unknown> {
  /** The shape the text holds, for readers of a handler's signature (never set). */
  declare readonly shape?: T;

  constructor(readonly json: string) {}
}
