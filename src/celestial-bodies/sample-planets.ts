import type { SatelliteValues } from './celestial-bodies.repository';
import type { PlanetInputDto } from './dto/planet-input.dto';

export interface SamplePlanet {
  planet: PlanetInputDto;
  satellites: Omit<SatelliteValues, 'planetId'>[];
}

const moon = (
  name: string,
  diameter: number,
  orbitalPeriod: number,
  distance: number,
  description: string | null = null,
) => ({
  name,
  description,
  diameter,
  type: 'moon' as const,
  orbitalPeriod,
  distance,
});

/** A first look at the Galaxy: a few real bodies, rounded. Mars follows the Galaxy's own example. */
export const SAMPLE_PLANETS: SamplePlanet[] = [
  {
    planet: {
      name: 'Mars',
      description: 'The red planet',
      type: 'terrestrial',
      habitabilityIndex: 0.68,
      physicalProperties: {
        mass: 0.107,
        radius: 0.532,
        gravity: 0.378,
        temperature: { min: 130, max: 308, average: 210 },
      },
      atmosphere: [
        { compound: 'CO2', percentage: 95.3 },
        { compound: 'N2', percentage: 2.7 },
        { compound: 'Ar', percentage: 1.6 },
      ],
      discoveredAt: '1610-01-07T00:00:00Z',
      tags: ['solar-system', 'rocky', 'explored'],
    },
    satellites: [
      moon('Phobos', 22.2, 0.319, 9376, 'Phobos is the larger and innermost of the two moons of Mars.'),
      moon('Deimos', 12.4, 1.263, 23463),
    ],
  },
  {
    planet: {
      name: 'Earth',
      description: 'Home',
      type: 'terrestrial',
      habitabilityIndex: 1,
      physicalProperties: { mass: 1, radius: 1, gravity: 1, temperature: { min: 184, max: 330, average: 288 } },
      atmosphere: [
        { compound: 'N2', percentage: 78.08 },
        { compound: 'O2', percentage: 20.95 },
        { compound: 'Ar', percentage: 0.93 },
      ],
      tags: ['solar-system', 'rocky', 'inhabited'],
    },
    satellites: [
      moon('Moon', 3474.8, 27.32, 384400),
      {
        name: 'Kamoʻoalewa',
        description: 'A quasi-satellite asteroid.',
        diameter: 0.05,
        type: 'asteroid',
        orbitalPeriod: 365.25,
        distance: null,
      },
    ],
  },
  {
    planet: {
      name: 'Jupiter',
      description: 'A gas giant with a great red spot',
      type: 'gas_giant',
      habitabilityIndex: 0.01,
      physicalProperties: { mass: 317.8, radius: 11.21, gravity: 2.528, temperature: { average: 165 } },
      atmosphere: [
        { compound: 'H2', percentage: 89.8 },
        { compound: 'He', percentage: 10.2 },
      ],
      tags: ['solar-system', 'giant'],
    },
    satellites: [
      moon('Io', 3643.2, 1.769, 421700),
      moon('Europa', 3121.6, 3.551, 671034),
      moon('Ganymede', 5268.2, 7.155, 1070412),
      moon('Callisto', 4820.6, 16.689, 1882709),
    ],
  },
  {
    planet: {
      name: 'Neptune',
      description: 'The windiest planet',
      type: 'ice_giant',
      physicalProperties: { mass: 17.15, radius: 3.88, gravity: 1.14, temperature: { average: 72 } },
      atmosphere: [
        { compound: 'H2', percentage: 80 },
        { compound: 'He', percentage: 19 },
        { compound: 'CH4', percentage: 1 },
      ],
      discoveredAt: '1846-09-23T00:00:00Z',
      tags: ['solar-system', 'giant'],
    },
    satellites: [moon('Triton', 2706.8, 5.877, 354759)],
  },
  {
    planet: {
      name: 'Pluto',
      description: 'Demoted, not forgotten',
      type: 'dwarf',
      physicalProperties: {
        mass: 0.0022,
        radius: 0.186,
        gravity: 0.063,
        temperature: { min: 33, max: 55, average: 44 },
      },
      discoveredAt: '1930-02-18T00:00:00Z',
      tags: ['solar-system', 'kuiper-belt'],
    },
    satellites: [moon('Charon', 1212, 6.387, 19591)],
  },
  {
    planet: {
      name: 'HD 40307g',
      description: 'A super-Earth in the habitable zone of its star',
      type: 'super_earth',
      habitabilityIndex: 0.74,
      physicalProperties: { mass: 7.1 },
      discoveredAt: '2012-11-07T00:00:00Z',
      tags: ['exoplanet'],
    },
    satellites: [],
  },
];
