import { ApiHideProperty, ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsNumber, IsObject, IsPositive, IsString, Length, Max, Min, ValidateNested } from 'class-validator';

import { ComparedTo, FINITE, greaterThan, IsOmittable, trim } from '../../common/validation';
import { AreExtraMeasurements, EXTRA_MEASUREMENT_SCHEMA, gatherExtraMeasurements } from './extra-measurements';

// The Galaxy's nested value objects, used by request and response alike. Unknown fields are
// rejected, as everywhere in this API, except where the Galaxy declares additional ones and
// this service keeps them: further numeric physicalProperties (extra-measurements.ts).

@ApiSchema({ name: 'Temperature' })
export class TemperatureDto {
  @ApiPropertyOptional({
    type: 'number',
    format: 'float',
    minimum: 0,
    description: 'Minimum temperature in Kelvin',
    example: 130,
  })
  @IsOmittable()
  @IsNumber(FINITE)
  @Min(0)
  min?: number;

  @ApiPropertyOptional({
    type: 'number',
    format: 'float',
    minimum: 0,
    description: 'Maximum temperature in Kelvin (at least `min`)',
    example: 308,
  })
  @IsOmittable()
  @IsNumber(FINITE)
  @Min(0)
  @ComparedTo('>=', 'min')
  max?: number;

  @ApiPropertyOptional({
    type: 'number',
    format: 'float',
    minimum: 0,
    description: 'Average temperature in Kelvin (between `min` and `max`)',
    example: 210,
  })
  @IsOmittable()
  @IsNumber(FINITE)
  @Min(0)
  @ComparedTo('>=', 'min')
  @ComparedTo('<=', 'max')
  average?: number;
}

// ApiSchema's options are copied into the schema; its type names only `name` and `description`.
@ApiSchema({ name: 'PhysicalProperties', ...({ additionalProperties: EXTRA_MEASUREMENT_SCHEMA } as object) })
export class PhysicalPropertiesDto {
  @ApiPropertyOptional({
    type: 'number',
    format: 'float',
    ...greaterThan(0),
    description: 'Mass in Earth masses (must be greater than 0)',
    example: 0.107,
  })
  @IsOmittable()
  @IsNumber(FINITE)
  @IsPositive()
  mass?: number;

  @ApiPropertyOptional({
    type: 'number',
    format: 'float',
    ...greaterThan(0),
    description: 'Radius in Earth radii (must be greater than 0)',
    example: 0.532,
  })
  @IsOmittable()
  @IsNumber(FINITE)
  @IsPositive()
  radius?: number;

  @ApiPropertyOptional({
    type: 'number',
    format: 'float',
    minimum: 0,
    description: 'Surface gravity in Earth g',
    example: 0.378,
  })
  @IsOmittable()
  @IsNumber(FINITE)
  @Min(0)
  gravity?: number;

  @ApiPropertyOptional({ type: () => TemperatureDto })
  @IsOmittable()
  @IsObject()
  @ValidateNested()
  @Type(() => TemperatureDto)
  temperature?: TemperatureDto;

  /**
   * A request's further measurements, set aside by `physicalPropertiesInput`; in a response
   * they are fields of the object itself, as the Galaxy has them.
   */
  @ApiHideProperty()
  @AreExtraMeasurements()
  extra?: Record<string, number>;
}

const NAMED_PROPERTIES = ['mass', 'radius', 'gravity', 'temperature'] as const;

/** The @Transform of a body's `physicalProperties` (after its @Type): see gatherExtraMeasurements. */
export const physicalPropertiesInput = ({ value }: { value: unknown }): unknown =>
  value instanceof PhysicalPropertiesDto ? gatherExtraMeasurements(value, NAMED_PROPERTIES) : value;

@ApiSchema({ name: 'AtmosphereComponent' })
export class AtmosphereComponentDto {
  @ApiProperty({ minLength: 1, maxLength: 50, example: 'CO2' })
  @Transform(trim)
  @IsString()
  @Length(1, 50)
  compound: string;

  @ApiProperty({ type: 'number', format: 'float', minimum: 0, maximum: 100, example: 95.3 })
  @IsNumber(FINITE)
  @Min(0)
  @Max(100)
  percentage: number;
}
