import { readdir } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { type UserRow } from './factories.js';

/** The User summary of the contract as the API must show a stored user without an avatar. */
export function userJson(row: UserRow) {
  return {
    id: Number(row.id),
    username: row.username,
    email: row.email,
    given_name: null,
    family_name: null,
    display_name: null,
    active: true,
    admin: row.admin,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    avatar_url: null,
  };
}

/**
 * The User account of the contract (the User summary and `external_id`) as the API must show a stored user
 * without an avatar, names or external id: what an admin or the user themselves reads.
 */
export const accountJson = (row: UserRow) => ({ ...userJson(row), external_id: null });

/** Bytes that start like a real file of each accepted format, padded to `size`. */
export const MAGIC = {
  png: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]),
  jpeg: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1]),
  gif: Buffer.from('GIF89a\x01\x00\x01\x00\x80\x00', 'latin1'),
  webp: Buffer.from('RIFF\x24\x00\x00\x00WEBPVP8 ', 'latin1'),
} as const;

export function image(kind: keyof typeof MAGIC, size = 64): Buffer {
  const bytes = Buffer.alloc(size, 0x5a);
  MAGIC[kind].copy(bytes, 0, 0, Math.min(size, MAGIC[kind].length));
  return bytes;
}

export interface Part {
  name: string;
  /** A file part when set; a plain field otherwise. */
  filename?: string;
  type?: string;
  data: Buffer | string;
}

export interface UploadResponse {
  status: number;
  headers: Headers;
  body: any;
}

/** PUT /api/users/{id}/avatar as a browser would send a form (fetch + FormData). */
export async function upload(
  baseUrl: string,
  userId: number | string,
  parts: Part[],
  token?: string,
): Promise<UploadResponse> {
  const form = new FormData();
  for (const part of parts) {
    if (part.filename === undefined) form.append(part.name, part.data.toString());
    else form.append(part.name, new Blob([part.data], { type: part.type ?? 'image/png' }), part.filename);
  }
  const response = await fetch(`${baseUrl}/api/users/${userId}/avatar`, {
    method: 'PUT',
    headers: token ? { authorization: `Bearer ${token}` } : {},
    body: form,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

export const uploadFile = (baseUrl: string, userId: number | string, data: Buffer, token?: string) =>
  upload(baseUrl, userId, [{ name: 'file', filename: 'avatar.png', data }], token);

/**
 * Starts a multipart upload over a raw socket, sends `sent` bytes of the file, waits for `beforeAbort` (a
 * condition on what the server has done with them) and then destroys the socket, as a client that goes away
 * mid-upload. Resolves once the socket is gone.
 */
export async function abortedUpload(
  baseUrl: string,
  userId: number,
  token: string,
  file: Buffer,
  sent: number,
  beforeAbort: () => Promise<unknown> = () => Promise.resolve(),
): Promise<void> {
  const boundary = '----aborted-upload-boundary';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n` +
      `Content-Type: image/png\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const url = new URL(`${baseUrl}/api/users/${userId}/avatar`);
  await new Promise<void>((resolve) => {
    const request = http.request({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'PUT',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': head.length + file.length + tail.length,
      },
    });
    request.on('error', () => resolve());
    request.on('close', () => resolve());
    request.write(head);
    request.write(file.subarray(0, sent), () => {
      // `beforeAbort` waits for what the server must have done before the client disappears.
      beforeAbort().then(
        () => request.destroy(),
        (error: unknown) => request.destroy(error as Error),
      );
    });
  });
}

/** Every file under a directory, relative to it (the storage tree, temporary files included). */
export async function filesUnder(root: string): Promise<string[]> {
  try {
    const entries = await readdir(root, { recursive: true, withFileTypes: true });
    return entries
      .filter((entry) => entry.isFile())
      .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)))
      .sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** Resolves once `check` holds, polling; fails after `timeoutMs`. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Waits until the wall clock enters a new whole second (token `iat` and password changes compare seconds). */
export async function nextSecond(): Promise<void> {
  const now = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 1000 - (now % 1000) + 5));
}
