import http from 'node:http';
import https from 'node:https';
import { type LookupFunction } from 'node:net';
import { Webhook as Signer } from 'standardwebhooks';
import { type CheckedUrl } from './webhook-url.js';

/** How much of a receiver's answer is read; the first {@link EXCERPT_CHARS} characters of it are kept. */
const READ_LIMIT = 1024;
const EXCERPT_CHARS = 200;
const USER_AGENT = 'module-admin-service-webhooks/1';

export interface OutgoingEvent {
  /** `webhook-id`: the event id, the same on every attempt, for the receiver to dedupe on. */
  id: string;
  type: string;
  /** The event's time (RFC 3339), the body's `timestamp`. */
  at: string;
  data: unknown;
}

export interface AttemptResult {
  delivered: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  responseExcerpt: string | null;
}

/** The Standard Webhooks headers and body of one attempt; the signature covers `<id>.<timestamp>.<body>`. */
export function signedRequest(secret: string, event: OutgoingEvent, now: Date) {
  const body = JSON.stringify({ type: event.type, timestamp: event.at, data: event.data });
  const headers = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'webhook-id': event.id,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': new Signer(secret).sign(event.id, now, body),
  };
  return { body, headers };
}

/**
 * One POST to a checked URL. The connection goes to the address that was checked, whatever the host name
 * resolves to by now (no second DNS lookup that a rebinding server could answer differently); TLS still
 * verifies the certificate against the host name. Redirects are not followed; the whole attempt, answer
 * included, is bounded by `timeoutMs`.
 */
export function post(
  target: CheckedUrl,
  request: { body: string; headers: Record<string, string> },
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<AttemptResult> {
  const started = performance.now();
  const pinned: LookupFunction = (_hostname, options, callback) => {
    const { address, family } = target.address;
    if (options.all)
      (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const client = target.url.protocol === 'https:' ? https : http;
  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const finish = (result: Omit<AttemptResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', interrupted);
      outgoing.destroy();
      resolve({ ...result, durationMs: Math.round(performance.now() - started) });
    };
    const outgoing = client.request(
      target.url,
      {
        method: 'POST',
        agent: false,
        lookup: pinned,
        headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
      },
      (response) => {
        const status = response.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let length = 0;
        const done = () => {
          const excerpt = Buffer.concat(chunks).toString('utf8').slice(0, EXCERPT_CHARS);
          finish({
            delivered: status >= 200 && status < 300,
            statusCode: status,
            error: null,
            responseExcerpt: excerpt === '' ? null : excerpt,
          });
        };
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          length += chunk.length;
          if (length >= READ_LIMIT) done();
        });
        response.on('end', done);
        response.on('error', done);
      },
    );
    const timer = setTimeout(
      () =>
        finish({
          delivered: false,
          statusCode: null,
          error: `No answer within ${timeoutMs} ms`,
          responseExcerpt: null,
        }),
      timeoutMs,
    );
    outgoing.on('error', (error: NodeJS.ErrnoException) =>
      finish({
        delivered: false,
        statusCode: null,
        error: (error.code ?? error.message).slice(0, 200),
        responseExcerpt: null,
      }),
    );
    const interrupted = () =>
      finish({ delivered: false, statusCode: null, error: 'Interrupted by shutdown', responseExcerpt: null });
    if (signal?.aborted) interrupted();
    signal?.addEventListener('abort', interrupted, { once: true });
    outgoing.end(request.body);
  });
}
