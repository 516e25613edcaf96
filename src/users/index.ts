// The users feature's public surface: what other features and the entry points may import
// (npm run lint:deps refuses any other way in).
export { UserDto } from './dto/user.dto';
export { canonicalEmail, EMAIL_MAX_LENGTH, IsAccountEmail } from './email';
export { PasswordHasher } from './password-hasher';
export { PASSWORD_MAX_BYTES } from './password-policy';
export { UsersModule } from './users.module';
export { type UserCredentials } from './users.repository';
export { type UserAccount, type UserProfile, UsersService } from './users.service';
export { UsersSettings } from './users.settings';
