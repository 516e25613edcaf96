import { type CliCommand, cliCommand } from '../common/cli';
import { SandboxModule } from './sandbox.module';
import { SandboxService } from './sandbox.service';

/** The operator's commands of a sandbox deployment. */
export const SANDBOX_COMMANDS: CliCommand[] = [
  cliCommand({
    name: 'sandbox reset',
    synopsis: ['[--json]'],
    description: [
      'Sandbox only (API_ENVIRONMENT=sandbox): empty the database and seed it again',
      'with the sample planets and a region, whose key is INITIAL_REGION_API_KEY when',
      'set, else a new one (shown only once). Refused by a live configuration.',
    ],
    modules: [SandboxModule],
    sandboxOnly: true,
    parse: () => async (context) => {
      const reset = await context.get(SandboxService).reset();
      return {
        value: reset,
        lines: [
          `Emptied: ${reset.tables.join(', ')}`,
          `Seeded:  ${reset.samplePlanets} sample planets`,
          `Region:  ${reset.region.name} (${reset.region.id})`,
          `Key id:  ${reset.apiKey.id}`,
          ...(reset.key
            ? [`X-API-Key: ${reset.key}`, 'The key is shown only now. Store it safely.']
            : [`X-API-Key: the one in INITIAL_REGION_API_KEY (${reset.apiKey.tokenPreview})`]),
        ],
      };
    },
  }),
];
