import { ApiSchema } from '@nestjs/swagger';

import { PageMetaDto } from '../../common/paging';
import { PlanetDto } from './planet.dto';

/** The Galaxy `PaginatedResource` of planets. */
@ApiSchema({ name: 'PaginatedPlanets' })
export class PlanetPageDto {
  data: PlanetDto[];

  meta: PageMetaDto;
}
