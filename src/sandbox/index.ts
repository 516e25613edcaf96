// The sandbox feature's public surface: what other features and the entry points may import
// (npm run lint:deps refuses any other way in).
export { SANDBOX_COMMANDS } from './sandbox.commands';
export { SandboxModule } from './sandbox.module';
