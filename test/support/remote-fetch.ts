import { spawn } from 'node:child_process';

/** A part of `size` bytes: a PNG signature then filler when `png`, otherwise text. */
export interface RemotePart {
  name: string;
  filename: string;
  type?: string;
  size: number;
  png?: boolean;
}

export interface RemoteRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  /** Multipart parts sent as FormData, or a raw body of `size` spaces. */
  parts?: RemotePart[];
  size?: number;
}

export interface RemoteAnswer {
  status?: number;
  body?: any;
  error?: string;
}

/**
 * Node's fetch in a process of its own, as a real client is: in the test's own process the client and the
 * service share one event loop, which hides the race between the answer and the close.
 */
const REMOTE_FETCH = `
let input = '';
for await (const chunk of process.stdin) input += chunk;
const results = [];
for (const r of JSON.parse(input)) {
  let body;
  if (r.parts) {
    body = new FormData();
    for (const p of r.parts) {
      const data = Buffer.alloc(p.size, p.png ? 0x5a : 0x74);
      if (p.png) Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(data);
      body.append(p.name, new Blob([data], { type: p.type ?? 'image/png' }), p.filename);
    }
  } else if (r.size) body = Buffer.alloc(r.size, 0x20);
  try {
    const res = await fetch(r.url, { method: r.method, headers: r.headers, body });
    const text = await res.text();
    results.push({ status: res.status, body: JSON.parse(text) });
  } catch (error) {
    results.push({ error: String(error.cause?.code ?? error.message) });
  }
}
process.stdout.write(JSON.stringify(results));
`;

export /** Sends `requests` one after another with Node's fetch in a child process, and gives each one's answer. */
async function remoteFetch(requests: RemoteRequest[]): Promise<RemoteAnswer[]> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', REMOTE_FETCH], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (data: Buffer) => (output += data.toString()));
  child.stdin.end(JSON.stringify(requests));
  await new Promise((resolve) => child.once('close', resolve));
  return JSON.parse(output);
}
