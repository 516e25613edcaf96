// The names a feature's files use, made from its kebab-case name: see scripts/new-module.mjs.

/** The example id of the OpenAPI document and of the tests. */
export const EXAMPLE_ID = '3f0c1d2e-4b5a-4c6d-8e7f-9a0b1c2d3e4f';

const words = (kebab) => kebab.split('-');
const pascal = (kebab) =>
  words(kebab)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');
const camel = (kebab) => pascal(kebab).replace(/^./, (c) => c.toLowerCase());

/** comets → comet, galaxies → galaxy, boxes → box. */
export const singularOf = (name) =>
  name
    .replace(/ies$/, 'y')
    .replace(/(ss|sh|ch|x)es$/, '$1')
    .replace(/([^s])s$/, '$1');

export function namesOf(name, singular, timestamp) {
  return {
    name, // comets: the folder, the route, the file names
    singular, // comet: the entity's and DTOs' files
    Plural: pascal(name), // Comets: the module, controller, service, repository
    Singular: pascal(singular), // Comet: the entity, the DTOs, the OpenAPI schemas
    plural: camel(name),
    singular$: camel(singular), // comet: the ETag function's prefix (cometEtag)
    CONSTANT: singular.replaceAll('-', '_').toUpperCase(), // COMET: in constants' names
    table: name.replaceAll('-', '_'),
    Title: words(name)
      .map((w) => w[0].toUpperCase() + w.slice(1))
      .join(' '), // the OpenAPI tag
    one: words(singular).join(' '), // "comet", in descriptions and messages
    aOne: `${/^[aeiou]/.test(singular) ? 'an' : 'a'} ${words(singular).join(' ')}`, // "a comet", "an observation" (by the first letter)
    many: words(name).join(' '),
    timestamp,
  };
}

/** "an observation" → "An observation". */
export const cap = (text) => text[0].toUpperCase() + text.slice(1);
