import { type CreateRecipes, post } from '../create-recipes';

/** The creates of the region API keys feature, for test/e2e/locations.e2e-spec.ts. */
export const creates: CreateRecipes = {
  createApiKey: async (ctx, extra) => {
    const res = await post(ctx, '/auth/region/api-keys', {}, { 'x-api-key': ctx.regionKey }, extra);
    return {
      status: res.statusCode,
      location: res.headers.location,
      path: `/auth/region/api-keys/${res.json().id}`,
      readHeaders: { 'x-api-key': ctx.regionKey },
    };
  },
  // The Location is the new key's.
  rollApiKey: async (ctx, extra) => {
    const keyToRoll = (await post(ctx, '/auth/region/api-keys', {}, { 'x-api-key': ctx.regionKey }, {})).json().id;
    const res = await post(ctx, `/auth/region/api-keys/${keyToRoll}/roll`, {}, { 'x-api-key': ctx.regionKey }, extra);
    return {
      status: res.statusCode,
      location: res.headers.location,
      path: `/auth/region/api-keys/${res.json().id}`,
      readHeaders: { 'x-api-key': ctx.regionKey },
    };
  },
};
