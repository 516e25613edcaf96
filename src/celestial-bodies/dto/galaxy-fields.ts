import { ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  registerDecorator,
  ValidateNested,
} from 'class-validator';

import { ApiFloat, ApiInt64 } from '../../common/swagger';
import { FINITE, IsOmittable } from '../../common/validation';
import { SATELLITE_TYPES, type SatelliteType } from '../celestial-body-types';
import { ApiSatelliteType } from './body-types';

/*
 * Fields a client written for the Galaxy sends that this service does not take from it: the
 * ones the server owns (readOnly in the Galaxy, or set by another route), accepted and
 * ignored so that a Galaxy `Planet` or `Satellite`, or one read from this API, can be sent
 * as it is; and the callback URLs, refused by name.
 */

/** Said of each server-owned field in the OpenAPI document. */
export const IGNORED =
  'Ignored: the server sets it. Accepted so that a Planet as read, or as a Galaxy client builds it, can be sent.';

/** The Galaxy's `User`, as a client may send it in `creator`: read for its shape, then ignored. */
@ApiSchema({ name: 'UserInput' })
export class IgnoredUserDto {
  /** @example 1 */
  @ApiInt64({ readOnly: true })
  @IsOmittable()
  @IsInt()
  id?: number;

  /** @example Marc */
  @IsOptional()
  @IsString()
  name?: string;
}

/** The `orbit` of a satellite listed in a planet body: read for its shape, then ignored. */
@ApiSchema({ name: 'SatelliteItemOrbitInput' })
export class IgnoredOrbitDto {
  /** The planet it orbits (the Galaxy puts a whole Planet here). */
  @IsOmittable()
  @IsObject()
  planet?: object;

  @ApiFloat()
  @IsOmittable()
  @IsNumber(FINITE)
  orbitalPeriod?: number;

  @ApiFloat()
  @IsOmittable()
  @IsNumber(FINITE)
  distance?: number;
}

/**
 * The Galaxy's `Satellite`, as a planet body may list it in `satellites` (a planet read back
 * and sent again): read for its shape, then ignored. Satellites are added with POST
 * /celestial-bodies.
 */
@ApiSchema({ name: 'SatelliteItemInput' })
export class IgnoredSatelliteDto {
  /** @example 1 */
  @ApiInt64({ readOnly: true })
  @IsOmittable()
  @IsInt()
  id?: number;

  /** @example Phobos */
  @IsString()
  name: string;

  @IsOptional()
  @IsString()
  description?: string | null;

  @ApiFloat()
  @IsOmittable()
  @IsNumber(FINITE)
  diameter?: number;

  @ApiSatelliteType()
  @IsOmittable()
  @IsIn(SATELLITE_TYPES)
  type?: SatelliteType;

  @IsOmittable()
  @IsObject()
  @ValidateNested()
  @Type(() => IgnoredOrbitDto)
  orbit?: IgnoredOrbitDto;
}

/**
 * A field the Galaxy defines that this service refuses whenever it is sent, saying why; it
 * stays out of the OpenAPI document (@ApiHideProperty beside it), so generated clients here
 * do not offer it.
 */
export function Unsupported(reason: string) {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'unsupported',
      target: object.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) => value === undefined,
        defaultMessage: () => `${propertyName} is not supported: ${reason}`,
      },
    });
}

/** Why the Galaxy's callback URLs are refused (docs/api.md, "Clients written for the Galaxy"). */
export const NO_CALLBACKS =
  "this server calls no URL a client gives it (a request to an address of the caller's choosing, from inside the network, is a server-side request forgery risk); read the answer, or GET the planet, instead";
