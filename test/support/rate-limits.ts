/** The IETF pair (draft-ietf-httpapi-ratelimit-headers) beside X-RateLimit-*: `"name";q=..;w=..` and `"name";r=..;t=..`. */
export function expectRateLimitFields(
  res: { headers: Record<string, unknown> },
  policy: string,
  limit: number,
  windowSeconds: number,
  remaining: number,
) {
  expect(res.headers['ratelimit-policy']).toBe(`"${policy}";q=${limit};w=${windowSeconds}`);
  const reset = Number(res.headers['x-ratelimit-reset']);
  expect(reset).toBeGreaterThanOrEqual(0);
  expect(reset).toBeLessThanOrEqual(windowSeconds);
  expect(res.headers.ratelimit).toBe(`"${policy}";r=${remaining};t=${reset}`);
  expect(res.headers['x-ratelimit-remaining']).toBe(String(remaining));
}
