import { ApiHideProperty, ApiSchema } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsNumber, IsObject, IsString, Length, Max, Min, ValidateNested } from 'class-validator';

import { ApiFloat, IsPositiveNumber } from '../../common/swagger';
import { ComparedTo, FINITE, IsOmittable, trim } from '../../common/validation';
import { AreExtraMeasurements, EXTRA_MEASUREMENT_SCHEMA, gatherExtraMeasurements } from './extra-measurements';

// The Galaxy's nested value objects, used by request and response alike. Unknown fields are
// rejected, as everywhere in this API, except where the Galaxy declares additional ones and
// this service keeps them: further numeric physicalProperties (extra-measurements.ts).

@ApiSchema({ name: 'Temperature' })
export class TemperatureDto {
  /**
   * Minimum temperature in Kelvin
   * @example 130
   */
  @ApiFloat()
  @IsOmittable()
  @IsNumber(FINITE)
  @Min(0)
  min?: number;

  /**
   * Maximum temperature in Kelvin (at least `min`)
   * @example 308
   */
  @ApiFloat()
  @IsOmittable()
  @IsNumber(FINITE)
  @Min(0)
  @ComparedTo('>=', 'min')
  max?: number;

  /**
   * Average temperature in Kelvin (between `min` and `max`)
   * @example 210
   */
  @ApiFloat()
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
  /**
   * Mass in Earth masses (must be greater than 0)
   * @example 0.107
   */
  @ApiFloat()
  @IsOmittable()
  @IsNumber(FINITE)
  @IsPositiveNumber()
  mass?: number;

  /**
   * Radius in Earth radii (must be greater than 0)
   * @example 0.532
   */
  @ApiFloat()
  @IsOmittable()
  @IsNumber(FINITE)
  @IsPositiveNumber()
  radius?: number;

  /**
   * Surface gravity in Earth g
   * @example 0.378
   */
  @ApiFloat()
  @IsOmittable()
  @IsNumber(FINITE)
  @Min(0)
  gravity?: number;

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
  /** @example CO2 */
  @Transform(trim)
  @IsString()
  @Length(1, 50)
  compound: string;

  /** @example 95.3 */
  @ApiFloat()
  @IsNumber(FINITE)
  @Min(0)
  @Max(100)
  percentage: number;
}
