import { readFileSync } from 'node:fs';

/**
 * A procedure the API docs give as shell commands, run as written against the app: the first
 * `sh` block under a heading, read line by line. It understands what such a walk-through uses
 * and refuses anything else, so a docs change the runner cannot follow fails the test instead
 * of being skipped: `NAME=value`, `NAME=$(curl … | jq -r .field)`, `curl` (`-s`, `-i`, `-X`,
 * `-H`, `-d`, one URL on localhost:3000), `sleep SECONDS`, comments, and `\` at a line's end.
 * A status in a comment (`# 204` after the command, or `# 200 …` on the next line) is the
 * status the command must get.
 */

export interface Step {
  /** The command as the docs write it, continuation lines joined. */
  command: string;
  expectedStatus?: number;
}

export interface SentRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

export interface Answer {
  statusCode: number;
  body: string;
}

export interface CurlResult {
  step: Step;
  request: SentRequest;
  answer: Answer;
}

/** The steps of the first `sh` block after the heading `heading` of a Markdown file. */
export function walkthroughSteps(file: string, heading: string): Step[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const at = lines.indexOf(heading);
  if (at < 0) throw new Error(`${file}: no heading "${heading}"`);
  const open = lines.indexOf('```sh', at);
  const close = lines.indexOf('```', open + 1);
  if (open < 0 || close < 0) throw new Error(`${file}: no sh block under "${heading}"`);
  const steps: Step[] = [];
  let pending = '';
  for (const line of lines.slice(open + 1, close)) {
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const text = (pending + line).trim();
    pending = '';
    if (text === '') continue;
    if (text.startsWith('#')) {
      const status = /^#\s*(\d{3})\b/.exec(text);
      const last = steps.at(-1);
      if (status && last && last.expectedStatus === undefined) last.expectedStatus = Number(status[1]);
      continue;
    }
    // A comment after a command: outside quotes, as the docs' commands have no # of their own.
    const comment = /\s+#\s*(.*)$/.exec(text);
    const command = comment ? text.slice(0, comment.index) : text;
    const status = comment && /^(\d{3})\b/.exec(comment[1]);
    steps.push({ command, ...(status ? { expectedStatus: Number(status[1]) } : {}) });
  }
  return steps;
}

/** Shell words with quotes removed and $NAME / ${NAME} expanded (not inside single quotes). */
export function shellWords(text: string, vars: Record<string, string>): string[] {
  const words: string[] = [];
  let word: string | null = null;
  let i = 0;
  const expand = (): string => {
    const match = /^\$(?:\{(\w+)\}|(\w+))/.exec(text.slice(i));
    if (!match) throw new Error(`unsupported $ in: ${text}`);
    const name = match[1] ?? match[2];
    if (!(name in vars)) throw new Error(`$${name} is not set: ${text}`);
    i += match[0].length;
    return vars[name];
  };
  while (i < text.length) {
    const c = text[i];
    if (c === ' ' || c === '\t') {
      if (word !== null) words.push(word);
      word = null;
      i++;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new Error(`unclosed ' in: ${text}`);
      word = (word ?? '') + text.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      word = word ?? '';
      i++;
      while (text[i] !== '"') {
        if (i >= text.length) throw new Error(`unclosed " in: ${text}`);
        if (text[i] === '$') word += expand();
        else word += text[i++];
      }
      i++;
    } else if (c === '$') {
      word = (word ?? '') + expand();
    } else if ('|;&<>()`'.includes(c)) {
      throw new Error(`unsupported shell syntax "${c}" in: ${text}`);
    } else {
      word = (word ?? '') + c;
      i++;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

/** The request a curl command line sends. */
export function curlRequest(words: string[]): SentRequest {
  if (words[0] !== 'curl') throw new Error(`not a curl command: ${words.join(' ')}`);
  const request: SentRequest = { method: 'GET', url: '', headers: {} };
  for (let i = 1; i < words.length; i++) {
    const word = words[i];
    if (word === '-s' || word === '-i') continue;
    if (word === '-X') request.method = words[++i];
    else if (word === '-H') {
      const [name, ...value] = words[++i].split(':');
      request.headers[name.trim().toLowerCase()] = value.join(':').trim();
    } else if (word === '-d') {
      request.payload = words[++i];
      if (request.method === 'GET') request.method = 'POST';
    } else if (word.startsWith('localhost:3000/')) request.url = word.slice('localhost:3000'.length);
    else throw new Error(`unsupported curl argument "${word}"`);
  }
  if (!request.url) throw new Error(`no URL on localhost:3000 in: ${words.join(' ')}`);
  return request;
}

const field = (body: string, path: string): string => {
  if (!/^(\.\w+)+$/.exec(path)) throw new Error(`unsupported jq filter "${path}"`);
  let value: unknown = JSON.parse(body);
  for (const name of path.slice(1).split('.')) value = (value as Record<string, unknown>)[name];
  if (typeof value !== 'string') throw new Error(`jq -r ${path}: not a string in ${body}`);
  return value;
};

/**
 * Runs the steps in order: `send` answers each curl request, `sleep` stands for the time the
 * docs wait. `vars` holds what the reader fills in (KEY=rk_... is a placeholder: its value
 * comes from `vars`). Throws at the first step that fails or gets another status than written.
 */
export async function runWalkthrough(
  steps: Step[],
  {
    vars,
    send,
    sleep,
  }: {
    vars: Record<string, string>;
    send: (request: SentRequest) => Promise<Answer>;
    sleep: (s: number) => Promise<void>;
  },
): Promise<CurlResult[]> {
  const results: CurlResult[] = [];
  const env = { ...vars };
  const curl = async (step: Step, text: string): Promise<Answer> => {
    const request = curlRequest(shellWords(text, env));
    const answer = await send(request);
    if (step.expectedStatus !== undefined && answer.statusCode !== step.expectedStatus)
      throw new Error(`${step.command}: ${answer.statusCode}, the docs say ${step.expectedStatus}: ${answer.body}`);
    results.push({ step, request, answer });
    return answer;
  };
  for (const step of steps) {
    const sleeping = /^sleep (\d+)$/.exec(step.command);
    const captured = /^(\w+)=\$\((curl .*) \| jq -r (\S+)\)$/.exec(step.command);
    const assigned = /^(\w+)=(\S+)$/.exec(step.command);
    if (sleeping) await sleep(Number(sleeping[1]));
    else if (captured) {
      const answer = await curl(step, captured[2]);
      if (answer.statusCode >= 300) throw new Error(`${step.command}: ${answer.statusCode} ${answer.body}`);
      env[captured[1]] = field(answer.body, captured[3]);
    } else if (assigned) {
      // A value the reader fills in is given by the caller; any other is taken as written.
      if (!(assigned[1] in vars)) env[assigned[1]] = shellWords(assigned[2], env).join(' ');
    } else if (step.command.startsWith('curl ')) await curl(step, step.command);
    else throw new Error(`unsupported step: ${step.command}`);
  }
  return results;
}
