import { ApiProperty, ApiSchema } from '@nestjs/swagger';

import { MAX_ERROR_FIELD_LENGTH, MAX_ERROR_MESSAGE_LENGTH, MAX_LISTED_ERRORS } from '../problem/problem';

@ApiSchema({ name: 'FieldError' })
export class FieldErrorDto {
  /**
   * The offending field, parameter or header; cut to its first characters, with an ellipsis, when longer.
   * @example description
   */
  @ApiProperty({ maxLength: MAX_ERROR_FIELD_LENGTH })
  field: string;

  /**
   * What is wrong with it; cut as `field` is.
   * @example 'description must be shorter than or equal to 255 characters'
   */
  @ApiProperty({ maxLength: MAX_ERROR_MESSAGE_LENGTH })
  message: string;
}

/** RFC 9457 problem document; the body of every error response. */
@ApiSchema({ name: 'Problem' })
export class ProblemDto {
  /**
   * Names the class of error, and resolves to a page about it: `/problems/<slug>` of this service, absolute when the deployment has a public base URL configured. Compare types, not titles or details.
   * @example /problems/validation
   */
  @ApiProperty({ format: 'uri-reference' })
  type: string;

  /** @example 'Invalid request' */
  title: string;

  /** @example 400 */
  status: number;

  /** @example 'The request has invalid or unexpected values; see errors.' */
  detail: string;

  /**
   * The path the error occurred on; for a request whose request line could not be read, `urn:uuid:` and the response's `X-Request-ID`.
   * @example /auth/region/api-keys
   */
  instance?: string;

  /**
   * One entry per offending field (validation errors only). When more were found than `maxItems`, the first are listed and `detail` says so.
   */
  @ApiProperty({ maxItems: MAX_LISTED_ERRORS, type: () => [FieldErrorDto] })
  errors?: FieldErrorDto[];
}
