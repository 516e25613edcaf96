// The auth feature's public surface: what other features and the entry points may import
// (npm run lint:deps refuses any other way in).
export { AuthModule } from './auth.module';
export { AuthSettings } from './auth.settings';
export { type AuthenticatedUser } from './authenticated-user';
export { CurrentUser, UserAuth } from './user-auth.decorator';
