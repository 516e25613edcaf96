import { Injectable, PipeTransform } from '@nestjs/common';

import { ValidationFailedError } from '../common/problem';
import { StrictValidationPipe } from '../common/validation';
import { isPlanetType, isSatelliteType, PLANET_TYPES, SATELLITE_TYPES } from './celestial-body-types';
import { PlanetBodyInputDto } from './dto/planet-input.dto';
import { SatelliteInputDto } from './dto/satellite-input.dto';

export type CelestialBodyInput = PlanetBodyInputDto | SatelliteInputDto;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The body of POST /celestial-bodies is a planet or a satellite, told apart by `type`
 * (the Galaxy's discriminator). `type` is checked first; the body is then validated, by
 * the same rules as every other body, as the DTO that `type` names. The global pipe lets
 * it through untouched, as its declared type is a union (Object at run time).
 */
@Injectable()
export class CelestialBodyPipe implements PipeTransform<unknown, Promise<CelestialBodyInput>> {
  private readonly strict = new StrictValidationPipe();

  async transform(value: unknown): Promise<CelestialBodyInput> {
    if (!isPlainObject(value))
      throw new ValidationFailedError([{ field: 'body', message: 'The body must be a JSON object' }]);
    const metatype = isPlanetType(value.type)
      ? PlanetBodyInputDto
      : isSatelliteType(value.type)
        ? SatelliteInputDto
        : undefined;
    if (!metatype) {
      const allowed = [...PLANET_TYPES, ...SATELLITE_TYPES].join(', ');
      throw new ValidationFailedError([
        { field: 'type', message: `type must be one of the following values: ${allowed}` },
      ]);
    }
    return (await this.strict.transform(value, { type: 'body', metatype, data: undefined })) as CelestialBodyInput;
  }
}
