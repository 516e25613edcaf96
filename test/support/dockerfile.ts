import { readFileSync } from 'node:fs';

import {
  Copy,
  DockerfileParser,
  Env,
  From,
  Healthcheck,
  Instruction,
  JSONInstruction,
  ModifiableInstruction,
} from 'dockerfile-ast';

/** One instruction of a Dockerfile, as a test reads it. */
export interface Step {
  keyword: string;
  line: number;
  /** Flags such as COPY's --from or RUN's --mount, by name. */
  flags: Record<string, string | null>;
  /** The arguments after the flags, as written (continuation lines joined). */
  text: string;
  /** The arguments of the exec (JSON) form, else null. */
  exec: string[] | null;
  /** ENV's variables. */
  env: Record<string, string>;
  /** COPY's sources and destination. */
  copy: { sources: string[]; destination: string } | null;
}

export interface Stage {
  name: string | null;
  image: string;
  steps: Step[];
}

export function readStages(path: string): Stage[] {
  const dockerfile = DockerfileParser.parse(readFileSync(path, 'utf8'));
  const stages: Stage[] = [];
  for (const instruction of dockerfile.getInstructions()) {
    if (instruction instanceof From) {
      stages.push({ name: instruction.getBuildStage(), image: instruction.getImage() ?? '', steps: [] });
      continue;
    }
    if (stages.length === 0) throw new Error(`${path}: ${instruction.getKeyword()} before the first FROM`);
    stages[stages.length - 1].steps.push(toStep(instruction));
  }
  return stages;
}

/**
 * What makes a stage's image: the image the first stage of its chain starts from, and the
 * steps of every stage of the chain in order (`FROM base AS production` inherits base's).
 */
export function stageChain(stages: Stage[], name: string): { image: string; steps: Step[] } {
  const stage = stages.find((s) => s.name === name);
  if (!stage) throw new Error(`No stage named ${name}`);
  if (stages.some((s) => s.name === stage.image)) {
    const parent = stageChain(stages, stage.image);
    return { image: parent.image, steps: [...parent.steps, ...stage.steps] };
  }
  return { image: stage.image, steps: stage.steps };
}

function toStep(instruction: Instruction): Step {
  const flags: Record<string, string | null> = {};
  if (instruction instanceof ModifiableInstruction) {
    for (const flag of instruction.getFlags()) flags[flag.getName()] = flag.getValue();
  }
  const args = instruction.getArguments().map((a) => a.getValue());
  const keyword = instruction.getKeyword();
  let exec: string[] | null = null;
  if (instruction instanceof JSONInstruction && instruction.getJSONStrings().length > 0) {
    exec = instruction.getJSONStrings().map((s) => JSON.parse(s.getValue()) as string);
  } else if (instruction instanceof Healthcheck) {
    // HEALTHCHECK [flags] CMD ["executable", ...]: the JSON after CMD.
    const text = args.join(' ');
    const json = text.slice(text.indexOf('['));
    if (text.startsWith('CMD [')) exec = JSON.parse(json) as string[];
  }
  const env: Record<string, string> = {};
  if (instruction instanceof Env) {
    for (const property of instruction.getProperties()) env[property.getName()] = property.getUnescapedValue() ?? '';
  }
  const copy = instruction instanceof Copy ? { sources: args.slice(0, -1), destination: args[args.length - 1] } : null;
  return { keyword, line: instruction.getRange().start.line + 1, flags, text: args.join(' '), exec, env, copy };
}
