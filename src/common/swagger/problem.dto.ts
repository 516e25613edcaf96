import { ApiProperty, ApiSchema } from '@nestjs/swagger';

@ApiSchema({ name: 'FieldError' })
export class FieldErrorDto {
  /** @example description */
  field: string;

  /** @example 'description must be shorter than or equal to 255 characters' */
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
   * The path the error occurred on.
   * @example /auth/region/api-keys
   */
  instance?: string;

  /** One entry per offending field (validation errors only). */
  errors?: FieldErrorDto[];
}
