import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

@ApiSchema({ name: 'FieldError' })
export class FieldErrorDto {
  @ApiProperty({ example: 'description' })
  field: string;

  @ApiProperty({ example: 'description must be shorter than or equal to 255 characters' })
  message: string;
}

/** RFC 9457 problem document; the body of every error response. */
@ApiSchema({ name: 'Problem' })
export class ProblemDto {
  @ApiProperty({
    format: 'uri-reference',
    example: '/problems/validation',
    description:
      'Names the class of error, and resolves to a page about it: `/problems/<slug>` of this service, absolute when the ' +
      'deployment has a public base URL configured. Compare types, not titles or details.',
  })
  type: string;

  @ApiProperty({ example: 'Invalid request' })
  title: string;

  @ApiProperty({ example: 400 })
  status: number;

  @ApiProperty({ example: 'The request has invalid or unexpected values; see errors.' })
  detail: string;

  @ApiPropertyOptional({ example: '/auth/region/api-keys', description: 'The path the error occurred on.' })
  instance?: string;

  @ApiPropertyOptional({
    type: [FieldErrorDto],
    description: 'One entry per offending field (validation errors only).',
  })
  errors?: FieldErrorDto[];
}
