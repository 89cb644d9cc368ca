import http from 'node:http';
import { type AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/**
 * Settings under which the test service delivers webhooks to a receiver on loopback: its background work on (the
 * dispatcher, the job workers), plain HTTP and private addresses allowed, attempts of 1 s, retries scaled down.
 */
export const LOOPBACK_WEBHOOKS = {
  backgroundWorkers: true,
  webhooks: { allowHttp: true, allowPrivate: true, timeoutMs: 1000, retryScale: 0.0001 },
};

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  /** When the request arrived (ms since the epoch). */
  at: number;
}

/**
 * What the receiver answers to its n-th request (0-based): a status, 'hang' to never answer, or a function
 * that answers itself (any bytes, at any pace).
 */
export type Behaviour = (
  n: number,
  request: Received,
) => number | 'hang' | ((response: http.ServerResponse) => void);

/**
 * A webhook receiver on loopback, as a campus system would run one: records every request it gets and answers
 * as told (200 by default). `waitFor` waits for a condition on the requests, never for a fixed time.
 */
export async function startReceiver(behaviour: Behaviour = () => 200) {
  const received: Received[] = [];
  const waiters = new Set<() => void>();
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry = {
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      const answer = behaviour(received.length, entry);
      received.push(entry);
      for (const wake of waiters) wake();
      if (answer === 'hang') hanging.add(response);
      else if (typeof answer === 'function') {
        hanging.add(response);
        answer(response);
      } else response.writeHead(answer, { 'content-type': 'text/plain' }).end(answer < 300 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    /** Resolves once `condition` holds for the requests received; rejects after `timeoutMs`. */
    waitFor(condition: (received: Received[]) => boolean, timeoutMs = 15_000): Promise<void> {
      if (condition(received)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(`receiver: condition not met within ${timeoutMs} ms (${received.length} received)`),
          );
        }, timeoutMs);
        const check = () => {
          if (!condition(received)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
      });
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Checks a request's Standard Webhooks signature with the `standardwebhooks` package; returns the payload. */
export function verified(secret: string, request: Received): { type: string; timestamp: string; data: any } {
  return new Webhook(secret).verify(request.body, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  }) as { type: string; timestamp: string; data: any };
}

/** Polls the service until `check` returns a value (for state the service records, such as the delivery log). */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
