import { type CreateRecipes, post } from '../create-recipes';

/** The creates of the planets (celestial bodies) feature, for test/e2e/locations.e2e-spec.ts. */
export const creates: CreateRecipes = {
  createPlanet: async (ctx, extra) => {
    const res = await post(ctx, '/planets', { name: 'Mars' }, { authorization: ctx.user.bearer }, extra);
    return { status: res.statusCode, location: res.headers.location, path: `/planets/${res.json().id}` };
  },
  createCelestialBody: {
    'a planet': async (ctx, extra) => {
      const res = await post(
        ctx,
        '/celestial-bodies',
        { name: 'Venus', type: 'terrestrial' },
        { authorization: ctx.user.bearer },
        extra,
      );
      return { status: res.statusCode, location: res.headers.location, path: `/planets/${res.json().id}` };
    },
    'a satellite: the planet it orbits': async (ctx, extra) => {
      const planet = (await post(ctx, '/planets', { name: 'Jupiter' }, { authorization: ctx.user.bearer }, {})).json();
      const res = await post(
        ctx,
        '/celestial-bodies',
        { name: 'Io', type: 'moon', orbit: { planet: { id: planet.id } } },
        { authorization: ctx.user.bearer },
        extra,
      );
      return { status: res.statusCode, location: res.headers.location, path: `/planets/${planet.id}` };
    },
  },
};
