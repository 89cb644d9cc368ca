import http from 'node:http';
import https from 'node:https';
import { type LookupFunction } from 'node:net';
import { Webhook as Signer } from 'standardwebhooks';
import { type CheckedUrl } from './webhook-url.js';

/**
 * How much of a receiver's answer is read (then the connection is closed, whatever is left of it); the first
 * {@link EXCERPT_CHARS} characters of that are kept.
 */
export const READ_LIMIT = 1024;
const EXCERPT_CHARS = 200;
const USER_AGENT = 'module-admin-service-webhooks/1';

const UNSAFE =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Text safe to store in a PostgreSQL text column and to show: no NUL or other control character (but tab and
 * line breaks) and no lone UTF-16 surrogate (which has no UTF-8 form); each becomes U+FFFD. A receiver's answer
 * may hold any bytes (UTF-16, gzip, binary): invalid UTF-8 is already U+FFFD once decoded.
 */
export function safeText(text: string): string {
  return text.replace(UNSAFE, '\uFFFD');
}

/** The stored start of an answer: its first bytes decoded as UTF-8, made safe, at most EXCERPT_CHARS characters. */
export function excerptOf(bytes: Buffer): string | null {
  const text = [...safeText(bytes.toString('utf8'))].slice(0, EXCERPT_CHARS).join('');
  return text === '' ? null : text;
}

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

/** Keep-alive sockets per receiver address: how long an idle one is kept, and how many per address. */
const IDLE_SOCKET_MS = 5000;
const SOCKETS_PER_ADDRESS = 8;
/** Agents by protocol, checked address, host name and port; each keeps its idle sockets a few seconds only. */
const agents = new Map<string, http.Agent>();

/**
 * The keep-alive agent for a checked address: its sockets are only ever connected to that address (the request
 * pins the lookup to it), so a reused connection goes where a fresh one would. An answer read to its end leaves
 * its socket for the next attempt; one cut short (the 1 KiB cap, the deadline, an error) destroys it.
 */
function agentFor(target: CheckedUrl): http.Agent {
  const key = `${target.url.protocol}|${target.address.address}|${target.host}|${target.url.port}`;
  let agent = agents.get(key);
  if (agent === undefined) {
    const options = { keepAlive: true, maxSockets: SOCKETS_PER_ADDRESS, timeout: IDLE_SOCKET_MS };
    agent = target.url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
    agents.set(key, agent);
    // Forgotten once idle: an address no webhook sends to any more leaves nothing behind.
    const sweep = setInterval(() => {
      const live = agent!;
      const sockets = Object.keys(live.sockets).length + Object.keys(live.freeSockets).length;
      if (sockets > 0 || Object.keys(live.requests).length > 0) return;
      clearInterval(sweep);
      agents.delete(key);
      live.destroy();
    }, IDLE_SOCKET_MS * 2).unref();
  }
  return agent;
}

/**
 * One POST to a checked URL. The connection goes to the address that was checked, whatever the host name
 * resolves to by now (no second DNS lookup that a rebinding server could answer differently); TLS still
 * verifies the certificate against the host name. Redirects are not followed. At most READ_LIMIT bytes of the
 * answer are read; an answer read to its end leaves its socket to the address's keep-alive agent, any other
 * (cut at READ_LIMIT, the deadline, an error) destroys it. `deadline` ends the attempt (its reason says why: the
 * attempt's own time bound, or shutdown); it covers the whole attempt, answer included.
 */
export function post(
  target: CheckedUrl,
  request: { body: string; headers: Record<string, string> },
  deadline: AbortSignal,
  whyEnded: () => string,
): Promise<Omit<AttemptResult, 'durationMs'>> {
  const pinned: LookupFunction = (_hostname, options, callback) => {
    const { address, family } = target.address;
    if (options.all)
      (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const client = target.url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    /** `reusable`: the answer was read to its end, so its socket may serve the next attempt. */
    const finish = (result: Omit<AttemptResult, 'durationMs'>, reusable = false) => {
      if (settled) return;
      settled = true;
      deadline.removeEventListener('abort', ended);
      if (!reusable) outgoing.destroy();
      resolve(result);
    };
    const outgoing = client.request(
      target.url,
      {
        method: 'POST',
        agent: agentFor(target),
        lookup: pinned,
        // Never asked for a compressed answer; one that comes anyway is kept as the bytes it is.
        headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
      },
      (response) => {
        const status = response.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let length = 0;
        const done = (reusable: boolean) =>
          finish(
            {
              delivered: status >= 200 && status < 300,
              statusCode: status,
              error: null,
              responseExcerpt: excerptOf(Buffer.concat(chunks).subarray(0, READ_LIMIT)),
            },
            reusable,
          );
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk.subarray(0, READ_LIMIT - length));
          length += chunk.length;
          if (length >= READ_LIMIT) done(false);
        });
        response.on('end', () => done(true));
        response.on('error', () => done(false));
      },
    );
    outgoing.on('error', (error: NodeJS.ErrnoException) =>
      finish({
        delivered: false,
        statusCode: null,
        error: safeText(error.code ?? error.message).slice(0, 200),
        responseExcerpt: null,
      }),
    );
    const ended = () =>
      finish({ delivered: false, statusCode: null, error: whyEnded(), responseExcerpt: null });
    if (deadline.aborted) ended();
    else deadline.addEventListener('abort', ended, { once: true });
    if (!settled) outgoing.end(request.body);
  });
}
