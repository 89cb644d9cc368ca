export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  /** Parsed JSON, or the raw text when the body is not JSON. */
  body: T;
}

export interface RequestOptions {
  token?: string;
  /** A value to send as JSON; a string is sent as it is (for malformed bodies). */
  body?: unknown;
  headers?: Record<string, string>;
}

/** The error envelope of the contract. */
export const failure = (message: string) => ({ success: false, data: null, message });

/** A request over the real loopback socket, as a client would send it. */
export async function request<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(baseUrl + path, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body: parsed as T };
}

/** Binds {@link request} to one service (its URL, or a function giving it once the service runs). */
export function client(service: string | (() => string)) {
  const base = typeof service === 'string' ? () => service : service;
  return {
    url: base,
    get: <T = any>(path: string, options?: RequestOptions) => request<T>(base(), 'GET', path, options),
    post: <T = any>(path: string, options?: RequestOptions) => request<T>(base(), 'POST', path, options),
    put: <T = any>(path: string, options?: RequestOptions) => request<T>(base(), 'PUT', path, options),
    delete: <T = any>(path: string, options?: RequestOptions) => request<T>(base(), 'DELETE', path, options),
    request: <T = any>(method: string, path: string, options?: RequestOptions) =>
      request<T>(base(), method, path, options),
  };
}

export type Client = ReturnType<typeof client>;
