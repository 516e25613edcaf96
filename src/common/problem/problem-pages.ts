import { problemOfError } from './problem-reply';
import { allProblemTypes, problemExampleOf, type ProblemType, problemTypePath } from './problem-types';

const escapeHtml = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );

/** Escaped text, with `code` spans as the registry writes them. */
const prose = (text: string): string => escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1b1f24}main{max-width:46rem;margin:2rem auto;padding:0 1rem}' +
  'code,pre{font:14px ui-monospace,monospace;background:#f3f4f6;border-radius:4px}code{padding:0 .25em}pre{padding:1rem;overflow:auto}' +
  'table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #ddd}dt{font-weight:600}';

function page(title: string, body: string): string {
  return (
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>\n`
  );
}

/** The page a problem type's URI resolves to: what it means and what to do. */
export function problemTypePage(type: ProblemType, baseUrl: string | undefined): string {
  const example = problemOfError(problemExampleOf(type), baseUrl);
  return page(
    `${type.title} (${type.status})`,
    `<p><a href="${escapeHtml(`${baseUrl ?? ''}/problems`)}">All problem types</a></p>` +
      `<h1>${escapeHtml(type.title)}</h1>` +
      `<dl><dt>Type</dt><dd><code>${escapeHtml(example.type)}</code></dd><dt>Status</dt><dd>${type.status}</dd></dl>` +
      `<h2>What it means</h2><p>${prose(type.meaning)}</p>` +
      `<h2>What to do</h2><p>${prose(type.action)}</p>` +
      `<h2>Example</h2><pre>${escapeHtml(JSON.stringify(example, null, 2))}</pre>`,
  );
}

/** Every problem type the service can answer with, linked to its page. */
export function problemTypesPage(baseUrl: string | undefined): string {
  const rows = allProblemTypes()
    .map(
      (t) =>
        `<tr><td>${t.status}</td><td><a href="${escapeHtml(`${baseUrl ?? ''}${problemTypePath(t.slug)}`)}">${escapeHtml(t.slug)}</a></td><td>${escapeHtml(t.title)}</td></tr>`,
    )
    .join('');
  return page(
    'Problem types',
    '<h1>Problem types</h1>' +
      '<p>Every error of this API is a problem document (RFC 9457, <code>application/problem+json</code>) whose <code>type</code> ' +
      'is one of these. Compare the type, not the title or detail.</p>' +
      `<table><thead><tr><th>Status</th><th>Type</th><th>Title</th></tr></thead><tbody>${rows}</tbody></table>`,
  );
}
