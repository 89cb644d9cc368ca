import { type DataSource } from 'typeorm';
import { type Client } from './http.js';

/** Sends `text` (or these exact bytes) as a `text/csv` body. */
export async function postCsv(api: Client, path: string, token: string | undefined, text: string | Buffer) {
  if (typeof text === 'string')
    return api.post(path, { token, body: text, headers: { 'content-type': 'text/csv' } });
  const response = await fetch(api.url() + path, {
    method: 'POST',
    headers: { 'content-type': 'text/csv', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: text,
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

/** Sends `text` as the multipart part `file` (and any other parts), as a browser form would. */
export async function postCsvForm(
  baseUrl: string,
  path: string,
  token: string,
  parts: { name: string; text: string; filename?: string }[],
) {
  const form = new FormData();
  for (const part of parts) {
    if (part.filename === undefined) form.append(part.name, part.text);
    else form.append(part.name, new Blob([part.text], { type: 'text/csv' }), part.filename);
  }
  const response = await fetch(baseUrl + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  return { status: response.status, body: (await response.json()) as any };
}

/** Audit events of one action, oldest first. */
export async function auditEvents(dataSource: DataSource, action?: string) {
  return dataSource.query<
    {
      actor_id: number | null;
      action: string;
      target_type: string | null;
      target_ids: string[];
      summary: Record<string, unknown>;
      request_id: string | null;
      client_ip: string | null;
    }[]
  >(
    `SELECT actor_id, action, target_type, target_ids::text[] AS target_ids, summary, request_id, client_ip
     FROM audit_events WHERE $1::text IS NULL OR action = $1 ORDER BY id`,
    [action ?? null],
  );
}

/** Parses a CSV answer of this service (`\r\n` line ends, no line breaks inside cells). */
export const csvLines = (text: string) => text.split('\r\n').filter((line) => line !== '');
