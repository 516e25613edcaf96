/**
 * Names of the OpenAPI security schemes. The document declares them (common/swagger) and
 * each policy decorator refers to them, so they live below both.
 */
export const API_KEY_SECURITY_SCHEME = 'apiKeyHeader';
export const BASIC_SECURITY_SCHEME = 'basicAuth';
export const BEARER_SECURITY_SCHEME = 'bearerAuth';
