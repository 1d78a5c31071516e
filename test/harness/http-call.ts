/** One HTTP exchange as the tests look at it. */
export interface HttpAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  json<T = unknown>(): T;
}

/** Sends one real HTTP request (global fetch); `token` adds `Authorization: Bearer <token>`. */
export async function httpCall(
  base: string,
  path: string,
  init: { method?: string; token?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<HttpAnswer> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`;
  const response = await fetch(new URL(path, base), {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers,
    ...(init.body === undefined ? {} : { body: init.body }),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    json: <T>() => JSON.parse(text) as T,
  };
}
