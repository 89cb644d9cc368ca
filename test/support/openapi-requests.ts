/** A 1×1 transparent PNG. */
export const TINY_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR4nGNgAAIAAAUAAXpeqz8AAAAASUVORK5CYII=',
  'base64',
);

/** A multipart/form-data body with one file part (default: `file`, a tiny PNG). */
export function multipartBody(
  parts: { name?: string; filename?: string; type?: string; content?: Buffer }[] = [{}],
): { body: Buffer; contentType: string } {
  const boundary = `----openapi-test-${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${part.name ?? 'file'}"; ` +
          `filename="${part.filename ?? 'avatar.png'}"\r\nContent-Type: ${part.type ?? 'image/png'}\r\n\r\n`,
      ),
      part.content ?? TINY_PNG,
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
