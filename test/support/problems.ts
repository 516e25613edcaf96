/** The slug of a problem `type` URI (`/problems/<slug>`, or absolute against a base URL); undefined for any other URI. */
export function problemSlugOf(type: unknown): string | undefined {
  if (typeof type !== 'string') return undefined;
  return /^(?:https?:\/\/[^/?#]+(?:\/[^?#]*)?)?\/problems\/([a-z][a-z0-9-]*)$/.exec(type)?.[1];
}

/** Asserts an RFC 9457 problem response with this status (and type slug, when given); returns its body. */
export function expectProblem(
  res: { statusCode: number; headers: Record<string, unknown>; body: string; json: () => any },
  status: number,
  type?: string,
) {
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status });
  expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  const body = res.json();
  expect(body).toMatchObject({
    status,
    title: expect.any(String),
    detail: expect.any(String),
    type: expect.any(String),
  });
  expect(problemSlugOf(body.type)).toBeDefined();
  if (type) expect(problemSlugOf(body.type)).toBe(type);
  return body;
}
