// oidc-provider ships no type declarations; this covers the part the tests use.
declare module 'oidc-provider' {
  import { type IncomingMessage, type ServerResponse } from 'node:http';

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
    on(event: string, listener: (...args: any[]) => void): this;
  }
}
