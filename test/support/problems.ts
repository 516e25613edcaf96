/** Asserts an RFC 9457 problem response with this status (and type slug, when given); returns its body. */
export function expectProblem(
  res: { statusCode: number; headers: Record<string, unknown>; body: string; json: () => any },
  status: number,
  type?: string,
) {
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status });
  expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  const body = res.json();
  expect(body).toMatchObject({ status, title: expect.any(String), detail: expect.any(String), type: expect.stringMatching(/^https:\/\//) });
  if (type) expect(body.type).toBe(`https://errors.example/${type}`);
  return body;
}
