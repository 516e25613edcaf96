import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsNumber, IsObject, IsPositive, IsString, Length, Max, Min, ValidateNested } from 'class-validator';

import { ComparedTo, FINITE, greaterThan, IsOmittable, trim } from '../../common/validation';

// The Galaxy's nested value objects, used by request and response alike. Unlike the Galaxy,
// they take no additional properties: unknown fields are rejected everywhere in this API.

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

@ApiSchema({ name: 'PhysicalProperties' })
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
}

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
