import type { components } from '../generated/api';
import { check, type ClientContext, expectProblem } from '../support';

type ProblemType = components['schemas']['Problem']['type'];
/** A type this version sends, and one a later version may add: both are a Problem's type. */
const VALIDATION: ProblemType = '/problems/validation';
const LATER: ProblemType = 'https://api.example.org/problems/added-later';

/** The pages problem types point to: every problem's `type` leads to one. */
export async function exercise({ anyone }: ClientContext): Promise<void> {
  const list = await anyone.GET('/problems', { parseAs: 'text' });
  check(
    list.response.status === 200 && typeof list.data === 'string' && list.data.includes('/problems/last-api-key'),
    'the list of problem types',
  );
  const problem = await expectProblem(anyone.GET('/auth/regions/me'), 401, 'unauthenticated', 'a problem to follow');
  check(problem.type !== VALIDATION && problem.type !== LATER, 'a problem type compared with the known ones');
  const slug = problem.type.split('/').pop() ?? '';
  const page = await anyone.GET('/problems/{slug}', { params: { path: { slug } }, parseAs: 'text' });
  check(
    page.response.status === 200 && typeof page.data === 'string' && page.data.includes(problem.title),
    'a problem’s type is a page about it',
  );
  await expectProblem(
    anyone.GET('/problems/{slug}', { params: { path: { slug: 'no-such-problem' } } }),
    404,
    'not-found',
    'an unknown problem type',
  );
}
