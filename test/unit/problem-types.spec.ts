import { negotiatedCoding } from '../../src/common/http/accept-encoding';
import { DomainError } from '../../src/common/problem/problem';
import { problemTypePage } from '../../src/common/problem/problem-pages';
import {
  allProblemTypes,
  defineProblemType,
  type ProblemType,
  problemTypeForStatus,
} from '../../src/common/problem/problem-types';

const hostile: ProblemType = {
  slug: 'made-up',
  status: 418,
  title: 'A <b>title</b> & "quotes"',
  meaning: "Means `<script>alert(1)</script>` and 'more'.",
  action: 'Do <i>this</i>.',
  example: () => new HostileError(),
};

class HostileError extends DomainError {
  constructor() {
    super(hostile, '</pre><script>x</script>');
  }
}

describe('problem type pages', () => {
  it('escape everything the registry holds, and show `code` spans as code', () => {
    const page = problemTypePage(hostile, undefined);
    expect(page).not.toMatch(/<(b|i|script)>/);
    expect(page).toContain('<h1>A &lt;b&gt;title&lt;/b&gt; &amp; &quot;quotes&quot;</h1>');
    expect(page).toContain('<code>&lt;script&gt;alert(1)&lt;/script&gt;</code> and &#39;more&#39;.');
    expect(page).toContain('&lt;/pre&gt;&lt;script&gt;x&lt;/script&gt;');
  });

  it('name the type absolute against a base URL when one is given', () => {
    expect(problemTypePage(hostile, 'https://api.example.org')).toContain(
      '<code>https://api.example.org/problems/made-up</code>',
    );
    expect(problemTypePage(hostile, undefined)).toContain('<code>/problems/made-up</code>');
  });
});

describe('the registry', () => {
  const base = { status: 400, title: 'T', meaning: 'M', action: 'A' };

  it('refuses a slug twice, a slug that is not lower-case words, and a status that is not an error', () => {
    expect(() => defineProblemType({ ...base, slug: 'validation' })).toThrow(/declared twice/);
    expect(() => defineProblemType({ ...base, slug: 'Not_A_Slug' })).toThrow(/lower-case/);
    expect(() => defineProblemType({ ...base, slug: 'fine-slug', status: 302 })).toThrow(/status 302/);
  });

  it("maps a status without a type of its own to its class's type, never to an invented one", () => {
    expect(problemTypeForStatus(404).slug).toBe('not-found');
    expect(problemTypeForStatus(405).slug).toBe('method-not-allowed');
    expect(problemTypeForStatus(418)).toMatchObject({ slug: 'bad-request', status: 400 });
    expect(problemTypeForStatus(502)).toMatchObject({ slug: 'internal', status: 500 });
    const slugs = allProblemTypes().map((t) => t.slug);
    for (let status = 400; status < 600; status++) expect(slugs).toContain(problemTypeForStatus(status).slug);
  });
});

describe('the catalog', () => {
  it('has no 406 type: an Accept-Encoding the service cannot satisfy is disregarded, and the body sent as it is', () => {
    for (const refusal of ['identity;q=0', '*;q=0', 'identity;q=0, *;q=0', 'compress']) {
      expect({ refusal, coding: negotiatedCoding(refusal) }).toEqual({ refusal, coding: 'identity' });
    }
    expect(allProblemTypes().filter((type) => type.status === 406)).toEqual([]);
    expect(problemTypeForStatus(406).slug).toBe('bad-request');
  });
});
